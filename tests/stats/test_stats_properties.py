"""Invariants of analyse for every small scored table Hypothesis can think of."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualboard.scored_files import GRADINGS
from dualboard.stats import analyse
from dualboard.stats.defaults import TOO_FEW_QUESTIONS
from dualboard.stats.scores import judged_by_both, question_and_paired_means, question_means
from tests.stats.stats_builders import scored_run

STEPS = {"binary": [0.0, 100.0], "partial": [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]}


@st.composite
def leaderboards(draw) -> pd.DataFrame:
    n = draw(st.integers(3, 25))
    rounds = draw(st.integers(1, 3))
    scale = STEPS[draw(st.sampled_from(sorted(STEPS)))]
    runs = []
    for r in range(draw(st.integers(1, 3))):
        cells = st.lists(st.sampled_from(scale), min_size=n * rounds, max_size=n * rounds)
        trad = np.array(draw(cells)).reshape(n, rounds)
        key = np.array(draw(cells)).reshape(n, rounds)
        runs.append(scored_run(f"run{r}", trad, key))
    return pd.concat(runs, ignore_index=True)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(leaderboards())
def test_intervals_probabilities_and_ranks_are_coherent(scored):
    tables = analyse(scored, n_boot=50)
    m = tables.models
    for g in ("traditional", "answer_key"):
        assert ((m[f"{g}_ci_low"] <= m[f"{g}_mean"] + 1e-9) & (m[f"{g}_mean"] <= m[f"{g}_ci_high"] + 1e-9)).all()
        assert ((m[f"{g}_ci_low"] >= 0) & (m[f"{g}_ci_high"] <= 100)).all()
        ranked = m[f"rank_ci_low_{g}"].notna()
        assert (m.loc[ranked, f"rank_ci_low_{g}"] <= m.loc[ranked, f"rank_{g}"]).all()
        assert (m.loc[ranked, f"rank_{g}"] <= m.loc[ranked, f"rank_ci_high_{g}"]).all()
    shown = m["n_questions_paired"] >= TOO_FEW_QUESTIONS  # issue 26: no difference interval under it
    assert m.loc[~shown, ["diff_ci_low", "diff_ci_high"]].isna().all().all()
    d = m[shown]
    assert ((d["diff_ci_low"] <= d["diff_mean"] + 1e-9) & (d["diff_mean"] <= d["diff_ci_high"] + 1e-9)).all()
    assert ((d["diff_ci_low"] >= -100) & (d["diff_ci_high"] <= 100)).all()
    _no_interval_collapses(tables)
    _numbers_do_not_mislead(tables)
    np.testing.assert_allclose(m["diff_mean"], m["answer_key_mean"] - m["traditional_mean"], atol=1e-9)
    for table in (m, tables.pairwise):
        p = table["p_value"].dropna()
        assert ((p >= 0) & (p <= 1)).all()
    assert not np.isinf(m.select_dtypes("number").to_numpy(dtype=float)).any()


def _no_interval_collapses(tables) -> None:
    """No interval is ever zero-width: means, differences, run vs run (Methodology, §No interval is zero-width)."""
    m, pw = tables.models, tables.pairwise
    for lo, hi in [("traditional_ci_low", "traditional_ci_high"), ("answer_key_ci_low", "answer_key_ci_high")]:
        assert (m[hi] - m[lo] > 1e-6).all(), m[["run_id", lo, hi]]
    shown = m["n_questions_paired"] >= TOO_FEW_QUESTIONS
    assert (m.loc[shown, "diff_ci_high"] - m.loc[shown, "diff_ci_low"] > 1e-6).all()
    paired_shown = pw["n_questions"] >= TOO_FEW_QUESTIONS
    assert (pw.loc[paired_shown, "diff_ci_high"] - pw.loc[paired_shown, "diff_ci_low"] > 1e-6).all()


def _numbers_do_not_mislead(tables) -> None:
    """Naive bounds stay on 0–100, Var(x) is never negative, an MDE is a number only when detectable."""
    m = tables.models
    for g in ("traditional", "answer_key"):
        assert ((m[f"{g}_naive_ci_low"] >= 0) & (m[f"{g}_naive_ci_high"] <= 100)).all()
        assert (m[f"{g}_var_between"].dropna() >= 0).all()
    for table in (m, tables.pairwise, tables.power):
        detectable = table["mde_status"] == "detectable"
        assert (np.isfinite(table["mde_points"]) == detectable).all()
        assert (table.loc[detectable, "mde_points"] > 0).all()


def plain_question_means(scored: pd.DataFrame) -> pd.DataFrame:
    """The obvious reference: group the long table by the three strings, gradings in GRADINGS order."""
    long = pd.concat(
        [scored[["run_id", "question_id"]].assign(grading=g, score=scored[g] / 100) for g in GRADINGS]
    ).dropna(subset=["score"])
    long["is_binary"] = long["score"].isin((0.0, 1.0))
    order = {g: i for i, g in enumerate(GRADINGS)}
    out = (
        long.groupby(["run_id", "grading", "question_id"], sort=True)
        .agg(
            n_rounds=("score", "size"), mean=("score", "mean"), var_within=("score", "var"), binary=("is_binary", "all")
        )
        .reset_index()
    )
    return out.sort_values(
        ["run_id", "grading", "question_id"], key=lambda s: s.map(order) if s.name == "grading" else s, kind="stable"
    ).reset_index(drop=True)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(leaderboards(), st.randoms(use_true_random=False), st.floats(0, 0.5))
def test_question_means_equal_the_plain_string_groupby_to_the_bit(scored, rng, no_verdict):
    """Rows shuffled and some verdicts missing: the integer-keyed grouping gives the same frame, in the same order."""
    shuffled = scored.sample(frac=1, random_state=rng.randrange(2**32)).reset_index(drop=True)
    shuffled.loc[shuffled.index % 7 < 7 * no_verdict, "answer_key"] = np.nan
    pd.testing.assert_frame_equal(question_means(shuffled), plain_question_means(shuffled), check_exact=True)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(leaderboards(), st.randoms(use_true_random=False), st.floats(0, 0.5), st.floats(0, 0.3))
def test_question_and_paired_means_equal_two_separate_calls_to_the_bit(scored, rng, no_key, no_trad):
    """Keyed once for both: the same frames as the means of the table and of its answers judged by both."""
    shuffled = scored.sample(frac=1, random_state=rng.randrange(2**32)).reset_index(drop=True)
    shuffled.loc[shuffled.index % 7 < 7 * no_key, "answer_key"] = np.nan
    shuffled.loc[shuffled.index % 5 >= 5 - 5 * no_trad, "traditional"] = np.nan
    means, paired = question_and_paired_means(shuffled)
    pd.testing.assert_frame_equal(means, question_means(shuffled), check_exact=True)
    expected = question_means(judged_by_both(shuffled))
    pd.testing.assert_frame_equal(paired, expected, check_exact=True)


@pytest.mark.parametrize(
    "no_key",
    [
        pytest.param(lambda s: s.index >= 0, id="no answer judged by both"),
        pytest.param(lambda s: s["question_id"] == s["question_id"].iloc[0], id="one question never judged by both"),
        pytest.param(lambda s: (s["run_id"] == s["run_id"].iloc[0]) & (s["round"] == 0), id="one run's first round"),
    ],
)
def test_question_and_paired_means_edge_cases(no_key):
    """Whole questions, runs or the whole table without an answer-key verdict: still the two separate calls."""
    scored = pd.concat(
        [scored_run(f"r{i}", np.full((4, 2), 100.0 * i % 200), np.full((4, 2), 50.0 * i)) for i in range(3)],
        ignore_index=True,
    )
    scored.loc[no_key(scored), "answer_key"] = np.nan
    means, paired = question_and_paired_means(scored)
    pd.testing.assert_frame_equal(means, question_means(scored), check_exact=True)
    pd.testing.assert_frame_equal(paired, question_means(judged_by_both(scored)), check_exact=True)
