// Dualboard lazy tables: fill a table's rows from its data file (a question's answers, a run's disagreements).
// Subscribed to mkdocs-material's document$ so pages reached by instant navigation are filled too; item-pages.js
// calls loadAll again once it has built a question's or run's tables.
//
// Each div.dualboard-lazy[data-src][data-key] holds a status line and a table whose body is empty. data-src
// is the index of the page's folder, which names the data files of each table by its key
// (generator/render/lazy_tables.py), so the page's HTML stays the same when the answers change:
//   {"format": 2, "shared": "../../../shared/", "files": {"q1#answers": ["<sha256>.json.gz", ...], ...}}
// A table's rows may be split over several files (shards, each with its own links): they are fetched together
// and shown one file after the other, in the index's order. Each data file is JSON, gzip-compressed at rest:
//   {"format": 1, "pass_mark": P, "kinds": [...], "links": [[text, href], ...], "rows": [[cell, ...], ...]}
// Every cell is written with textContent, never innerHTML: submitted text stays text. A row whose
// verdicts fall on both sides of pass_mark gets the class dualboard-disagree. Sorting and filters are
// tables.js's: tablesort reads the rows when a header is clicked (cells carry data-sort where text would
// sort wrong), and the filters of a .dualboard-filterable table are wired once its rows are in.
(function () {
  var FORMAT = 1;  // of a data file
  var INDEX_FORMAT = 2;  // of an index
  var MISSING = "-1000000000000";  // sorts a missing score below every real one, as the site's HTML tables do
  var SHARED = /^(\.\.\/)*shared\/$/;  // where an index may say the data files are: the site's own shared/
  var DATA_FILE = /^[0-9a-f]{64}\.json\.gz$/;  // a data file's name: the SHA-256 of its JSON
  var indexes = {};  // index URL -> promise of its document: pages of one folder share it across navigation

  // The file's text: gzip at rest, unless the server already decoded it (Content-Encoding).
  function load(url) {
    return fetch(url)
      .then(function (response) {
        if (!response.ok) { throw new Error(response.status + " " + response.statusText); }
        return response.arrayBuffer();
      })
      .then(function (buffer) {
        var bytes = new Uint8Array(buffer);
        if (bytes.length > 1 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
          var stream = new Blob([buffer]).stream().pipeThrough(new DecompressionStream("gzip"));
          return new Response(stream).text();
        }
        return new TextDecoder().decode(bytes);
      })
      .then(JSON.parse);
  }

  // The index at a page-relative URL, fetched once per URL (a failed fetch is tried again by the next page).
  function index(src) {
    var url = new URL(src, document.baseURI).href;
    if (!indexes[url]) {
      indexes[url] = load(url).then(function (doc) {
        if (doc.format !== INDEX_FORMAT) {
          throw new Error("index format " + doc.format + ", expected " + INDEX_FORMAT);
        }
        return { url: url, doc: doc };
      });
      indexes[url].catch(function () { delete indexes[url]; });
    }
    return indexes[url];
  }

  // The URLs of the data files of the table with this key, as its folder's index names them.
  function dataFiles(src, key) {
    return index(src).then(function (found) {
      var files = found.doc.files || {};
      var names = Object.prototype.hasOwnProperty.call(files, key) ? files[key] : null;
      var valid = Array.isArray(names) && SHARED.test(found.doc.shared) && names.every(function (name) {
        return typeof name === "string" && DATA_FILE.test(name);
      });
      if (!valid) { throw new Error("the index names no data file for this table"); }
      return names.map(function (name) { return new URL(found.doc.shared + name, found.url).href; });
    });
  }

  // Every data file of a table, fetched together, in the index's order.
  function loadShards(urls) {
    return Promise.all(urls.map(load)).then(function (shards) {
      shards.forEach(function (data) {
        if (data.format !== FORMAT) { throw new Error("data format " + data.format + ", expected " + FORMAT); }
      });
      return shards;
    });
  }

  function text(td, value) {
    td.textContent = value === null || value === undefined ? "" : String(value);
  }

  function note(td, value) {
    if (value === null || value === undefined) { return; }
    var span = document.createElement("span");
    span.className = "dualboard-cell-note";
    span.textContent = String(value);
    td.appendChild(span);
  }

  // Links come from the site itself (pages of the same site, relative, perhaps naming an item by its slug);
  // anything else is shown as text.
  var SITE_LINK = /^(\.\.\/)+[A-Za-z0-9_.\/-]*(\?id=[a-z0-9-]+)?$/;
  function siteLink(label, href) {
    if (typeof href !== "string" || !SITE_LINK.test(href)) { return document.createTextNode(String(label)); }
    var a = document.createElement("a");
    a.setAttribute("href", href);
    a.textContent = String(label);
    return a;
  }

  function linkCell(td, pair) {
    if (pair) { td.appendChild(siteLink(pair[0], pair[1])); }
  }

  // One row; returns whether its verdicts disagree on pass/fail.
  function fillRow(tr, row, data) {
    var passes = {};
    data.kinds.forEach(function (kind, i) {
      var value = row[i];
      var td = document.createElement("td");
      if (kind === "link") {
        td.className = "dualboard-wrap";  // a submitted model name wraps rather than widen the table
        linkCell(td, data.links[value]);
      } else if (kind === "number") {
        text(td, value);
        td.setAttribute("data-sort", value === null ? MISSING : String(value));
      } else if (kind === "options") {
        text(td, value ? value[0] : "—");
        if (value) { note(td, value[1]); }
      } else if (kind === "response" || kind === "wrap") {
        td.className = kind === "response" ? "dualboard-response" : "dualboard-wrap";
        text(td, value);
      } else if (kind === "value" || kind === "verdict") {
        var score = value ? value[0] : null;
        if (kind === "verdict") { td.className = "dualboard-verdict"; }
        text(td, value ? value[1] : "—");
        if (value) { note(td, value[2]); }
        td.setAttribute("data-sort", score === null ? MISSING : String(score));
        if (kind === "verdict" && score !== null) { passes[score >= data.pass_mark] = true; }
      } else {
        text(td, value);
      }
      tr.appendChild(td);
    });
    return Object.keys(passes).length > 1;
  }

  // Every shard's rows into the table, in order; returns [rows, highlighted rows].
  function fill(el, shards) {
    var body = el.querySelector("tbody");
    var rows = document.createDocumentFragment();
    var count = 0;
    var highlighted = 0;
    shards.forEach(function (data) {
      data.rows.forEach(function (row) {
        var tr = document.createElement("tr");
        if (fillRow(tr, row, data)) {
          tr.className = "dualboard-disagree";
          highlighted += 1;
        }
        rows.appendChild(tr);
        count += 1;
      });
    });
    body.appendChild(rows);
    return [count, highlighted];
  }

  function message(el, words) {
    el.querySelector(".dualboard-lazy-message").textContent = words;
  }

  function loadAll(root) {
    root.querySelectorAll("div.dualboard-lazy[data-src][data-key]").forEach(function (el) {
      if (el.dataset.state) { return; }
      el.dataset.state = "loading";
      var noun = el.dataset.noun || "rows";
      message(el, "Loading the " + noun + "…");
      dataFiles(el.dataset.src, el.dataset.key)
        .then(loadShards)
        .then(function (shards) {
          var counts = fill(el, shards);
          el.dataset.state = "done";
          if (window.dualboardTables) { window.dualboardTables.wire(el); }  // filters read the rows now in
          message(el, counts[0] + " " + noun + ", " + counts[1] + " highlighted.");
        })
        .catch(function (err) {
          el.dataset.state = "error";
          message(el, "The " + noun + " could not be loaded (" + err.message + ").");
        });
    });
  }

  // For item-pages.js, which builds a page's lazy tables from its page document.
  window.dualboardLazy = { loadAll: loadAll, load: load, dataFiles: dataFiles, siteLink: siteLink };
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { loadAll(document); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { loadAll(document); });
  }
})();
