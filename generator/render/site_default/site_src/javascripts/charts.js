// Draw every Dualboard chart on the page from its JSON file.
// Subscribed to mkdocs-material's document$ so charts also render after
// instant navigation (which re-runs scripts without their data attributes,
// so figures are never inlined in the page).
// Figures carry no template: each is drawn with the plotly template of the
// palette the reader chose (window.dualboardChartTemplates, from
// chart-templates.js) and redrawn when the palette toggle switches it.
(function () {
  function scheme() {
    var current = document.body.getAttribute("data-md-color-scheme");
    return window.dualboardChartTemplates && window.dualboardChartTemplates[current] ? current : "default";
  }

  function template() {
    return (window.dualboardChartTemplates || {})[scheme()];
  }

  function draw(root) {
    root.querySelectorAll("div.dualboard-chart[data-src]").forEach(function (el) {
      if (el.dataset.drawn === "1") { return; }
      el.dataset.drawn = "1";
      fetch(el.dataset.src)
        .then(function (r) { if (!r.ok) { throw new Error(r.status + " " + el.dataset.src); } return r.json(); })
        .then(function (fig) {
          fig.layout.template = template();
          el.dataset.scheme = scheme();
          return Plotly.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false });
        })
        .catch(function (err) {
          el.dataset.drawn = "error";
          el.textContent = "Chart could not be loaded: " + err.message;
        });
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
