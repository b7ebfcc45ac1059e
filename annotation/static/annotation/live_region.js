// A part of a page that follows a background job (an import, a release build): while its element says
// data-live-done="0", fetch data-live-url again every 1.5 s and put the fresh part in its place. The server
// renders the part in the reader's language, so the page never shows the job's stored identifiers.
(function () {
  "use strict";
  const INTERVAL = 1500;

  function follow(region) {
    if (!region || region.dataset.liveDone !== "0") return;
    window.setTimeout(async () => {
      let next = region;
      try {
        const response = await fetch(region.dataset.liveUrl, {
          credentials: "same-origin", headers: { Accept: "text/html" },
        });
        if (response.ok) {
          const template = document.createElement("template");
          template.innerHTML = (await response.text()).trim();
          const fresh = template.content.firstElementChild;
          if (fresh && fresh.id === region.id) {
            region.replaceWith(fresh);
            next = fresh;
          }
        }
      } catch (error) {
        // A dropped connection is tried again on the next tick.
      }
      follow(next);
    }, INTERVAL);
  }

  document.querySelectorAll("[data-live-url]").forEach(follow);
})();
