// A matter's documents page: upload with a progress bar through the REST API, then show the
// list; while a document is queued, extracting or in OCR the page refreshes to show its status.
(function () {
  "use strict";
  const form = document.getElementById("document-upload");
  if (!form) return;
  const bar = document.getElementById("upload-progress");
  const status = document.getElementById("upload-status");
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const data = new FormData(form);
    const request = new XMLHttpRequest();
    request.open("POST", form.dataset.api);
    request.setRequestHeader("X-CSRFToken", data.get("csrfmiddlewaretoken"));
    bar.hidden = false;
    request.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable) bar.value = Math.round((100 * e.loaded) / e.total);
    });
    request.addEventListener("load", function () {
      if (request.status >= 200 && request.status < 300) {
        window.location.reload();
      } else {
        let detail = request.statusText;
        try {
          const body = JSON.parse(request.responseText);
          // DRF: {"detail": "…"} or {"file": ["…"]}; the messages are in the reader's language
          detail = body.detail || Object.values(body).flat().join(" ");
        } catch (e) { detail = request.responseText || detail; /* the page's plain-text 413 */ }
        status.textContent = detail;
      }
    });
    request.addEventListener("error", function () { status.textContent = form.dataset.failed; });
    request.send(data);
  });
  const busy = document.querySelector("tr[data-status=queued], tr[data-status=extracting], tr[data-status=ocr]");
  if (busy) window.setTimeout(function () { window.location.reload(); }, 3000);
})();
