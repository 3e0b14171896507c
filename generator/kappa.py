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
import pandas as pd

LANDIS_KOCH = (
    (0.0, "poor"),
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.0, "almost perfect"),
)
UNDEFINED_SHARE = 0.01
"""κ is not estimable when more than this share of question resamples leave a rater one class."""
MAX_LABEL_SPAN = 3
"""The most Landis–Koch labels an interval's span names; a wider interval shows the point's label only."""
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


def counts_by_question(questions: np.ndarray, verdict_a: np.ndarray, verdict_b: np.ndarray) -> np.ndarray:
    """Return G × 4 counts (both pass, a only, b only, both fail) per question, questions in sorted order.

    Verdicts are 0/1; an answer without a question (NaN, or pandas' missing) belongs to none and is left out.

    Examples
    --------
    >>> counts_by_question(np.array(["q2", "q1", "q2"]), np.array([1, 0, 1]), np.array([1, 1, 0])).tolist()
    [[0, 0, 1, 0], [1, 1, 0, 0]]
    """
    a, b = np.asarray(verdict_a, dtype=int), np.asarray(verdict_b, dtype=int)
    codes, ids = pd.factorize(np.asarray(questions), sort=True)
    keep = codes >= 0
    cell = 2 * (1 - a) + (1 - b)  # 0 both pass, 1 a only, 2 b only, 3 both fail
    return np.bincount(4 * codes[keep] + cell[keep], minlength=4 * len(ids)).astype(np.int64).reshape(-1, 4)


def one_class_shares(per_question: np.ndarray) -> tuple[float, float, float]:
    """Return the share of question resamples in which rater a, rater b, or either gives one verdict only.

    A resample draws G of the G questions with replacement; it leaves rater a
    one class exactly when every question drawn is one where a only passed (or
    only failed), which has probability (share of such questions)^G. So the
    shares are exact: the limit of what a bootstrap of many resamples counts,
    the same for every seed (questions without answers are left out).

    Examples
    --------
    >>> c = np.array([[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 1, 0]])
    >>> [round(s, 4) for s in one_class_shares(c)]  # a passes in 1 of 4 questions: (3/4)^4 + (1/4)^4
    [0.3203, 0.125, 0.375]
    """
    c = np.asarray(per_question)
    c = c[c.sum(axis=1) > 0]
    g = len(c)
    if not g:
        return 1.0, 1.0, 1.0

    def all_drawn_from(questions: np.ndarray) -> float:
        return float(np.mean(questions) ** g)

    a = all_drawn_from(c[:, 2] + c[:, 3] == 0) + all_drawn_from(c[:, 0] + c[:, 1] == 0)
    b = all_drawn_from(c[:, 1] + c[:, 3] == 0) + all_drawn_from(c[:, 0] + c[:, 2] == 0)
    both = sum(all_drawn_from(c[:, k] == c.sum(axis=1)) for k in range(4))  # one cell: both raters one class
    return a, b, a + b - both


def not_estimable_reason(per_question: np.ndarray, raters: tuple[str, str] = ("grader_a", "grader_b")) -> str:
    """Return why κ is not estimable (Methodology, §Grader agreement), or '' when it is.

    The one rule of the agreement table, the graders page and the choice of
    the answer-key grader: at least :data:`MIN_QUESTIONS` questions, and at most
    :data:`UNDEFINED_SHARE` of question resamples (:func:`one_class_shares`) leave
    a rater with one class, where κ says nothing about agreement (it is 0, or
    undefined). The reason names the rater most often left with one class and its passes.

    Examples
    --------
    >>> c = np.tile([5, 1, 1, 5], (12, 1))
    >>> not_estimable_reason(c), not_estimable_reason(c[:4])
    ('', 'fewer than 10 questions (4)')
    >>> c[2:, 0:2] = [0, 0]  # rules passes in 2 of 12 questions only
    >>> not_estimable_reason(c, ("rules", "human"))
    'rules passed 12 of 84: 11.2 % of question resamples leave it one class (over 1 %)'
    """
    c = np.asarray(per_question)
    if len(c) < MIN_QUESTIONS:
        return f"fewer than {MIN_QUESTIONS} questions ({len(c)})"
    share_a, share_b, either = one_class_shares(c)
    if either <= UNDEFINED_SHARE:
        return ""
    total = c.sum(axis=0)
    rater, passes, share = (
        (raters[0], total[0] + total[1], share_a) if share_a >= share_b else (raters[1], total[0] + total[2], share_b)
    )
    return (
        f"{rater} passed {passes} of {total.sum()}: {100 * share:.1f} % of question resamples leave it one class "
        f"(over {100 * UNDEFINED_SHARE:g} %)"
    )


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
    """Return the labels an interval spans, e.g. 'fair–substantial'; '' if not finite or over :data:`MAX_LABEL_SPAN`.

    A span of four labels or more (e.g. 'slight–almost perfect') says only that the interval is wide.

    Examples
    --------
    >>> label_span(0.3, 0.7), label_span(0.0, 1.0), label_span(0.85, 0.9)
    ('fair–substantial', '', 'almost perfect')
    """
    a, b = landis_koch(low), landis_koch(high)
    if not (a and b):
        return ""
    names = [label for _, label in LANDIS_KOCH]
    if names.index(b) - names.index(a) >= MAX_LABEL_SPAN:
        return ""
    return a if a == b else f"{a}–{b}"


def kappa_interval(
    per_question: np.ndarray, *, n_boot: int, seed: int, alpha: float = 0.05
) -> tuple[float, float, str]:
    """Return κ's CI by a question-cluster BCa bootstrap, and the method used, for an estimable κ.

    ``per_question`` is G × 4 counts that :func:`not_estimable_reason` accepts:
    at most 1 % of resamples leave a rater one class. Those resamples have κ = 0
    (or undefined, with both raters one class: then the percentile interval of
    the defined ones is given). Perfect agreement makes every resample κ = 1; a
    one-sided lower bound is given instead, from the upper 95 % bound on the
    question-level disagreement rate.
    """
    total = per_question.sum(axis=0)
    if total[1] + total[2] == 0:
        return _perfect_lower_bound(total, len(per_question), alpha), 1.0, "one_sided_perfect"
    idx = np.arange(len(per_question))
    counts = np.asarray(per_question, dtype=float)

    def stat(i: np.ndarray, axis: int = -1) -> np.ndarray:
        # scipy passes axis, the last of i: each row of i lists the questions of one resample.
        return kappa_from_counts(resample_totals(counts, i))

    # Imported here, not above: the render's worker processes read PASS_MARK and need no scipy.stats.
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
    low, high = res.confidence_interval
    if not np.isfinite(dist).all() or not (np.isfinite(low) and np.isfinite(high)):
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
