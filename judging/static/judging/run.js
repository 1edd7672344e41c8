// Live progress on the run page: polls the API while the run is running. No library, no CDN.
(function () {
  "use strict";
  var section = document.getElementById("progress");
  if (!section) return;
  var bar = section.querySelector("progress");
  // "batches.completed" reads data.batches.completed: a batch run's counts.
  function read(data, path) {
    return path.split(".").reduce(function (value, key) { return value === null || value === undefined ? value : value[key]; }, data);
  }
  function update() {
    fetch(section.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (response.ok) return response.json();
        // A busy server (429, 5xx) is asked again later; a page that lost access stops asking.
        if (response.status === 429 || response.status >= 500) window.setTimeout(update, 5000);
        return null;
      })
      .then(function (data) {
        if (!data) return;
        section.querySelectorAll("[data-field]").forEach(function (node) {
          var key = node.dataset.field;
          if (key === "status") return;
          var value = read(data, key);
          // data-unit: a unit shown after a value, never after the dash of a missing one ("ETA — s").
          node.textContent = value === null || value === undefined ? "—" : String(value) + (node.dataset.unit || "");
          if (key === "error") node.hidden = !value;
        });
        var noWorker = document.getElementById("no-worker");
        if (noWorker) noWorker.hidden = !data.waiting_for_worker;
        bar.value = data.done;
        if (data.status === "running" || data.status === "pending") {
          window.setTimeout(update, 2000);
        } else if (data.status !== section.dataset.status) {
          // The run ended since the page was drawn (perhaps before the first poll answered):
          // the page is drawn again, with its results and the actions a finished run offers.
          window.location.reload();
        }
      })
      .catch(function () { window.setTimeout(update, 5000); });
  }
  update();
})();
