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
      .then(function (response) { return response.ok ? response.json() : null; })
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
        } else if (bar.dataset.wasRunning === "1") {
          window.location.reload();
        }
        bar.dataset.wasRunning = data.status === "running" ? "1" : "0";
      })
      .catch(function () { window.setTimeout(update, 5000); });
  }
  update();
})();
