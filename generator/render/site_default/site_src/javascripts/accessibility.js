// What the theme's markup leaves out for assistive technology: its search box is a dialog with no name.
(function () {
  function name(root) {
    root.querySelectorAll(".md-search[role='dialog']:not([aria-label])").forEach(function (el) {
      el.setAttribute("aria-label", "Search this site");
    });
  }
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { name(document); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { name(document); });
  }
})();
