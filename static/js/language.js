// The language picker submits itself when changed (a static file: the Content-Security-Policy
// allows no inline event handlers, see docs/production.md).
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("select[data-submit-on-change]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
});
