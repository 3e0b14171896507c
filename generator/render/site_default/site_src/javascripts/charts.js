// Draw every Dualboard chart on the page from its JSON file.
// Subscribed to mkdocs-material's document$ so charts also render after
// instant navigation (which re-runs scripts without their data attributes,
// so figures are never inlined in the page).
// plotly.js (and chart-templates.js) are loaded only once a chart of the page comes near the screen: a page
// without charts never loads them.
// Figures carry no template: each is drawn with the plotly template of the
// palette the reader chose (window.dualboardChartTemplates, from
// chart-templates.js) and redrawn when the palette toggle switches it.
(function () {
  var LIBRARIES = ["plotly.min.js", "chart-templates.js"];  // beside this script
  var here = document.currentScript ? document.currentScript.src : document.baseURI;
  var loading = null;

  // The chart libraries, each loaded once per document (instant navigation keeps them).
  function libraries() {
    if (!loading) {
      loading = Promise.all(LIBRARIES.map(function (name) {
        return new Promise(function (resolve, reject) {
          var script = document.createElement("script");
          script.src = new URL(name, here).href;
          script.onload = resolve;
          script.onerror = function () { reject(new Error(name + " could not be loaded")); };
          document.head.appendChild(script);
        });
      }));
      loading.catch(function () { loading = null; });  // tried again by the next chart
    }
    return loading;
  }

  function scheme() {
    var current = document.body.getAttribute("data-md-color-scheme");
    return window.dualboardChartTemplates && window.dualboardChartTemplates[current] ? current : "default";
  }

  function template() {
    return (window.dualboardChartTemplates || {})[scheme()];
  }

  function drawOne(el) {
    Promise.all([libraries(), fetch(el.dataset.src)])
      .then(function (done) {
        var r = done[1];
        if (!r.ok) { throw new Error(r.status + " " + el.dataset.src); }
        return r.json();
      })
      .then(function (fig) {
        fig.layout.template = template();
        el.dataset.scheme = scheme();
        return Plotly.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false });
      })
      .catch(function (err) {
        el.dataset.drawn = "error";
        el.textContent = "Chart could not be loaded: " + err.message;
      });
  }

  // Each chart is drawn when it comes within a screen's height of the view.
  var near = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (!entry.isIntersecting) { return; }
      near.unobserve(entry.target);
      drawOne(entry.target);
    });
  }, { rootMargin: "100% 0px" }) : null;

  function draw(root) {
    root.querySelectorAll("div.dualboard-chart[data-src]").forEach(function (el) {
      if (el.dataset.drawn) { return; }
      el.dataset.drawn = "1";
      if (near) { near.observe(el); } else { drawOne(el); }
    });
  }

  // Material writes the chosen scheme on <body data-md-color-scheme>.
  function follow() {
    document.querySelectorAll("div.dualboard-chart[data-scheme]").forEach(function (el) {
      if (el.dataset.scheme === scheme() || !el.layout) { return; }
      el.dataset.scheme = scheme();
      Plotly.react(el, el.data, Object.assign({}, el.layout, { template: template() }));
    });
  }
  new MutationObserver(follow).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });

  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { draw(document); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { draw(document); });
  }
})();
