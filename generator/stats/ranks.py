"""Rank intervals: simultaneous ones from Holm decisions, and the marginal bootstrap view.

* Simultaneous (primary): rank_lo(j) = 1 + #runs Holm-significantly above j,
  rank_hi(j) = m - #runs Holm-significantly below j. "Statistically tied for
  first" = every run with rank_lo = 1. Runs with fewer than
  :data:`~dualboard.stats.paired.TOO_FEW_QUESTIONS` questions get no rank
  interval and no tie group (Methodology, §Small benchmarks).
* A run whose coverage in a grading is under
  :data:`~dualboard.stats.scores.MIN_COVERAGE` is not ranked there at all:
  no rank, no interval, no tie group, and it is not counted in the others'
  (its mean covers only the answers a grader could judge, not the benchmark).
  Nor is a run listed apart (``apart_reason``: it answered under ``min_answered``
  of the current questions), in either grading.
* Bootstrap (secondary, Arena-style): questions resampled jointly for every
  run (the same ids), percentile interval of each run's mean, and
  rank = 1 + #runs whose lower bound exceeds this run's upper bound
  (FastChat ``recompute_final_ranking``). Marginal and overlap-based, not
  simultaneous.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dualboard.stats.paired import TOO_FEW_QUESTIONS
from dualboard.stats.scores import GRADINGS, ranked_in


def holm_rank_intervals(pairwise: pd.DataFrame, means: pd.Series, grading: str) -> pd.DataFrame:
    """Return rank_ci_low, rank_ci_high and tied_first per run for one grading.

    ``means`` is indexed by run_id and holds the ranked runs only; ``pairwise``
    is :func:`pairwise_table` output (pairs with another run are ignored).

    Examples
    --------
    >>> pw = pd.DataFrame({"grading": "g", "run_a": ["a", "a", "b"], "run_b": ["b", "c", "c"],
    ...                    "diff_mean": [5.0, 20, 15], "significant": [False, True, True]})
    >>> holm_rank_intervals(pw, pd.Series({"a": 80.0, "b": 75, "c": 60}), "g")["rank_ci_low"].tolist()
    [1, 1, 3]
    """
    pw = pairwise[
        (pairwise["grading"] == grading)
        & pairwise["significant"]
        & pairwise["run_a"].isin(means.index)
        & pairwise["run_b"].isin(means.index)
    ]
    above = pd.Series(0, index=means.index)
    below = pd.Series(0, index=means.index)
    a_wins = pw["diff_mean"] > 0
    winners = pd.concat([pw.loc[a_wins, "run_a"], pw.loc[~a_wins, "run_b"]])
    losers = pd.concat([pw.loc[a_wins, "run_b"], pw.loc[~a_wins, "run_a"]])
    above = above.add(losers.value_counts(), fill_value=0).astype(int)
    below = below.add(winners.value_counts(), fill_value=0).astype(int)
    out = pd.DataFrame({"rank_ci_low": 1 + above, "rank_ci_high": len(means) - below})
    out["tied_first"] = out["rank_ci_low"] == 1
    return out


def bootstrap_means(matrix: np.ndarray, mask: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Return bootstrap means (B × runs) of a questions × runs matrix under resampling weights."""
    values, present = np.where(mask, matrix, 0.0), mask.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weights @ values) / (weights @ present)


def resampling_weights(n_questions: int, n_boot: int, seed: int) -> np.ndarray:
    """Return B × n multinomial counts: how often each question is drawn in each resample."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_questions, np.full(n_questions, 1 / n_questions), size=n_boot)


def bootstrap_rank(
    qmeans: pd.DataFrame, grading: str, weights: np.ndarray, question_ids: pd.Index, alpha: float = 0.05
) -> pd.Series:
    """Return the Arena-style rank 1 + #(lower bound of k > upper bound of j), per run."""
    sub = qmeans[qmeans["grading"] == grading]
    if sub.empty:
        return pd.Series(dtype=float)
    wide = sub.pivot(index="question_id", columns="run_id", values="mean").reindex(question_ids)
    values = wide.to_numpy(dtype=float)
    boot = bootstrap_means(values, np.isfinite(values), weights.astype(float))
    lo = np.nanquantile(boot, alpha / 2, axis=0)
    hi = np.nanquantile(boot, 1 - alpha / 2, axis=0)
    rank = 1 + (lo[None, :] > hi[:, None]).sum(axis=1)
    return pd.Series(rank, index=wide.columns)


def add_ranks(
    models: pd.DataFrame, pairwise: pd.DataFrame, qmeans: pd.DataFrame, *, seed: int, n_boot: int, alpha: float = 0.05
) -> pd.DataFrame:
    """Add point ranks, Holm rank intervals, tied-first flags and bootstrap ranks to ``models``.

    Only runs whose ``{grading}_coverage`` reaches the threshold and that are not
    listed apart are ranked in that grading (``ranked_{grading}``,
    :func:`~dualboard.stats.scores.ranked_in`); the others get NaN in every rank column.
    """
    models = models.set_index("run_id")
    question_ids = pd.Index(sorted(qmeans["question_id"].unique()))
    weights = resampling_weights(len(question_ids), n_boot, seed)
    for g in GRADINGS:
        ranked = ranked_in(models, g)
        judged = qmeans[(qmeans["grading"] == g) & qmeans["run_id"].isin(ranked[ranked].index)]
        few = judged.groupby("run_id").size().reindex(models.index, fill_value=0) < TOO_FEW_QUESTIONS
        means = models.loc[ranked, f"{g}_mean"]
        iv = holm_rank_intervals(pairwise, means, g).reindex(models.index)
        models[f"ranked_{g}"] = ranked
        models[f"rank_{g}"] = means.rank(ascending=False, method="min").reindex(models.index)
        models[f"rank_ci_low_{g}"] = iv["rank_ci_low"].astype(float).mask(few)
        models[f"rank_ci_high_{g}"] = iv["rank_ci_high"].astype(float).mask(few)
        models[f"tied_first_{g}"] = iv["tied_first"].astype("boolean").mask(few)
        models[f"bootstrap_rank_{g}"] = (
            bootstrap_rank(judged, g, weights, question_ids, alpha).reindex(models.index).astype(float)
        )
    models["rank_ci_low"] = models["rank_ci_low_answer_key"]
    models["rank_ci_high"] = models["rank_ci_high_answer_key"]
    return models.reset_index()
