"""The one place that calls pingouin and maps its output to fixed names.

pingouin renamed ``p-val`` to ``p_val`` in 0.6 and names some columns after
arguments (``CI95``, which it rounds to 2 decimals through its global
``options``): the functions here read only columns it leaves unrounded, never
change its options, and return plain floats under stable names. Nothing else in
Dualboard imports pingouin.
"""

from __future__ import annotations

import numpy as np
import pingouin as pg


def wilcoxon(d: np.ndarray) -> dict[str, float]:
    """Return pingouin's Wilcoxon signed-rank test of differences ``d`` as w, p_value, rbc.

    Zero differences are dropped (scipy's zero_method='wilcox'); with ties the
    normal approximation is tie- and continuity-corrected. NaN when all d = 0.

    Examples
    --------
    >>> r = wilcoxon(np.array([-0.5, 1, 1, 1, 2.]))
    >>> r["w"], r["p_value"]
    (1.0, 0.125)
    """
    if np.all(np.asarray(d) == 0):
        return {"w": float("nan"), "p_value": float("nan"), "rbc": float("nan")}
    row = pg.wilcoxon(d).iloc[0]
    return {"w": float(row["W_val"]), "p_value": float(row["p_val"]), "rbc": float(row["RBC"])}


def cohen_dz(x: np.ndarray, y: np.ndarray) -> float:
    """Return d_z = mean(x - y)/sd(x - y) from pingouin's ``compute_effsize``.

    Examples
    --------
    >>> round(cohen_dz(np.array([1, 2, 3, 4, 5.]), np.array([1.5, 1, 2, 3, 3.])), 6)
    1.006231
    """
    return float(pg.compute_effsize(x, y, paired=True, eftype="cohen_dz"))


def power_ttest_dz(n: int, power: float = 0.8, alpha: float = 0.05) -> float:
    """Return the paired-t effect size d_z detectable with ``power`` at ``n`` questions.

    Examples
    --------
    >>> round(power_ttest_dz(30), 4)
    0.5292
    """
    return float(pg.power_ttest(d=None, n=n, power=power, alpha=alpha, contrast="paired"))


def holm(p_values: np.ndarray, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Return (reject, adjusted p) from pingouin's Holm step-down ``multicomp``.

    Examples
    --------
    >>> reject, adj = holm(np.array([0.01, 0.04, 0.03]))
    >>> adj.tolist(), reject.tolist()
    ([0.03, 0.06, 0.06], [True, False, False])
    """
    p = np.asarray(p_values, dtype=float)
    if p.size == 0:
        return np.zeros(0, dtype=bool), np.zeros(0)
    reject, adjusted = pg.multicomp(p, alpha=alpha, method="holm")
    return np.asarray(reject, dtype=bool), np.asarray(adjusted, dtype=float)
