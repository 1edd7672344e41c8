// Copy buttons: <button data-copy="id-of-a-field"> copies that field's text and says so in the
// button's live region. No library, no CDN.
(function () {
  "use strict";
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.dataset.copy);
    var status = document.getElementById(button.dataset.copyStatus || "");
    if (!field) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      function done() { if (status) status.textContent = button.dataset.copied || "Copied"; }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(done, function () { field.select(); });
      } else {
        field.select();
        if (document.execCommand("copy")) done();
      }
    });
  });
})();
