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
def _rejects(n: int, alpha: float) -> np.ndarray:
    """Return R[s, b] = 1 when the exact McNemar test rejects b of s discordant pairs."""
    s = np.arange(n + 1)[:, None]
    b = np.arange(n + 1)[None, :]
    with np.errstate(invalid="ignore"):
        reject = (b <= s) & (mcnemar_exact_p(b, np.maximum(s - b, 0)) <= alpha)
    return reject.astype(float)


def mcnemar_power(p_up: float, p_down: float, n: int, alpha: float = 0.05) -> float:
    """Return the exact power of the exact McNemar test by enumerating the trinomial.

    Examples
    --------
    >>> round(mcnemar_power(0.0, 0.1, 30), 4)  # 10 % discordance, all one way
    0.0732
    """
    psi = p_up + p_down
    if psi <= 0:
        return 0.0
    s = np.arange(n + 1)
    p_s = stats.binom.pmf(s, n, psi)
    p_b = stats.binom.pmf(np.arange(n + 1)[None, :], s[:, None], p_up / psi)
    return float(np.sum(p_s[:, None] * p_b * _rejects(n, alpha)))


def mde_mcnemar(discordance: float, n: int, power: float = 0.8, alpha: float = 0.05) -> float:
    """Return the smallest |p_up - p_down| detectable at fixed discordance (NaN if none is).

    Examples
    --------
    >>> round(mde_mcnemar(0.3, 30), 3)
    0.274
    >>> mde_mcnemar(0.1, 30)  # too few discordant questions to ever reject
    nan
    """
    gap = lambda delta: mcnemar_power((discordance + delta) / 2,  # noqa: E731
                                      (discordance - delta) / 2, n, alpha) - power
    if discordance <= 0 or gap(discordance) < 0:
        return float("nan")
    return float(optimize.brentq(gap, 0.0, discordance, xtol=1e-9))


def mde_miller(omega2: float, var_a: float, k_a: float, var_b: float, k_b: float, n: int,
               power: float = 0.8, alpha: float = 0.05) -> float:
    """Return Miller's Eq. 9/10 normal-approximation MDE.

    Examples
    --------
    >>> round(mde_miller(1 / 9, 0, 1, 0, 1, 969) * 100, 2)  # Miller's example: ≈ 3 points
    3.0
    """
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return float(z * np.sqrt((omega2 + var_a / k_a + var_b / k_b) / n))
