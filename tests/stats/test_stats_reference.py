"""Every statistic against an outside reference (scipy, statsmodels, pingouin), to 1e-9.

Stored references: ``tests/reference/expected.csv``, written by
``tests/reference/make_reference.py`` (the producing call is in its ``call``
column). Live references call the outside library in the test itself.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

from dualboard import kappa
from dualboard.stats import estimators, paired, power, scores
from dualboard.stats import pingouin_adapter as pga
from dualboard.stats.equator import pooled_clustered
from tests.reference import make_reference

REFERENCE = Path(__file__).resolve().parents[1] / "reference"

TOL = 1e-9


@pytest.fixture(scope="module")
def expected() -> pd.Series:
    return pd.read_csv(REFERENCE / "expected.csv").set_index("name")["value"]


@pytest.fixture(scope="module")
def qmeans() -> pd.DataFrame:
    scored = pd.read_csv(REFERENCE / "inputs.csv", dtype={"question_id": str})
    return scores.question_means(scored)


def _grading(qmeans: pd.DataFrame, g: str) -> np.ndarray:
    return qmeans.loc[qmeans["grading"] == g, "mean"].to_numpy()


def test_stored_inputs_are_what_the_script_makes():
    stored = pd.read_csv(REFERENCE / "inputs.csv", dtype={"question_id": str})
    pd.testing.assert_frame_equal(stored, make_reference.make_inputs(), check_dtype=False)


@pytest.mark.parametrize("g", ["traditional", "answer_key"])
def test_question_mean_se_and_ci_equal_wls_cluster(qmeans, expected, g):
    mu, se, df = estimators.cluster_mean_se(_grading(qmeans, g))
    lo, hi = estimators.t_interval(mu, se, df, bounds=None)
    got = {"mean": mu, "se": se, "ci_low": lo, "ci_high": hi}
    for key, value in got.items():
        assert float(value) == pytest.approx(expected[f"wls_{g}_{key}"], abs=TOL), key


@pytest.mark.parametrize("g", ["traditional", "answer_key"])
def test_uncorrected_cluster_variance_is_sum_of_squared_cluster_scores(qmeans, expected, g):
    y = _grading(qmeans, g)
    n = len(y)
    raw = np.sum((y - y.mean()) ** 2) / n**2
    assert raw == pytest.approx(expected[f"wls_{g}_var_nocorrection"], abs=TOL)
    _, se, _ = estimators.cluster_mean_se(y)
    assert float(se) ** 2 == pytest.approx(raw * n / (n - 1), abs=TOL)


def test_paired_t_equals_ttest_rel_and_pingouin(qmeans, expected):
    x, y = _grading(qmeans, "answer_key"), _grading(qmeans, "traditional")
    ours = paired.paired_t(x - y)
    for key, name in [("t", "t"), ("p_value", "p"), ("ci_low", "ci_low"), ("ci_high", "ci_high")]:
        assert float(ours[key]) == pytest.approx(expected[f"ttest_rel_{name}"], abs=TOL)
    pgr = pg.ttest(x, y, paired=True).iloc[0]
    assert pgr["T"] == pytest.approx(float(ours["t"]), abs=TOL)
    assert pgr["p_val"] == pytest.approx(float(ours["p_value"]), abs=TOL)
    assert pga.cohen_dz(x, y) == pytest.approx(float(ours["t"]) / np.sqrt(len(x)), abs=TOL)


def test_wilcoxon_adapter_equals_scipy(qmeans, expected):
    x, y = _grading(qmeans, "answer_key"), _grading(qmeans, "traditional")
    d = np.round(x - y, 12)
    assert pga.wilcoxon(d)["p_value"] == pytest.approx(expected["wilcoxon_p"], abs=TOL)


def test_pooled_clustered_se_equals_ols_cluster(qmeans, expected):
    doubled = pd.concat([qmeans, qmeans.assign(run_id="ref2")])
    got = pooled_clustered(doubled)
    assert got["pooled_se"] / 100 == pytest.approx(expected["ols_pooled_se"], abs=TOL)


@pytest.mark.parametrize("b,c", make_reference.MCNEMAR_CELLS)
def test_exact_mcnemar_equals_statsmodels_binomtest_pingouin(expected, b, c):
    ours = float(paired.mcnemar_exact_p(np.array(b), np.array(c)))
    assert ours == pytest.approx(expected[f"mcnemar_{b}_{c}"], abs=TOL)
    assert ours == pytest.approx(mcnemar([[3, b], [c, 4]], exact=True).pvalue, abs=TOL)
    if b + c:
        assert ours == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, abs=TOL)
        data = pd.DataFrame({"T": [1] * b + [0] * c + [1, 0], "K": [0] * b + [1] * c + [1, 0]})
        assert ours == pytest.approx(pg.chi2_mcnemar(data, "T", "K")[1]["p_exact"].iloc[0], abs=TOL)


@pytest.mark.parametrize("k,n", make_reference.WILSON_CASES)
def test_wilson_formula_equals_binomtest_wilson(expected, k, n):
    """Wilson's own ends, except an end resting on 1 or 2 counts: the Poisson bound (Gamma(k, 1) quantile)."""
    p = k / n
    lo, hi = estimators.wilson_neff_interval(p, np.sqrt(p * (1 - p) / n), n, np.inf)
    want_lo = expected[f"wilson_{k}_{n}_low"]
    if 0 < k <= 2:
        want_lo = min(want_lo, stats.gamma.ppf(0.05, k) / n)
    assert float(lo) == pytest.approx(want_lo, abs=TOL)
    assert float(hi) == pytest.approx(expected[f"wilson_{k}_{n}_high"], abs=TOL)


@pytest.mark.parametrize("i", range(len(make_reference.KAPPA_TABLES)))
def test_kappa_equals_statsmodels_and_hand_formula(expected, i):
    t = np.array(make_reference.KAPPA_TABLES[i])
    counts = np.array([t[0, 0], t[0, 1], t[1, 0], t[1, 1]])
    ours = float(kappa.kappa_from_counts(counts))
    assert ours == pytest.approx(expected[f"kappa_{i}"], abs=TOL)
    n = t.sum()
    po, pe = np.trace(t) / n, (t.sum(1) @ t.sum(0)) / n**2
    assert ours == pytest.approx((po - pe) / (1 - pe), abs=TOL)
    assert ours == pytest.approx(cohens_kappa(t).kappa, abs=TOL)


def test_holm_adapter_equals_multipletests(expected):
    reject, adjusted = pga.holm(np.array(make_reference.HOLM_P))
    want = [expected[f"holm_{i}"] for i in range(len(make_reference.HOLM_P))]
    np.testing.assert_allclose(adjusted, want, atol=TOL)
    np.testing.assert_array_equal(reject, multipletests(make_reference.HOLM_P, method="holm")[0])


@pytest.mark.parametrize("n", make_reference.POWER_N)
def test_power_solvers_agree(expected, n):
    assert power.dz_star(n) == pytest.approx(expected[f"power_dz_{n}"], abs=1e-6)
    assert power.dz_star(n) == pytest.approx(
        TTestPower().solve_power(effect_size=None, nobs=n, alpha=0.05, power=0.8), abs=1e-6
    )


def test_dz_star_at_30_is_the_documented_value():
    assert power.dz_star(30) == pytest.approx(0.5292, abs=5e-5)


@pytest.mark.parametrize("p_up,p_down,n", [(0.2, 0.1, 20), (0.05, 0.25, 30), (0.0, 0.1, 30)])
def test_mcnemar_power_equals_brute_force_enumeration(p_up, p_down, n):
    total = 0.0
    for b, c in itertools.product(range(n + 1), repeat=2):
        if b + c > n:
            continue
        prob = stats.multinomial.pmf([b, c, n - b - c], n, [p_up, p_down, 1 - p_up - p_down])
        p = mcnemar([[0, b], [c, 0]], exact=True).pvalue
        total += prob * (p <= 0.05)
    assert power.mcnemar_power(p_up, p_down, n) == pytest.approx(total, abs=1e-9)


def test_sign_flip_equals_scipy_exact_permutation_test():
    d = np.array([0.3, -0.1, 0.5, 0.2, 0.0, 0.4, -0.2, 0.3])
    ref = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf).pvalue
    assert paired.sign_flip_p(d) == pytest.approx(ref, abs=TOL)


def test_dz_interval_inverts_the_noncentral_t():
    t, n = 2.7, 25
    lo, hi = paired.dz_interval(t, n)
    assert stats.nct.cdf(t, n - 1, lo * np.sqrt(n)) == pytest.approx(0.975, abs=1e-9)
    assert stats.nct.cdf(t, n - 1, hi * np.sqrt(n)) == pytest.approx(0.025, abs=1e-9)


def test_cluster_ratio_se_equals_ols_cluster_for_a_ratio():
    s, t = np.array([2, 0, 3, 1, 4]), np.array([3, 1, 4, 2, 4])
    y = np.concatenate([[1] * si + [0] * (ti - si) for si, ti in zip(s, t)]).astype(float)
    groups = np.repeat(np.arange(len(t)), t)
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    n = len(y)
    p, se = estimators.cluster_ratio_se(s, t)
    # statsmodels also multiplies by (N-1)/(N-k) = 1 with k = 1 parameter
    assert p == pytest.approx(fit.params[0], abs=TOL)
    assert se == pytest.approx(fit.bse[0], abs=TOL), n


@pytest.mark.parametrize("n", [0, 1, 6, 17, 30, 64])
def test_critical_counts_equal_the_rejection_region_of_statsmodels_exact_mcnemar(n):
    c = power.critical_counts(n)
    for s in range(n + 1):
        rejected = [b for b in range(s // 2 + 1) if mcnemar([[0, b], [s - b, 0]], exact=True).pvalue <= 0.05]
        assert c[s] == max(rejected, default=-1), s
