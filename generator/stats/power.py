"""Minimum detectable effects (MDE) at 80 % power; never after-the-fact power.

Three solvers (STATISTICS.md §e):

* paired t: MDE = d_z*·SD(d), d_z* from pingouin ``power_ttest`` (= statsmodels
  ``TTestPower().solve_power``), 0.5292 at n = 30;
* exact McNemar (one round, 0/1 scores): enumerate the trinomial (up, down,
  rest) and find the smallest |p_up - p_down| that the exact test detects
  with 80 % power, holding the discordance rate p_up + p_down fixed;
* Miller Eq. 9/10, the normal approximation
  MDE = (z_{1-α/2} + z_{1-β})·sqrt((ω² + σ²_A/K_A + σ²_B/K_B)/n).

Every MDE comes with a status (:data:`MDE_STATUSES`), so that "no number" is
never confused with "no difference needed": ``detectable`` (the MDE is a
number), ``nothing_detectable`` (no difference the observed disagreement
allows is detected with 80 % power: at n = 30 that is any discordance of
10 % or less) or ``not_estimable`` (fewer than 2 questions, or no variation in
the differences to base a t solver on).
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import optimize, stats

from dualboard.stats import pingouin_adapter as pga
from dualboard.stats.paired import mcnemar_exact_p

MDE_STATUSES = ("detectable", "nothing_detectable", "not_estimable")


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


def shift_detectable(abs_mean: float, abs_sd: float, n: int, power: float = 0.8, alpha: float = 0.05) -> bool:
    """Say whether the paired t can detect any shift at the observed disagreement |d_i|.

    Holding each question's disagreement |d_i| fixed, the largest mean
    difference arises when every difference points the same way; its
    standardized effect is mean|d|/sd(|d|). Below d_z* even that is detected
    with under 80 % power, so nothing is (the paired-t analogue of
    :func:`mde_mcnemar` returning NaN). One discordant question among 30 gives
    t = 1 whatever its size, for instance.

    Examples
    --------
    >>> abs_d = np.r_[0.1, np.zeros(29)]  # one question differs by 0.1
    >>> shift_detectable(abs_d.mean(), abs_d.std(ddof=1), 30)
    False
    """
    return bool(abs_mean > 0 and abs_mean >= dz_star(n, power, alpha) * abs_sd)


def paired_mde(
    n: int,
    *,
    binary_k1: bool,
    discordant: int,
    sd_d: float,
    abs_mean: float,
    abs_sd: float,
    power: float = 0.8,
    alpha: float = 0.05,
) -> tuple[float, str]:
    """Return the MDE of one paired comparison (scale of d) and its status.

    ``binary_k1``: exact McNemar at the observed discordance ``discordant / n``;
    otherwise the paired t (d_z*·sd(d)) when :func:`shift_detectable` holds and
    sd(d) > 0. The status is one of :data:`MDE_STATUSES`; the MDE is NaN
    unless it is ``detectable``.

    Examples
    --------
    >>> paired_mde(30, binary_k1=True, discordant=3, sd_d=0.3, abs_mean=0.1, abs_sd=0.3)
    (nan, 'nothing_detectable')
    >>> mde, status = paired_mde(30, binary_k1=False, discordant=20, sd_d=0.5, abs_mean=0.4,
    ...                          abs_sd=0.3)
    >>> round(mde, 4), status
    (0.2646, 'detectable')
    """
    if n < 2:
        return float("nan"), "not_estimable"
    if binary_k1:
        mde = mde_mcnemar_counts(int(discordant), int(n), power, alpha)
    elif not shift_detectable(abs_mean, abs_sd, int(n), power, alpha):
        mde = float("nan")
    elif sd_d <= 0:
        return float("nan"), "not_estimable"  # every difference equal and non-zero
    else:
        mde = mde_paired_t(sd_d, int(n), power, alpha)
    return mde, ("detectable" if np.isfinite(mde) else "nothing_detectable")


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

    def gap(delta: float) -> float:
        return mcnemar_power((discordance + delta) / 2, (discordance - delta) / 2, n, alpha) - power

    if discordance <= 0 or gap(discordance) < 0:
        return float("nan")
    return float(optimize.brentq(gap, 0.0, discordance, xtol=1e-9))


@functools.lru_cache(maxsize=65536)
def mde_mcnemar_counts(discordant: int, n: int, power: float = 0.8, alpha: float = 0.05) -> float:
    """Return :func:`mde_mcnemar` at the observed discordance ``discordant / n`` (cached)."""
    return mde_mcnemar(discordant / n, n, power, alpha) if n > 0 else float("nan")
