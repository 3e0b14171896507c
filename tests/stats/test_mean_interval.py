"""The interval of one run's mean score (Methodology, §Mean score and its interval), issue 26 item 5.

Wilson with the effective n of the question means, capped at two answers per question, z = t(n - 1),
and Poisson ends where 3 or fewer effective passes or failures remain. Each test fails on the
uncapped, Poisson-free Wilson n_eff interval it replaces.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from dualboard.stats import analyse, estimators
from dualboard.stats.defaults import SEED
from tests.stats.stats_builders import scored_run

TOL = 1e-9
BENCH = Path(__file__).resolve().parents[2] / "bench" / "calibration.py"


def _calibration():
    """Import bench/calibration.py (not a package) as a module."""
    spec = importlib.util.spec_from_file_location("calibration_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def reference_interval(scores: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """The method written again from statsmodels and scipy: questions × rounds of 0/1 → (low, high)."""
    n, k = scores.shape
    question = np.repeat(np.arange(n), k)
    fit = sm.WLS(scores.ravel(), np.ones(n * k)).fit(cov_type="cluster", cov_kwds={"groups": question}, use_t=True)
    p, se = fit.params[0], fit.bse[0]
    n_eff = n if se < 1e-12 or p in (0, 1) else min(p * (1 - p) / se**2, 2 * n)
    z = stats.t.ppf(1 - alpha / 2, n - 1)
    low, high = proportion_confint(p * n_eff, n_eff, alpha=2 * stats.norm.sf(z), method="wilson")
    few = 2 if n_eff <= 50 else 3
    if 0 < p * n_eff <= few:  # the exact Poisson bound of a count: Gamma(x, 1) quantile
        low = min(low, stats.gamma.ppf(alpha, p * n_eff) / n_eff)
    if 0 < (1 - p) * n_eff <= few:
        high = max(high, 1 - stats.gamma.ppf(alpha, (1 - p) * n_eff) / n_eff)
    return max(low, 0.0), min(high, 1.0)


def _board(n: int, rounds: int, mean: float, concentration: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.beta(mean * concentration, (1 - mean) * concentration, n)
    return (rng.random((n, rounds)) < x[:, None]).astype(float)


@pytest.mark.parametrize(
    "n,rounds,mean,concentration,seed",
    [
        (30, 10, 0.95, 1.0, 1),
        (30, 10, 0.97, 4.0, 2),
        (30, 5, 0.8, 1.0, 3),
        (100, 3, 0.99, 1.0, 4),
        (30, 1, 0.9, 4.0, 5),
    ],
)
def test_models_table_equals_an_independent_implementation(n, rounds, mean, concentration, seed):
    scores = _board(n, rounds, mean, concentration, seed)
    row = analyse(scored_run("r", 100 * scores, 100 * scores), n_boot=100).models.iloc[0]
    low, high = reference_interval(scores)
    assert row["ci_method_traditional"] == "wilson_neff"
    assert (row["traditional_ci_low"], row["traditional_ci_high"]) == pytest.approx((100 * low, 100 * high), abs=TOL)


def test_the_cap_binds_on_a_board_that_misses_its_hard_questions():
    """29 questions passed 10 times of 10 and one 9 times: the cap sets n_eff = 2n = 60, not 299."""
    scores = np.ones((30, 10))
    scores[0, 0] = 0
    mu, se, df = estimators.cluster_mean_se(scores.mean(axis=1))
    assert float(mu * (1 - mu) / se**2) == pytest.approx(299)
    low, high = estimators.wilson_neff_interval(mu, se, 30, df)
    assert (float(low), float(high)) == pytest.approx(reference_interval(scores), abs=TOL)


def test_one_missed_round_does_not_shrink_the_interval_more_than_twofold():
    """All 300 answers passed gives [87.8, 100]; one failed answer must not give [98.0, 99.9]."""
    perfect = np.ones(30)
    one_miss = perfect.copy()
    one_miss[0] = 0.9
    widths = []
    for qmeans in (perfect, one_miss):
        mu, se, df = estimators.cluster_mean_se(qmeans)
        low, high = estimators.wilson_neff_interval(mu, se, 30, df)
        widths.append(float(high - low))
    assert widths[0] / widths[1] <= 2


@pytest.mark.parametrize("n", [30, 100, 500])
@pytest.mark.parametrize("mean", [0.5, 0.8, 0.9, 0.95, 0.97, 0.99])
def test_one_round_exact_coverage_is_at_least_93_percent(n, mean):
    """With one round every board is Binomial(n, mean): coverage is a finite sum, no simulation needed.

    Plain Wilson with z = t(99) covers 92.06 % at n = 100, mean 0.99 (3 failures are
    likely, and its upper end then falls below 0.99); the Poisson end restores it.
    """
    passed = np.arange(n + 1)
    qmeans = (np.arange(n)[None, :] < passed[:, None]).astype(float)
    mu, se, df = estimators.cluster_mean_se(qmeans)
    low, high = estimators.wilson_neff_interval(mu, se, n, df)
    covers = (low <= mean) & (mean <= high)
    assert stats.binom.pmf(passed, n, mean)[covers].sum() >= 0.93


@pytest.mark.test_all
def test_critical_cells_pass_the_coverage_gate():
    """n = 30, true mean 0.95–0.99, 5 or 10 rounds, uneven difficulty: the uncapped interval covered 88–90 %."""
    calibration = _calibration()
    rng = np.random.default_rng(SEED)
    for cell in calibration.CRITICAL_CELLS:
        rows = calibration.coverage_cell(cell, 2000, rng)
        mean = next(r for r in rows if r["check"] == "mean: wilson_neff")
        assert mean["pass"] == "PASS", mean
