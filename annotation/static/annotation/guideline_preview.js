// Live preview of the guideline editor: the server renders and sanitises (the same code that
// renders the guideline for annotators), so the preview never differs from what they will read.
(function () {
  "use strict";
  var form = document.getElementById("guideline-form");
  if (!form || !window.fetch) { return; }
  var url = form.dataset.previewUrl;
  var token = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  var areas = form.querySelectorAll("textarea[data-preview]");
  var timer = null;
  var seq = 0;

  function refresh() {
    var body = new FormData();
    areas.forEach(function (area) { body.append(area.dataset.preview, area.value); });
    var mine = ++seq;
    fetch(url, { method: "POST", body: body, headers: { "X-CSRFToken": token }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (html) {
        if (!html || mine !== seq) { return; } // a newer request is on its way
        areas.forEach(function (area) {
          var target = document.getElementById("preview-" + area.dataset.preview);
          if (target && typeof html[area.dataset.preview] === "string") {
            target.innerHTML = html[area.dataset.preview]; // sanitised server-side by nh3
          }
        });
      })
      .catch(function () { /* keep the last preview; saving still works without it */ });
  }

  areas.forEach(function (area) {
    area.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(refresh, 300);
    });
  });
})();
