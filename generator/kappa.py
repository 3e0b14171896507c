"""Cohen's κ from 2×2 counts, its question-cluster bootstrap CI and Landis–Koch labels.

Two stages read it: grading, to choose the answer-key grader that agrees best with people, and
stats, for ``agreement.csv``. So it sits among the foundations, before both.

Counts are kept per question as rows (both pass, a only, b only, both fail),
so a bootstrap resample of questions is a sum of rows and thousands of
resamples cost one matrix product. The asymptotic CI of statsmodels'
``cohens_kappa`` under-covers at n = 30–100 (Methodology, §Grader agreement), hence BCa.
"""

from __future__ import annotations

import warnings

import numpy as np

LANDIS_KOCH = (
    (0.0, "poor"),
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.0, "almost perfect"),
)
UNDEFINED_SHARE = 0.01
PASS_MARK = 50.0
"""A score (0–100) at or above this reads as a pass, so partial credit of 60 passes."""
MIN_QUESTIONS = 10
"""κ is estimable only on at least this many questions (Methodology, §Grader agreement)."""


def kappa_from_counts(counts: np.ndarray) -> np.ndarray:
    """Return κ = (p_o - p_e)/(1 - p_e) from counts [..., (11, 10, 01, 00)]; NaN if p_e = 1.

    Examples
    --------
    >>> round(float(kappa_from_counts(np.array([20, 5, 10, 15]))), 4)
    0.4
    """
    c = np.asarray(counts, dtype=float)
    n = c.sum(axis=-1)
    a1, b1 = (c[..., 0] + c[..., 1]) / n, (c[..., 0] + c[..., 2]) / n
    po = (c[..., 0] + c[..., 3]) / n
    pe = a1 * b1 + (1 - a1) * (1 - b1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


def pass_fail_counts(score_a: np.ndarray, score_b: np.ndarray, threshold: float = PASS_MARK) -> np.ndarray:
    """Return counts (both pass, a only, b only, both fail) over the answers both raters scored.

    A NaN score is no verdict (the rater could not judge), so that answer is
    left out rather than read as a fail.

    Examples
    --------
    >>> pass_fail_counts(np.array([100, 60, 0, np.nan]), np.array([100, 40, 20, 0])).tolist()
    [1, 1, 0, 1]
    """
    a, b = np.asarray(score_a, dtype=float), np.asarray(score_b, dtype=float)
    both = ~(np.isnan(a) | np.isnan(b))
    pa, pb = a[both] >= threshold, b[both] >= threshold
    return np.array([np.sum(pa & pb), np.sum(pa & ~pb), np.sum(~pa & pb), np.sum(~pa & ~pb)])


def not_estimable_reason(counts: np.ndarray, n_questions: int) -> str:
    """Return why κ is not estimable from pooled counts (Methodology, §Grader agreement), or '' when it is.

    Examples
    --------
    >>> not_estimable_reason(np.array([20, 5, 10, 15]), 12), not_estimable_reason(np.array([20, 5, 0, 0]), 12)
    ('', 'a rater used only one class (κ undefined; see accuracy and prevalence)')
    """
    c = np.asarray(counts)
    if n_questions < MIN_QUESTIONS:
        return f"fewer than {MIN_QUESTIONS} questions ({n_questions})"
    if min(c[0] + c[1], c[2] + c[3], c[0] + c[2], c[1] + c[3]) == 0:
        return "a rater used only one class (κ undefined; see accuracy and prevalence)"
    return ""


def landis_koch(kappa: float) -> str:
    """Return the Landis–Koch (1977) label of a κ value ('' for NaN).

    Examples
    --------
    >>> landis_koch(0.41), landis_koch(-0.1), landis_koch(0.95)
    ('moderate', 'poor', 'almost perfect')
    """
    if not np.isfinite(kappa):
        return ""
    if kappa < 0:
        return "poor"
    return next(label for upper, label in LANDIS_KOCH[1:] if kappa <= upper + 1e-12)


def label_span(low: float, high: float) -> str:
    """Return the labels an interval spans, e.g. 'fair–substantial' ('' if not finite)."""
    a, b = landis_koch(low), landis_koch(high)
    return a if a == b else (f"{a}–{b}" if a and b else "")


def kappa_interval(
    per_question: np.ndarray, *, n_boot: int, seed: int, alpha: float = 0.05
) -> tuple[float, float, str]:
    """Return κ's CI by a question-cluster BCa bootstrap, and the method used.

    ``per_question`` is G × 4 counts. When more than 1 % of resamples have an
    undefined κ (one class only) the CI is not estimable. Perfect agreement
    makes every resample κ = 1; a one-sided lower bound is given instead, from
    the upper 95 % bound on the question-level disagreement rate.
    """
    total = per_question.sum(axis=0)
    kappa = float(kappa_from_counts(total))
    if not np.isfinite(kappa):
        return float("nan"), float("nan"), "not_estimable"
    if total[1] + total[2] == 0:
        return _perfect_lower_bound(total, len(per_question), alpha), 1.0, "one_sided_perfect"
    idx = np.arange(len(per_question))
    counts = np.asarray(per_question, dtype=float)

    def stat(i: np.ndarray, axis: int = -1) -> np.ndarray:
        # scipy passes axis, the last of i: each row of i lists the questions of one resample.
        return kappa_from_counts(resample_totals(counts, i))

    # Imported here, not above: the render's worker processes read PASS_MARK, and scipy.stats costs them 0.6 s.
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.bootstrap(
            (idx,),
            stat,
            vectorized=True,
            n_resamples=n_boot,
            batch=250,
            confidence_level=1 - alpha,
            method="BCa",
            random_state=np.random.default_rng(seed),
        )
    dist = res.bootstrap_distribution
    undefined = float(np.mean(~np.isfinite(dist)))
    if undefined > UNDEFINED_SHARE:
        return float("nan"), float("nan"), "not_estimable"
    low, high = res.confidence_interval
    if undefined > 0 or not (np.isfinite(low) and np.isfinite(high)):
        low, high = np.nanquantile(dist, [alpha / 2, 1 - alpha / 2])
        return float(low), float(high), "percentile_question_bootstrap"
    return float(low), float(high), "bca_question_bootstrap"


def resample_totals(per_question: np.ndarray, i: np.ndarray) -> np.ndarray:
    """Return the pooled counts of each resample: ``per_question[i].sum(axis=-2)``, by one matrix product.

    Each row of ``i`` (last axis) lists the questions of one resample; how
    often each question is drawn, times its counts, is that resample's total.
    Counts are integers, so the float product is exact and equals the sum of
    the gathered rows, without the (resamples × questions × 4) array.

    Examples
    --------
    >>> c = np.array([[1, 0, 0, 2], [0, 1, 1, 0], [3, 0, 0, 0]])
    >>> i = np.array([[0, 0, 2], [1, 2, 1]])
    >>> bool(np.array_equal(resample_totals(c, i), c[i].sum(axis=-2)))
    True
    """
    rows = np.asarray(i).reshape(-1, np.shape(i)[-1])
    n = len(per_question)
    drawn = np.bincount((rows + n * np.arange(len(rows))[:, None]).ravel(), minlength=n * len(rows))
    totals = drawn.reshape(len(rows), n).astype(float) @ np.asarray(per_question, dtype=float)
    return totals.reshape(*np.shape(i)[:-1], per_question.shape[-1])


def _perfect_lower_bound(total: np.ndarray, n_questions: int, alpha: float) -> float:
    """Return κ's lower bound when no disagreement was seen (rule-of-three style)."""
    n = total.sum()
    a1, b1 = (total[0] + total[1]) / n, (total[0] + total[2]) / n
    pe = a1 * b1 + (1 - a1) * (1 - b1)
    worst = 1 - alpha ** (1 / n_questions)
    return float(max(-1.0, 1 - worst / (1 - pe)))
