"""The minimum-detectable-effect table (``power.csv``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

COLUMNS = ["comparison", "grading", "run_id", "n_questions", "rounds", "mde_points",
           "mde_points_normal", "method"]


def _method(test: str, mde: float) -> str:
    """Name the MDE solver used for a comparison's test."""
    base = "mcnemar_exact" if test == "mcnemar_exact" else "paired_t"
    return base if np.isfinite(mde) else f"{base}: not detectable at this n/discordance"


def _normal(diff_se: float, power: float = 0.8, alpha: float = 0.05) -> float:
    """Return Miller's normal-approximation MDE (z_{1-α/2} + z_{1-β})·SE(d̄)."""
    return float((stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * diff_se)


def power_table(models: pd.DataFrame, pairwise: pd.DataFrame, rounds: pd.Series) -> pd.DataFrame:
    """Return the MDE (points, 80 % power, two-sided α = .05) of every comparison type.

    One row per run for answer_key vs traditional; one ``run_id == "all"`` row
    per comparison type summarising the benchmark (median over runs or pairs).
    Columns: ``comparison``, ``grading``, ``run_id``, ``n_questions``,
    ``rounds`` (most rounds per question), ``mde_points`` (exact solver),
    ``mde_points_normal`` (Miller Eq. 9/10, normal approximation), ``method``;
    see ``COLUMNS["power"]``. ``rounds`` maps run_id to its rounds.
    """
    rows = [{"comparison": "answer_key_vs_traditional", "grading": "answer_key-traditional",
             "run_id": r.run_id, "n_questions": r.n_questions, "rounds": int(rounds[r.run_id]),
             "mde_points": r.mde_points, "mde_points_normal": _normal(r.diff_se),
             "method": _method(r.test, r.mde_points)} for r in models.itertuples()]
    if len(models):
        rows.append(_summary_row("answer_key_vs_traditional", "answer_key-traditional",
                                 models, int(rounds.max())))
    for g, sub in pairwise.groupby("grading", sort=False):
        runs = pd.unique(sub[["run_a", "run_b"]].to_numpy().ravel())
        rows.append(_summary_row("run_vs_run", g, sub, int(rounds[runs].max())))
    return pd.DataFrame(rows, columns=COLUMNS)


def _summary_row(comparison: str, grading: str, table: pd.DataFrame, rounds: int) -> dict:
    """Summarise many comparisons by the median n and MDE."""
    mde = table["mde_points"].to_numpy(dtype=float)
    test = table["test"].mode().iloc[0] if len(table) else "paired_t"
    median = float(np.nanmedian(mde)) if np.isfinite(mde).any() else float("nan")
    return {"comparison": comparison, "grading": grading, "run_id": "all",
            "n_questions": int(table["n_questions"].median()), "rounds": rounds,
            "mde_points": median,
            "mde_points_normal": _normal(float(np.nanmedian(table["diff_se"]))),
            "method": _method(test, median) + " (median)"}
