// Dualboard item pages: the one question page and the one run page of a benchmark show the item named in the
// address (?id=<slug>). Subscribed to mkdocs-material's document$, so instant navigation, back and forward
// show the item of the address they reach.
//
// div.dualboard-item[data-src] names its folder's index (lazy-tables.js reads it); the item's page document is
// the data file under the key "<slug>#page" (generator/render/item_pages.py):
//   {"format": 1, "title": "...", "blocks": [block, ...]}
// A block is {"heading": text, "level": n}, {"text": [segment, ...], "class": c} (a segment is a string or
// {"text", "href"}), {"table": {"headers", "rows", "sortable"}} or {"lazy": {...}}, a table whose rows
// lazy-tables.js loads. Every string is written with textContent, never innerHTML: submitted text stays text,
// and a link is made only for the site's own relative addresses (lazy-tables.js's siteLink).
(function () {
  var FORMAT = 1;
  var SLUG = /^[a-z0-9-]+$/;  // a question's or run's slug (generator/names.py)

  function element(tag, className, words) {
    var el = document.createElement(tag);
    if (className) { el.className = className; }
    if (words !== undefined && words !== null) { el.textContent = String(words); }
    return el;
  }

  function headerCell(header) {
    var th = element("th", null, header.text);
    if (header.title) { th.setAttribute("title", header.title); }
    if (header.key) { th.setAttribute("data-key", header.key); }
    if (header.filter) { th.setAttribute("data-filter", "select"); }
    return th;
  }

  // A cell as generator/render/html.py writes one: text or link, badges, a note line, sort and filter values.
  function bodyCell(cell) {
    var td = element("td", cell["class"] || null);
    td.appendChild(cell.href ? window.dualboardLazy.siteLink(cell.text, cell.href) : document.createTextNode(cell.text));
    (cell.badges || []).forEach(function (label) {
      td.appendChild(document.createTextNode(" "));
      td.appendChild(element("span", "dualboard-badge", label));
    });
    if (cell.note) { td.appendChild(element("span", "dualboard-cell-note", cell.note)); }
    if (cell.sort !== undefined) { td.setAttribute("data-sort", cell.sort); }
    if (cell.filter !== undefined) { td.setAttribute("data-filter", cell.filter); }
    return td;
  }

  // The markup of generator/render/html.py's table(), so tables.js and the theme treat it the same.
  function table(headers, rows, classes) {
    var wrapper = element("div", ["dualboard-table"].concat(classes).join(" "));
    var scroll = wrapper.appendChild(element("div", "md-typeset__scrollwrap"));
    var inner = scroll.appendChild(element("div", "md-typeset__table"));
    var t = inner.appendChild(element("table"));
    var head = t.appendChild(element("thead")).appendChild(element("tr"));
    headers.forEach(function (h) { head.appendChild(headerCell(h)); });
    var body = t.appendChild(element("tbody"));
    rows.forEach(function (row) {
      var tr = body.appendChild(element("tr"));
      row.forEach(function (cell) { tr.appendChild(bodyCell(cell)); });
    });
    return wrapper;
  }

  function lazyTable(spec, src) {
    var div = element("div", "dualboard-lazy");
    div.setAttribute("data-src", src);
    div.setAttribute("data-key", spec.key);
    div.setAttribute("data-noun", spec.noun);
    var status = div.appendChild(element("p", "dualboard-lazy-status"));
    status.appendChild(element("span", "dualboard-lazy-message", "The " + spec.noun + " are loading."));
    status.appendChild(document.createTextNode(
      " Every answer and verdict is also in the scored data of each release, listed on the "));
    status.appendChild(window.dualboardLazy.siteLink("Downloads", spec.downloads));
    status.appendChild(document.createTextNode(" page."));
    var classes = ["dualboard-sortable"].concat(spec.filterable ? ["dualboard-filterable"] : []);
    div.appendChild(table(spec.headers, [], classes));
    return div;
  }

  function block(b, src) {
    if (b.heading !== undefined) {
      var level = b.level >= 2 && b.level <= 4 ? b.level : 2;
      var h = element("h" + level, null, b.heading);
      h.id = String(b.heading).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");  // as MkDocs' toc
      return h;
    }
    if (b.text !== undefined) {
      var p = element("p", b["class"] || null);
      b.text.forEach(function (part) {
        p.appendChild(typeof part === "string" ? document.createTextNode(part)
          : window.dualboardLazy.siteLink(part.text, part.href));
      });
      return p;
    }
    if (b.table !== undefined) {
      return table(b.table.headers, b.table.rows, b.table.sortable ? ["dualboard-sortable"] : []);
    }
    if (b.lazy !== undefined) { return lazyTable(b.lazy, src); }
    return element("p", null, "");
  }

  function status(root, words) {
    var line = root.querySelector(".dualboard-item-message");
    if (line) { line.textContent = words; }
  }

  function show(root) {
    if (root.dataset.state) { return; }
    root.dataset.state = "loading";
    var noun = root.dataset.noun || "item";
    var id = new URLSearchParams(location.search).get("id");
    root.dataset.id = id || "";  // which item this element shows (instant navigation replaces the element)
    if (!id) {
      root.dataset.state = "error";
      status(root, "No " + noun + " is named in this address: open one from the list.");
      return;
    }
    status(root, "Loading " + noun + " " + id + "…");
    var src = root.dataset.src;
    (SLUG.test(id) ? window.dualboardLazy.dataFiles(src, id + "#page") : Promise.reject(new Error("names no data file")))
      .catch(function (err) {
        throw /names no data file/.test(err.message) ? new Error("the index names no page for " + noun + " " + id) : err;
      })
      .then(function (urls) {
        if (urls.length !== 1) { throw new Error("the index names " + urls.length + " page files for " + id); }
        return window.dualboardLazy.load(urls[0]);
      })
      .then(function (doc) {
        if (doc.format !== FORMAT) { throw new Error("page format " + doc.format + ", expected " + FORMAT); }
        var parts = document.createDocumentFragment();
        doc.blocks.forEach(function (b) { parts.appendChild(block(b, src)); });
        root.textContent = "";
        root.appendChild(parts);
        var h1 = document.querySelector("article h1");
        if (h1) { h1.textContent = doc.title; }
        var topic = document.querySelector(".md-header__topic[data-md-component='header-topic'] .md-ellipsis");
        if (topic) { topic.textContent = doc.title; }  // the header's title, shown once the page scrolls
        var cut = document.title.indexOf(" - ");
        document.title = doc.title + (cut >= 0 ? document.title.slice(cut) : "");
        root.dataset.state = "done";
        if (window.dualboardTables) { window.dualboardTables.wire(root); }
        window.dualboardLazy.loadAll(root);
        var target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
        if (target) { target.scrollIntoView(); }  // a link to a section: it exists only now
      })
      .catch(function (err) {
        root.dataset.state = "error";
        status(root, "The " + noun + " could not be shown (" + err.message + ").");
      });
  }

  function showAll() { document.querySelectorAll("div.dualboard-item[data-src]").forEach(show); }

  // An address of the pages this site once built per item (benchmarks/B/runs/<slug>/) is not found: go to the
  // item on the page that shows it now.
  var OLD_ADDRESS = /^(.*\/benchmarks\/[^\/]+\/)(runs|questions)\/([a-z0-9-]+)\/?$/;
  var PAGE_OF = { runs: "run", questions: "question" };
  var old = OLD_ADDRESS.exec(location.pathname);
  if (old && old[3] !== PAGE_OF[old[2]] && document.querySelector("div.dualboard-item") === null) {
    location.replace(old[1] + old[2] + "/" + PAGE_OF[old[2]] + "/?id=" + old[3] + location.hash);
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(showAll);
  } else {
    document.addEventListener("DOMContentLoaded", showAll);
  }
})();
