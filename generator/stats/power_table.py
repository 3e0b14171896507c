"""The minimum-detectable-effect table (``power.csv``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from dualboard.stats.tables import COLUMNS, documents


def _normal(diff_se: float | np.ndarray, power: float = 0.8, alpha: float = 0.05) -> float | np.ndarray:
    """Return Miller's normal-approximation MDE (z_{1-α/2} + z_{1-β})·SE(d̄), of one SE or of each of an array."""
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return z * diff_se if isinstance(diff_se, np.ndarray) else float(z * diff_se)


def _method(test: str) -> str:
    """Name the MDE solver used for a comparison's test."""
    return "mcnemar_exact" if test == "mcnemar_exact" else "paired_t"


@documents("power")
def power_table(models: pd.DataFrame, pairwise: pd.DataFrame, rounds: pd.Series) -> pd.DataFrame:
    """Return the MDE (points, 80 % power, two-sided α = .05) of every comparison type.

    One row per run for answer_key vs traditional; one ``run_id == "all"`` row
    per comparison type summarising the benchmark (:func:`summary_row`).
    ``rounds`` maps run_id to its most rounds per question. An MDE that is not
    ``detectable`` (``mde_status``) is empty, and so is its normal
    approximation: (z + z)·SE(d̄) would read 0.0 where SE = 0.
    """
    rows = [
        {
            "comparison": "answer_key_vs_traditional",
            "grading": "answer_key-traditional",
            "run_id": r.run_id,
            "n_questions": r.n_questions_paired,
            "n_discordant": r.n_discordant_up + r.n_discordant_down,
            "rounds": int(rounds[r.run_id]),
            "mde_points": r.mde_points,
            "mde_status": r.mde_status,
            "mde_points_normal": _normal(r.diff_se) if r.mde_status == "detectable" else np.nan,
            "method": _method(r.test),
            "n_comparisons": 1,
            "n_detectable": int(r.mde_status == "detectable"),
        }
        for r in models.itertuples()
    ]
    if len(models):
        rows.append(
            summary_row(
                "answer_key_vs_traditional",
                "answer_key-traditional",
                models.assign(n_questions=models["n_questions_paired"]),
                int(rounds.max()),
            )
        )
    for g, sub in pairwise.groupby("grading", sort=False):
        runs = pd.unique(sub[["run_a", "run_b"]].to_numpy().ravel())
        rows.append(summary_row("run_vs_run", g, sub, int(rounds[runs].max())))
    return pd.DataFrame(rows, columns=list(COLUMNS["power"]))


def summary_row(comparison: str, grading: str, table: pd.DataFrame, rounds: int) -> dict:
    """Summarise many comparisons by the median n and the median MDE over all of them.

    A comparison that can detect nothing counts as an infinite MDE, so the
    median says "nothing detectable" when most comparisons do (it is no longer
    the median of the few finite ones); ``not_estimable`` comparisons are left
    out. ``n_detectable`` of ``n_comparisons`` have a finite MDE.
    """
    status = table["mde_status"]
    known = status != "not_estimable"
    exact = np.where(status == "detectable", table["mde_points"], np.inf)[known]
    normal = np.where(status == "detectable", _normal(table["diff_se"].to_numpy(dtype=float)), np.inf)[known]
    median = float(np.median(exact)) if len(exact) else np.nan
    mde_status = "not_estimable" if not len(exact) else "detectable" if np.isfinite(median) else "nothing_detectable"
    normal_median = float(np.median(normal)) if len(normal) else np.nan
    return {
        "comparison": comparison,
        "grading": grading,
        "run_id": "all",
        "n_questions": int(table["n_questions"].median()),
        "n_discordant": _median_discordant(table),
        "rounds": rounds,
        "mde_points": median if np.isfinite(median) else np.nan,
        "mde_status": mde_status,
        "mde_points_normal": normal_median if np.isfinite(normal_median) else np.nan,
        "method": table["test"].map(_method).mode().iloc[0] + " (median)",
        "n_comparisons": len(table),
        "n_detectable": int((status == "detectable").sum()),
    }


def _median_discordant(table: pd.DataFrame) -> float:
    """The median number of discordant questions of ``table``'s comparisons (NaN where the table has no counts)."""
    if "n_discordant_up" not in table:
        return np.nan
    return float((table["n_discordant_up"] + table["n_discordant_down"]).median())
