// Live progress of large uploads read by a worker (a dataset's answers, a dataset import): polls
// the API while one is queued or being read, then shows what was stored or why the file was
// refused, and offers a resume or a discard when they apply. No library, no CDN.
(function () {
  "use strict";
  document.querySelectorAll("article.background-upload").forEach(function (article) {
    var bar = article.querySelector("progress");
    function active(status) { return status === "queued" || status === "running"; }
    function update() {
      fetch(article.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          if (response.ok) return response.json();
          // A busy server (429, 5xx) is asked again later; a page that lost access stops asking.
          if (response.status === 429 || response.status >= 500) window.setTimeout(update, 5000);
          return null;
        })
        .then(function (data) {
          if (!data) return;
          article.querySelectorAll("[data-field]").forEach(function (node) {
            var value = data[node.dataset.field];
            node.textContent = value === null || value === undefined ? "" : String(value);
            if (node.dataset.field === "error") node.hidden = !value;
          });
          bar.value = data.percent;
          article.dataset.status = data.status;
          article.querySelectorAll("[data-href]").forEach(function (node) {
            if (data[node.dataset.href]) node.href = data[node.dataset.href];
          });
          article.querySelectorAll("[data-when]").forEach(function (node) {
            node.hidden = !data[node.dataset.when];
          });
          if (active(data.status)) window.setTimeout(update, 1000);
        })
        .catch(function () { window.setTimeout(update, 5000); });
    }
    if (active(article.dataset.status)) update();
  });
})();
