"""Run vs run: the vectorised pairwise path equals the scalar rules on every pair."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dualboard.stats import COLUMNS, scores
from dualboard.stats.pairwise import pair_row, pairwise_table
from dualboard.stats.ranks import holm_rank_intervals
from tests.stats.stats_builders import scored_run

SCALAR = [c for c in COLUMNS["pairwise"] if c not in ("grading", "run_a", "run_b", "p_holm", "significant")]
"""The columns one pair decides alone: all but the pair's names and the Holm family's decisions."""


def mixed_leaderboard(seed: int) -> pd.DataFrame:
    """Return runs mixing one-round 0/1, several rounds, partial credit, gaps and degenerate pairs."""
    rng = np.random.default_rng(seed)
    n = 24
    base = 100.0 * (rng.random((n, 1)) < 0.6)
    runs = [
        scored_run("bin-a", base, base),
        scored_run("bin-b", 100.0 * (rng.random((n, 1)) < 0.4), base),
        scored_run("bin-same", base.copy(), base),  # all pairs concordant with bin-a
        scored_run("k3", 100.0 * (rng.random((n, 3)) < 0.5), 100.0 * (rng.random((n, 3)) < 0.5)),
        scored_run("partial", 20.0 * rng.integers(0, 6, (n, 2)), 20.0 * rng.integers(0, 6, (n, 2))),
    ]
    partial = runs[-1]
    shifted = partial.assign(
        run_id="partial-minus", traditional=(partial["traditional"] - 20).clip(0), answer_key=partial["answer_key"]
    )
    gappy = runs[3].assign(run_id="k3-gaps")
    gappy = gappy[~gappy["question_id"].isin([f"q{i:03d}" for i in range(0, n, 3)])]
    few = runs[0].assign(run_id="few")
    few = few[few["question_id"].isin([f"q{i:03d}" for i in range(6)])]
    return pd.concat([*runs, shifted, gappy, few], ignore_index=True)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_pairs_equal_scalar_rules(seed):
    qmeans = scores.question_means(mixed_leaderboard(seed))
    table = pairwise_table(qmeans)
    assert set(table["test"]) >= {"mcnemar_exact", "paired_t"}
    for row in table.itertuples():
        sub = qmeans[qmeans["grading"] == row.grading]
        a = sub[sub["run_id"] == row.run_a].set_index("question_id")
        b = sub[sub["run_id"] == row.run_b].set_index("question_id")
        want = pair_row(a, b, 0.05)
        for col in SCALAR:
            got = getattr(row, col)
            if isinstance(want[col], str):
                assert got == want[col], (row.run_a, row.run_b, col)
            else:
                np.testing.assert_allclose(
                    float(got), float(want[col]), rtol=1e-12, atol=1e-12, err_msg=f"{row.run_a} vs {row.run_b}: {col}"
                )


def test_pairs_include_degenerate_cases():
    table = pairwise_table(scores.question_means(mixed_leaderboard(0)))
    trad = table[table["grading"] == "traditional"].set_index(["run_a", "run_b"])
    assert trad.loc[("bin-a", "bin-same"), "p_value"] == 1.0
    assert "concordant" in trad.loc[("bin-a", "bin-same"), "note"]
    assert trad.loc[("few", "k3"), "n_questions"] == 6
    assert trad.loc[("few", "k3"), "test"] in {"permutation_exact", "sign_test", "all_zero"}


def test_rank_intervals_follow_holm_decisions():
    rng = np.random.default_rng(3)
    runs = [
        scored_run(f"r{i}", 100.0 * (rng.random((60, 1)) < p), 100.0 * (rng.random((60, 1)) < p))
        for i, p in enumerate([0.95, 0.9, 0.3, 0.25])
    ]
    qmeans = scores.question_means(pd.concat(runs))
    table = pairwise_table(qmeans)
    means = qmeans[qmeans["grading"] == "traditional"].groupby("run_id")["mean"].mean()
    iv = holm_rank_intervals(table, means, "traditional")
    assert iv.loc["r0", "rank_ci_low"] == 1 and iv.loc["r0", "rank_ci_high"] == 2
    assert iv.loc["r3", "rank_ci_low"] == 3 and iv.loc["r3", "rank_ci_high"] == 4
    assert iv["tied_first"].tolist() == [True, True, False, False]


def test_t_path_equals_pingouin_pairwise_tests_with_holm():
    import pingouin as pg

    rng = np.random.default_rng(8)
    runs = [
        scored_run(r, 20.0 * rng.integers(0, 6, (30, 2)), 20.0 * rng.integers(0, 6, (30, 2)))
        for r in ("a", "b", "c", "d")
    ]
    qmeans = scores.question_means(pd.concat(runs))
    ours = pairwise_table(qmeans)
    ours = ours[ours["grading"] == "traditional"].set_index(["run_a", "run_b"])
    long = qmeans[qmeans["grading"] == "traditional"].rename(columns={"mean": "score"})
    ref = pg.pairwise_tests(data=long, dv="score", within="run_id", subject="question_id", padjust="holm").set_index(
        ["A", "B"]
    )
    assert set(ours["test"]) == {"paired_t"}
    for key in ref.index:
        assert ours.loc[key, "p_value"] == pytest.approx(ref.loc[key, "p_unc"], abs=1e-9)
        assert ours.loc[key, "p_holm"] == pytest.approx(ref.loc[key, "p_corr"], abs=1e-9)
