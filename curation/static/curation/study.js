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
    studyForm.submit();
  });
})();
