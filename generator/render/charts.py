"""Plotly figures as plain JSON, one file per chart.

Figures are drawn in the browser by ``javascripts/charts.js``; plotly.js is
written once per site from the installed plotly package (never a CDN).
Labels on charts are run ids (validated: ``[a-z0-9._-]``) and benchmark
categories, escaped anyway because plotly reads a subset of HTML in labels.
"""

from __future__ import annotations

import json
from html import escape

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

GRADINGS = ("traditional", "answer_key")
GRADING_LABELS = {"traditional": "Traditional grading", "answer_key": "Answer-key grading"}
GRADING_COLORS = {"traditional": "#7986cb", "answer_key": "#e65100"}
LAYOUT = {"template": "plotly_white", "margin": {"l": 10, "r": 10, "t": 30, "b": 10}}


def plotly_js() -> str:
    """The plotly.js bundle shipped with the installed plotly package."""
    return get_plotlyjs()


def figure_json(fig: go.Figure) -> str:
    """Serialise a figure deterministically (sorted keys) for the chart loader."""
    return json.dumps(json.loads(fig.to_json()), sort_keys=True, separators=(",", ":"))


def _labels(run_ids: pd.Series) -> list[str]:
    return [escape(str(r)) for r in run_ids]


def _height(n: int) -> int:
    return max(320, 28 * n + 140)


def dumbbell_figure(models: pd.DataFrame, ranked_by: str = "answer_key") -> go.Figure:
    """Each run's traditional → answer-key score, joined by a line, with 95 % CIs.

    ``models`` is models.csv (one row per run); runs are ordered by ``ranked_by``.
    """
    ordered = models.sort_values([f"{ranked_by}_mean", "run_id"], ascending=[True, False])
    labels = _labels(ordered["run_id"])
    xs, ys = [], []
    for label, a, b in zip(labels, ordered["traditional_mean"], ordered["answer_key_mean"]):
        xs += [a, b, None]
        ys += [label, label, None]
    fig = go.Figure(go.Scatter(x=xs, y=ys, mode="lines", line={"color": "#9e9e9e", "width": 3},
                               hoverinfo="skip", showlegend=False))
    for grading in GRADINGS:
        mean = ordered[f"{grading}_mean"]
        fig.add_trace(go.Scatter(
            x=mean, y=labels, mode="markers", name=GRADING_LABELS[grading],
            marker={"color": GRADING_COLORS[grading], "size": 11},
            error_x={"type": "data", "symmetric": False, "thickness": 1,
                     "array": ordered[f"{grading}_ci_high"] - mean, "arrayminus": mean - ordered[f"{grading}_ci_low"]},
        ))
    fig.update_layout(**LAYOUT, height=_height(len(ordered)), legend={"orientation": "h", "y": -0.15},
                      xaxis={"title": {"text": "Score (0–100), 95 % CI clustered by question"}, "range": [0, 100]},
                      yaxis={"automargin": True})
    return fig


def forest_figure(models: pd.DataFrame) -> go.Figure:
    """Answer-key − traditional per run with its 95 % CI; a dashed line marks no difference."""
    ordered = models.sort_values(["diff_mean", "run_id"], ascending=[False, False])
    labels = _labels(ordered["run_id"])
    significant = ordered["p_holm"].fillna(1.0) < 0.05
    fig = go.Figure(go.Scatter(
        x=ordered["diff_mean"], y=labels, mode="markers", showlegend=False,
        marker={"symbol": "square", "size": 10, "color": np.where(significant, "#e65100", "#757575")},
        error_x={"type": "data", "symmetric": False, "thickness": 1.5,
                 "array": ordered["diff_ci_high"] - ordered["diff_mean"],
                 "arrayminus": ordered["diff_mean"] - ordered["diff_ci_low"]},
    ))
    fig.add_vline(x=0, line={"dash": "dash", "color": "#424242"})
    fig.update_layout(**LAYOUT, height=_height(len(ordered)), yaxis={"automargin": True},
                      xaxis={"title": {"text": "Answer-key − traditional (points), 95 % CI"}})
    return fig


def category_scores(scored: pd.DataFrame) -> pd.DataFrame:
    """Mean score per run, category and grading: rounds averaged within a question first.

    Returns ``run_id``, ``category``, ``traditional``, ``answer_key`` (0–100,
    over the answers with a verdict, as in models.csv; NaN where none has one).
    """
    questions = scored.groupby(["run_id", "category", "question_id"], sort=True)[list(GRADINGS)].mean()
    return questions.groupby(["run_id", "category"]).mean().reset_index()


def category_heatmap(scores: pd.DataFrame, run_order: list[str]) -> go.Figure:
    """Per-category scores of every run, traditional beside answer-key."""
    categories = sorted(scores["category"].unique())
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[GRADING_LABELS[g] for g in GRADINGS])
    labels = _labels(pd.Series(run_order))
    for col, grading in enumerate(GRADINGS, start=1):
        grid = scores.pivot(index="run_id", columns="category", values=grading).reindex(index=run_order, columns=categories)
        z = grid.to_numpy(dtype=float)
        fig.add_trace(go.Heatmap(
            z=z, x=[escape(str(c)) for c in categories], y=labels, zmin=0, zmax=100, colorscale="Viridis",
            text=[[("" if np.isnan(v) else f"{v:.0f}") for v in row] for row in z], texttemplate="%{text}",
            showscale=col == 2, colorbar={"title": {"text": "score"}},
        ), row=1, col=col)
    fig.update_layout(**LAYOUT, height=_height(len(run_order)))
    fig.update_yaxes(automargin=True, autorange="reversed")
    return fig


def pairwise_matrix(pairwise: pd.DataFrame, grading: str, run_order: list[str]) -> go.Figure:
    """Row run − column run under one grading; ● marks Holm-significant pairs."""
    rows = pairwise[pairwise["grading"] == grading]
    index = {r: i for i, r in enumerate(run_order)}
    n = len(run_order)
    z = np.full((n, n), np.nan)
    mark = [["" for _ in range(n)] for _ in range(n)]
    for rec in rows.itertuples(index=False):
        if rec.run_a not in index or rec.run_b not in index:
            continue
        a, b = index[rec.run_a], index[rec.run_b]
        z[a, b], z[b, a] = rec.diff_mean, -rec.diff_mean
        if bool(rec.significant):
            mark[a][b] = mark[b][a] = "●"
    labels = _labels(pd.Series(run_order))
    limit = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 1.0
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=labels, zmid=0, zmin=-limit, zmax=limit, colorscale="RdBu",
        text=mark, texttemplate="%{text}", colorbar={"title": {"text": "row − column"}},
        hovertemplate="%{y} − %{x}: %{z:.1f} points<extra></extra>",
    ))
    fig.update_layout(**LAYOUT, height=max(360, 26 * n + 160),
                      xaxis={"automargin": True, "tickangle": -45, "side": "bottom"},
                      yaxis={"automargin": True, "autorange": "reversed"})
    return fig
