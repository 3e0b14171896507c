"""No verdict is not a 0: coverage, means over judged answers, answer-level pairing, the 80 % rule.

A grader that cannot judge an answer gives no verdict, NaN (Methodology, §No verdict and coverage):
the answer is left out of that grading's mean and of every paired analysis
that needs the verdict, the grading's coverage is reported, and a run under
80 % coverage in a grading is not ranked there. Every test here fails on the
old behaviour, which counted a missing verdict as 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.multitest import multipletests

from dualboard.stats import analyse
from dualboard.stats.scores import MIN_COVERAGE
from tests.stats.stats_builders import scored_run

TOL = 1e-9


def _only(tables) -> pd.Series:
    assert len(tables.models) == 1
    return tables.models.iloc[0]


@pytest.fixture(scope="module")
def partial_credit():
    """One run, 30 questions × 3 rounds of 0–100 marks; the answer key misses 15 % and all of q000 (and q013)."""
    rng = np.random.default_rng(5)
    trad = 25.0 * rng.integers(0, 5, (30, 3))
    key = 25.0 * rng.integers(0, 5, (30, 3))
    key[rng.random((30, 3)) < 0.15] = np.nan
    key[0] = np.nan
    return trad, key, _only(analyse(scored_run("r", trad, key), n_boot=100))


def test_no_verdict_is_left_out_of_the_mean_as_statsmodels_computes_it(partial_credit):
    _, key, row = partial_credit
    judged = ~np.isnan(key)
    question = np.nonzero(judged)[0]  # the question of each judged answer; q000 has none
    y = key[judged] / 100
    # The reference (Methodology, §Mean score and its interval): WLS on the answers, weights 1/r_i,
    # clustered by question.
    fit = sm.WLS(y, np.ones_like(y), weights=1 / judged.sum(axis=1)[question]).fit(
        cov_type="cluster", cov_kwds={"groups": question}, use_t=True
    )
    low, high = fit.conf_int(0.05)[0]
    assert row["ci_method_answer_key"] == "t"
    assert row["answer_key_mean"] == pytest.approx(100 * fit.params[0], abs=TOL)
    assert row["answer_key_se"] == pytest.approx(100 * fit.bse[0], abs=TOL)
    assert (row["answer_key_ci_low"], row["answer_key_ci_high"]) == pytest.approx((100 * low, 100 * high), abs=TOL)
    as_zero = np.nan_to_num(key).mean(axis=1).mean()  # the old rule: no verdict counted as 0
    assert abs(row["answer_key_mean"] - as_zero) > 5


def test_coverage_and_the_n_used_are_reported(partial_credit):
    trad, key, row = partial_credit
    judged = ~np.isnan(key)
    assert row["traditional_coverage"] == 1.0
    assert row["answer_key_coverage"] == pytest.approx(judged.sum() / 90, abs=TOL)
    assert judged.sum() == 74  # this seed: 74 of 90 answers judged; q000 and q013 have no verdict
    assert row["n_answers_paired"] == 74 and row["n_questions_paired"] == 28
    assert row["n_answers_agree"] == int((key == trad).sum())
    assert row["answer_key_naive_mean"] == pytest.approx(np.nanmean(key), abs=TOL)


def test_traditional_vs_answer_key_pairs_at_the_answer_before_question_means(partial_credit):
    """With K > 1, each question's two means are over the rounds both gradings judged."""
    trad, key, row = partial_credit
    judged = ~np.isnan(key)
    rows = judged.any(axis=1)
    both_key = np.array([key[i, judged[i]].mean() for i in np.nonzero(rows)[0]])
    both_trad = np.array([trad[i, judged[i]].mean() for i in np.nonzero(rows)[0]])
    ref = stats.ttest_rel(both_key, both_trad)
    assert row["test"] == "paired_t"
    assert len(both_key) == row["n_questions_paired"] == 28
    assert row["diff_mean"] == pytest.approx(np.mean(both_key - both_trad), abs=TOL)
    assert row["diff_se"] == pytest.approx(np.std(both_key - both_trad, ddof=1) / np.sqrt(28), abs=TOL)
    assert row["p_value"] == pytest.approx(ref.pvalue, abs=TOL)
    # Pairing question means over different rounds mixes round-to-round noise into d.
    loose = stats.ttest_rel(np.nanmean(key[rows], axis=1), trad[rows].mean(axis=1))
    assert abs(loose.pvalue - ref.pvalue) > 0.01
    assert row["diff_mean"] != pytest.approx(row["answer_key_mean"] - row["traditional_mean"], abs=0.1)


def test_a_single_round_pairs_answers_and_keeps_mcnemar():
    trad = np.array([[100.0]] * 10 + [[0.0]] * 10 + [[100.0]] * 10)
    key = np.array([[100.0]] * 8 + [[0.0]] * 2 + [[0.0]] * 10 + [[np.nan]] * 10)
    row = _only(analyse(scored_run("r", trad, key), n_boot=100))
    assert row["test"] == "mcnemar_exact" and row["n_questions_paired"] == 20
    assert (row["n_discordant_up"], row["n_discordant_down"]) == (0, 2)
    assert row["diff_mean"] == pytest.approx(-10.0)  # before: −40 (10 fails counted as 0)
    assert row["p_value"] == pytest.approx(stats.binomtest(0, 2, 0.5).pvalue)


@pytest.fixture(scope="module")
def threshold():
    """Four runs, 50 questions × 2 rounds: b has 80 of 100 answer-key verdicts, c has 79."""
    rng = np.random.default_rng(3)
    runs = []
    for run_id, p, missing in [("a", 0.85, 0), ("b", 0.6, 20), ("c", 0.95, 21), ("d", 0.3, 0)]:
        trad = 100.0 * (rng.random((50, 2)) < p)
        key = 100.0 * (rng.random((50, 2)) < p)
        key.ravel()[:missing] = np.nan  # row-major: both rounds of the first questions
        runs.append(scored_run(run_id, trad, key))
    return analyse(pd.concat(runs, ignore_index=True), n_boot=200)


def test_a_run_at_79_percent_is_not_ranked_and_one_at_80_is(threshold):
    m = threshold.models.set_index("run_id")
    assert MIN_COVERAGE == 0.8
    assert m.loc["b", "answer_key_coverage"] == 0.80 and m.loc["c", "answer_key_coverage"] == 0.79
    assert m["ranked_answer_key"].tolist() == [True, True, False, True]
    assert m["ranked_traditional"].all()
    assert m.loc["c", "answer_key_mean"] > m["answer_key_mean"].drop("c").max()  # best, yet unranked
    c = m.loc["c"]
    for col in (
        "rank_answer_key",
        "rank_ci_low_answer_key",
        "rank_ci_high_answer_key",
        "bootstrap_rank_answer_key",
        "rank_ci_low",
        "rank_ci_high",
    ):
        assert np.isnan(c[col]), col
    assert pd.isna(c["tied_first_answer_key"])
    assert "not ranked under answer_key grading (coverage under 80%)" in c["note"]
    ranked = m.drop("c")
    assert sorted(ranked["rank_answer_key"]) == [1, 2, 3]
    assert (ranked["rank_ci_high_answer_key"] <= 3).all()  # m = 3 ranked runs
    assert m["rank_traditional"].notna().all() and m["rank_ci_high_traditional"].max() <= 4


@pytest.mark.slow
def test_an_unranked_run_leaves_the_holm_family(threshold):
    pw = threshold.pairwise
    key = pw[pw["grading"] == "answer_key"]
    with_c = (key["run_a"] == "c") | (key["run_b"] == "c")
    assert key.loc[with_c, "p_holm"].isna().all() and not key.loc[with_c, "significant"].any()
    assert key.loc[with_c, "p_value"].notna().all()  # the test itself is still shown
    assert key.loc[with_c, "note"].str.contains("left out of the Holm family").all()
    family = key[~with_c]
    assert len(family) == 3
    np.testing.assert_allclose(family["p_holm"], multipletests(family["p_value"], method="holm")[1], atol=TOL)
    trad = pw[pw["grading"] == "traditional"]
    np.testing.assert_allclose(trad["p_holm"], multipletests(trad["p_value"], method="holm")[1], atol=TOL)


def test_a_grading_that_judged_nothing_gives_no_number_and_no_rank():
    trad = 100.0 * (np.arange(30) % 3 == 0)[:, None]
    key = np.full((30, 1), np.nan)
    tables = analyse(pd.concat([scored_run("r", trad, key), scored_run("s", trad, trad)]), n_boot=100)
    r = tables.models.set_index("run_id").loc["r"]
    assert r["answer_key_coverage"] == 0.0 and r["ci_method_answer_key"] == "no_verdict"
    assert np.isnan(r["answer_key_mean"]) and np.isnan(r["rank_answer_key"])
    assert r["test"] == "no_shared_questions" and r["n_questions_paired"] == 0
    assert r["rank_traditional"] == 1 and not r["ranked_answer_key"]


def test_identical_gradings_are_counted_answer_by_answer():
    trad = 100.0 * (np.arange(300).reshape(30, 10) % 4 == 0)
    key = trad.copy()
    key[7, 3] = 100.0 - key[7, 3]
    row = _only(analyse(scored_run("r", trad, key), n_boot=100))
    assert (row["n_answers_agree"], row["n_answers_paired"]) == (299, 300)


def test_the_pooled_effect_and_the_power_table_use_the_paired_answers(partial_credit):
    trad, key, row = partial_credit
    tables = analyse(scored_run("r", trad, key), n_boot=100)
    assert tables.equator.iloc[0]["pooled_n_questions"] == 28
    assert tables.equator.iloc[0]["pooled_diff_mean"] == pytest.approx(row["diff_mean"], abs=TOL)
    power = tables.power.set_index("run_id")
    assert power.loc["r", "n_questions"] == power.loc["all", "n_questions"] == 28
