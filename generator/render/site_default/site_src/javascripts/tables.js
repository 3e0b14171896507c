// Make every Dualboard table sortable (tablesort, vendored). Subscribed to
// mkdocs-material's document$ so tables on pages reached by instant
// navigation are wired too.
(function () {
  function wire(root) {
    root.querySelectorAll(".dualboard-sortable table").forEach(function (table) {
      if (table.dataset.sortable === "1") { return; }
      table.dataset.sortable = "1";
      new Tablesort(table);
    });
  }
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { wire(document); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { wire(document); });
  }
})();
