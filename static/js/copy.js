// Copy buttons: each [data-copy] button copies the text of the element it names (a command,
// a token) to the clipboard and says so beside it. Buttons stay hidden without this script.
(function () {
  "use strict";

  function say(button, text) {
    var status = button.nextElementSibling;
    if (!status || !status.classList.contains("copy-status")) {
      status = document.createElement("span");
      status.className = "copy-status muted";
      status.setAttribute("role", "status");
      button.insertAdjacentElement("afterend", status);
    }
    status.textContent = text;
  }

  function selectText(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function copy(button) {
    var source = document.getElementById(button.dataset.copy);
    if (!source) {
      return;
    }
    var text = source.textContent;
    var done = function () { say(button, button.dataset.copied); };
    var failed = function () {
      selectText(source); // the reader copies it with the keyboard
      say(button, button.dataset.failed);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, failed);
    } else {
      failed();
    }
  }

  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () { copy(button); });
  });
})();
