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

  function start() {
    wrapTables();
    markScrollable();
    window.addEventListener("resize", markScrollable);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
