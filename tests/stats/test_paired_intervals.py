"""Issue 26 §1, 2 and 4: the interval of a paired difference.

* under TOO_FEW_QUESTIONS judged questions: the exact test only, no interval;
* one round of 0/1 scores: Tango's score interval, checked against an
  independent solution of Tango's score equation (constrained maximum
  likelihood by numerical optimisation, roots by brentq);
* otherwise: the augmented interval, inside [-1, 1] by construction and
  continuous as discordant answers go from 0 to 5;
* everywhere: the interval and the test shown agree about 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from dualboard.stats import analyse, pair_matrix, paired
from dualboard.stats.comparison import compare
from dualboard.stats.defaults import TOO_FEW_QUESTIONS
from tests.stats.stats_builders import scored_run

Z = stats.norm.ppf(0.975)


def tango_reference(b: int, c: int, n: int) -> tuple[float, float]:
    """Tango's interval from the likelihood itself: p21 maximises the multinomial likelihood under Δ."""

    def constrained_p21(delta: float) -> float:
        def nll(p21: float) -> float:
            p12, p_rest = p21 + delta, 1 - 2 * p21 - delta
            return -(b * np.log(p12) + c * np.log(p21) + (n - b - c) * np.log(p_rest)) if min(p12, p21) > 0 else np.inf

        low, high = max(0.0, -delta), (1 - delta) / 2
        return optimize.minimize_scalar(nll, bounds=(low, high), method="bounded", options={"xatol": 1e-13}).x

    def score(delta: float) -> float:
        p21 = constrained_p21(delta)
        return (b - c - n * delta) / np.sqrt(n * (2 * p21 + delta - delta**2))

    estimate = (b - c) / n
    eps = 1e-9
    lo = -1.0 if score(-1 + eps) < Z else optimize.brentq(lambda d: score(d) - Z, -1 + eps, estimate, xtol=1e-12)
    hi = 1.0 if score(1 - eps) > -Z else optimize.brentq(lambda d: score(d) + Z, estimate, 1 - eps, xtol=1e-12)
    return lo, hi


@pytest.mark.parametrize("b,c,n", [(9, 3, 50), (40, 20, 160), (1, 7, 21), (5, 0, 30), (2, 1, 300), (12, 12, 40)])
def test_tango_matches_an_independent_solution_of_its_score_equation(b, c, n):
    lo, hi = paired.tango_interval(b, c, n)
    assert (float(lo), float(hi)) == pytest.approx(tango_reference(b, c, n), abs=1e-6)


def test_tango_at_no_discordance_has_its_closed_form():
    # b = c = 0: the score is -sqrt(nΔ/(1 - Δ)), so the limit is Δ = z²/(n + z²), not 0.
    for n in (10, 30, 300):
        lo, hi = paired.tango_interval(0, 0, n)
        assert (float(lo), float(hi)) == pytest.approx((-(Z**2) / (n + Z**2), Z**2 / (n + Z**2)), abs=1e-12)


@pytest.mark.slow
def test_exact_mcnemar_and_the_interval_never_disagree_about_zero():
    """Every b + c ≤ 200 and every n from b + c to 300: 0 is excluded exactly when exact McNemar rejects."""
    b, c = (v.ravel() for v in np.meshgrid(np.arange(201), np.arange(201)))
    b, c = b[b + c <= 200], c[b + c <= 200]
    for first in range(1, 301, 50):
        n = np.repeat(np.arange(first, first + 50), len(b))
        bb, cc = np.tile(b, 50), np.tile(c, 50)
        keep = bb + cc <= n
        bb, cc, n = bb[keep], cc[keep], n[keep]
        lo, hi = paired.mcnemar_interval(bb, cc, n)
        excludes = (lo > 0) | (hi < 0)
        assert np.array_equal(excludes, paired.mcnemar_exact_p(bb, cc) < 0.05)
        assert ((-1 <= lo) & (lo < hi) & (hi <= 1)).all()


def test_augmented_interval_equals_its_definition_with_statsmodels():
    from statsmodels.stats.weightstats import DescrStatsW

    d = np.random.default_rng(7).integers(-3, 4, 40) / 3
    w = paired.PSEUDO_WEIGHT
    fit = DescrStatsW(np.r_[d, 1, -1], weights=np.r_[np.ones(len(d)), w, w], ddof=1)
    half = stats.t.ppf(0.975, len(d) - 1) * fit.std_mean / (1 - fit.mean**2)
    lo, hi = paired.augmented_interval(len(d), d.mean(), d.std(ddof=1))
    assert (float(lo), float(hi)) == pytest.approx(
        (np.tanh(np.arctanh(fit.mean) - half), np.tanh(np.arctanh(fit.mean) + half)), abs=1e-12
    )


def _one_way(n: int, rounds: int, answers: int, spread: bool) -> tuple[np.ndarray, np.ndarray]:
    """Two runs' question means that differ on ``answers`` answers, all one way (on one question or spread)."""
    x, y = np.zeros(n), np.zeros(n)
    if spread:
        x[:answers] = 1 / rounds
    else:
        x[0] = answers / rounds
    return x, y


@pytest.mark.parametrize("rounds,spread", [(1, True), (10, True), (10, False)])
def test_width_changes_at_most_twofold_per_discordant_answer(rounds, spread):
    """Issue 26 §4: before, 0 discordant answers gave [-9.5, 9.5] and 1 in 300 gave [-1.02, 0.35] (14×)."""
    widths = []
    for answers in range(6):
        x, y = _one_way(30, rounds, answers, spread)
        r = compare(x, y, single_round_binary=rounds == 1)
        widths.append(r["diff_ci_high"] - r["diff_ci_low"])
    ratios = np.array(widths[1:]) / np.array(widths[:-1])
    assert ((ratios <= 2) & (ratios >= 0.5)).all(), (widths, ratios)


def test_two_judged_questions_show_the_exact_test_and_no_interval():
    """Issue 26 §1: a t(1) interval over 2 questions, [-47.7, -22.3], was drawn with exact p = 0.5."""
    trad, key = np.array([[100.0], [60.0]]), np.array([[60.0], [30.0]])
    row = analyse(scored_run("r", trad, key), n_boot=50).models.iloc[0]
    assert row["test"] == "permutation_exact" and row["p_value"] == 0.5
    assert np.isnan(row["diff_ci_low"]) and np.isnan(row["diff_ci_high"])
    assert "too few judged questions (n=2 < 10): exact test only" in row["note"]


def test_three_judged_questions_no_longer_give_an_interval_beyond_the_range():
    """Issue 26 §2: [-104.7, 10.3] on a few questions; now no interval below TOO_FEW_QUESTIONS."""
    r = compare(np.array([0.0, 0.5, 0.9]), np.array([1.0, 1.0, 1.0]), single_round_binary=False)
    assert paired.paired_t(np.array([-1.0, -0.5, -0.1]))["ci_low"] < -1  # what the old code showed
    assert np.isnan(r["diff_ci_low"]) and np.isnan(r["diff_ci_high"])


def test_a_difference_near_minus_one_stays_in_range():
    d = np.r_[np.full(9, -1.0), 0.0]  # the t interval reaches -1.13
    r = compare(np.zeros(10), -d, single_round_binary=False)
    assert paired.paired_t(-d)["ci_high"] > 1
    assert -1 <= r["diff_ci_low"] < r["diff_mean"] < r["diff_ci_high"] < 0


def _random_boards(seed: int, boards: int = 300) -> list[tuple[np.ndarray, np.ndarray, bool]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(boards):
        n, rounds = int(rng.integers(TOO_FEW_QUESTIONS, 60)), int(rng.choice([1, 2, 3, 5, 10]))
        p = rng.beta(0.5, 0.5, n)
        shift = rng.choice([0.0, 0.02, 0.1, 0.3])
        x = rng.binomial(rounds, p) / rounds
        y = rng.binomial(rounds, np.clip(p - shift, 0, 1)) / rounds
        y = np.where(rng.random(n) < rng.choice([0.0, 0.5, 0.9]), x, y)  # sparse: many equal questions
        out.append((x, y, rounds == 1))
    return out


@pytest.mark.slow
def test_every_interval_lies_in_range_and_agrees_with_its_test_about_zero():
    for x, y, binary in _random_boards(11):
        r = compare(x, y, single_round_binary=binary)
        assert -1 <= r["diff_ci_low"] < r["diff_ci_high"] <= 1, r
        assert ((r["diff_ci_low"] > 0) or (r["diff_ci_high"] < 0)) == (r["p_value"] < 0.05), r


def test_the_pairwise_matrix_gives_the_same_intervals_as_compare():
    boards = [b for b in _random_boards(12, 120)]
    for x, y, binary in boards:
        r = compare(x, y, single_round_binary=binary, detail=False)
        d = np.round(x - y, 12)[None, :]
        t = pair_matrix.row_tests(d, np.ones_like(d, dtype=bool), np.array([binary]))
        assert (t["diff_ci_low"][0], t["diff_ci_high"][0]) == pytest.approx((r["diff_ci_low"], r["diff_ci_high"]))
        assert t["test"][0] == r["test"]


def test_models_and_pairwise_tables_carry_no_interval_under_too_few_questions():
    rng = np.random.default_rng(5)
    runs = [scored_run(r, 100.0 * rng.integers(0, 2, (4, 3)), 100.0 * rng.integers(0, 2, (4, 3))) for r in "ab"]
    tables = analyse(pd.concat(runs), n_boot=50)
    for table in (tables.models, tables.pairwise):
        assert table["diff_ci_low"].isna().all() and table["diff_ci_high"].isna().all()
        assert all("too few judged questions (n=4 < 10): exact test only" in note for note in table["note"])


@pytest.mark.parametrize(
    "n,rounds,discordant,two_way,gathered,step",
    [
        (30, 10, 5, False, False, 0.0),
        (30, 10, 5, True, False, 0.0),
        (30, 10, 2, True, True, 0.0),
        (30, 1, 5, False, False, 0.0),
        # a few whole questions move (partial credit, one round): an interval built on the observed spread
        # with light pseudo-questions (weight 0.05) covered 66–88 % here
        (30, 1, 1, False, False, 1.0),
        (30, 1, 2, False, False, 0.5),
        (30, 1, 2, False, False, 1.0),
    ],
)
def test_sparse_cells_cover_the_truth(n, rounds, discordant, two_way, gathered, step):
    """A seeded subset of bench/calibration.py's sparse cells (500 boards: gate 92 %, MC SE ≈ 1 %)."""
    from tests.stats.test_stats_calibration import calibration

    cell = calibration.SparseCell(n, rounds, discordant, two_way, gathered, step)
    row = calibration.sparse_cell(cell, 500, np.random.default_rng(26))
    assert row["value"] >= 0.92, row
