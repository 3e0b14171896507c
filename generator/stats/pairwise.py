"""Run vs run within each grading (``pairwise.csv``), Holm-adjusted per grading."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pandas as pd
from scipy import stats

from dualboard.stats import estimators, pair_matrix
from dualboard.stats import pingouin_adapter as pga
from dualboard.stats.comparison import compare, join_notes
from dualboard.stats.models_table import single_round_binary
from dualboard.stats.paired import TOO_FEW_QUESTIONS
from dualboard.stats.pieces import Pieces
from dualboard.stats.scores import GRADINGS, MIN_COVERAGE, POINTS
from dualboard.stats.tables import COLUMNS, documents

OUT_OF_FAMILY = (
    f"not ranked: a run's coverage in this grading is under {100 * MIN_COVERAGE:.0f}%, or it is listed apart "
    "(too few of the questions answered), so the pair is left out of the Holm family and the rank intervals"
)


def welch_unpaired(x: np.ndarray, y: np.ndarray, alpha: float = 0.05) -> dict[str, object]:
    """Return the unpaired comparison (Miller Eq. 5) for runs with no shared questions."""
    mx, sx, _ = estimators.cluster_mean_se(x)
    my, sy, _ = estimators.cluster_mean_se(y)
    se = float(np.sqrt(sx**2 + sy**2))
    df = se**4 / (sx**4 / (len(x) - 1) + sy**4 / (len(y) - 1))
    diff = float(mx - my)
    half = float(estimators.t_quantile(df, alpha)) * se
    return {
        "n_questions": 0,
        "diff_mean": diff,
        "diff_se": se,
        "diff_ci_low": diff - half,
        "diff_ci_high": diff + half,
        "test": "welch_unpaired",
        "p_value": float(2 * stats.t.sf(abs(diff / se), df)),
        "note": "no shared questions: unpaired comparison (Miller Eq. 5)",
    }


def pair_row(a: pd.DataFrame, b: pd.DataFrame, alpha: float) -> dict[str, object]:
    """Compare two runs' question means (indexed by question) over their shared questions."""
    shared = a.index.intersection(b.index)
    if len(shared) == 0 and len(a) > 1 and len(b) > 1:
        rec = welch_unpaired(a["mean"].to_numpy(), b["mean"].to_numpy(), alpha)
        rec.update(mde=float("nan"), mde_status="not_estimable")
    else:
        a, b = a.loc[shared], b.loc[shared]
        rec = compare(
            a["mean"].to_numpy(),
            b["mean"].to_numpy(),
            single_round_binary=single_round_binary(a, b),
            alpha=alpha,
            detail=False,
        )
    rec["mde_points"] = POINTS * float(rec.pop("mde"))
    for k in ("diff_mean", "diff_se", "diff_ci_low", "diff_ci_high"):
        rec[k] = POINTS * float(rec[k])
    return rec


@documents("pairwise")
def pairwise_table(
    qmeans: pd.DataFrame,
    alpha: float = 0.05,
    unranked: Collection[tuple[str, str]] = (),
    pieces: Pieces | None = None,
) -> pd.DataFrame:
    """Return every pair of runs within each grading, with Holm-adjusted p-values.

    ``unranked`` lists the (run_id, grading) pairs not ranked there (coverage
    under :data:`dualboard.stats.scores.MIN_COVERAGE`, or listed apart:
    :func:`dualboard.stats.scores.unranked_runs`): their pairs keep
    their own test but stay out of the Holm family (``p_holm`` NaN, never
    ``significant``), so they move no rank interval. With ``pieces``, a pair
    whose two runs are unchanged in the grading reuses its comparison
    (:mod:`dualboard.stats.pieces`): adding a run compares only its pairs.

    Examples
    --------
    >>> qm = pd.DataFrame({"run_id": ["a"] * 12 + ["b"] * 12, "grading": "traditional",
    ...     "question_id": list(range(12)) * 2, "mean": [1.0] * 12 + [0.0] * 12,
    ...     "n_rounds": 1, "binary": True})
    >>> row = pairwise_table(qm).iloc[0]
    >>> row["test"], float(row["diff_mean"]), bool(row["significant"])
    ('mcnemar_exact', 100.0, True)
    """
    pieces = pieces or Pieces(None)
    frames = [_grading_pairs(qmeans[qmeans["grading"] == g], alpha, pieces).assign(grading=g) for g in GRADINGS]
    columns = list(COLUMNS["pairwise"])
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    return _holm_by_grading(table, alpha, frozenset(unranked)).reindex(columns=columns)


def _grading_pairs(sub: pd.DataFrame, alpha: float, pieces: Pieces) -> pd.DataFrame:
    """Return every pair of one grading (run_a before run_b in run order), known pairs from ``pieces``."""
    runs, questions, values, simple = pair_matrix.wide(sub)
    a, b = np.triu_indices(len(runs), k=1)
    columns = pair_matrix.column_digests(questions, values, simple)
    keys = [Pieces.key_of("pairwise", (alpha,), columns[i], columns[j]) for i, j in zip(a, b)]

    def compute(missing: list[int]) -> list[dict]:
        return _compare_pairs(sub, runs, values, simple, a[missing], b[missing], alpha)

    found = pieces.get_many("pairwise", keys, compute)
    if not found:  # one run: no pair (the table's other columns come as float NaN columns)
        return pd.DataFrame(columns=["run_a", "run_b", "n_questions"])
    table = pd.DataFrame.from_records(found, columns=list(pair_matrix.PAIR_COLUMNS))
    table.insert(0, "run_b", runs[b])
    table.insert(0, "run_a", runs[a])
    return table


def _compare_pairs(
    sub: pd.DataFrame,
    runs: pd.Index,
    values: np.ndarray,
    simple: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    alpha: float,
) -> list[dict]:
    """Compare runs a[k] and b[k]: vectorised, with the scalar path where n < TOO_FEW_QUESTIONS."""
    table = pair_matrix.pairs(a, b, values, simple, alpha)
    scalar = np.flatnonzero(table["n_questions"].to_numpy() < TOO_FEW_QUESTIONS)
    records = table.to_dict("records")
    if len(scalar):
        by_run = {r: q.set_index("question_id") for r, q in sub.groupby("run_id", sort=True)}
        for k in scalar:
            rec = pair_row(by_run[runs[a[k]]], by_run[runs[b[k]]], alpha)
            records[k].update((key, rec[key]) for key in pair_matrix.PAIR_COLUMNS if key in rec)
    return records


def _holm_by_grading(table: pd.DataFrame, alpha: float, unranked: frozenset[tuple[str, str]]) -> pd.DataFrame:
    """Add p_holm and significant, adjusting within each grading over the pairs of ranked runs."""
    table = table.copy()
    table["p_holm"], table["significant"] = np.nan, False
    out = [
        (a, g) in unranked or (b, g) in unranked for a, b, g in zip(table["run_a"], table["run_b"], table["grading"])
    ]
    family = table[~np.array(out, dtype=bool)]
    for idx in family.groupby("grading").groups.values():
        reject, adjusted = pga.holm(table.loc[idx, "p_value"].to_numpy(dtype=float), alpha)
        table.loc[idx, "p_holm"], table.loc[idx, "significant"] = adjusted, reject
    table["significant"] = table["significant"].astype(bool)
    if any(out):
        table.loc[out, "note"] = [join_notes(n, OUT_OF_FAMILY) for n in table.loc[out, "note"]]
    return table
