// Every page: a table too wide for the screen scrolls sideways in its .table-wrap; such a box
// must be reachable by keyboard (arrow keys scroll it once it has focus), so it joins the tab
// order exactly while it scrolls, and says what it holds.
(function () {
  "use strict";
  function markScrollBoxes() {
    document.querySelectorAll(".table-wrap").forEach(function (box) {
      var scrolls = box.scrollWidth > box.clientWidth + 1;
      if (scrolls) {
        box.setAttribute("tabindex", "0");
        if (!box.hasAttribute("aria-label") && !box.hasAttribute("aria-labelledby")) {
          var table = box.querySelector("table");
          var caption = table && (table.querySelector("caption") || table.getAttribute("aria-label"));
          box.setAttribute("role", "region");
          box.setAttribute("aria-label", caption && caption.textContent ? caption.textContent.trim() : (box.dataset.label || document.title));
        }
      } else if (box.getAttribute("tabindex") === "0") {
        box.removeAttribute("tabindex");
      }
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", markScrollBoxes);
  } else {
    markScrollBoxes();
  }
  window.addEventListener("resize", markScrollBoxes);
})();
