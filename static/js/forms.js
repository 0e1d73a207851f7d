// Forms that guide: focus the error summary after a refused save, and one submission per click.
(function () {
  "use strict";

  function focusFirstProblem() {
    var summary = document.getElementById("error-summary");
    if (summary) {
      summary.focus();
      return;
    }
    var field = document.querySelector(".has-error input, .has-error select, .has-error textarea");
    if (field) {
      field.focus();
    }
  }

  function guardSubmissions() {
    document.addEventListener("submit", function (event) {
      var form = event.target;
      if (!(form instanceof HTMLFormElement) || form.method.toLowerCase() !== "post") {
        return;
      }
      if (form.dataset.submitting === "yes") {
        event.preventDefault(); // a second click while the first is on its way
        return;
      }
      form.dataset.submitting = "yes";
      var buttons = form.querySelectorAll("button[type=submit], button:not([type]), input[type=submit]");
      // Disabled after the browser has taken the clicked button's name and value.
      window.setTimeout(function () {
        buttons.forEach(function (button) {
          button.disabled = true;
          button.setAttribute("aria-busy", "true");
        });
      }, 0);
    });
    // Coming back through the browser's history shows the form usable again.
    window.addEventListener("pageshow", function () {
      document.querySelectorAll("form[data-submitting=yes]").forEach(function (form) {
        delete form.dataset.submitting;
        form.querySelectorAll("[aria-busy=true]").forEach(function (button) {
          button.disabled = false;
          button.removeAttribute("aria-busy");
        });
      });
    });
  }

  // Drafts: a long form (marked data-draft) keeps what was typed in this browser until it
  // is saved, so a closed tab or a lost session loses nothing. A draft belongs to the
  // record's version it was typed on: once the record is saved (its version moves on),
  // the draft is never offered again.
  function draftKey(form) {
    var version = form.querySelector("input[name=version]");
    return "diligence-draft:" + window.location.pathname + ":" + (version ? version.value : "");
  }

  function draftValues(form) {
    var values = {};
    Array.prototype.forEach.call(form.elements, function (field) {
      if (!field.name || field.type === "file" || field.type === "hidden" || field.disabled) {
        return;
      }
      if ((field.type === "checkbox" || field.type === "radio") && !field.checked) {
        return;
      }
      (values[field.name] = values[field.name] || []).push(field.value);
    });
    return values;
  }

  function draftRestore(form, values) {
    Array.prototype.forEach.call(form.elements, function (field) {
      if (!field.name || field.type === "file" || field.type === "hidden") {
        return;
      }
      var saved = values[field.name] || [];
      if (field.type === "checkbox" || field.type === "radio") {
        field.checked = saved.indexOf(field.value) !== -1;
      } else if (saved.length) {
        field.value = saved[0];
      } else {
        field.value = "";
      }
    });
  }

  function draftNotice(form, key, when) {
    var notice = document.createElement("div");
    notice.className = "notice draft-notice";
    notice.setAttribute("role", "status");
    var text = document.createElement("span");
    text.textContent = (form.dataset.draftRestored || "Your unsaved draft was restored.") + " " + when;
    var discard = document.createElement("button");
    discard.type = "button";
    discard.className = "secondary";
    discard.textContent = form.dataset.draftDiscard || "Discard the draft";
    discard.addEventListener("click", function () {
      window.localStorage.removeItem(key);
      window.location.reload();
    });
    notice.appendChild(text);
    notice.appendChild(document.createTextNode(" "));
    notice.appendChild(discard);
    form.insertBefore(notice, form.firstChild);
  }

  function keepDrafts() {
    if (!window.localStorage) {
      return;
    }
    document.querySelectorAll("form[data-draft]").forEach(function (form) {
      var key = draftKey(form);
      var prefix = key.slice(0, key.lastIndexOf(":") + 1);
      // Drafts typed on an earlier version of this record are done with.
      for (var i = window.localStorage.length - 1; i >= 0; i--) {
        var other = window.localStorage.key(i);
        if (other && other !== key && other.indexOf(prefix) === 0) {
          window.localStorage.removeItem(other);
        }
      }
      var stored = window.localStorage.getItem(key);
      // A refused save shows what was sent already: the draft stays, unused.
      if (stored && !document.getElementById("error-summary")) {
        try {
          var draft = JSON.parse(stored);
          draftRestore(form, draft.values);
          draftNotice(form, key, new Date(draft.saved).toLocaleString());
        } catch (error) {
          window.localStorage.removeItem(key);
        }
      }
      var timer = null;
      function save() {
        timer = null;
        window.localStorage.setItem(
          key,
          JSON.stringify({ saved: new Date().toISOString(), values: draftValues(form) })
        );
      }
      form.addEventListener("input", function () {
        if (timer) {
          window.clearTimeout(timer);
        }
        timer = window.setTimeout(save, 400);
      });
      form.addEventListener("change", save);
    });
  }

  document.addEventListener("DOMContentLoaded", focusFirstProblem);
  document.addEventListener("DOMContentLoaded", keepDrafts);
  guardSubmissions();
})();
