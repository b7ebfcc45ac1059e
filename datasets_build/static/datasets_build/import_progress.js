// Poll the import job's API while it runs and fill in progress, errors and the screening summary.
(function () {
  "use strict";
  const box = document.getElementById("job");
  if (!box || box.dataset.finished === "1") return;
  const set = (id, value) => { const el = document.getElementById(id); if (el) el.textContent = value; };

  function cell(text) { const td = document.createElement("td"); td.textContent = text; return td; }

  function render(job) {
    set("job-status", job.status);
    set("job-read", job.progress.read);
    set("job-screened", job.progress.screened);
    set("job-written", job.progress.written);
    set("job-annotations", job.annotations_written);
    set("job-message", job.message || "");
    if (job.errors && job.errors.length) {
      const body = document.querySelector("#job-errors tbody");
      body.replaceChildren(...job.errors.map((e) => {
        const tr = document.createElement("tr");
        tr.append(cell(e.record || "—"), cell(e.field || ""), cell(e.message));
        return tr;
      }));
      document.getElementById("job-errors").hidden = false;
    }
    if (job.summary && Object.keys(job.summary).length) {
      for (const dd of document.querySelectorAll("#job-summary dd[data-key]")) {
        const value = job.summary[dd.dataset.key];
        dd.textContent = typeof value === "object" ? JSON.stringify(value) : String(value ?? 0);
      }
      document.getElementById("job-summary").hidden = false;
    }
  }

  async function poll() {
    try {
      const response = await fetch(box.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (response.ok) {
        const job = await response.json();
        render(job);
        if (job.status === "succeeded" || job.status === "failed") return;
      }
    } catch (error) {
      // A dropped connection is retried on the next tick.
    }
    window.setTimeout(poll, 1500);
  }
  poll();
})();
