"""Invariants of analyse for every small scored table Hypothesis can think of."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualboard.stats import analyse
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
    assert ((m["diff_ci_low"] <= m["diff_mean"] + 1e-9) & (m["diff_mean"] <= m["diff_ci_high"] + 1e-9)).all()
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
    for lo, hi in [
        ("traditional_ci_low", "traditional_ci_high"),
        ("answer_key_ci_low", "answer_key_ci_high"),
        ("diff_ci_low", "diff_ci_high"),
    ]:
        assert (m[hi] - m[lo] > 1e-6).all(), m[["run_id", lo, hi]]
    assert (pw["diff_ci_high"] - pw["diff_ci_low"] > 1e-6).all()


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
