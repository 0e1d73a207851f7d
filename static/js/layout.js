// Wide tables scroll sideways inside their own box, never the page: each table is
// wrapped once, and a box that really scrolls can be reached and scrolled with the keyboard.
(function () {
  "use strict";

  function wrapTables() {
    document.querySelectorAll("main table").forEach(function (table) {
      if (table.parentElement.classList.contains("table-scroll")) {
        return;
      }
      var box = document.createElement("div");
      box.className = "table-scroll";
      table.parentNode.insertBefore(box, table);
      box.appendChild(table);
    });
  }

  function markScrollable() {
    document.querySelectorAll(".table-scroll, .scroll-x").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1) {
        box.setAttribute("tabindex", "0");
      } else {
        box.removeAttribute("tabindex");
      }
    });
  }

  // The count of what waits for the reader, beside "My work" in the header.
  function showWaiting() {
    var badge = document.querySelector("[data-count-url]");
    if (!badge || !window.fetch) {
      return;
    }
    fetch(badge.getAttribute("data-count-url"), { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (!data || !data.count) {
          return;
        }
        var shown = document.createElement("span");
        shown.setAttribute("aria-hidden", "true");
        shown.textContent = String(data.count);
        var spoken = document.createElement("span");
        spoken.className = "visually-hidden";
        spoken.textContent = data.label;
        badge.replaceChildren(shown, spoken);
        badge.hidden = false;
      })
      .catch(function () { /* no count: the link still leads to the list */ });
  }

  function start() {
    wrapTables();
    markScrollable();
    showWaiting();
    window.addEventListener("resize", markScrollable);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
