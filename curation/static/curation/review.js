// Keyboard shortcuts of the review pages: a key names a button by its data-key.
// Outside a text field a plain key presses its button; inside one, Ctrl+Enter presses the
// first decision button (so typing "a" in a correction never accepts by accident).
(function () {
  "use strict";
  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.tagName === "SELECT" || target.isContentEditable);
  }
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.metaKey) { return; }
    var button = null;
    if (event.key === "Enter" && event.ctrlKey) {
      button = document.querySelector(".decision button[data-key]");
    } else if (event.key === "Escape" && !typing(event.target)) {
      button = document.querySelector('button[data-key="Escape"]');
    } else if (!event.ctrlKey && !typing(event.target) && event.key.length === 1) {
      button = document.querySelector('button[data-key="' + event.key.toLowerCase() + '"]');
    }
    if (button && !button.disabled) {
      event.preventDefault();
      button.click();
    }
  });
  // Lets tests (and styles) know the shortcuts are live.
  document.documentElement.setAttribute("data-shortcuts", "on");
}());
