// Dualboard tables: sorting (tablesort, vendored), filters, and the view in the address.
// Subscribed to mkdocs-material's document$ so tables on pages reached by
// instant navigation are wired too.
//
// * Every table inside .dualboard-sortable sorts by clicking a header.
// * Every .dualboard-filterable table gets a text filter, and a drop-down per
//   header marked data-filter="select" (a cell's data-filter, else its text);
//   the tables of one grading switch share their filters. A table whose rows load from a data file
//   (lazy-tables.js) is wired once they are in: lazy-tables.js calls window.dualboardTables.wire.
// * The view lives in the query string so a link shares it:
//   ?grading=KEY (the checked .dualboard-switch-input's value),
//   &sort=KEY&order=ascending|descending (the sorted header's data-key).
(function () {
  var restoring = false;

  function sortBy(table, header, order) {
    table.querySelectorAll("th[aria-sort]").forEach(function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", order);
    table.dualboardSort.current = header;
    table.dualboardSort.sortTable(header, true);  // true: keep the aria-sort just set
  }

  // Apply a sort to every table of the page with the same column (both gradings' tables).
  function sortAll(key, order, except) {
    restoring = true;
    document.querySelectorAll(".dualboard-sortable table").forEach(function (table) {
      var header = table.querySelector('th[data-key="' + CSS.escape(key) + '"]');
      if (header && table !== except && table.dualboardSort) { sortBy(table, header, order); }
    });
    restoring = false;
  }

  function saveView(changes) {
    var params = new URLSearchParams(location.search);
    Object.keys(changes).forEach(function (name) { params.set(name, changes[name]); });
    history.replaceState(history.state, "", location.pathname + "?" + params.toString() + location.hash);
  }

  function wireSorting(root) {
    root.querySelectorAll(".dualboard-sortable table").forEach(function (table) {
      if (table.dataset.sortable === "1") { return; }
      table.dataset.sortable = "1";
      table.dualboardSort = new Tablesort(table);
      table.addEventListener("afterSort", function () {
        var header = table.dualboardSort.current;
        if (restoring || !header || !header.dataset.key) { return; }
        var order = header.getAttribute("aria-sort");
        saveView({ sort: header.dataset.key, order: order });
        sortAll(header.dataset.key, order, table);
      });
    });
  }

  function wireSwitch(root) {
    root.querySelectorAll("input.dualboard-switch-input").forEach(function (input) {
      if (input.dataset.wired === "1") { return; }
      input.dataset.wired = "1";
      input.addEventListener("change", function () { if (input.checked) { saveView({ grading: input.value }); } });
    });
  }

  function restoreView(root) {
    var params = new URLSearchParams(location.search);
    var grading = params.get("grading");
    root.querySelectorAll("input.dualboard-switch-input").forEach(function (input) {
      if (input.value === grading) { input.checked = true; }
    });
    var key = params.get("sort");
    if (key) { sortAll(key, params.get("order") === "descending" ? "descending" : "ascending", null); }
  }

  function cellValue(cell) {
    return cell.hasAttribute("data-filter") ? cell.getAttribute("data-filter") : cell.textContent.trim();
  }

  function wireFilters(root) {
    root.querySelectorAll(".dualboard-filterable").forEach(function (wrapper) {
      var table = wrapper.querySelector("table");
      if (!table || wrapper.dataset.filtered === "1") { return; }
      var lazy = wrapper.closest(".dualboard-lazy");
      if (lazy && lazy.dataset.state !== "done") { return; }  // lazy-tables.js wires it once its rows are in
      wrapper.dataset.filtered = "1";
      var rows = Array.prototype.slice.call(table.tBodies[0].rows);
      var bar = document.createElement("div");
      bar.className = "dualboard-filters";
      var text = document.createElement("input");
      text.type = "search";
      text.placeholder = "Filter rows";
      text.setAttribute("aria-label", "Filter rows by any text");
      bar.appendChild(text);
      var selects = [];
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
        if (th.dataset.filter !== "select") { return; }
        var values = [];
        rows.forEach(function (row) {
          var v = cellValue(row.cells[index]);
          if (values.indexOf(v) < 0) { values.push(v); }
        });
        values.sort();
        var label = document.createElement("label");
        label.textContent = th.textContent + " ";
        var select = document.createElement("select");
        select.dataset.column = String(index);
        select.dataset.key = th.dataset.key || "";
        [""].concat(values).forEach(function (v) {
          var option = document.createElement("option");
          option.value = v;
          option.textContent = v === "" ? "all" : v;
          select.appendChild(option);
        });
        label.appendChild(select);
        bar.appendChild(label);
        selects.push(select);
      });
      var count = document.createElement("span");
      count.className = "dualboard-filter-count";
      bar.appendChild(count);
      function apply() {
        var query = text.value.trim().toLowerCase();
        var shown = 0;
        rows.forEach(function (row) {
          var keep = !query || row.textContent.toLowerCase().indexOf(query) >= 0;
          selects.forEach(function (select) {
            if (select.value !== "" && cellValue(row.cells[Number(select.dataset.column)]) !== select.value) { keep = false; }
          });
          row.hidden = !keep;
          if (keep) { shown += 1; }
        });
        count.textContent = shown + " of " + rows.length + " rows";
      }
      bar.dualboardApply = apply;
      text.addEventListener("input", function () { apply(); mirror(bar); });
      selects.forEach(function (select) { select.addEventListener("change", function () { apply(); mirror(bar); }); });
      apply();
      wrapper.parentNode.insertBefore(bar, wrapper);
    });
  }

  // The two gradings' tables of a leaderboard hold the same runs: a filter set on one applies to both.
  function mirror(source) {
    var group = source.closest(".dualboard-switch");
    if (!group) { return; }
    group.querySelectorAll(".dualboard-filters").forEach(function (bar) {
      if (bar === source) { return; }
      bar.querySelector("input[type='search']").value = source.querySelector("input[type='search']").value;
      source.querySelectorAll("select").forEach(function (select) {
        var twin = bar.querySelector('select[data-key="' + CSS.escape(select.dataset.key) + '"]');
        if (twin) { twin.value = select.value; }
      });
      bar.dualboardApply();
    });
  }

  function wire(root) {
    wireSorting(root);
    wireFilters(root);
    wireSwitch(root);
    restoreView(root);
  }

  window.dualboardTables = { wire: wire };  // for lazy-tables.js, whose rows arrive after the page
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { wire(document); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { wire(document); });
  }
})();
