"""The leaderboard's section on a release's own published table: its numbers beside ours, and which we reproduce."""

from __future__ import annotations

import pandas as pd

from dualboard.render.html import Cell, table
from dualboard.render.numbers import format_number
from dualboard.stats.published import MONTE_CARLO_POINTS, PUBLISHED_FILE, method_summary, published_grading

SHOWN = {
    "mean_score": "Mean",
    "std_dev_score": "SD",
    "z_interval_error": "1.96·sd/√n",
    "ci_lower": "CI low",
    "ci_upper": "CI high",
}
"""The published columns, as the section's headers name them."""


def published_section(reconciliation: pd.DataFrame | None, models: dict[str, str] | None = None) -> str:
    """Show the release's published table beside our numbers, and say which method reproduces each column.

    ``reconciliation`` is :func:`dualboard.stats.published.reconcile`'s table (None or empty: no section).
    Our numbers are those of the grading whose means match the published ones. ``models`` names each run as the
    board does (run id → model); a published row without a run keeps the name the source gave it.
    """
    if reconciliation is None or reconciliation.empty:
        return ""
    grading = published_grading(reconciliation)
    shown = grading or "traditional"
    rows = reconciliation[reconciliation["grading"].eq(shown)]
    return (
        "\n## The release's own table\n\n"
        f"The source published its own summary of these runs (kept as `{PUBLISHED_FILE}`). Each cell gives the "
        "published number, then ours recomputed from the same answers as the source counts them (every answer, "
        "every round); ✓ marks a match within the source's rounding, and for an interval bound recomputed by "
        f"bootstrap within {MONTE_CARLO_POINTS:g} point more (the source drew its bootstrap without a seed). "
        + (
            f"The published means are those of {grading.replace('_', '-')} grading.\n\n"
            if grading
            else "No grading here reproduces every published mean: ours are traditional grading's.\n\n"
        )
        + _beside(rows, models or {})
        + "\n**Reconciliation**: which method reproduces each published column.\n\n"
        + _methods(method_summary(reconciliation, shown))
        + "\nThe source's bootstrap was drawn without a seed, so another seed lands within about a point of it; the "
        "intervals on the leaderboard above are clustered by question instead (see the "
        "[methodology](../../methodology.md#published-tables-of-imported-releases)).\n\n"
    )


def _first_method(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """The rows of a column's method that reproduces it on most runs (the first listed on a tie)."""
    of_column = rows[rows["column"].eq(column)]
    counts = of_column.groupby("method", sort=False)["matches"].sum()
    return of_column[of_column["method"].eq(counts.idxmax())].set_index("run_id")


def _beside(rows: pd.DataFrame, models: dict[str, str]) -> str:
    """One row per run: each published number with ours by the method that reproduces it best."""
    by_column = {column: _first_method(rows, column) for column in SHOWN}
    cells = []
    for run_id, model in dict(zip(rows["run_id"], rows["model"], strict=True)).items():
        line = [Cell(str(models.get(run_id, model)))]
        for column in SHOWN:
            entry = by_column[column].loc[run_id]
            mark = " ✓" if bool(entry["matches"]) else ""
            line.append(Cell(f"{format_number(entry['published'])} / {format_number(entry['ours'])}{mark}"))
        cells.append(line)
    headers = ["Model", *(f"{label} (published / ours)" for label in SHOWN.values())]
    return table(headers, cells, sortable=False)


def _methods(summary: pd.DataFrame) -> str:
    """One row per published column and candidate method: on how many runs it reproduces the column."""
    rows = [
        [
            Cell(SHOWN[r.column]),
            Cell(r.method),
            Cell(f"{r.n_matching} of {r.n_runs} runs" + (" — reproduces it" if r.reproduces else "")),
        ]
        for r in summary.itertuples(index=False)
    ]
    return table(["Published column", "Method", "Matches"], rows, sortable=False)
