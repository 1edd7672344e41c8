// The header's language switcher would leave the page and drop what is typed. On a
// questionnaire page it instead submits the page's own form with `_language`: the server
// keeps the input as a draft, switches the language and shows the page again.
// Without JavaScript the switcher still works; only unsaved typing on the page is lost.
(function () {
  "use strict";
  var studyForm = document.querySelector("form[data-study-form]");
  var switcher = document.querySelector("form.lang-switch");
  if (!studyForm || !switcher) { return; }
  switcher.addEventListener("submit", function (event) {
    var select = switcher.querySelector("select[name=language]");
    if (!select) { return; }
    event.preventDefault();
    var field = document.createElement("input");
    field.type = "hidden";
    field.name = "_language";
    field.value = select.value;
    studyForm.appendChild(field);
    // form.submit() fires no submit event: tell the draft keeper below that the server now has
    // the typing, or a stale draft would later overwrite what is chosen on the next page.
    studyForm.dispatchEvent(new CustomEvent("study:handed-over"));
    studyForm.submit();
  });
})();

// While a participant types or pastes a case, a warning (never a block) when it seems to hold an
// e-mail address, a phone number or an ID number; the same checks as quick_personal_info in
// curation/pii/hints.py, which also warns after saving when this script does not run.
(function () {
  "use strict";
  var warning = document.querySelector("[data-pii-warning]");
  if (!warning) { return; }
  var fields = document.querySelectorAll("textarea[name=conversation], input[name=intent_other]");
  var EMAIL = /[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/;
  var PHONE = /(?:^|[^\w.+])(\+?\d[\d ()-]{6,}\d)(?![\w.])/g;
  var CN_ID = /(?:^|[^0-9A-Za-z])([1-9]\d{16}[\dXx])(?![0-9A-Za-z])/g;
  var SSN = /(?:^|\D)(\d{3}-\d{2}-\d{4})(?!\d)/g;
  var WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
  function residentIdValid(number) {
    number = number.toUpperCase();
    var year = +number.slice(6, 10), month = +number.slice(10, 12), day = +number.slice(12, 14);
    if (year < 1900 || year > 2100 || month < 1 || month > 12 || day < 1 || day > 31) { return false; }
    var total = 0;
    for (var k = 0; k < 17; k++) { total += (+number[k]) * WEIGHTS[k]; }
    return "10X98765432"[total % 11] === number[17];
  }
  function all(pattern, text) {
    var found = [], match;
    pattern.lastIndex = 0;
    while ((match = pattern.exec(text)) !== null) { found.push(match[1]); }
    return found;
  }
  function phoneLike(candidate) {
    var digits = candidate.replace(/\D/g, "");
    if (digits.length < 9 || digits.length > 15) { return false; }
    return candidate.charAt(0) === "+" || /[ ()-]/.test(candidate) || /^1[3-9]\d{9}$/.test(digits);
  }
  function kinds(text) {
    var result = [];
    if (EMAIL.test(text)) { result.push(warning.dataset.email); }
    var ids = all(CN_ID, text).filter(residentIdValid).concat(all(SSN, text));
    if (all(PHONE, text).some(function (c) { return ids.indexOf(c) < 0 && phoneLike(c); })) {
      result.push(warning.dataset.phone);
    }
    if (ids.length) { result.push(warning.dataset.id); }
    return result;
  }
  function check() {
    var text = Array.prototype.map.call(fields, function (field) { return field.value; }).join("\n");
    var found = kinds(text);
    warning.hidden = found.length === 0;
    warning.textContent = found.length ? warning.dataset.message.replace("{kinds}", found.join(warning.dataset.separator)) : "";
  }
  Array.prototype.forEach.call(fields, function (field) {
    field.addEventListener("input", check);
    field.addEventListener("paste", function () { window.setTimeout(check, 0); });
  });
  check();
})();

// Long text fields show how many characters they hold against their limit (data-max-length,
// which the server enforces with a message naming the field; nothing is ever cut). Over the
// limit the counter warns, and saving waits until the text is shorter: nothing is lost.
(function () {
  "use strict";
  var texts = document.querySelector("[data-counter-texts]");
  if (!texts) { return; }
  var language = document.documentElement.lang || undefined;
  function number(value) { return value.toLocaleString(language); }
  function length(value) { return Array.from(value.replace(/\r\n/g, "\n")).length; }
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (_all, name) { return values[name]; });
  }
  var counted = [];
  Array.prototype.forEach.call(document.querySelectorAll("[data-max-length]"), function (field) {
    var limit = parseInt(field.getAttribute("data-max-length"), 10);
    if (!limit) { return; }
    var counter = document.createElement("p");
    counter.className = "char-counter";
    counter.id = (field.id || field.name) + "_counter";
    counter.setAttribute("aria-live", "polite");
    field.insertAdjacentElement("afterend", counter);
    var described = field.getAttribute("aria-describedby");
    field.setAttribute("aria-describedby", (described ? described + " " : "") + counter.id);
    var always = field.tagName === "TEXTAREA";
    function update() {
      var count = length(field.value);
      var over = count - limit;
      var values = { count: number(count), limit: number(limit), over: number(over) };
      counter.classList.toggle("over", over > 0);
      counter.hidden = !always && count < 0.8 * limit;
      counter.textContent = fill(over > 0 ? texts.dataset.over : texts.dataset.count, values);
      return over > 0;
    }
    field.addEventListener("input", update);
    update();
    counted.push({ field: field, counter: counter, over: update });
  });
  Array.prototype.forEach.call(document.querySelectorAll("form[data-study-form]"), function (form) {
    form.addEventListener("submit", function (event) {
      var first = null;
      counted.forEach(function (entry) {
        if (form.contains(entry.field) && entry.over() && !first) { first = entry; }
      });
      if (first) {
        event.preventDefault();
        first.counter.setAttribute("role", "alert");
        first.field.focus();
      }
    });
  });
})();

// Removing a case asks first. Without JavaScript the button leads to a page that asks.
(function () {
  "use strict";
  Array.prototype.forEach.call(document.querySelectorAll("form[data-confirm]"), function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) {
        event.preventDefault();
        return;
      }
      var confirmed = document.createElement("input");
      confirmed.type = "hidden";
      confirmed.name = "confirm";
      confirmed.value = "yes";
      form.appendChild(confirmed);
    });
  });
})();

// After a failed submit the server marks the first wrong answer with autofocus; make sure it
// has the focus even where a browser skips autofocus (e.g. after a language switch).
(function () {
  "use strict";
  var first = document.querySelector("form [autofocus]");
  if (first && document.activeElement !== first) { first.focus(); }
})();

// A case is kept in this browser as it is typed (localStorage), until it is saved: a reload, a
// crash or a closed tab gives it back, with a note. The server keeps it only once saved (or
// across a language switch, above). The key names the submission and the case, so two
// participants on one computer never see each other's drafts; a draft older than a week is
// dropped.
(function () {
  "use strict";
  var form = document.querySelector("form[data-draft-key]");
  var storage;
  try { storage = window.localStorage; } catch (error) { return; }
  if (!form || !storage) { return; }
  var key = "userbench-case-draft:" + form.getAttribute("data-draft-key");
  var WEEK = 7 * 24 * 3600 * 1000;
  var SKIP = ["hidden", "file", "submit", "button", "reset", "password"];
  function fields() {
    return Array.prototype.filter.call(form.elements, function (el) {
      return el.name && SKIP.indexOf(el.type) < 0;
    });
  }
  function snapshot() {
    var values = {};
    fields().forEach(function (el) {
      var list = values[el.name] = values[el.name] || [];
      if (el.type === "checkbox" || el.type === "radio") {
        if (el.checked) { list.push(el.value); }
      } else if (el.type === "select-multiple") {
        Array.prototype.forEach.call(el.selectedOptions, function (option) { list.push(option.value); });
      } else {
        list.push(el.value);
      }
    });
    return values;
  }
  var initial = JSON.stringify(snapshot());
  function save() {
    var now = JSON.stringify(snapshot());
    try {
      if (now === initial) { storage.removeItem(key); }
      else { storage.setItem(key, JSON.stringify({ values: JSON.parse(now), at: Date.now() })); }
    } catch (error) { /* storage full or refused: the server still saves on submit */ }
  }
  var draft = null;
  try { draft = JSON.parse(storage.getItem(key) || "null"); } catch (error) { draft = null; }
  if (draft && draft.values && Date.now() - draft.at < WEEK && JSON.stringify(draft.values) !== initial) {
    var used = {};
    fields().forEach(function (el) {
      var given = draft.values[el.name];
      if (!given) { return; }
      if (el.type === "checkbox" || el.type === "radio") {
        el.checked = given.indexOf(el.value) >= 0;
      } else if (el.type === "select-multiple") {
        Array.prototype.forEach.call(el.options, function (option) { option.selected = given.indexOf(option.value) >= 0; });
      } else {
        var index = used[el.name] || 0;
        if (index < given.length) { el.value = given[index]; }
        used[el.name] = index + 1;
      }
      el.dispatchEvent(new Event("input", { bubbles: true }));
    });
    var note = document.querySelector("[data-draft-note]");
    if (note) { note.hidden = false; }
  } else if (draft) {
    storage.removeItem(key);
  }
  form.addEventListener("input", save);
  form.addEventListener("change", save);
  // Sent to the server: from now on the server has it (or gives it back with its errors).
  // (A submit the length check above stopped sent nothing: the draft stays.)
  form.addEventListener("submit", function (event) {
    if (!event.defaultPrevented) { storage.removeItem(key); }
  });
  form.addEventListener("study:handed-over", function () { storage.removeItem(key); });
})();
