"""Plotly figures as plain JSON, one file per chart.

Figures are drawn in the browser by ``javascripts/charts.js``; plotly.js is
written once per site from the installed plotly package (never a CDN).
"""

from __future__ import annotations

import json
from html import escape

import pandas as pd
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

GRADING_LABELS = {"traditional": "Traditional grading", "answer_key": "Answer-key grading"}
GRADING_COLORS = {"traditional": "#7986cb", "answer_key": "#e65100"}


def plotly_js() -> str:
    """The plotly.js bundle shipped with the installed plotly package."""
    return get_plotlyjs()


def scores_figure(models: pd.DataFrame) -> go.Figure:
    """Scores of every run under both gradings, with question-clustered 95 % CIs.

    One row per run is expected, with ``model``, ``run_id`` and, per grading g,
    ``g_mean``, ``g_ci_low``, ``g_ci_high`` on 0–100 (models.csv).
    """
    ordered = models.sort_values(["answer_key_mean", "run_id"], ascending=[True, True])
    # Plotly reads a subset of HTML in labels; escaping keeps names inert.
    labels = [escape(f"{m} ({r})") for m, r in zip(ordered["model"], ordered["run_id"])]
    fig = go.Figure()
    for grading, label in GRADING_LABELS.items():
        mean = ordered[f"{grading}_mean"]
        fig.add_trace(go.Scatter(
            x=mean, y=labels, mode="markers", name=label,
            marker={"color": GRADING_COLORS[grading], "size": 10},
            error_x={"type": "data", "symmetric": False,
                     "array": ordered[f"{grading}_ci_high"] - mean,
                     "arrayminus": mean - ordered[f"{grading}_ci_low"]},
        ))
    fig.update_layout(
        xaxis={"title": {"text": "Score (0–100), 95 % CI clustered by question"}, "range": [0, 100]},
        yaxis={"automargin": True}, legend={"orientation": "h", "y": -0.2},
        margin={"l": 10, "r": 10, "t": 10, "b": 10}, height=max(320, 48 * len(ordered) + 120),
        template="plotly_white",
    )
    return fig


def figure_json(fig: go.Figure) -> str:
    """Serialise a figure deterministically (sorted keys) for the chart loader."""
    return json.dumps(json.loads(fig.to_json()), sort_keys=True, separators=(",", ":"))
