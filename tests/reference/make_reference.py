"""Write the fixed inputs and the outside-library reference values the stats tests compare with.

Run from the repository root: ``python tests/reference/make_reference.py``.
It writes ``inputs.csv`` (a scored table: 2 gradings, 40 questions, 1–4
rounds, partial credit) and ``expected.csv`` (name, value, the producing
call). Every value comes from scipy or statsmodels, never from Dualboard.
The tests recompute each value with Dualboard's code and compare to 1e-9.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

HERE = Path(__file__).resolve().parent
MCNEMAR_CELLS = [(0, 0), (0, 6), (6, 0), (3, 9), (12, 5), (40, 41)]
WILSON_CASES = [(0, 30), (30, 30), (21, 30), (57, 100), (1, 10)]
KAPPA_TABLES = [[[20, 5], [10, 15]], [[45, 3], [2, 50]], [[10, 10], [10, 10]], [[1, 9], [0, 90]]]
HOLM_P = [0.001, 0.04, 0.03, 0.5, 0.012, 0.2, 0.049]
POWER_N = [10, 30, 100, 500]
INPUTS_SEED = 40
"""Seed of the committed ``inputs.csv``: data, not the bootstrap default ``dualboard.stats.tables.SEED``,
so that changing that default leaves the reference inputs and values as they are."""


def make_inputs(seed: int = INPUTS_SEED) -> pd.DataFrame:
    """Return a scored table with unequal rounds and partial-credit traditional scores."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(40):
        x = rng.beta(2, 1.5)
        for r in range(int(rng.integers(1, 5))):
            rows.append(
                {
                    "run_id": "ref",
                    "model": "ref",
                    "question_id": f"q{q:02d}",
                    "round": r,
                    "traditional": 20.0 * rng.binomial(5, x),
                    "answer_key": 100.0 * rng.binomial(1, 0.8 * x),
                }
            )
    return pd.DataFrame(rows)


def cluster_references(scored: pd.DataFrame) -> list[tuple[str, float, str]]:
    """Return WLS/OLS cluster references for mean, SE, CI and the paired difference."""
    out = []
    groups = pd.factorize(scored["question_id"])[0]
    r = scored.groupby("question_id")["round"].transform("size").to_numpy()
    for g in ("traditional", "answer_key"):
        y = scored[g].to_numpy() / 100
        fit = sm.WLS(y, np.ones_like(y), weights=1 / r).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
        raw = sm.WLS(y, np.ones_like(y), weights=1 / r).fit(
            cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}, use_t=True
        )
        lo, hi = fit.conf_int()[0]
        call = "sm.WLS(y, 1, weights=1/r).fit(cov_type='cluster', groups=question, use_t=True)"
        out += [
            (f"wls_{g}_mean", fit.params[0], call),
            (f"wls_{g}_se", fit.bse[0], call),
            (f"wls_{g}_ci_low", lo, call),
            (f"wls_{g}_ci_high", hi, call),
            (f"wls_{g}_var_nocorrection", raw.bse[0] ** 2, call + " use_correction=False"),
        ]
    qm = scored.groupby("question_id")[["traditional", "answer_key"]].mean() / 100
    res = stats.ttest_rel(qm["answer_key"], qm["traditional"])
    ci = res.confidence_interval()
    call = "scipy.stats.ttest_rel(question means answer_key, traditional)"
    out += [
        ("ttest_rel_t", res.statistic, call),
        ("ttest_rel_p", res.pvalue, call),
        ("ttest_rel_ci_low", ci.low, call),
        ("ttest_rel_ci_high", ci.high, call),
    ]
    sums = scored.groupby("question_id")[["answer_key", "traditional", "round"]].agg(
        {"answer_key": "sum", "traditional": "sum", "round": "size"}
    )
    # d scaled by 100·12 (12 = lcm of 1..4 rounds) is an integer: no float noise in ties/zeros
    exact_d = (sums["answer_key"] - sums["traditional"]) * (12 // sums["round"])
    w = stats.wilcoxon(exact_d, correction=True)
    out.append(("wilcoxon_p", w.pvalue, "scipy.stats.wilcoxon(integer-scaled d, correction=True)"))
    d = (qm["answer_key"] - qm["traditional"]).to_numpy()
    pooled = sm.OLS(np.tile(d, 2), np.ones(2 * len(d))).fit(
        cov_type="cluster", cov_kwds={"groups": np.tile(np.arange(len(d)), 2)}, use_t=True
    )
    out.append(("ols_pooled_se", pooled.bse[0], "sm.OLS(d stacked twice, 1) cluster by question"))
    return out


def exact_references() -> list[tuple[str, float, str]]:
    """Return McNemar, Wilson, κ, Holm and power-solver references."""
    out = []
    for b, c in MCNEMAR_CELLS:
        p = mcnemar([[10, b], [c, 10]], exact=True).pvalue
        out.append((f"mcnemar_{b}_{c}", p, "statsmodels mcnemar([[10,b],[c,10]], exact=True)"))
    for k, n in WILSON_CASES:
        ci = stats.binomtest(k, n).proportion_ci(method="wilson")
        call = "scipy.stats.binomtest(k, n).proportion_ci('wilson')"
        out += [(f"wilson_{k}_{n}_low", ci.low, call), (f"wilson_{k}_{n}_high", ci.high, call)]
    for i, table in enumerate(KAPPA_TABLES):
        out.append((f"kappa_{i}", cohens_kappa(np.array(table)).kappa, "statsmodels cohens_kappa(table).kappa"))
    for i, p in enumerate(multipletests(HOLM_P, method="holm")[1]):
        out.append((f"holm_{i}", p, "statsmodels multipletests(HOLM_P, method='holm')"))
    for n in POWER_N:
        out.append(
            (
                f"power_dz_{n}",
                TTestPower().solve_power(None, nobs=n, alpha=0.05, power=0.8),
                "TTestPower().solve_power(effect_size=None, nobs=n, alpha=.05, power=.8)",
            )
        )
    return out


def main() -> None:
    """Write inputs.csv and expected.csv beside this script."""
    scored = make_inputs()
    scored.to_csv(HERE / "inputs.csv", index=False)
    rows = cluster_references(scored) + exact_references()
    expected = pd.DataFrame(rows, columns=["name", "value", "call"])
    expected.to_csv(HERE / "expected.csv", index=False, float_format="%.17g")


if __name__ == "__main__":
    main()
