// Progressive enhancement only: every page works without this file.
// Buttons with data-confirm ask before their form is sent.
document.addEventListener("submit", function (ev) {
  var b = ev.submitter;
  var msg = b && b.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) {
    ev.preventDefault();
  }
});
