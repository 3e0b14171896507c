"""Issue 9 §4: intervals never collapse, numbers never mislead.

Each test pins a degenerate case that the previous code got wrong (the old
value is in the comment) and checks the new value against an outside reference
(statsmodels, scipy) where one exists.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import TTestPower
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import DescrStatsW

from dualboard.stats import analyse, estimators, paired, power
from tests.stats.stats_builders import scored_run

P_BAR_30 = 1 - 0.05 ** (1 / 30)  # 9.5 % at n = 30 (Methodology, §No interval is zero-width)
TANGO_0_30 = 3.8414588206941254 / (30 + 3.8414588206941245)  # b = c = 0: n Δ/(1 - Δ) = z² (Tango's score = ±z)


def _row(scored: pd.DataFrame) -> pd.Series:
    models = analyse(scored, n_boot=50).models
    assert len(models) == 1
    return models.iloc[0]


def wilson_t(successes: float, n: int) -> tuple[float, float]:
    """Wilson with z = t(n-1), from statsmodels: alpha chosen so that its normal z equals that t."""
    alpha = 2 * stats.norm.sf(stats.t.ppf(0.975, n - 1))
    lo, hi = proportion_confint(successes, n, alpha=alpha, method="wilson")
    return 100 * lo, 100 * hi


# ---------------------------------------------------------------- difference intervals


def augmented_reference(d: np.ndarray) -> tuple[float, float]:
    """The augmented interval from statsmodels' weighted mean and SE (pseudo-questions +1, -1 of weight w)."""
    w = paired.PSEUDO_WEIGHT
    fit = DescrStatsW(np.r_[d, 1, -1], weights=np.r_[np.ones(len(d)), w, w], ddof=1)
    half = stats.t.ppf(0.975, len(d) - 1) * fit.std_mean / (1 - fit.mean**2)
    return 100 * np.tanh(np.arctanh(fit.mean) - half), 100 * np.tanh(np.arctanh(fit.mean) + half)


def test_every_difference_zero_with_rounds_gives_the_augmented_interval():
    # Issue 26 §4 changed this interval: it was the p̄ interval [-9.5, 9.5], 14× wider than with one discordance.
    x = 100.0 * np.random.default_rng(1).integers(0, 6, (30, 3)) / 5
    row = _row(scored_run("r", x, x))
    assert row["test"] == "all_zero"
    # before issue 9: [0.0, 0.0]
    assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx(augmented_reference(np.zeros(30)), abs=1e-9)
    assert (round(row["diff_ci_low"], 1), round(row["diff_ci_high"], 1)) == (-9.2, 9.2)
    assert row["note"].startswith("every question difference is 0: p=1")


def test_constant_nonzero_difference_gives_a_nonzero_interval_that_agrees_with_the_sign_test():
    trad = 100.0 * np.random.default_rng(2).integers(1, 6, (15, 2)) / 5
    row = _row(scored_run("r", trad, trad - 20))
    assert row["test"] == "sign_test"
    assert row["p_value"] == pytest.approx(stats.binomtest(0, 15).pvalue)
    # before issue 9: [-20.0, -20.0]; before issue 26: the p̄ interval [-38.1, -1.9]
    lo, hi = paired.tango_interval(0, 15, 15)
    assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx((20 * float(lo), 20 * float(hi)), abs=1e-9)
    assert row["diff_ci_low"] < row["diff_ci_high"] < 0  # the sign test rejects: 0 is excluded


def test_pbar_is_the_exact_binomial_upper_bound_with_no_events():
    # Clopper–Pearson one-sided 95 % upper bound with 0 of n events = 1 - 0.05^(1/n).
    for n in (5, 30, 100):
        upper = proportion_confint(0, n, alpha=0.10, method="beta")[1]
        assert float(paired.departing_share_bound(n)) == pytest.approx(upper, abs=1e-12)


def test_binary_one_round_uses_tango():
    # Issue 26 §4 replaced Bonett–Price ([-8.66, 8.66] here) by Tango's score interval.
    x = 100.0 * (np.random.default_rng(3).random((30, 1)) < 0.6)
    row = _row(scored_run("r", x, x))
    assert row["test"] == "mcnemar_exact"
    assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx((-100 * TANGO_0_30, 100 * TANGO_0_30), abs=1e-9)


def test_run_vs_run_constant_differences_get_the_augmented_interval():
    x = 100.0 * np.random.default_rng(4).integers(0, 4, (30, 3)) / 3
    scored = pd.concat([scored_run(run_id, x, x) for run_id in "abc"])
    pw = analyse(scored, n_boot=50).pairwise
    assert set(pw["test"]) == {"all_zero"}
    # before issue 9: every pair [0.0, 0.0]; before issue 26: [-9.5, 9.5]
    lo, hi = augmented_reference(np.zeros(30))
    np.testing.assert_allclose(pw["diff_ci_low"], lo, atol=1e-9)
    np.testing.assert_allclose(pw["diff_ci_high"], hi, atol=1e-9)


def test_pooled_equator_interval_is_not_empty_when_every_difference_is_zero():
    x = 100.0 * np.random.default_rng(5).integers(0, 2, (30, 2))
    eq = analyse(pd.concat([scored_run("a", x, x), scored_run("b", x, x)]), n_boot=50).equator.iloc[0]
    # before: pooled_ci_low/high empty
    assert (eq["pooled_ci_low"], eq["pooled_ci_high"]) == pytest.approx((-100 * P_BAR_30, 100 * P_BAR_30))


# ---------------------------------------------------------------- mean intervals


def test_float_noise_se_counts_as_zero_and_uses_n_eff_n():
    # Every question passes 4 of 5 rounds: question means all 0.8.
    trad = np.tile([100.0, 100, 100, 100, 0], (30, 1))
    qmeans = trad.mean(axis=1) / 100
    assert 0 < qmeans.std(ddof=1) / np.sqrt(30) < 1e-15  # numpy's float noise, not 0
    row = _row(scored_run("r", trad, trad))
    assert row["traditional_se"] == 0.0
    # before: "80.0 [80.0, 80.0]"
    assert (row["traditional_ci_low"], row["traditional_ci_high"]) == pytest.approx(wilson_t(24, 30), abs=1e-9)
    assert row["traditional_ci_high"] - row["traditional_ci_low"] > 25


def test_partial_credit_with_equal_question_means_gets_wilson_n():
    trad = np.full((30, 1), 60.0)
    row = _row(scored_run("r", trad, trad))
    assert row["ci_method_traditional"] == "wilson_n"
    # before: "60.0 [60.0, 60.0]" (mean ± t·0)
    assert (row["traditional_ci_low"], row["traditional_ci_high"]) == pytest.approx(wilson_t(18, 30), abs=1e-9)


def test_snap_noise_is_the_one_threshold():
    se = np.array([0.0, 2.5e-17, 9.99e-13, 1e-12, 0.01, np.nan])
    np.testing.assert_array_equal(estimators.snap_noise(se), [0, 0, 0, 1e-12, 0.01, np.nan])


# ---------------------------------------------------------------- MDE


def _one_discordant_answer(run_id: str, seed: int, flip: bool) -> pd.DataFrame:
    x = 100.0 * (np.random.default_rng(seed).random((30, 10)) < 0.4)
    key = x.copy()
    if flip:
        key[13, 6] = 100.0 - key[13, 6]
    return scored_run(run_id, x, key)


def test_mde_is_nothing_detectable_not_zero_when_every_difference_is_zero():
    x = 100.0 * np.random.default_rng(6).integers(0, 2, (30, 3))
    tables = analyse(scored_run("r", x, x), n_boot=50)
    row, run_power = tables.models.iloc[0], tables.power.iloc[0]
    assert row["mde_status"] == "nothing_detectable" and np.isnan(row["mde_points"])
    # before: mde_points_normal 0.0 (shown as "0.0")
    assert run_power["mde_status"] == "nothing_detectable"
    assert np.isnan(run_power["mde_points_normal"])


def test_a_single_discordant_answer_detects_nothing():
    row = _row(_one_discordant_answer("r", 7, flip=True))
    assert (row["n_discordant_up"] + row["n_discordant_down"]) == 1
    # before: mde_points 0.97 (d_z*·sd(d) with sd from one question)
    assert row["mde_status"] == "nothing_detectable" and np.isnan(row["mde_points"])
    # statsmodels: even with every difference one way, the paired t's power is < 80 %.
    abs_d = np.zeros(30)
    abs_d[13] = 0.1
    achieved = TTestPower().power(effect_size=abs_d.mean() / abs_d.std(ddof=1), nobs=30, alpha=0.05)
    assert achieved < 0.8


def test_benchmark_mde_is_not_the_median_of_the_few_finite_values():
    # The 2024-09-13 pattern: 12 runs whose gradings agree everywhere, one with one discordant answer.
    scored = pd.concat([_one_discordant_answer(f"r{i:02d}", i, flip=i == 6) for i in range(13)])
    summary = (
        analyse(scored, n_boot=50).power.query("run_id == 'all' and comparison == 'answer_key_vs_traditional'").iloc[0]
    )
    # before: mde_points 0.97 with method "paired_t (median)"
    assert summary["mde_status"] == "nothing_detectable" and np.isnan(summary["mde_points"])
    assert (summary["n_comparisons"], summary["n_detectable"]) == (13, 0)


def test_summary_median_counts_nothing_detectable_as_infinite():
    from dualboard.stats.power_table import summary_row

    table = pd.DataFrame(
        {
            "mde_points": [10.0, 20.0, 30.0, np.nan, np.nan, np.nan],
            "mde_status": ["detectable"] * 3 + ["nothing_detectable"] * 2 + ["not_estimable"],
            "diff_se": [3.0, 6.0, 9.0, 0.0, 0.0, np.nan],
            "test": "paired_t",
            "n_questions": 30,
        }
    )
    row = summary_row("run_vs_run", "traditional", table, 1)
    assert (row["mde_points"], row["mde_status"]) == (30.0, "detectable")  # median of 10, 20, 30, ∞, ∞
    assert (row["n_comparisons"], row["n_detectable"]) == (6, 3)
    assert row["mde_points_normal"] == pytest.approx((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * 9.0)


@pytest.mark.parametrize(
    "discordant,status",
    [(0, "nothing_detectable"), (1, "nothing_detectable"), (3, "nothing_detectable"), (9, "detectable")],
)
def test_thirty_questions_detect_nothing_at_ten_percent_discordance(discordant, status):
    mde, got = power.paired_mde(30, binary_k1=True, discordant=discordant, sd_d=0.0, abs_mean=0.0, abs_sd=0.0)
    assert got == status and np.isfinite(mde) == (status == "detectable")


def test_exact_mcnemar_needs_six_discordant_pairs_all_one_way():
    assert mcnemar([[10, 6], [0, 14]], exact=True).pvalue <= 0.05
    assert mcnemar([[10, 5], [0, 15]], exact=True).pvalue > 0.05


@pytest.mark.parametrize("k", range(1, 12))
def test_shift_detectable_equals_statsmodels_power_at_the_one_way_configuration(k):
    abs_d = np.r_[np.full(k, 0.2), np.zeros(30 - k)]
    achieved = TTestPower().power(effect_size=abs_d.mean() / abs_d.std(ddof=1), nobs=30, alpha=0.05)
    assert power.shift_detectable(abs_d.mean(), abs_d.std(ddof=1), 30) == (achieved >= 0.8)


def test_constant_nonzero_difference_mde_is_not_estimable():
    trad = np.full((20, 2), 80.0)
    row = _row(scored_run("r", trad, trad - 20))
    assert row["mde_status"] == "not_estimable" and np.isnan(row["mde_points"])


# ---------------------------------------------------------------- variance, agreement, naive


def test_negative_variance_component_is_clipped_and_said():
    # Every question passes one of two rounds: question means all 0.5, rounds vary.
    trad = np.tile([100.0, 0.0], (20, 1))
    row = _row(scored_run("r", trad, trad))
    # before: traditional_var_between -2500.0 (Var(means) 0 − mean(σ²/K) = 0 − 5000/2)
    assert row["traditional_var_between"] == 0.0
    assert bool(row["traditional_var_between_clipped"])
    assert "traditional Var(x) estimate -2500.0 points² clipped at 0" in row["note"]


def test_positive_variance_component_is_unchanged():
    rng = np.random.default_rng(8)
    trad = 100.0 * (rng.random((30, 3)) < rng.random((30, 1)))
    row = _row(scored_run("r", trad, trad))
    q = trad.mean(axis=1)
    want = np.var(q, ddof=1) - np.mean(trad.var(axis=1, ddof=1) / 3)
    assert want > 0
    assert row["traditional_var_between"] == pytest.approx(want, rel=1e-12)
    assert not bool(row["traditional_var_between_clipped"])


def test_agreement_without_categories_has_one_all_row():
    x = 100.0 * (np.random.default_rng(9).random((30, 1)) < 0.5)
    scored = scored_run("r", x, x).drop(columns="category")
    agreement = analyse(scored, n_boot=50).agreement
    # before: two rows with category "all"
    assert agreement["category"].tolist() == ["all"]


def test_naive_interval_is_clipped_to_the_score_scale():
    x = np.zeros((30, 1))
    x[0] = 100.0
    row = _row(scored_run("r", x, 100 - x))
    # before: traditional_naive_ci_low -3.2, answer_key_naive_ci_high 103.2
    assert row["traditional_naive_ci_low"] == 0.0
    assert row["answer_key_naive_ci_high"] == 100.0
    half = 1.96 * np.std(x / 100, ddof=1) / np.sqrt(30)
    assert row["traditional_naive_ci_high"] == pytest.approx(100 * (1 / 30 + half), abs=1e-9)


@pytest.mark.parametrize("score", [0.0, 100.0])
def test_naive_interval_of_equal_answers_is_wilson_with_every_answer(score):
    """Issue 26 §3: 300 answers all 0 (or all 100) gave the naive "0.0 [0.0, 0.0]" (or [100, 100])."""
    x = np.full((30, 10), score)
    row = _row(scored_run("r", x, x))
    lo, hi = proportion_confint(int(score / 100 * 300), 300, alpha=0.05, method="wilson")
    for g in ("traditional", "answer_key"):
        assert row[f"{g}_naive_ci_high"] - row[f"{g}_naive_ci_low"] > 1  # before: 0
        assert row[f"{g}_naive_ci_low"] == pytest.approx(100 * lo, abs=1e-9)
        assert row[f"{g}_naive_ci_high"] == pytest.approx(100 * hi, abs=1e-9)
