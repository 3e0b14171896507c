"""Point estimates and confidence intervals for one mean of question means.

Everything here works on the [0, 1] scale and on plain numpy arrays, so the
same code serves the leaderboard and the calibration bench (which calls it on
thousands of simulated benchmarks at once: the last axis is the question axis).
The unit of inference is the question (Miller, arXiv 2411.00640, §2): each
question contributes the mean of its available rounds, whatever their number.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

SE_FLOAT_NOISE = 1e-12
"""An SE below this (scale [0, 1]) is rounding noise of equal question means and counts as 0.

Thirty question means of 0.8 have sd 2.5e-17, not 0; taken at face value that
SE skips the n_eff = n fallback and gives "80.0 [80.0, 80.0]" (Methodology, §Mean score and its interval)."""


def snap_noise(se: np.ndarray | float) -> np.ndarray:
    """Return ``se`` with values below :data:`SE_FLOAT_NOISE` set to exactly 0 (NaN stays NaN)."""
    se = np.asarray(se, dtype=float)
    return np.where(se < SE_FLOAT_NOISE, 0.0, se)


def cluster_mean_se(qmeans: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the mean of question means, its clustered SE and the t degrees of freedom.

    SE = sd(question means, ddof=1) / sqrt(n) (Miller Eq. 1). This equals
    statsmodels ``WLS(y, 1, weights=1/r_i).fit(cov_type='cluster')`` with its
    default G/(G-1) correction; df = n - 1 as with ``use_t=True``. An SE that
    is float noise (:data:`SE_FLOAT_NOISE`) is returned as 0.

    Examples
    --------
    >>> mu, se, df = cluster_mean_se(np.array([1.0, 0.5, 0.0, 1.0]))
    >>> float(mu), round(float(se), 6), float(df)
    (0.625, 0.239357, 3.0)
    """
    qmeans = np.asarray(qmeans, dtype=float)
    n = qmeans.shape[-1]
    mu = qmeans.mean(axis=-1)
    se = qmeans.std(axis=-1, ddof=1) / np.sqrt(n) if n > 1 else np.full_like(mu, np.nan)
    return mu, snap_noise(se), np.full_like(mu, n - 1.0)


def t_quantile(df: np.ndarray | float, alpha: float = 0.05) -> np.ndarray:
    """Return the two-sided critical t value (normal when df is infinite or NaN)."""
    df = np.asarray(df, dtype=float)
    z = stats.norm.ppf(1 - alpha / 2)
    with np.errstate(invalid="ignore"):
        t = stats.t.ppf(1 - alpha / 2, np.where(np.isfinite(df) & (df > 0), df, 1.0))
    return np.where(np.isfinite(df) & (df > 0), t, z)


ANSWERS_PER_QUESTION_CAP = 2.0
"""The most independent answers a question counts for in the effective n of :func:`wilson_neff_interval`.

Rounds of one question share its difficulty, so n_eff is estimated from the spread of question
means. That estimate is too large exactly when a high score's few hard questions are missing from
the sample (they are where the spread lives), and the interval then sits above the truth. Capping
n_eff at this many answers per question keeps coverage of at least 93 % with uneven difficulty
(Methodology, §Mean score and its interval); with one round, n_eff is below the cap anyway."""


def wilson_neff_interval(
    mu: np.ndarray,
    se: np.ndarray,
    n: np.ndarray | int,
    df: np.ndarray | float,
    alpha: float = 0.05,
) -> tuple[np.ndarray, np.ndarray]:
    """Return the Wilson interval with effective n = mu(1-mu)/SE², at most 2n, and z = t(df).

    ``n`` is the number of questions. The cap (:data:`ANSWERS_PER_QUESTION_CAP`
    answers per question) keeps one missed hard question from shrinking the
    interval far above the truth. When mu is 0 or 1, or SE is 0, the effective
    n falls back to ``n``, so 30/30 gives [0.878, 1] rather than [1, 1].

    Examples
    --------
    >>> lo, hi = wilson_neff_interval(np.array(1.0), np.array(0.0), 30, 29)
    >>> round(float(lo), 3), float(hi)
    (0.878, 1.0)

    Ten rounds of 30 questions, one failed once: uncapped, n_eff = 299 would give [0.980, 0.999].

    >>> mu, se, df = cluster_mean_se(np.array([1.0] * 29 + [0.9]))
    >>> lo, hi = wilson_neff_interval(mu, se, 30, df)
    >>> round(float(lo), 3), round(float(hi), 3)
    (0.929, 1.0)
    """
    mu, se = np.asarray(mu, dtype=float), np.asarray(se, dtype=float)
    z = t_quantile(df, alpha)
    degenerate = (mu <= 0) | (mu >= 1) | ~(se > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.asarray(n, dtype=float)
        n_eff = np.where(degenerate, n, np.minimum(mu * (1 - mu) / se**2, ANSWERS_PER_QUESTION_CAP * n))
    denom = 1 + z**2 / n_eff
    centre = (mu + z**2 / (2 * n_eff)) / denom
    half = z * np.sqrt(mu * (1 - mu) / n_eff + z**2 / (4 * n_eff**2)) / denom
    lo, hi = poisson_ends(centre - half, centre + half, mu, n_eff, alpha)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def poisson_ends(
    lo: np.ndarray, hi: np.ndarray, mu: np.ndarray, n_eff: np.ndarray, alpha: float = 0.05
) -> tuple[np.ndarray, np.ndarray]:
    """Widen a Wilson interval's end to the Poisson bound when it rests on 3 or fewer passes (or failures).

    Wilson's coverage dips there (92 % at 100 questions and a true 99 %); Brown,
    Cai & DasGupta (Stat. Sci. 2001, §4.1.1) replace the lower bound at x ≤ x*
    passes by ½χ²(2x; alpha)/n, with x* = 2 up to n = 50 and 3 above. Counts are
    the effective ones, mu·n_eff and (1 − mu)·n_eff; an end is only ever widened.

    Examples
    --------
    >>> lo, hi = poisson_ends(np.array(0.0179), np.array(0.4042), np.array(0.1), np.array(10.0))
    >>> round(float(lo), 5), float(hi)
    (0.00513, 0.4042)
    """
    few = np.where(n_eff <= 50, 2.0, 3.0)
    passes, failures = mu * n_eff, (1 - mu) * n_eff
    with np.errstate(invalid="ignore", divide="ignore"):
        lo_poisson = stats.chi2.ppf(alpha, 2 * passes) / (2 * n_eff)
        hi_poisson = 1 - stats.chi2.ppf(alpha, 2 * failures) / (2 * n_eff)
    lo = np.where((passes > 0) & (passes <= few), np.minimum(lo, lo_poisson), lo)
    hi = np.where((failures > 0) & (failures <= few), np.maximum(hi, hi_poisson), hi)
    return lo, hi


def t_interval(
    mu: np.ndarray,
    se: np.ndarray,
    df: np.ndarray | float,
    alpha: float = 0.05,
    bounds: tuple[float, float] | None = (0.0, 1.0),
) -> tuple[np.ndarray, np.ndarray]:
    """Return mu ± t(df)·SE, clipped to ``bounds`` (a score cannot leave its scale).

    Examples
    --------
    >>> lo, hi = t_interval(0.5, 0.1, 29)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.2955, 0.7045)
    """
    half = t_quantile(df, alpha) * np.asarray(se, dtype=float)
    lo, hi = np.asarray(mu) - half, np.asarray(mu) + half
    if bounds is not None:
        lo, hi = np.clip(lo, *bounds), np.clip(hi, *bounds)
    return lo, hi


def naive_z(alpha: float = 0.05) -> float:
    """Return the z of the naive interval: 1.96 at alpha = .05, as source tables round it."""
    return 1.96 if alpha == 0.05 else float(stats.norm.ppf(1 - alpha / 2))


def naive_interval(answers: np.ndarray, alpha: float = 0.05) -> tuple[float, float, float]:
    """Return the mean and the interval that treats every answer as independent.

    This is what source tables publish (mean ± 1.96·sd(ddof=1)/sqrt(N) over all
    N answers, with z rounded to 1.96 as they do), clipped to [0, 1] as a
    score cannot leave its scale; it ignores that rounds of one question are
    correlated and is shown only beside the clustered interval, labelled as naive.
    When every answer is equal (sd = 0) that formula gives a zero-width interval:
    the Wilson interval with n = N answers is used instead, as the clustered
    interval falls back to n_eff = n (:func:`wilson_neff_interval`).

    Examples
    --------
    >>> mu, lo, hi = naive_interval(np.array([1, 1, 0, 0, 1.0]))
    >>> round(mu, 2), round(lo, 4), hi  # 0.6 + 0.4801 is clipped at 1
    (0.6, 0.1199, 1.0)
    >>> mu, lo, hi = naive_interval(np.zeros(300))  # not [0, 0]
    >>> mu, round(lo, 4), round(hi, 4)
    (0.0, 0.0, 0.0126)
    """
    answers = np.asarray(answers, dtype=float)
    mu = float(answers.mean())
    if answers.size < 2:
        return mu, float("nan"), float("nan")
    sd = answers.std(ddof=1)
    if not snap_noise(sd) > 0:
        lo, hi = wilson_neff_interval(mu, 0.0, answers.size, np.inf, alpha)
        return mu, float(lo), float(hi)
    half = naive_z(alpha) * sd / np.sqrt(answers.size)
    return mu, float(max(mu - half, 0.0)), float(min(mu + half, 1.0))


def cluster_ratio_se(successes: np.ndarray, totals: np.ndarray) -> tuple[float, float]:
    """Return a pooled proportion sum(s)/sum(t) and its cluster-robust SE.

    Clusters are questions; the SE is the sandwich estimator of a ratio with
    the G/(G-1) small-sample factor, which reduces to :func:`cluster_mean_se`
    when every cluster has the same total (float noise counts as 0 there too).

    Examples
    --------
    >>> p, se = cluster_ratio_se(np.array([2, 1, 0, 2]), np.array([2, 2, 2, 2]))
    >>> p, round(se, 6)
    (0.625, 0.239357)
    """
    s, t = np.asarray(successes, dtype=float), np.asarray(totals, dtype=float)
    g, total = len(t), t.sum()
    p = s.sum() / total
    if g < 2:
        return float(p), float("nan")
    resid = s - p * t
    return float(p), float(snap_noise(np.sqrt(g / (g - 1) * np.sum(resid**2)) / total))
