"""Minimum detectable effects (MDE) at 80 % power; never after-the-fact power.

Three solvers (STATISTICS.md §e):

* paired t: MDE = d_z*·SD(d), d_z* from pingouin ``power_ttest`` (= statsmodels
  ``TTestPower().solve_power``), 0.5292 at n = 30;
* exact McNemar (one round, 0/1 scores): enumerate the trinomial (up, down,
  rest) and find the smallest |p_up - p_down| that the exact test detects
  with 80 % power, holding the discordance rate p_up + p_down fixed;
* Miller Eq. 9/10, the normal approximation
  MDE = (z_{1-α/2} + z_{1-β})·sqrt((ω² + σ²_A/K_A + σ²_B/K_B)/n).
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import optimize, stats

from generator.stats import pingouin_adapter as pga
from generator.stats.paired import mcnemar_exact_p


@functools.lru_cache(maxsize=4096)
def dz_star(n: int, power: float = 0.8, alpha: float = 0.05) -> float:
    """Return the paired-t standardized effect detectable at ``n`` questions (NaN if n < 2)."""
    return pga.power_ttest_dz(n, power, alpha) if n >= 2 else float("nan")


def mde_paired_t(sd_d: float, n: int, power: float = 0.8, alpha: float = 0.05) -> float:
    """Return the paired-t MDE on the scale of ``sd_d``.

    Examples
    --------
    >>> round(mde_paired_t(0.5, 30), 4)
    0.2646
    """
    return dz_star(int(n), power, alpha) * float(sd_d)


@functools.lru_cache(maxsize=1024)
def critical_counts(n: int, alpha: float = 0.05) -> np.ndarray:
    """Return c[s]: the exact McNemar test rejects s discordant pairs iff min(b, s-b) ≤ c[s].

    c[s] = -1 when no split of s pairs is significant. The test's rejection
    region is two symmetric binomial tails, so power needs O(n) work, not O(n²).
    """
    s = np.arange(n + 1)
    c = stats.binom.ppf(alpha / 2, s, 0.5).astype(int)
    c = np.where(mcnemar_exact_p(c, s - c) <= alpha, c, c - 1)
    return np.where(mcnemar_exact_p(c + 1, s - c - 1) <= alpha, c + 1, c)


def mcnemar_power(p_up: float, p_down: float, n: int, alpha: float = 0.05) -> float:
    """Return the exact power of the exact McNemar test by enumerating the trinomial.

    The number of discordant pairs s ~ Binomial(n, p_up + p_down) and, given s,
    b ~ Binomial(s, p_up / (p_up + p_down)); the test rejects in both tails.

    Examples
    --------
    >>> round(mcnemar_power(0.0, 0.1, 30), 4)  # 10 % discordance, all one way
    0.0732
    """
    psi = p_up + p_down
    if psi <= 0:
        return 0.0
    s = np.arange(n + 1)
    c = critical_counts(n, alpha)
    q = p_up / psi
    tails = np.where(c >= 0, stats.binom.cdf(c, s, q) + stats.binom.sf(s - c - 1, s, q), 0.0)
    return float(np.sum(stats.binom.pmf(s, n, psi) * np.minimum(tails, 1.0)))


def mde_mcnemar(discordance: float, n: int, power: float = 0.8, alpha: float = 0.05) -> float:
    """Return the smallest |p_up - p_down| detectable at fixed discordance (NaN if none is).

    Examples
    --------
    >>> round(mde_mcnemar(0.3, 30), 3)
    0.274
    >>> mde_mcnemar(0.1, 30)  # too few discordant questions to ever reject
    nan
    >>> round(mde_mcnemar(0.3, 2000), 4)
    0.0348
    """
    gap = lambda delta: mcnemar_power((discordance + delta) / 2,  # noqa: E731
                                      (discordance - delta) / 2, n, alpha) - power
    if discordance <= 0 or gap(discordance) < 0:
        return float("nan")
    return float(optimize.brentq(gap, 0.0, discordance, xtol=1e-9))


@functools.lru_cache(maxsize=65536)
def mde_mcnemar_counts(discordant: int, n: int, power: float = 0.8, alpha: float = 0.05) -> float:
    """Return :func:`mde_mcnemar` at the observed discordance ``discordant / n`` (cached)."""
    return mde_mcnemar(discordant / n, n, power, alpha) if n > 0 else float("nan")
