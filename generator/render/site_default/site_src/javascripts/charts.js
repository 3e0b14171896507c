// Draw every Dualboard chart on the page from its JSON file.
// Subscribed to mkdocs-material's document$ so charts also render after
// instant navigation (which re-runs scripts without their data attributes,
// so figures are never inlined in the page).
(function () {
  function draw(root) {
    root.querySelectorAll("div.dualboard-chart[data-src]").forEach(function (el) {
      if (el.dataset.drawn === "1") { return; }
      el.dataset.drawn = "1";
      fetch(el.dataset.src)
        .then(function (r) { if (!r.ok) { throw new Error(r.status + " " + el.dataset.src); } return r.json(); })
        .then(function (fig) {
          return Plotly.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false });
        })
        .catch(function (err) {
          el.dataset.drawn = "error";
          el.textContent = "Chart could not be loaded: " + err.message;
        });
    });
  }
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { draw(document); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { draw(document); });
  }
})();
