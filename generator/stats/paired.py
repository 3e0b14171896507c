"""Paired comparison of two gradings (or two runs) over the same questions.

The pairing is the question: x_i and y_i are the two question means and
d_i = x_i - y_i. Which test runs depends on the data (Methodology, §Paired tests):

* one round of 0/1 scores on both sides → exact McNemar with the
  Bonett–Price interval for the difference of proportions;
* otherwise → paired t on d_i, with the Wilcoxon signed-rank test beside it;
* every d_i = 0 → d̄ = 0 and p = 1 (libraries return NaN or p = 0 here);
* every d_i equal and non-zero → exact sign test (t would be infinite);
* every d_i equal (zero or not) → the interval of :func:`constant_difference_interval`,
  never a zero-width one;
* fewer than :data:`TOO_FEW_QUESTIONS` questions → only exact tests: the sign-flip permutation test.

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


def bonett_price_interval(
    b: np.ndarray, c: np.ndarray, n: np.ndarray | int, alpha: float = 0.05
) -> tuple[np.ndarray, np.ndarray]:
    """Return the Bonett–Price (2012) interval for (b - c)/n, a paired difference of proportions.

    Examples
    --------
    >>> lo, hi = bonett_price_interval(0, 0, 30)
    >>> round(float(lo), 4), round(float(hi), 4)
    (-0.0866, 0.0866)
    """
    b, c, n = (np.asarray(v, dtype=float) for v in (b, c, n))
    pb, pc = (b + 1) / (n + 2), (c + 1) / (n + 2)
    theta = pb - pc
    half = stats.norm.ppf(1 - alpha / 2) * np.sqrt((pb + pc - theta**2) / (n + 2))
    return np.clip(theta - half, -1, 1), np.clip(theta + half, -1, 1)


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
