// Keyboard voting: 1 = A better, 2 = B better, 3 = tie, 0 = cannot determine.
// Keys are ignored while typing a comment; a form submits at most once.
// Keys pressed before this script has run cannot vote (there is no listener yet), so the form
// says when it listens: data-keyboard="on". Browser tests wait for it before pressing a key.
(function () {
  "use strict";
  var form = document.getElementById("vote-form");
  if (!form) { return; }
  var sent = false;
  form.addEventListener("submit", function (event) {
    if (sent) { event.preventDefault(); return; }
    sent = true;
  });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var target = event.target;
    if (target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.tagName === "SELECT")) { return; }
    var button = form.querySelector('button[data-key="' + event.key + '"]');
    if (button) {
      event.preventDefault();
      if (!sent) { form.requestSubmit(button); }
    }
  });
  form.dataset.keyboard = "on";
})();
