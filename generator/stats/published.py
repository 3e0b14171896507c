"""Reconcile a release's own published table (``published.csv``) with the numbers recomputed from its answers.

A source that publishes its results with a summary table (the autogenai releases' ``final_stats.csv``) says
what its authors computed; the board recomputes each column from the answers by every method that could have
produced it, and says which columns it reproduces and by which method. The 2024-04-28 paper release's
``ci_lower``/``ci_upper`` are not mean ± 1.96·sd/√n: they are percentiles of 10,000 bootstrap means of the
answers, drawn without a seed and rounded to whole points, so any seed reproduces them only within about a point.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from dualboard.errors import DualboardError
from dualboard.safe_read import read_regular
from dualboard.stats.defaults import SEED
from dualboard.stats.scores import GRADINGS

PUBLISHED_FILE = "published.csv"
"""The release's own table, as the importer keeps it in ``data/benchmarks/<benchmark>/``."""
PUBLISHED_COLUMNS = (
    "run_id",
    "model",
    "mean_score",
    "std_dev_score",
    "z_interval_error",
    "ci_lower",
    "ci_upper",
    "output_count",
)
"""Columns of ``published.csv``: our run id, the model as published, then the source's columns as published
(``output_count`` empty where the source has none)."""
VALUE_COLUMNS = PUBLISHED_COLUMNS[2:7]
"""The published numbers the reconciliation recomputes."""
BOOTSTRAP_RESAMPLES = 10_000
"""Resamples of the source's bootstrap (``bootstrap_n`` in its ``calculate_llm_stats``)."""
MONTE_CARLO_POINTS = 1.0
"""How far (points) a 10,000-resample percentile may land from the source's, drawn with another seed: on 30
answers marked in steps of 20, the bootstrap means lie on a grid of 0.67 points."""
Z = 1.96
"""The source's z, rounded as it rounds it."""

Estimate = Callable[[np.ndarray, np.ndarray], float]
"""A candidate method: answers (0–100) and their bootstrap means → one number."""


def _half_width(x: np.ndarray) -> float:
    return Z * float(np.std(x, ddof=1)) / np.sqrt(x.size)


METHODS: dict[str, dict[str, Estimate]] = {
    "mean_score": {"mean of the answers": lambda x, boot: float(np.mean(x))},
    "std_dev_score": {"sd of the answers (n − 1)": lambda x, boot: float(np.std(x, ddof=1))},
    "z_interval_error": {"1.96·sd/√n over the answers": lambda x, boot: _half_width(x)},
    "ci_lower": {
        "mean − 1.96·sd/√n": lambda x, boot: float(np.mean(x)) - _half_width(x),
        "bootstrap percentile 2.5 % (10,000 resamples of the answers)": lambda x, boot: float(np.percentile(boot, 2.5)),
    },
    "ci_upper": {
        "mean + 1.96·sd/√n": lambda x, boot: float(np.mean(x)) + _half_width(x),
        "bootstrap percentile 97.5 % (10,000 resamples of the answers)": lambda x, boot: float(
            np.percentile(boot, 97.5)
        ),
    },
}
"""Every method that could have produced each published column; the bootstrap ones are Monte Carlo."""


MAX_PUBLISHED_BYTES = 1_000_000
"""Largest ``published.csv`` read: one short row per model."""


def load_published(path: Path, root: Path) -> pd.DataFrame | None:
    """Read a benchmark's ``published.csv`` (a regular file inside ``root``), or None when it has none."""
    if not path.is_file():
        return None
    text = read_regular(path, root=root, limit=MAX_PUBLISHED_BYTES)
    table = pd.read_csv(io.BytesIO(text), dtype={"run_id": str, "model": str}, keep_default_na=False, na_values=[""])
    missing = [c for c in PUBLISHED_COLUMNS[:7] if c not in table.columns]
    if missing:
        raise DualboardError(
            f"{path}: no column {missing[0]!r} — write the header {','.join(PUBLISHED_COLUMNS)} "
            "(`dualboard import` writes it so)"
        )
    return table.assign(run_id=table["run_id"].fillna(""))


def rounding(published: pd.DataFrame) -> float:
    """Return the half-unit the source rounded its numbers to: 0.5 when every one is whole, else float noise.

    Examples
    --------
    >>> rounding(pd.DataFrame({"mean_score": [38.0], "ci_lower": [23.0]}))
    0.5
    >>> rounding(pd.DataFrame({"mean_score": [72.0], "ci_lower": [66.66666666666667]}))
    1e-06
    """
    values = published[[c for c in VALUE_COLUMNS if c in published]].to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    return 0.5 if values.size and np.all(values == np.round(values)) else 1e-6


def reconcile(published: pd.DataFrame, scored: pd.DataFrame, seed: int = SEED) -> pd.DataFrame:
    """Recompute each published number by every candidate method, under each grading, and say which match.

    Parameters
    ----------
    published
        ``published.csv`` (:data:`PUBLISHED_COLUMNS`); rows whose ``run_id`` is not in ``scored`` are skipped.
    scored
        The scored table (``run_id`` and the gradings' scores, one row per answer).
    seed
        Seed of the bootstrap resamples (one generator, runs and gradings in table order).

    Returns
    -------
    pandas.DataFrame
        One row per (run, grading, column, method): ``run_id``, ``model`` (as published), ``grading``,
        ``column`` (the published column), ``method``, ``published``, ``ours`` (recomputed over the answers
        the grading judged, every round an answer as the source counts them), ``tolerance`` (the source's
        rounding, plus :data:`MONTE_CARLO_POINTS` for a bootstrap method) and ``matches``.

    Examples
    --------
    >>> scored = pd.DataFrame({"run_id": "r", "traditional": [0.0, 100, 100, 0], "answer_key": [0.0, 0, 0, 100]})
    >>> published = pd.DataFrame({"run_id": ["r"], "model": ["m"], "mean_score": [50.0], "std_dev_score": [58.0],
    ...     "z_interval_error": [57.0], "ci_lower": [0.0], "ci_upper": [100.0]})
    >>> table = reconcile(published, scored)
    >>> table.loc[table["column"].eq("mean_score"), ["grading", "ours", "matches"]].to_dict("records")
    [{'grading': 'traditional', 'ours': 50.0, 'matches': True},
     {'grading': 'answer_key', 'ours': 25.0, 'matches': False}]
    """
    rng = np.random.default_rng(seed)
    half = rounding(published)
    runs = dict(tuple(scored.groupby("run_id", sort=False)))
    rows = []
    for entry in published.to_dict("records"):
        run = runs.get(entry["run_id"])
        if run is None:
            continue
        for grading in GRADINGS:
            x = pd.to_numeric(run[grading], errors="coerce").dropna().to_numpy(dtype=float)
            boot = rng.choice(x, size=(BOOTSTRAP_RESAMPLES, x.size)).mean(axis=1) if x.size else x
            rows += _rows(entry, grading, x, boot, half)
    return pd.DataFrame(rows, columns=RECONCILIATION_COLUMNS)


RECONCILIATION_COLUMNS = ("run_id", "model", "grading", "column", "method", "published", "ours", "tolerance", "matches")


def _rows(entry: dict, grading: str, x: np.ndarray, boot: np.ndarray, half: float) -> list[tuple]:
    """The reconciliation rows of one published row under one grading."""
    rows = []
    for column, methods in METHODS.items():
        for method, estimate in methods.items():
            ours = estimate(x, boot) if x.size > 1 else float("nan")
            tolerance = half + (MONTE_CARLO_POINTS if method.startswith("bootstrap") else 0.0)
            published = float(entry[column])
            matches = bool(abs(ours - published) <= tolerance + 1e-9)
            rows.append((entry["run_id"], entry["model"], grading, column, method, published, ours, tolerance, matches))
    return rows


def published_grading(reconciliation: pd.DataFrame) -> str | None:
    """Return the grading whose means reproduce every published mean (the scores the source summarised), if any.

    Examples
    --------
    >>> table = pd.DataFrame({"grading": ["traditional", "answer_key"], "column": "mean_score",
    ...     "matches": [False, True]})
    >>> published_grading(table)
    'answer_key'
    """
    means = reconciliation[reconciliation["column"].eq("mean_score")]
    for grading in GRADINGS:
        rows = means[means["grading"].eq(grading)]
        if len(rows) and rows["matches"].all():
            return grading
    return None


def method_summary(reconciliation: pd.DataFrame, grading: str) -> pd.DataFrame:
    """Return, per published column and method, on how many runs the method reproduces the published number.

    Returns
    -------
    pandas.DataFrame
        ``column``, ``method``, ``n_runs``, ``n_matching`` and ``reproduces`` (every run matches), in
        :data:`METHODS` order.
    """
    rows = reconciliation[reconciliation["grading"].eq(grading)]
    summary = (
        rows.groupby(["column", "method"], sort=False)["matches"]
        .agg(n_runs="size", n_matching="sum")
        .reset_index()
        .astype({"n_matching": int})
    )
    return summary.assign(reproduces=summary["n_matching"].eq(summary["n_runs"]))
