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

  document.addEventListener("DOMContentLoaded", focusFirstProblem);
  guardSubmissions();
})();
