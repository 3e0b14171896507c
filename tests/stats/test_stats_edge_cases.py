"""Edge cases of issue 4 and of the Methodology page: each behaves, and no NaN is left unexplained."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from dualboard.errors import InvalidInputError
from dualboard.stats import analyse
from dualboard.stats.paired import TOO_FEW_QUESTIONS
from tests.stats.stats_builders import scored_run, simulated_runs

RNG = np.random.default_rng(4)


def _binary(n: int, p: float, k: int = 1) -> np.ndarray:
    return 100.0 * (RNG.random((n, k)) < p)


def _only(tables) -> pd.Series:
    assert len(tables.models) == 1
    return tables.models.iloc[0]


def unexplained_nans(models: pd.DataFrame) -> list[tuple[str, str]]:
    """Return (run, column) of every empty cell that neither a rule nor a note explains."""
    explained = {
        "wilcoxon_w": lambda r: r["test"] != "paired_t",
        "wilcoxon_p": lambda r: r["test"] != "paired_t",
        "traditional_var_within": lambda r: r["n_answers"] == r["n_questions"],
        "answer_key_var_within": lambda r: r["n_answers"] == r["n_questions"],
        "mde_points": lambda r: r["mde_status"] != "detectable",  # mde_status says why
        "rank_ci_low": lambda r: r["n_questions"] < TOO_FEW_QUESTIONS,
        "rank_ci_high": lambda r: r["n_questions"] < TOO_FEW_QUESTIONS,
    }
    out = []
    for _, row in models.iterrows():
        for col, value in row.items():
            if not pd.isna(value):
                continue
            base = (
                col.replace("_traditional", "").replace("_answer_key", "")
                if col.startswith(("rank_ci", "tied_first"))
                else col
            )
            rule = explained.get(base) or explained.get(col)
            if base.startswith("tied_first"):
                rule = explained["rank_ci_low"]
            if not ((rule and rule(row)) or (isinstance(row["note"], str) and row["note"])):
                out.append((row["run_id"], col))
    return out


def test_all_pairs_concordant_gives_p_one_and_an_honest_interval():
    x = _binary(30, 0.6)
    row = _only(analyse(scored_run("r", x, x), n_boot=100))
    assert row["test"] == "mcnemar_exact"
    assert row["p_value"] == 1.0 == mcnemar([[18, 0], [0, 12]], exact=True).pvalue
    assert row["diff_mean"] == 0.0
    assert row["diff_ci_low"] < 0 < row["diff_ci_high"]
    assert row["note"] == "all pairs concordant: d=0, p=1"
    assert (row["n_discordant_up"], row["n_discordant_down"]) == (0, 0)


def test_every_difference_zero_with_rounds_gives_p_one():
    x = 100.0 * RNG.integers(0, 6, (20, 3)) / 5
    row = _only(analyse(scored_run("r", x, x), n_boot=100))
    assert (row["test"], row["p_value"], row["diff_mean"]) == ("all_zero", 1.0, 0.0)


def test_constant_nonzero_difference_uses_the_sign_test():
    trad = 100.0 * RNG.integers(1, 6, (15, 2)) / 5
    row = _only(analyse(scored_run("r", trad, trad - 20), n_boot=100))
    assert row["test"] == "sign_test"
    assert row["p_value"] == pytest.approx(stats.binomtest(0, 15).pvalue)
    assert row["diff_mean"] == pytest.approx(-20.0)
    assert np.isnan(row["effect_dz"]) and row["diff_se"] == 0.0  # sd(d) = 0: d_z undefined


@pytest.mark.parametrize("value,low,high", [(100.0, 87.8, 100.0), (0.0, 0.0, 12.2)])
def test_run_at_zero_or_hundred_percent_gets_a_wilson_interval(value, low, high):
    x = np.full((30, 1), value)
    row = _only(analyse(scored_run("r", x, x), n_boot=100))
    assert row["ci_method_traditional"] == "wilson_neff"
    assert (round(row["traditional_ci_low"], 1), round(row["traditional_ci_high"], 1)) == (low, high)


@pytest.mark.parametrize("rounds", [1, 3])
def test_too_few_questions_exact_tests_no_tie_groups(rounds):
    n = TOO_FEW_QUESTIONS - 2
    scored = pd.concat(
        [
            scored_run("a", _binary(n, 0.9, rounds), _binary(n, 0.3, rounds)),
            scored_run("b", _binary(n, 0.2, rounds), _binary(n, 0.6, rounds)),
        ]
    )
    tables = analyse(scored, n_boot=100)
    assert set(tables.models["test"]) <= {"mcnemar_exact", "permutation_exact", "sign_test", "all_zero"}
    assert tables.models["rank_ci_low"].isna().all()
    assert tables.models["tied_first_answer_key"].isna().all()
    assert all(
        f"too few judged questions (n={n} < {TOO_FEW_QUESTIONS}): exact test only" in note
        for note in tables.models["note"]
    )
    assert tables.models["diff_ci_low"].isna().all() and tables.models["diff_ci_high"].isna().all()
    assert f"a: too few questions ({n} < {TOO_FEW_QUESTIONS}): estimates shown, " in " ".join(tables.notes)


def test_at_the_limit_the_questions_are_enough():
    n = TOO_FEW_QUESTIONS
    scored = pd.concat([scored_run(r, _binary(n, 0.9), _binary(n, 0.5)) for r in ("a", "b")])
    tables = analyse(scored, n_boot=100)
    assert not any("too few questions" in note for note in [*tables.models["note"], *tables.notes])
    assert tables.models["rank_ci_low"].notna().all()


def test_missing_verdicts_are_left_out_and_reported():
    key = np.full((20, 2), 100.0)
    key[:5, 0] = np.nan
    row = _only(analyse(scored_run("r", np.full((20, 2), 100.0), key), n_boot=100))
    assert row["answer_key_coverage"] == pytest.approx(35 / 40)
    assert row["n_answers_paired"] == 35 and row["n_answers_agree"] == 35
    assert row["answer_key_mean"] == 100.0  # before: 100 · (15 + 5 · 0.5) / 20 = 87.5, NaN as 0
    assert "answer_key verdicts on 87% of answers (the rest left out)" in row["note"]


def test_unequal_rounds_weight_each_question_once():
    full = scored_run("r", [[100, 0, 0, 0], [100, 100, 100, 100]] * 6, [[0, 0, 0, 0]] * 12)
    scored = full[~((full["question_id"] == "q000") & (full["round"] > 0))]
    row = _only(analyse(scored, n_boot=100))
    qmeans = [1.0, 1.0] + [0.25, 1.0] * 5
    assert row["traditional_mean"] == pytest.approx(100 * np.mean(qmeans))
    assert row["traditional_mean"] != pytest.approx(scored["traditional"].mean())  # pooled answers


def test_wilcoxon_with_ties_and_zeros_matches_scipy():
    trad = np.repeat([[0, 50, 100]], 30, axis=0).astype(float)
    key = trad.copy()
    key[:12, 1] = 0.0  # tied negative differences
    key[12:18, 0] = 50.0  # tied positive differences; the rest are zeros
    row = _only(analyse(scored_run("r", trad, key), n_boot=100))
    d = (key.mean(axis=1) - trad.mean(axis=1)) / 100
    ref = stats.wilcoxon(np.round(d * 6).astype(int), zero_method="wilcox", correction=True)
    assert row["test"] == "paired_t"
    assert row["wilcoxon_p"] == pytest.approx(ref.pvalue, abs=1e-12)


def test_partial_credit_uses_t_interval_and_paired_t():
    trad = 20.0 * RNG.integers(0, 6, (40, 1))
    key = 100.0 * (RNG.random((40, 1)) < 0.5)
    row = _only(analyse(scored_run("r", trad, key), n_boot=100))
    assert (row["ci_method_traditional"], row["ci_method_answer_key"]) == ("t", "wilson_neff")
    assert row["test"] == "paired_t"


def test_disjoint_question_sets_fall_back_to_unpaired():
    a = scored_run("a", _binary(20, 0.7), _binary(20, 0.5))
    b = scored_run("b", _binary(20, 0.4), _binary(20, 0.3))
    b["question_id"] = "other-" + b["question_id"]
    pw = analyse(pd.concat([a, b]), n_boot=100).pairwise
    assert set(pw["test"]) == {"welch_unpaired"}
    assert (pw["n_questions"] == 0).all()


def test_two_runs_need_no_correction():
    scored = simulated_runs({"a": (0.8, 0.6), "b": (0.5, 0.4)}, 30, 1)
    pw = analyse(scored, n_boot=100).pairwise
    np.testing.assert_allclose(pw["p_holm"], pw["p_value"])


def test_single_run_is_first_and_has_no_pairs():
    tables = analyse(simulated_runs({"a": (0.8, 0.6)}, 30, 3), n_boot=100)
    assert tables.pairwise.empty
    row = tables.models.iloc[0]
    assert (row["rank_traditional"], row["rank_ci_low"], row["rank_ci_high"]) == (1, 1, 1)
    assert bool(row["tied_first_answer_key"])


SCENARIOS = {
    "binary K=1": lambda: simulated_runs({"a": (0.9, 0.6), "b": (0.6, 0.6), "c": (0.5, 0.2)}, 30, 1),
    "binary K=5": lambda: simulated_runs({"a": (0.9, 0.6), "b": (0.6, 0.6)}, 30, 5),
    "tiny": lambda: simulated_runs({"a": (0.9, 0.6), "b": (0.6, 0.6)}, 5, 2),
    "perfect": lambda: scored_run("p", np.full((12, 2), 100.0), np.full((12, 2), 100.0)),
    "zero": lambda: scored_run("z", np.zeros((12, 1)), np.zeros((12, 1))),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_no_nan_or_inf_without_an_explanation(name):
    models = analyse(SCENARIOS[name](), n_boot=100).models
    numeric = models.select_dtypes("number").to_numpy(dtype=float)
    assert not np.isinf(numeric).any()
    assert unexplained_nans(models) == []


def test_row_order_changes_nothing(three_runs):
    a = analyse(three_runs, n_boot=200).models
    b = analyse(three_runs.sample(frac=1, random_state=3), n_boot=200).models
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize(
    "mutate,field",
    [
        (lambda s: s.drop(columns="answer_key"), "answer_key"),
        (lambda s: s.assign(traditional=s["traditional"] * 2 + 1), "traditional"),
        (lambda s: pd.concat([s, s.iloc[:1]]), "run_id/question_id/round"),
    ],
)
def test_bad_input_is_rejected_with_every_problem_named(three_runs, mutate, field):
    with pytest.raises(InvalidInputError) as info:
        analyse(mutate(three_runs))
    assert any(f.field == field for f in info.value.findings)


@pytest.mark.parametrize("rounds", [1, 3])
def test_mde_is_in_points_and_matches_the_solver(rounds):
    from dualboard.stats import power

    scored = simulated_runs({"a": (0.7, 0.5)}, 40, rounds, seed=9)
    row = _only(analyse(scored, n_boot=100))
    if rounds == 1:
        discordant = row["n_discordant_up"] + row["n_discordant_down"]
        want = 100 * power.mde_mcnemar(discordant / 40, 40)
    else:
        want = power.dz_star(40) * row["diff_se"] * np.sqrt(40)
    assert row["mde_points"] == pytest.approx(want, rel=1e-9)
    assert 5 < row["mde_points"] < 60
