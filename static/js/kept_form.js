// A form sent after the session ended is filled in again once the person has logged in
// (core/kept_forms.py): its fields come in the page as JSON; the form they were sent from gets
// them back, with a note asking to check and send it again. Nothing is sent automatically.
(function () {
  "use strict";
  var data = document.getElementById("kept-form");
  if (!data) return;
  var kept = JSON.parse(data.textContent);
  var values = {};
  kept.fields.forEach(function (pair) { (values[pair[0]] = values[pair[0]] || []).push(pair[1]); });
  function pathOf(form) {
    try { return new URL(form.getAttribute("action") || window.location.href, window.location.href).pathname; }
    catch (error) { return ""; }
  }
  var candidates = Array.prototype.filter.call(document.forms, function (form) {
    return (form.getAttribute("method") || "").toLowerCase() === "post" && pathOf(form) === kept.action;
  });
  function score(form) {
    return Array.prototype.filter.call(form.elements, function (el) { return el.name && values[el.name]; }).length;
  }
  candidates.sort(function (a, b) { return score(b) - score(a); });
  var form = candidates[0];
  if (!form || !score(form)) return;
  var used = {};
  Array.prototype.forEach.call(form.elements, function (el) {
    var given = values[el.name];
    var skip = ["hidden", "file", "submit", "button", "reset", "password"];
    if (!el.name || !given || skip.indexOf(el.type) >= 0) return;
    if (el.type === "checkbox" || el.type === "radio") {
      el.checked = given.indexOf(el.value) >= 0;
    } else if (el.type === "select-multiple") {
      Array.prototype.forEach.call(el.options, function (option) { option.selected = given.indexOf(option.value) >= 0; });
    } else {
      var index = used[el.name] || 0;
      if (index >= given.length) return;
      el.value = given[index];
      used[el.name] = index + 1;
    }
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
  });
  var note = document.getElementById("kept-form-note");
  if (note) {
    form.parentNode.insertBefore(note, form);
    note.hidden = false;
    note.focus();
  }
})();
