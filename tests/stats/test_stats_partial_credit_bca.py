"""Partial-credit scores: the t interval on question means, cross-checked with a BCa bootstrap.

Partial-credit scores get mean ± t·SE (Methodology, §Mean score and its interval),
cross-checked with scipy.stats.bootstrap((qmeans,), np.mean, method='BCa'). With 60 questions the
two intervals must agree to within a fraction of their width; a t interval that
used the wrong SE (e.g. over answers, not questions) would miss by far more.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dualboard.stats import analyse
from tests.stats.stats_builders import scored_run


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_t_interval_agrees_with_bca_bootstrap_on_question_means(seed):
    rng = np.random.default_rng(seed)
    n, rounds = 60, 3
    difficulty = rng.beta(2, 2, size=(n, 1))
    marks = 20.0 * rng.binomial(5, np.repeat(difficulty, rounds, axis=1))  # 0–100 in steps of 20
    key = 100.0 * (rng.random((n, rounds)) < 0.5)
    models = analyse(scored_run("r", marks, key), n_boot=200, seed=seed).models.iloc[0]
    assert models["ci_method_traditional"] == "t"
    qmeans = marks.mean(axis=1)
    bca = stats.bootstrap((qmeans,), np.mean, method="BCa", n_resamples=4000, random_state=seed).confidence_interval
    width = models["traditional_ci_high"] - models["traditional_ci_low"]
    assert models["traditional_mean"] == pytest.approx(qmeans.mean(), abs=1e-9)
    assert abs(models["traditional_ci_low"] - bca.low) < 0.15 * width
    assert abs(models["traditional_ci_high"] - bca.high) < 0.15 * width
