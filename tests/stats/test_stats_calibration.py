"""A fast, seeded version of bench/calibration.py: known truth from the demo simulator.

Loose gates (300–1,000 simulations, Monte-Carlo SE ≈ 1.3 %); the full grid with
the bounds of the site's methodology page (Methodology, §How the methods are checked) runs in
``python bench/calibration.py``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

BENCH = Path(__file__).resolve().parents[2] / "bench" / "calibration.py"
spec = importlib.util.spec_from_file_location("calibration_bench", BENCH)
calibration = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = calibration  # dataclasses look their module up here
spec.loader.exec_module(calibration)
Cell = calibration.Cell


def _value(rows: list[dict], check: str) -> float:
    return next(r["value"] for r in rows if r["check"] == check)


@pytest.mark.parametrize(
    "cell", [Cell(30, 1, 0.8, "clustered"), Cell(100, 3, 0.5, "clustered"), Cell(30, 5, 0.95, "unclustered")]
)
def test_intervals_cover_the_true_mean(cell):
    rows = calibration.coverage_cell(cell, 300, np.random.default_rng(1))
    assert _value(rows, "mean: wilson_neff") >= 0.90  # conservative where rounds are independent (n_eff <= 2n)
    diff = next(r for r in rows if r["check"].startswith("diff:"))
    assert 0.90 <= diff["value"] <= 1.0


def test_naive_interval_under_covers_with_clustered_rounds():
    rows = calibration.coverage_cell(Cell(30, 5, 0.5, "clustered"), 300, np.random.default_rng(2))
    naive = _value(rows, "mean: NAIVE (answers independent)")
    assert naive < 0.90  # theory: ICC 0.2, design effect 1.8, coverage ≈ 86%
    assert _value(rows, "mean: wilson_neff") > naive + 0.05


@pytest.mark.parametrize(
    "cell,check",
    [
        (Cell(30, 1, 0.8, "clustered"), "mcnemar exact"),
        (Cell(30, 3, 0.5, "clustered"), "paired t"),
        (Cell(30, 3, 0.5, "clustered"), "wilcoxon (normal approx.)"),
    ],
)
def test_type_one_error_under_the_null(cell, check):
    rows = calibration.type1_cell(cell, 1000, np.random.default_rng(3))
    assert _value(rows, check) <= 0.075


def test_holm_family_wise_error_with_eight_identical_runs():
    row = calibration.fwer_cell(Cell(30, 3, 0.8, "clustered"), 300, np.random.default_rng(4))
    assert row["value"] <= 0.10


@pytest.mark.slow
def test_vectorised_holm_equals_multipletests():
    p = np.random.default_rng(5).random((20, 7)) ** 3
    want = np.array([multipletests(row, method="holm")[0] for row in p])
    np.testing.assert_array_equal(calibration.holm_reject(p), want)


def test_gates_are_statistics_md_at_its_sizes_and_scale_with_the_simulations():
    lo, hi = calibration.COVERAGE.bounds(2000)
    assert (lo, hi) == pytest.approx((0.93, 0.97), abs=0.0015)  # MC SE 0.49 % at 2,000
    assert calibration.TYPE_ONE.bounds(10_000)[1] == pytest.approx(0.055, abs=0.0002)
    assert calibration.TYPE_ONE.bounds(2000)[1] == pytest.approx(0.06, abs=0.0015)
    widths = [calibration.COVERAGE.bounds(s)[1] - calibration.COVERAGE.bounds(s)[0] for s in (300, 2000, 10_000)]
    assert widths == sorted(widths, reverse=True)


def test_an_exactly_calibrated_method_passes_the_quick_gates_about_99_times_in_100():
    # A 95 % interval's coverage over 300 simulations: Binomial(300, 0.95) / 300.
    from scipy import stats

    low, high = calibration.COVERAGE.bounds(300)
    inside = stats.binom.cdf(np.floor(high * 300), 300, 0.95) - stats.binom.cdf(np.ceil(low * 300) - 1, 300, 0.95)
    assert inside >= 0.99
    limit = calibration.TYPE_ONE.bounds(1000)[1]
    assert stats.binom.cdf(np.floor(limit * 1000), 1000, 0.05) >= 0.985  # binomial skew: 98.9 %
