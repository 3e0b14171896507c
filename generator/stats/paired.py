"""Paired comparison of two gradings (or two runs) over the same questions.

The pairing is the question: x_i and y_i are the two question means and
d_i = x_i - y_i. Which test runs depends on the data (Methodology, §Paired tests):

* one round of 0/1 scores on both sides → exact McNemar with Tango's score
  interval for the difference of proportions (:func:`mcnemar_interval`);
* otherwise → paired t on d_i, with the Wilcoxon signed-rank test beside it, and
  the interval of :func:`augmented_interval` (:func:`difference_interval`);
* every d_i = 0 → d̄ = 0 and p = 1 (libraries return NaN or p = 0 here);
* every d_i equal and non-zero → exact sign test (t would be infinite);
* fewer than :data:`TOO_FEW_QUESTIONS` questions → only exact tests (exact McNemar,
  or the sign-flip permutation test) and no interval.

Every interval shown agrees with the test shown about whether 0 is excluded.

The low-level functions are vectorised over leading axes so the calibration
bench can call them on thousands of simulated benchmarks at once.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import optimize, stats

from dualboard.stats.defaults import TOO_FEW_QUESTIONS as TOO_FEW_QUESTIONS  # where the statistics read it
from dualboard.stats.estimators import t_quantile


def mcnemar_exact_p(b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Return the two-sided exact McNemar p-value (1 when there is no discordance).

    Equals ``statsmodels...mcnemar([[a, b], [c, d]], exact=True).pvalue`` and
    ``scipy.stats.binomtest(b, b + c, 0.5).pvalue``.

    Examples
    --------
    >>> float(mcnemar_exact_p(np.array(6), np.array(0)))
    0.03125
    """
    b, c = np.asarray(b), np.asarray(c)
    s = b + c
    p = 2 * stats.binom.cdf(np.minimum(b, c), np.maximum(s, 1), 0.5)
    return np.where(s == 0, 1.0, np.minimum(p, 1.0))


def departing_share_bound(n: np.ndarray | int, alpha: float = 0.05) -> np.ndarray:
    """Return p̄ = 1 - alpha^(1/n): the upper bound on a share of which none of n was seen.

    The exact one-sided binomial bound with zero events (9.5 % at n = 30, 95 %
    confidence): with no discordant pair, the discordance rate is at most p̄;
    with every question difference equal, so is the share of questions that differ.

    Examples
    --------
    >>> round(float(departing_share_bound(30)), 4)
    0.095
    """
    return 1 - alpha ** (1 / np.asarray(n, dtype=float))


def constant_difference_interval(
    d: np.ndarray,
    n: np.ndarray | int,
    alpha: float = 0.05,
    bounds: tuple[float, float] = (-1.0, 1.0),
) -> tuple[np.ndarray, np.ndarray]:
    """Return the interval of a mean difference when every question difference equals ``d``.

    No observed question departs from d, so with 1 - alpha confidence at most
    a share p̄ (:func:`departing_share_bound`) of questions does, and each of them
    can move the mean at most to the ends ``bounds`` = (L, U) of the difference
    scale: [d - p̄(d - L), d + p̄(U - d)] (Methodology, §No interval is
    zero-width). Vectorised over ``d`` and ``n``.

    Examples
    --------
    >>> lo, hi = constant_difference_interval(0.0, 30)
    >>> round(float(lo), 4), round(float(hi), 4)
    (-0.095, 0.095)
    >>> lo, hi = constant_difference_interval(-0.2, 30)
    >>> round(float(lo), 4), round(float(hi), 4)
    (-0.276, -0.086)
    """
    d = np.asarray(d, dtype=float)
    share = departing_share_bound(n, alpha)
    low, high = bounds
    return d - share * (d - low), d + share * (high - d)


def tango_interval(
    b: np.ndarray, c: np.ndarray, n: np.ndarray | int, alpha: float = 0.05, steps: int = 50
) -> tuple[np.ndarray, np.ndarray]:
    """Return Tango's (1998) score interval for (b - c)/n, a paired difference of proportions.

    The set of Δ whose score statistic (b - c - nΔ)/√(n(2p̂₂₁ + Δ - Δ²)), with
    p̂₂₁ the maximum-likelihood discordance under Δ, stays within ±z. It lies in
    [-1, 1] by construction and keeps a non-zero width at b = c = 0. Solved by
    bisection (the statistic decreases in Δ), vectorised over ``b``, ``c``, ``n``.

    Examples
    --------
    >>> lo, hi = tango_interval(0, 0, 30)
    >>> round(float(lo), 4), round(float(hi), 4)
    (-0.1135, 0.1135)
    """
    b, c, n = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (b, c, n)))
    z = stats.norm.ppf(1 - alpha / 2)

    def score(delta: np.ndarray) -> np.ndarray:
        quad_b = -b - c + (2 * n - b + c) * delta
        quad_c = -c * delta * (1 - delta)
        with np.errstate(divide="ignore", invalid="ignore"):
            p21 = (-quad_b + np.sqrt(np.maximum(quad_b**2 - 8 * n * quad_c, 0))) / (4 * n)
            value = (b - c - n * delta) / np.sqrt(n * np.maximum(2 * p21 + delta - delta**2, 0))
        return np.nan_to_num(value, nan=0.0)  # 0/0: Δ is the estimate itself, with no discordance

    def solve(target: float) -> np.ndarray:
        low, high = np.full(b.shape, -1.0), np.full(b.shape, 1.0)
        for _ in range(steps):
            mid = (low + high) / 2
            above = score(mid) > target
            low, high = np.where(above, mid, low), np.where(above, high, mid)
        return (low + high) / 2

    return solve(z), solve(-z)


def mcnemar_interval(
    b: np.ndarray, c: np.ndarray, n: np.ndarray | int, alpha: float = 0.05
) -> tuple[np.ndarray, np.ndarray]:
    """Return Tango's interval, widened to reach 0 where the exact McNemar test does not reject.

    Tango's score test at Δ = 0 is the asymptotic McNemar test, which rejects
    slightly more often than the exact one; the widening keeps interval and
    exact test in agreement about 0 (conservative). The converse, an exact
    rejection with 0 inside Tango's interval, does not occur (checked for
    every b + c ≤ 200, n ≤ 300).
    """
    lo, hi = tango_interval(b, c, n, alpha)
    keep = mcnemar_exact_p(b, c) >= alpha
    return np.where(keep, np.minimum(lo, 0.0), lo), np.where(keep, np.maximum(hi, 0.0), hi)


PSEUDO_WEIGHT = 1.0
"""Weight w of each pseudo-question (+1 and -1) in :func:`augmented_interval`: one question each way, as
Bonett–Price add one to each discordant cell. Lighter weights under-cover when a few whole questions move
(bench/calibration.py, its partial-credit sparse cells)."""


def augmented_interval(
    n: np.ndarray | int, mean: np.ndarray, sd: np.ndarray, alpha: float = 0.05
) -> tuple[np.ndarray, np.ndarray]:
    """Return the interval of a mean difference on [-1, 1] from n differences' mean and sd.

    Two pseudo-questions with differences +1 and -1, each of weight
    :data:`PSEUDO_WEIGHT`, join the n real ones (the continuous analogue of
    adding to each discordant cell): the augmented mean m̃ stays inside (-1, 1)
    and its SE never vanishes, so 0, 1 or 2 discordant questions give intervals
    of comparable width. The t interval of m̃ (n - 1 degrees of freedom) is
    built on the atanh scale (delta method) and mapped back with tanh, so it
    lies inside [-1, 1] by construction. Vectorised over all arguments.

    Examples
    --------
    >>> lo, hi = augmented_interval(30, 0.0, 0.0)
    >>> round(float(lo), 4), round(float(hi), 4)
    (-0.0916, 0.0916)
    """
    n, mean, sd = (np.asarray(v, dtype=float) for v in (n, mean, sd))
    size = n + 2 * PSEUDO_WEIGHT
    m = n * mean / size
    squares = (n - 1) * sd**2 + n * mean**2 + 2 * PSEUDO_WEIGHT
    se = np.sqrt((squares - size * m**2) / (size - 1) / size)
    centre, half = np.arctanh(m), t_quantile(n - 1, alpha) * se / (1 - m**2)
    return np.tanh(centre - half), np.tanh(centre + half)


def difference_interval(
    n: np.ndarray,
    mean: np.ndarray,
    sd: np.ndarray,
    up: np.ndarray,
    down: np.ndarray,
    p_value: np.ndarray,
    binary: np.ndarray,
    alpha: float = 0.05,
) -> tuple[np.ndarray, np.ndarray]:
    """Return the interval shown for a paired mean difference (scale [-1, 1]), in agreement with its test.

    * one round of 0/1 scores → :func:`mcnemar_interval` of (up, down);
    * every difference equal to c ≠ 0 (sign test: exact McNemar on up, down) →
      |c| times that interval: the share moving by c, scaled by c;
    * otherwise → the hull of :func:`augmented_interval` and the t interval,
      cut at 0 on the side the paired t test (``p_value``) rejects, and kept
      inside [-1, 1] (the t interval can pass ±1 only when n is small).

    ``up``/``down`` count differences above/below 0. Vectorised over all arguments.
    """
    n, mean, sd, p_value = (np.asarray(v, dtype=float) for v in (n, mean, sd, p_value))
    exact_lo, exact_hi = mcnemar_interval(up, down, n, alpha)
    aug_lo, aug_hi = augmented_interval(n, mean, sd, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        half = t_quantile(n - 1, alpha) * sd / np.sqrt(n)
    # The hull of both intervals, cut at 0 on the side the t test rejects: it contains the t interval (so it covers
    # at least as well) and the augmented one wherever the test does not reject (the sparse regime, where t's SE
    # is too small), and it excludes 0 exactly when the test rejects.
    t_lo, t_hi = mean - half, mean + half
    rejects = p_value < alpha
    aug_lo = np.clip(np.where(rejects & (mean > 0), t_lo, np.fmin(aug_lo, t_lo)), -1, 1)
    aug_hi = np.clip(np.where(rejects & (mean < 0), t_hi, np.fmax(aug_hi, t_hi)), -1, 1)
    constant = (sd == 0) & (mean != 0)
    scale = np.abs(mean)
    lo = np.select([binary, constant], [exact_lo, scale * exact_lo], aug_lo)
    hi = np.select([binary, constant], [exact_hi, scale * exact_hi], aug_hi)
    return lo, hi


def paired_t(d: np.ndarray, alpha: float = 0.05) -> dict[str, np.ndarray]:
    """Return the paired t statistics of differences ``d`` (last axis = questions).

    Keys: mean, sd, se, t, df, p_value, ci_low, ci_high. Equals
    ``scipy.stats.ttest_rel`` and pingouin's ``ttest(paired=True)``.

    Examples
    --------
    >>> r = paired_t(np.array([0.5, -1, 1, 1, 2]))
    >>> round(float(r["t"]), 6), round(float(r["p_value"]), 6)
    (1.428869, 0.226245)
    """
    d = np.asarray(d, dtype=float)
    n = d.shape[-1]
    mean, sd = d.mean(axis=-1), d.std(axis=-1, ddof=1)
    se = sd / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / se
    p = 2 * stats.t.sf(np.abs(t), n - 1)
    half = t_quantile(n - 1, alpha) * se
    return {
        "mean": mean,
        "sd": sd,
        "se": se,
        "t": t,
        "df": np.full_like(mean, n - 1.0),
        "p_value": p,
        "ci_low": mean - half,
        "ci_high": mean + half,
    }


def sign_test_p(d: np.ndarray) -> float:
    """Return the exact two-sided sign-test p-value of the non-zero differences."""
    d = np.asarray(d, dtype=float)
    pos, nonzero = int(np.sum(d > 0)), int(np.sum(d != 0))
    return float(mcnemar_exact_p(np.array(pos), np.array(nonzero - pos)))


def sign_flip_p(d: np.ndarray) -> float:
    """Return the exact sign-flip permutation p-value of mean(d) (for n < TOO_FEW_QUESTIONS)."""
    d = np.asarray(d, dtype=float)
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
    null = np.abs(signs @ d)
    observed = abs(d.sum())
    return float(np.mean(null >= observed - 1e-12 * max(1.0, observed)))


def hedges_j(n: int) -> float:
    """Return Hedges' small-sample factor J = 1 - 3/(4(n-1) - 1) for d_z."""
    return 1 - 3 / (4 * (n - 1) - 1) if n > 2 else float("nan")


def _nct_cdf(t: float, df: float, ncp: float) -> float:
    """Return the noncentral t CDF, using its limits where scipy returns NaN far in the tails."""
    value = stats.nct.cdf(t, df, ncp)
    return float(value) if np.isfinite(value) else (1.0 if ncp < t else 0.0)


def dz_interval(t: float, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Return the exact CI of d_z by inverting the noncentral t (Cumming & Finch 2001).

    Examples
    --------
    >>> lo, hi = dz_interval(0.0, 30)
    >>> bool(round(lo, 6) == -round(hi, 6))
    True
    """
    if not np.isfinite(t) or n < 3:
        return float("nan"), float("nan")
    df = n - 1

    spread = np.sqrt(1 + t**2 / (2 * df))

    def solve(target: float) -> float:
        f = lambda ncp: _nct_cdf(t, df, ncp) - target  # noqa: E731
        return optimize.brentq(f, t - 8 * spread, t + 8 * spread, xtol=1e-12)

    return float(solve(1 - alpha / 2) / np.sqrt(n)), float(solve(alpha / 2) / np.sqrt(n))
