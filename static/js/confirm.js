/* A form with data-confirm="question" asks that question before it is sent (forgetting a note):
 * Cancel keeps everything as it was. A static file, no inline handler (Content-Security-Policy). */
(function () {
  "use strict";
  document.addEventListener("submit", (event) => {
    const form = event.target;
    const question = form instanceof HTMLFormElement ? form.dataset.confirm : "";
    if (question && !window.confirm(question)) event.preventDefault();
  });
})();
