"""Agreement: κ against statsmodels, human-referenced sensitivity, estimability rules."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import cohens_kappa

from dualboard.kappa import label_span, landis_koch, not_estimable_reason, one_class_shares, resample_totals
from dualboard.stats import agreement, analyse
from dualboard.stats.agreement import agreement_table
from tests.stats.stats_builders import scored_run


def verdict_frame(human: np.ndarray, grader: np.ndarray, *, categories=None) -> pd.DataFrame:
    """Return long verdicts of a grader and humans on questions × rounds (0/100 scores)."""
    n, k = human.shape
    base = pd.DataFrame(
        {
            "run_id": "r",
            "question_id": np.repeat([f"q{i}" for i in range(n)], k),
            "round": np.tile(np.arange(k), n),
            "category": np.repeat(categories if categories is not None else ["c"] * n, k),
        }
    )
    return pd.concat(
        [
            base.assign(grader="llm", role="answer_key", score=grader.ravel()),
            base.assign(grader="people", role="human", score=human.ravel()),
        ]
    )


@pytest.fixture(scope="module")
def sample():
    rng = np.random.default_rng(5)
    human = 100.0 * (rng.random((60, 2)) < 0.6)
    grader = np.where(rng.random((60, 2)) < 0.85, human, 100 - human)
    return human, grader


def test_kappa_and_accuracy_match_statsmodels_on_the_pooled_table(sample):
    human, grader = sample
    row = agreement_table(verdict_frame(human, grader), n_boot=500).iloc[0]
    h, g = human.ravel() >= 50, grader.ravel() >= 50
    table = np.array([[np.sum(g & h), np.sum(g & ~h)], [np.sum(~g & h), np.sum(~g & ~h)]])
    assert row["kappa"] == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)
    assert row["accuracy"] == pytest.approx(np.mean(g == h), abs=1e-12)
    assert row["sensitivity"] == pytest.approx(np.sum(g & h) / np.sum(h), abs=1e-12)
    assert row["specificity"] == pytest.approx(np.sum(~g & ~h) / np.sum(~h), abs=1e-12)
    assert row["kappa_ci_low"] < row["kappa"] < row["kappa_ci_high"]
    assert row["kappa_ci_method"] == "bca_question_bootstrap"
    assert (row["grader_a"], row["grader_b"]) == ("llm", "people")
    assert row["label"] == landis_koch(row["kappa"])


def test_small_category_and_one_class_rater_are_not_estimable(sample):
    human, grader = sample
    cats = np.array(["big"] * 52 + ["small"] * 8)
    grader = grader.copy()
    grader[:52] = 100.0  # the grader passes everything in "big"
    table = agreement_table(verdict_frame(human, grader, categories=cats), n_boot=200)
    by_cat = table.set_index("category")
    assert not by_cat.loc["small", "estimable"] and "fewer than 10" in by_cat.loc["small", "reason"]
    assert not by_cat.loc["big", "estimable"] and "one class" in by_cat.loc["big", "reason"]
    assert np.isnan(by_cat.loc["big", "kappa"])
    assert by_cat.loc["big", "accuracy"] == pytest.approx(np.mean(human[:52] >= 50))


def test_perfect_agreement_gives_a_one_sided_bound():
    human = 100.0 * (np.arange(60).reshape(30, 2) % 3 == 0)
    row = agreement_table(verdict_frame(human, human.copy()), n_boot=200).iloc[0]
    assert row["kappa"] == 1.0 and row["kappa_ci_high"] == 1.0
    assert 0 < row["kappa_ci_low"] < 1
    assert row["kappa_ci_method"] == "one_sided_perfect"


def test_partial_credit_becomes_a_verdict_at_fifty():
    human = np.full((12, 1), 100.0)
    grader = np.array([[60.0]] * 6 + [[40.0]] * 6)
    row = agreement_table(verdict_frame(human, grader), n_boot=100).iloc[0]
    assert row["sensitivity"] == pytest.approx(0.5)


def test_answers_without_a_label_or_a_verdict_are_left_out_and_coverage_says_so():
    human = np.full((12, 1), 100.0)
    human[0, 0] = np.nan
    grader = np.full((12, 1), 100.0)
    grader[1:3, 0] = np.nan  # the grader could not judge two labelled answers
    grader[3, 0] = 0.0
    row = agreement_table(verdict_frame(human, grader), n_boot=100).iloc[0]
    # before: a missing verdict counted as a fail (n 11, accuracy 9/11)
    assert (row["n_judged_b"], row["n"]) == (11, 9)
    assert row["coverage_a"] == pytest.approx(9 / 11)
    assert row["accuracy"] == pytest.approx(8 / 9)


def test_kappa_is_not_estimable_when_resamples_lose_a_class():
    """The rule that used to sit in the bootstrap (issue 26 §7 moved it to ``not_estimable_reason``, for every user)."""
    counts = np.zeros((30, 4), dtype=int)
    counts[:, 0] = 3  # both pass everywhere...
    counts[0] = [0, 1, 0, 2]  # ...except one question, absent from (29/30)^30 = 36% of resamples
    assert not_estimable_reason(counts, ("llm", "people")) == (
        "llm passed 88 of 90: 36.2 % of question resamples leave it one class (over 1 %)"
    )


def test_one_rater_with_one_class_in_over_1_percent_of_resamples_is_not_estimable():
    """Issue 26 §7: the grader passes on 2 of 20 questions. Both raters use both classes pooled, so κ was
    "estimable" (its resamples with one class have κ = 0, not NaN, and the bootstrap counted none undefined);
    in (18/20)^20 = 12 % of question resamples the grader passes nothing."""
    human = np.repeat(100.0 * (np.arange(20) % 2 == 0), 2).reshape(20, 2)
    grader = np.zeros((20, 2))
    grader[[0, 2]] = 100.0
    row = agreement_table(verdict_frame(human, grader), n_boot=200).iloc[0]
    assert not row["estimable"] and np.isnan(row["kappa"]) and row["kappa_ci_method"] == "not_estimable"
    assert row["reason"] == "llm passed 4 of 40: 12.2 % of question resamples leave it one class (over 1 %)"
    assert row["label"] != row["label"]  # no strength words (NaN)


def test_the_share_of_one_class_resamples_is_the_bootstraps_limit():
    """The exact share (share of one-class questions)^G, against the frequency over 40,000 seeded resamples."""
    rng = np.random.default_rng(26)
    counts = rng.integers(0, 3, size=(15, 4))
    counts[:12, :2] = 0  # grader a passes in 3 of 15 questions at most
    counts[:3, 2:] = [[1, 0], [0, 4], [5, 0]]  # b fails only, or passes only, in these
    draws = rng.integers(0, len(counts), size=(40_000, len(counts)))
    totals = resample_totals(counts, draws)
    one_a = (totals[:, 0] + totals[:, 1] == 0) | (totals[:, 2] + totals[:, 3] == 0)
    one_b = (totals[:, 0] + totals[:, 2] == 0) | (totals[:, 1] + totals[:, 3] == 0)
    for exact, seen in zip(one_class_shares(counts), (one_a, one_b, one_a | one_b), strict=True):
        se = np.sqrt(exact * (1 - exact) / len(draws))
        assert abs(seen.mean() - exact) <= 4 * se + 1e-12, (seen.mean(), exact)
    assert one_class_shares(counts)[2] > 0.01


def test_a_rater_with_one_class_pooled_is_never_left_estimable():
    counts = np.tile([0, 0, 2, 3], (12, 1))  # grader a never passes
    assert one_class_shares(counts)[0] == 1.0
    assert not_estimable_reason(counts, ("rules", "human")).startswith("rules passed 0 of 60: 100.0 %")


@pytest.mark.parametrize(
    "low,high,span",
    [
        (0.3, 0.7, "fair–substantial"),
        (0.5, 0.55, "moderate"),
        (np.nan, 0.5, ""),
        (0.1, 0.5, "slight–moderate"),  # three labels: still said
        (0.1, 0.7, ""),  # four labels or more say only that the interval is wide (issue 26 §7)
        (0.0, 1.0, ""),
    ],
)
def test_label_span(low, high, span):
    assert label_span(low, high) == span


def test_without_verdicts_analyse_compares_its_own_two_gradings():
    rng = np.random.default_rng(2)
    trad = 100.0 * (rng.random((30, 2)) < 0.6)
    key = np.where(rng.random((30, 2)) < 0.8, trad, 100 - trad)
    table = analyse(scored_run("r", trad, key), n_boot=200).agreement
    row = table[table["category"] == "all"].iloc[0]
    assert {row["grader_a"], row["grader_b"]} == {"mc", "rules"}
    assert row["n"] == 60 and row["accuracy"] == pytest.approx(np.mean(trad == key))
    assert np.isnan(row["sensitivity"])  # no human labels: no sensitivity


# ---------------------------------------------------------------- graded scale, runs, coverage


def two_run_frame(rng: np.random.Generator, n: int = 30) -> pd.DataFrame:
    """Return verdicts of a judge (0–100 in steps of 20), rules (0/100) and human marks, two runs × n questions."""
    frames = []
    for run in ("r1", "r2"):
        human = rng.choice([0.0, 20.0, 60.0, 100.0], size=n)
        judge = np.clip(human + rng.choice([-40.0, -20.0, 0.0, 20.0, 40.0], size=n), 0, 100)
        rules = np.where(rng.random(n) < 0.8, 100.0 * (human >= 50), 100.0 * (human < 50))
        rules[rng.random(n) < 0.1] = np.nan  # rules could not judge these
        base = pd.DataFrame(
            {
                "run_id": run,
                "question_id": [f"q{i}" for i in range(n)],
                "round": 0,
                "category": np.where(np.arange(n) < 12, "big", "small"),
            }
        )
        frames += [
            base.assign(grader="judge", role="traditional", score=judge),
            base.assign(grader="rules", role="answer_key", score=rules),
            base.assign(grader="human", role="human", score=human),
        ]
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def two_runs():
    verdicts = two_run_frame(np.random.default_rng(11))
    return verdicts, agreement_table(verdicts, n_boot=300)


def _wide(verdicts: pd.DataFrame) -> pd.DataFrame:
    return verdicts.pivot_table(
        index=["run_id", "question_id", "round"], columns="grader", values="score", dropna=False
    ).reset_index()


def test_rows_are_overall_per_category_and_per_run(two_runs):
    _, table = two_runs
    pair = table[(table.grader_a == "judge") & (table.grader_b == "human")]
    assert list(zip(pair.run_id, pair.category)) == [
        ("all", "all"),
        ("all", "big"),
        ("all", "small"),
        ("r1", "all"),
        ("r2", "all"),
    ]
    # the traditional grader is read against humans; answer-key graders against both
    assert set(zip(table.grader_a, table.grader_b)) == {("judge", "human"), ("rules", "human"), ("rules", "judge")}


@pytest.mark.parametrize("run", ["r1", "r2"])
def test_per_run_kappa_and_accuracy_match_statsmodels(two_runs, run):
    verdicts, table = two_runs
    w = _wide(verdicts)
    w = w[w.run_id == run]
    row = table[(table.grader_a == "judge") & (table.grader_b == "human") & (table.run_id == run)].iloc[0]
    g, h = w["judge"].to_numpy() >= 50, w["human"].to_numpy() >= 50
    counts = [[np.sum(g & h), np.sum(g & ~h)], [np.sum(~g & h), np.sum(~g & ~h)]]
    assert row["kappa"] == pytest.approx(cohens_kappa(counts).kappa, abs=1e-12)
    assert row["accuracy"] == pytest.approx(np.mean(g == h), abs=1e-12)
    assert row["n"] == 30 and row["n_questions"] == 30 and row["estimable"]
    assert row["kappa_ci_low"] < row["kappa"] < row["kappa_ci_high"]


def test_mean_abs_diff_and_its_interval_match_a_clustered_ols(two_runs):
    """Reference: statsmodels OLS of |d| on a constant, cluster-robust by question, t(G − 1)."""
    verdicts, table = two_runs
    w = _wide(verdicts).dropna(subset=["rules", "human"])
    d = (w["rules"] - w["human"]).abs().to_numpy()
    fit = sm.OLS(d, np.ones_like(d)).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(w["question_id"])[0]}, use_t=True
    )
    row = table[
        (table.grader_a == "rules") & (table.grader_b == "human") & (table.run_id == "all") & (table.category == "all")
    ].iloc[0]
    assert row["mean_abs_diff"] == pytest.approx(d.mean(), abs=1e-9)
    assert [row["mean_abs_diff_ci_low"], row["mean_abs_diff_ci_high"]] == pytest.approx(fit.conf_int()[0], abs=1e-9)


def test_no_verdict_is_left_out_and_coverage_is_against_the_labelled_answers(two_runs):
    verdicts, table = two_runs
    w = _wide(verdicts)
    row = table[
        (table.grader_a == "rules") & (table.grader_b == "human") & (table.run_id == "all") & (table.category == "all")
    ].iloc[0]
    judged = w["rules"].notna()
    assert row["n_judged_b"] == 60 and row["n"] == judged.sum() < 60
    assert row["coverage_a"] == pytest.approx(judged.mean())
    r, h = w.loc[judged, "rules"] >= 50, w.loc[judged, "human"] >= 50
    assert row["accuracy"] == pytest.approx(np.mean(r == h), abs=1e-12)


def test_perfect_agreement_on_the_scale_has_a_nonzero_width_interval():
    marks = np.array([[0.0], [20.0], [60.0], [100.0]] * 5)
    row = agreement_table(verdict_frame(marks, marks.copy()), n_boot=50).iloc[0]
    assert row["mean_abs_diff"] == 0.0 and row["mean_abs_diff_ci_low"] == 0.0
    assert row["mean_abs_diff_ci_high"] == pytest.approx(100 * (1 - 0.05 ** (1 / 20)))


def test_one_run_has_no_per_run_rows(sample):
    human, grader = sample
    table = agreement_table(verdict_frame(human, grader), n_boot=50)
    assert set(table["run_id"]) == {"all"}


def test_a_grader_is_covered_only_on_the_answers_it_was_given():
    """A traditional grader per question type is not "missing" the other type's answers."""
    human = 100.0 * (np.arange(24).reshape(24, 1) % 3 == 0)
    frame = verdict_frame(human, human.copy())
    mc = frame["question_id"].isin([f"q{i}" for i in range(12)])
    frame = frame[~(frame.grader.eq("llm") & ~mc)]  # "llm" grades only the first 12 questions
    row = agreement_table(frame, n_boot=50).iloc[0]
    # before: coverage 50 % (12 of 24 labelled answers)
    assert (row["n_judged_b"], row["n"], row["coverage_a"]) == (12, 12, 1.0)


def test_a_grader_that_never_judges_has_a_row_with_zero_coverage():
    human = np.full((12, 1), 100.0)
    row = agreement_table(verdict_frame(human, np.full((12, 1), np.nan)), n_boot=50).iloc[0]
    assert (row["n_judged_b"], row["n"], row["coverage_a"]) == (12, 0, 0.0)
    assert not row["estimable"] and np.isnan(row["accuracy"]) and np.isnan(row["mean_abs_diff"])


def test_graders_of_different_question_types_are_not_paired():
    human = np.full((12, 1), 100.0)
    frame = verdict_frame(human, human.copy())
    other = frame[frame.grader == "llm"].assign(
        grader="mc", role="traditional", question_id=lambda f: "m" + f["question_id"]
    )
    table = agreement_table(pd.concat([frame, other]), n_boot=50)
    assert ("llm", "mc") not in set(zip(table.grader_a, table.grader_b))
    assert ("mc", "people") not in set(zip(table.grader_a, table.grader_b))


def _merged(v: pd.DataFrame, slot: np.ndarray, ga: str, gb: str) -> pd.DataFrame:
    """The join as a pandas inner merge on the answer slot (how ``_join`` was written before it took rows itself)."""
    in_b = ((v["grader"] == gb) & v["score"].notna()).to_numpy()
    in_a = (v["grader"] == ga).to_numpy()
    b = v.loc[in_b, [*agreement.NUMBERED, "verdict", "score"]].assign(slot=slot[in_b])
    a = v.loc[in_a, ["verdict", "score"]].assign(slot=slot[in_a])
    return (
        b.rename(columns={"verdict": "verdict_b", "score": "score_b"})
        .merge(a.rename(columns={"verdict": "verdict_a", "score": "score_a"}), on="slot", how="inner")
        .drop(columns="slot")
    )


VERDICT_ROWS = st.lists(
    st.tuples(st.sampled_from("abc"), st.integers(0, 3), st.sampled_from("xyz"), st.integers(0, 2)), max_size=60
)
"""(grader, round, question, score kind: 0, 100 or no verdict) of one run's answers."""


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(VERDICT_ROWS)
def test_the_grader_join_is_the_inner_merge_on_the_answer(rows):
    """Rows in any order, graders missing answers or judging one answer twice, no verdicts: the merge's frame."""
    v = pd.DataFrame(rows, columns=["grader", "round", "question_id", "score_kind"]).assign(run_id="r", category="c")
    v["score"] = v["score_kind"].map({0: 0.0, 1: 100.0, 2: np.nan})
    v, _ = agreement._numbered(
        agreement.to_verdicts(v.drop(columns="score_kind").astype({"run_id": "str", "question_id": "str"}))
    )
    slot = agreement._answer_slots(v)
    for ga, gb in [("a", "b"), ("b", "a"), ("a", "c"), ("c", "b")]:
        pd.testing.assert_frame_equal(agreement._join(v, slot, ga, gb), _merged(v, slot, ga, gb), check_exact=True)


def test_verdicts_read_as_categoricals_give_the_table_of_strings(two_runs):
    """The stats stage reads the verdicts' ids as categoricals (agreement.CATEGORIES), whose categories come in the
    file's order, not sorted, and may include unused ones: the rows, their order and every bit are those of strings."""
    verdicts = two_runs[0].copy()
    verdicts.loc[verdicts.index[::7], "category"] = None  # answers without a category count only in "all"
    coded = verdicts.astype({column: "category" for column in agreement.CATEGORIES})
    for column in agreement.CATEGORIES:  # reversed, with one more: sorted order must come from the values
        categories = coded[column].cat.categories
        coded[column] = coded[column].cat.set_categories([*categories[::-1], "zz-unused"])
    strings = agreement_table(verdicts, n_boot=200)
    assert set(strings["category"]) == {"all", "big", "small"} and set(strings["run_id"]) == {"all", "r1", "r2"}
    pd.testing.assert_frame_equal(agreement_table(coded, n_boot=200), strings, check_exact=True)


def test_mean_abs_diff_gives_no_interval_on_a_handful_of_questions():
    """Before: 3 questions gave "20.0 [0.0, 100.0]", a clipped t(2) interval spanning the scale."""
    joined = pd.DataFrame({"question_id": ["a", "b", "c"], "score_a": [100.0, 0, 40], "score_b": [100.0, 0, 100]})
    mean, low, high = agreement.mean_abs_diff(joined, 0.05)
    assert mean == pytest.approx(20.0) and np.isnan(low) and np.isnan(high)
    ten = pd.DataFrame({"question_id": list("abcdefghij"), "score_a": [100.0] * 10, "score_b": [100.0] * 9 + [0.0]})
    low, high = agreement.mean_abs_diff(ten, 0.05)[1:]
    assert 0 <= low < 10 < high <= 100
