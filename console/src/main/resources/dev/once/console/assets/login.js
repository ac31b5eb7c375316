// Shows the sign-in page's message for ?error or ?logout; nothing else runs before sign-in.
(function () {
  var query = new URLSearchParams(window.location.search);
  document.querySelectorAll('[data-when]').forEach(function (el) {
    el.hidden = !query.has(el.getAttribute('data-when'));
  });
})();
