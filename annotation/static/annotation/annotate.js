// Keyboard voting: 1 = A better, 2 = B better, 3 = tie, 0 = cannot determine, S = skip,
// U = undo the last vote. Keys are ignored while typing a comment; a form submits at most once.
// Keys pressed before this script has run cannot vote (there is no listener yet), so the page
// says when it listens: data-keyboard="on" on the vote form (and on <html>, for the page
// without an item). Browser tests wait for it before pressing a key.
(function () {
  "use strict";
  var form = document.getElementById("vote-form");
  var sent = false;
  if (form) {
    form.addEventListener("submit", function (event) {
      if (sent) { event.preventDefault(); return; }
      sent = true;
    });
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) { return; }
    var target = event.target;
    if (target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.tagName === "SELECT")) { return; }
    var key = event.key.toLowerCase();
    var button = document.querySelector('button[data-key="' + key + '"]');
    if (!button || button.disabled) { return; }
    event.preventDefault();
    if (sent) { return; }
    if (form && form.contains(button)) {
      form.requestSubmit(button);
    } else {
      sent = true;
      button.form.requestSubmit(button);
    }
  });
  if (form) { form.dataset.keyboard = "on"; }
  document.documentElement.dataset.keyboard = "on";
})();

// On a touch screen the vote buttons wait until both answers have been on screen: on a phone
// answer B is below the fold, and a vote cast before it was seen is a guess. An answer counts as
// seen when half of it, or half of the window, has shown above the vote bar. The skip button
// never waits. Desktop keyboards and mice are not held back (both answers sit side by side);
// without JavaScript the buttons work as they are. The form says where it stands for browser
// tests: data-vote-ready="no" while waiting, "yes" once the buttons work.
(function () {
  "use strict";
  var form = document.getElementById("vote-form");
  var touch = window.matchMedia && window.matchMedia("(hover: none), (pointer: coarse)").matches;
  if (!form) { return; }
  var answers = form.querySelectorAll(".answer");
  if (!touch || !("IntersectionObserver" in window) || answers.length < 2) {
    form.dataset.voteReady = "yes";
    return;
  }
  var choices = form.querySelectorAll(".choices button");
  var note = document.getElementById("vote-wait");
  var seen = [];
  function ready(on) {
    choices.forEach(function (button) { button.disabled = !on; });
    if (note) { note.hidden = on; }
    form.dataset.voteReady = on ? "yes" : "no";
  }
  ready(false);
  var bar = form.querySelector(".vote-bar");
  var below = bar ? bar.offsetHeight : 0;
  var observer = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      var view = entry.rootBounds ? entry.rootBounds.height : window.innerHeight;
      var shown = entry.intersectionRect.height;
      if (entry.isIntersecting && (entry.intersectionRatio >= 0.5 || shown >= view / 2)) {
        if (seen.indexOf(entry.target) < 0) { seen.push(entry.target); }
        observer.unobserve(entry.target);
      }
    });
    if (seen.length === answers.length) {
      observer.disconnect();
      ready(true);
    }
  }, { rootMargin: "0px 0px -" + below + "px 0px", threshold: [0, 0.25, 0.5, 0.75, 1] });
  answers.forEach(function (answer) { observer.observe(answer); });
})();
