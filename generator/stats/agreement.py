"""Grader agreement (``agreement.csv``): every grader pair, and every grader vs humans.

Unit = graded answer; rounds are clustered within questions, so standard
errors and the κ bootstrap resample questions. Scores become verdicts at
``threshold`` (default ≥ 50 on 0–100, so partial credit of 60 passes). An
automated grader's missing verdict counts as a fail (as in the means); a
missing human label drops that answer (there is nothing to compare with).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from generator.stats import estimators, kappa
from generator.stats.tables import COLUMNS as TABLE_COLUMNS
from generator.stats.tables import SEED, documents

KEYS = ["run_id", "question_id", "round"]
MIN_QUESTIONS = 10
COLUMNS = list(TABLE_COLUMNS["agreement"])


def verdicts_from_scored(scored: pd.DataFrame) -> pd.DataFrame:
    """Return the long verdicts of the scored table's two gradings (traditional vs answer key).

    Grader names come from ``traditional_grader`` / ``answer_key_grader`` when
    present (else the grading name). Without a ``category`` column it is left
    empty, so the agreement table has only its overall "all" row per pair.

    Examples
    --------
    >>> scored = pd.DataFrame({"run_id": "r", "question_id": ["a", "b"], "round": 0,
    ...     "traditional": [100.0, 0.0], "answer_key": [100.0, 100.0]})
    >>> verdicts_from_scored(scored)[["grader", "role", "score"]].to_dict("records")[1:3]
    [{'grader': 'traditional', 'role': 'traditional', 'score': 0.0}, {'grader': 'answer_key', 'role': 'answer_key', 'score': 100.0}]
    """
    base = scored.assign(category=scored.get("category"))
    frames = []
    for role in ("traditional", "answer_key"):
        name = base[f"{role}_grader"] if f"{role}_grader" in base else role
        frames.append(base[[*KEYS, "category"]].assign(grader=name, role=role, score=base[role]))
    out = pd.concat(frames, ignore_index=True)
    if (out.groupby("grader")["role"].nunique() > 1).any():  # one grader in both roles
        out["grader"] = out["role"] + ":" + out["grader"].astype(str)
    return out


def to_verdicts(verdicts: pd.DataFrame, threshold: float = 50.0) -> pd.DataFrame:
    """Return the verdict rows with a 0/1 ``verdict`` column (humans' missing labels dropped)."""
    v = verdicts.copy()
    score = pd.to_numeric(v["score"], errors="coerce")
    v["verdict"] = (score >= threshold).astype(int)
    return v[~(score.isna() & (v["role"] == "human"))]


def question_counts(joined: pd.DataFrame) -> np.ndarray:
    """Return G × 4 counts (both pass, a only, b only, both fail) per question."""
    a, b = joined["verdict_a"].to_numpy(), joined["verdict_b"].to_numpy()
    cells = pd.DataFrame({"q": joined["question_id"].to_numpy(), "c0": a & b, "c1": a & (1 - b),
                          "c2": (1 - a) & b, "c3": (1 - a) & (1 - b)})
    return cells.groupby("q", sort=True)[["c0", "c1", "c2", "c3"]].sum().to_numpy()


def cluster_wilson(successes: np.ndarray, totals: np.ndarray, alpha: float) -> tuple:
    """Return a pooled proportion with its question-clustered Wilson n_eff interval."""
    keep = totals > 0
    s, t = successes[keep], totals[keep]
    if len(t) == 0:
        return float("nan"), float("nan"), float("nan")
    p, se = estimators.cluster_ratio_se(s, t)
    lo, hi = estimators.wilson_neff_interval(p, se, len(t), len(t) - 1, alpha)
    return p, float(lo), float(hi)


def pair_stats(joined: pd.DataFrame, b_is_human: bool, *, n_boot: int, seed: int,
               alpha: float) -> dict[str, object]:
    """Return the agreement statistics of one grader pair on one slice of answers."""
    c = question_counts(joined)
    g, total = len(c), c.sum(axis=0)
    n = total.sum()
    acc = cluster_wilson(c[:, 0] + c[:, 3], c.sum(axis=1), alpha)
    # An empty slice (no paired verdicts) has no prevalence; NaN says so without a 0/0 warning.
    prevalence_a, prevalence_b = ((total[0] + total[1]) / n, (total[0] + total[2]) / n) if n else (np.nan, np.nan)
    rec = {"n": int(n), "n_questions": g, "accuracy": acc[0], "accuracy_ci_low": acc[1],
           "accuracy_ci_high": acc[2], "prevalence_a": prevalence_a, "prevalence_b": prevalence_b,
           "n_a_pass_b_fail": int(total[1]), "n_a_fail_b_pass": int(total[2])}
    if b_is_human:
        sens = cluster_wilson(c[:, 0], c[:, 0] + c[:, 2], alpha)
        spec = cluster_wilson(c[:, 3], c[:, 1] + c[:, 3], alpha)
        rec.update(zip(["sensitivity", "sensitivity_ci_low", "sensitivity_ci_high"], sens))
        rec.update(zip(["specificity", "specificity_ci_low", "specificity_ci_high"], spec))
    rec.update(_kappa_part(c, n_boot=n_boot, seed=seed, alpha=alpha))
    return rec


def _kappa_part(c: np.ndarray, *, n_boot: int, seed: int, alpha: float) -> dict[str, object]:
    """Return κ, its CI and labels, or the reason it is not estimable."""
    total = c.sum(axis=0)
    reason = ""
    if len(c) < MIN_QUESTIONS:
        reason = f"fewer than {MIN_QUESTIONS} questions ({len(c)})"
    elif min(total[0] + total[1], total[2] + total[3]) == 0 or \
            min(total[0] + total[2], total[1] + total[3]) == 0:
        reason = "a rater used only one class (κ undefined; see accuracy and prevalence)"
    if reason:
        return {"estimable": False, "reason": reason, "kappa_ci_method": "not_estimable"}
    k = float(kappa.kappa_from_counts(total))
    lo, hi, method = kappa.kappa_interval(c, n_boot=n_boot, seed=seed, alpha=alpha)
    return {"kappa": k, "kappa_ci_low": lo, "kappa_ci_high": hi, "kappa_ci_method": method,
            "label": kappa.landis_koch(k), "label_ci_span": kappa.label_span(lo, hi),
            "estimable": True,
            "reason": "" if method != "not_estimable" else "over 1% of resamples undefined"}


@documents("agreement")
def agreement_table(verdicts: pd.DataFrame, *, threshold: float = 50.0, n_boot: int = 2000,
                    seed: int = SEED, alpha: float = 0.05) -> pd.DataFrame:
    """Return agreement of every grader pair, overall and per category.

    Humans are always ``grader_b`` so that sensitivity and specificity read as
    "grader_a against human labels". Per-category rows exist for every
    category (answers without one count only in "all"); ``estimable`` is False (κ empty, ``reason`` says why) unless the
    slice has ≥ 10 questions and both raters used both classes. Every column is
    described in ``COLUMNS["agreement"]``.
    """
    v = to_verdicts(verdicts, threshold)
    roles = v.groupby("grader")["role"].first()
    graders = sorted(roles.index, key=lambda name: (roles[name] == "human", name))
    rows = []
    for ga, gb in itertools.combinations(graders, 2):
        joined = _join(v, ga, gb)
        for category, part in [("all", joined), *joined.groupby("category", sort=True)]:
            rows.append({"grader_a": ga, "grader_b": gb, "category": category,
                         **pair_stats(part, roles[gb] == "human", n_boot=n_boot,
                                      seed=seed, alpha=alpha)})
    return pd.DataFrame(rows, columns=COLUMNS)


def _join(v: pd.DataFrame, ga: str, gb: str) -> pd.DataFrame:
    """Return the answers both graders judged, with verdict_a and verdict_b."""
    a = v.loc[v["grader"] == ga, [*KEYS, "category", "verdict"]].rename(columns={"verdict": "verdict_a"})
    b = v.loc[v["grader"] == gb, [*KEYS, "verdict"]].rename(columns={"verdict": "verdict_b"})
    return a.merge(b, on=KEYS, how="inner")
