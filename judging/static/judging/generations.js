// Live progress of a dataset's generations: polls the API while one is queued or running, and
// shows Cancel or Resume as its status allows. The page is never reloaded, so nothing typed in
// its forms is lost. No library, no CDN.
(function () {
  "use strict";
  document.querySelectorAll("article.generation").forEach(function (article) {
    var bar = article.querySelector("progress");
    function active(status) { return status === "queued" || status === "running"; }
    // "batches.completed" reads data.batches.completed: a batch generation's counts.
    function read(data, path) {
      return path.split(".").reduce(function (value, key) { return value === null || value === undefined ? value : value[key]; }, data);
    }
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
            var value = read(data, node.dataset.field);
            node.textContent = value === null || value === undefined ? "" : String(value) + (node.dataset.unit || "");
            if (node.dataset.field === "error") node.hidden = !value;
          });
          bar.max = Math.max(data.total, 1);
          bar.value = data.generated;
          article.dataset.status = data.status;
          article.querySelector('[data-when="active"]').hidden = !active(data.status);
          // An archived dataset's page offers no resume (it is read-only until restored).
          var resume = article.querySelector('[data-when="resumable"]');
          if (resume) resume.hidden = !data.resumable;
          if (active(data.status)) window.setTimeout(update, 2000);
        })
        .catch(function () { window.setTimeout(update, 5000); });
    }
    if (active(article.dataset.status)) update();
  });
})();
