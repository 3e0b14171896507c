"""Real data: the Multi-Benchmark easy-problems run (13 models × 30 questions × 10 rounds).

Reads the source's ``auto_eval_outputs/*.json`` directly, reproduces its
published ``final_stats.csv`` (``mean_score`` and the naive
``z_interval_error``) to 1e-9 and prints the question-clustered interval beside
it (run ``pytest -s`` to see the table).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dualboard.stats import analyse
from dualboard.stats.defaults import TOO_FEW_QUESTIONS

SOURCE = Path(__file__).resolve().parents[2] / "../shared/data/easy-problems/2024-09-13-Multi-Benchmark"
pytestmark = pytest.mark.skipif(
    not (SOURCE / "auto_eval_outputs").is_dir(),
    reason=f"real data not found at {SOURCE.resolve()} (shared data checkout absent)",
)


def load_run(path: Path) -> pd.DataFrame:
    """Return one auto_eval file as scored rows; the k-th answer to a question is round k."""
    raw = pd.DataFrame.from_dict(json.loads(path.read_text(encoding="utf-8")), orient="index")
    raw = raw.assign(order=raw.index.astype(int)).sort_values("order")
    run_id = path.stem.removeprefix("auto_eval-")
    score = raw["score"].astype(float)
    return pd.DataFrame(
        {
            "run_id": run_id,
            "model": run_id,
            "question_id": raw["index"].astype(str),
            "category": raw["category"],
            "round": raw.groupby("index").cumcount(),
            "traditional": score,
            "answer_key": score,  # the source has no answer-key grading
        }
    )


@pytest.fixture(scope="module")
def comparison() -> pd.DataFrame:
    scored = pd.concat([load_run(p) for p in sorted((SOURCE / "auto_eval_outputs").glob("*.json"))], ignore_index=True)
    models = analyse(scored, n_boot=500).models.set_index("run_id")
    published = pd.read_csv(SOURCE / "tables_and_charts/final_stats.csv").set_index("model")
    out = pd.DataFrame(
        {
            "published_mean": published["mean_score"],
            "mean": models["traditional_mean"],
            "published_half": published["z_interval_error"],
            "naive_half": models["traditional_naive_ci_high"] - models["traditional_naive_mean"],
            "clustered_low": models["traditional_ci_low"],
            "clustered_high": models["traditional_ci_high"],
            "n_questions": models["n_questions"],
            "n_answers": models["n_answers"],
        }
    )
    out["clustered_half"] = (out["clustered_high"] - out["clustered_low"]) / 2
    out["ratio"] = out["clustered_half"] / out["naive_half"]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("\n", out.round(3).to_string())
        print("median clustered/naive half-width ratio:", round(float(out["ratio"].median()), 3))
    return out


def test_all_thirteen_models_are_matched(comparison):
    assert len(comparison) == 13
    assert not comparison.isna().any().any()
    assert (comparison["n_questions"] == 30).all() and (comparison["n_answers"] == 300).all()


def test_published_means_are_reproduced(comparison):
    np.testing.assert_allclose(comparison["mean"], comparison["published_mean"], rtol=0, atol=1e-9)


def test_published_naive_half_widths_are_reproduced(comparison):
    np.testing.assert_allclose(comparison["naive_half"], comparison["published_half"], rtol=0, atol=1e-9)


def test_clustered_interval_is_much_wider_than_the_naive_one(comparison):
    # 10 rounds of the same 30 questions are not 300 independent answers.
    assert (comparison["ratio"] > 2).all()
    assert (comparison["clustered_low"] <= comparison["mean"]).all()
    assert (comparison["mean"] <= comparison["clustered_high"]).all()


# ---------------------------------------------------------------- issue 9 §4 on the imported releases


@pytest.fixture(scope="module", params=["mc", "open"])
def imported_tables(request, tmp_path_factory):
    """Import a release with the autogenai importer, grade it and analyse it (as `dualboard build`)."""
    from dualboard.grading import grade_benchmark
    from dualboard.importers import import_autogenai
    from tests.importers.import_fixtures import (
        MC_RELEASE,
        OPEN_RELEASE,
        load_imported,
        load_labels,
        real_data,
    )

    release = {"mc": MC_RELEASE, "open": OPEN_RELEASE}[request.param]
    dest = tmp_path_factory.mktemp(request.param)
    import_autogenai(real_data() / release, benchmark=f"easy-problems-{request.param}", dest=dest)
    name = f"easy-problems-{request.param}"
    graded = grade_benchmark(*load_imported(dest, name), human_labels=load_labels(dest, name))
    return request.param, graded.scored, analyse(graded.scored, verdicts=graded.verdicts, n_boot=200)


@pytest.mark.slow
def test_no_interval_collapses_on_real_data(imported_tables):
    _, _, tables = imported_tables
    m, pw, eq = tables.models, tables.pairwise, tables.equator
    for lo, hi in [("traditional_ci_low", "traditional_ci_high"), ("answer_key_ci_low", "answer_key_ci_high")]:
        assert (m[hi] - m[lo] > 1).all(), m[["run_id", lo, hi]]
    shown = m["n_questions_paired"] >= TOO_FEW_QUESTIONS  # issue 26: under it no difference interval is shown
    assert (m.loc[shown, "diff_ci_high"] - m.loc[shown, "diff_ci_low"] > 1).all()
    assert (pw["diff_ci_high"] - pw["diff_ci_low"] > 1).all()
    assert (eq["pooled_ci_high"] - eq["pooled_ci_low"] > 0).all()
    for g in ("traditional", "answer_key"):  # the open release's answer-key naive low was −2.4
        assert ((m[f"{g}_naive_ci_low"] >= 0) & (m[f"{g}_naive_ci_high"] <= 100)).all()


def test_runs_whose_gradings_agree_get_the_honest_interval_and_detect_nothing(imported_tables):
    release, scored, tables = imported_tables
    agree = scored.groupby("run_id").apply(lambda r: bool((r["traditional"] == r["answer_key"]).all()))
    m = tables.models.set_index("run_id")
    same = m.loc[agree[agree].index]
    print(
        f"\n{release}: {len(same)} of {len(m)} runs graded identically; diff intervals "
        f"{sorted(set(zip(same['diff_ci_low'].round(1), same['diff_ci_high'].round(1))))}"
    )
    assert len(same) > 0 or release == "open"  # the MC release's gradings agree on 12 of 13 runs
    # before issue 9: [0, 0]; before issue 26: [-9.5, 9.5] (p̄ bound), 14× wider than with one discordant
    # answer; now one pseudo-question each way (10 rounds × 30 questions), as wide as its neighbours
    assert np.allclose(same["diff_ci_low"], -9.1576, atol=1e-4)
    assert np.allclose(same["diff_ci_high"], 9.1576, atol=1e-4)
    assert (same["mde_status"] == "nothing_detectable").all()


def test_difference_intervals_stay_in_range_and_agree_with_their_tests(imported_tables):
    """Issue 26 §1–2: every shown difference lies in [-100, 100] and agrees with its test about 0.

    The 2-judged-question case of the issue is on a board not in ../shared: tests/stats/test_paired_intervals.py
    builds it."""
    release, _, tables = imported_tables
    m, pw = tables.models, tables.pairwise
    few = m["n_questions_paired"] < TOO_FEW_QUESTIONS
    print(
        f"\n{release}: {int(few.sum())} runs with too few judged questions; diff intervals "
        f"[{m['diff_ci_low'].min():.1f}, {m['diff_ci_high'].max():.1f}]"
    )
    assert m.loc[few, ["diff_ci_low", "diff_ci_high"]].isna().all().all()
    for n, note in zip(m.loc[few, "n_questions_paired"], m.loc[few, "note"]):
        assert f"too few judged questions (n={n} < {TOO_FEW_QUESTIONS}): exact test only" in note
    for table in (m[~few], pw[pw["diff_ci_low"].notna()]):
        assert ((table["diff_ci_low"] >= -100) & (table["diff_ci_high"] <= 100)).all()
        excludes = (table["diff_ci_low"] > 0) | (table["diff_ci_high"] < 0)
        assert (excludes == (table["p_value"] < 0.05)).all(), table[~(excludes == (table["p_value"] < 0.05))]


def test_benchmark_mde_reports_what_is_detectable(imported_tables):
    release, _, tables = imported_tables
    power = tables.power.set_index(["comparison", "grading", "run_id"])
    summary = power.loc[("answer_key_vs_traditional", "answer_key-traditional", "all")]
    runs = tables.models
    print(
        f"\n{release}: answer-key − traditional MDE {summary['mde_points']:.1f} ({summary['mde_status']}, "
        f"{summary['n_detectable']} of {summary['n_comparisons']} runs can detect a difference)"
    )
    assert summary["n_comparisons"] == len(runs)
    assert summary["n_detectable"] == (runs["mde_status"] == "detectable").sum()
    few = runs["n_discordant_up"] + runs["n_discordant_down"] <= 3  # ≤ 10 % of 30 questions
    assert (runs.loc[few, "mde_status"] == "nothing_detectable").all()
    if few.mean() > 0.5:  # the MC release: the median must not come from the few that detect anything
        assert summary["mde_status"] == "nothing_detectable" and np.isnan(summary["mde_points"])


def test_agreement_has_one_overall_row_per_grader_pair(imported_tables):
    _, _, tables = imported_tables
    agreement = tables.agreement
    overall = agreement[(agreement["category"] == "all") & (agreement["run_id"] == "all")]
    assert not overall.duplicated(["grader_a", "grader_b"]).any()


# ---------------------------------------------------------------- issue 9 §2: coverage on the imported releases


def test_answer_key_coverage_and_agreement_per_release(imported_tables):
    release, scored, tables = imported_tables
    m = tables.models
    answers, judged = int(m["n_answers"].sum()), float((m["answer_key_coverage"] * m["n_answers"]).sum())
    paired, agree = int(m["n_answers_paired"].sum()), int(m["n_answers_agree"].sum())
    print(
        f"\n{release}: answer-key coverage {judged / answers:.1%} of {answers} answers "
        f"(per run {m['answer_key_coverage'].min():.1%}–{m['answer_key_coverage'].max():.1%}); "
        f"the gradings agree on {agree} of {paired} answers; "
        f"{int((~m['ranked_answer_key']).sum())} of {len(m)} runs unranked under answer-key grading"
    )
    assert m["answer_key_coverage"].between(0, 1).all() and (m["traditional_coverage"] == 1).all()
    both = scored[["traditional", "answer_key"]].notna().all(axis=1)
    assert paired == int(both.sum())
    assert agree == int((scored.loc[both, "traditional"] == scored.loc[both, "answer_key"]).sum())
    if release == "open":  # the authors' marks judge every answer of the paper release
        assert (m["answer_key_coverage"] == 1).all() and m["ranked_answer_key"].all()


def _synthetic_gaps(scored: pd.DataFrame) -> pd.DataFrame:
    """Remove answer-key verdicts: a third of the first run's questions, every 10th answer of the rest.

    The gaps are an automatic grader's no-verdicts: where people grade, a missing label makes the run await
    labels instead (tests/hostile/test_label_grading.py).
    """
    scored = scored.assign(answer_key_grader="rules")
    q = pd.Series(pd.factorize(scored["question_id"], sort=True)[0], index=scored.index)
    first = scored["run_id"] == scored["run_id"].min()
    gap = (first & (q % 3 == 0)) | (~first & ((q + scored["round"]) % 10 == 0))
    scored.loc[gap, "answer_key"] = np.nan
    return scored


def test_a_synthetic_no_verdict_pattern_on_real_data(imported_tables):
    """The real gradings have full coverage; take verdicts away and check every number by hand."""
    release, scored, _ = imported_tables
    gappy = _synthetic_gaps(scored)
    m = analyse(gappy, n_boot=200).models.set_index("run_id")
    first = gappy["run_id"].min()
    assert m.loc[first, "answer_key_coverage"] == pytest.approx(20 / 30)
    assert m.drop(first)["answer_key_coverage"].tolist() == pytest.approx([0.9] * (len(m) - 1))
    assert not m.loc[first, "ranked_answer_key"] and np.isnan(m.loc[first, "rank_answer_key"])
    assert sorted(m.drop(first)["rank_answer_key"].dropna()) == sorted(
        m.drop(first)["answer_key_mean"].rank(ascending=False, method="min")
    )
    judged = gappy.dropna(subset=["answer_key"])
    by_hand = judged.groupby(["run_id", "question_id"])["answer_key"].mean().groupby("run_id").mean()
    np.testing.assert_allclose(m["answer_key_mean"], by_hand.reindex(m.index), atol=1e-9)
    d = (judged["answer_key"] - judged["traditional"]).groupby([judged["run_id"], judged["question_id"]]).mean()
    np.testing.assert_allclose(m["diff_mean"], d.groupby("run_id").mean().reindex(m.index), atol=1e-9)
    assert (m["n_questions_paired"] == d.groupby("run_id").size().reindex(m.index)).all()
    for run_id in m.index[m["test"] == "paired_t"]:
        qk = judged[judged["run_id"] == run_id].groupby("question_id")[["answer_key", "traditional"]].mean()
        assert m.loc[run_id, "p_value"] == pytest.approx(
            stats.ttest_rel(qk["answer_key"], qk["traditional"]).pvalue, abs=1e-9
        )
    print(
        f"\n{release} with synthetic gaps: {first} answer-key coverage "
        f"{m.loc[first, 'answer_key_coverage']:.1%} → not ranked; the others, at 90%, are ranked among themselves"
    )


# ---------------------------------------------------------------- issue 26 §10: unreadable answers per run


def test_each_runs_unreadable_answers_are_reported_per_grading(imported_tables):
    """Unreadable answers (scored 0 as the model's failure) are 3.0 %, 2.0 % and 1.7 % of three MC runs."""
    release, scored, tables = imported_tables
    m = tables.models.set_index("run_id")
    for g, parse in (("traditional", "verdict_parse"), ("answer_key", "answer_key_parse")):
        failed = scored[parse].eq("none") & scored[g].notna()
        by_hand = failed.groupby(scored["run_id"]).mean()
        np.testing.assert_allclose(m[f"{g}_missing_rate"], by_hand.reindex(m.index), atol=1e-12)
    if release == "mc":
        shown = m.loc[m["traditional_missing_rate"] > 0, "traditional_missing_rate"].sort_values()
        assert shown.round(3).tolist() == [0.017, 0.02, 0.03]
        assert (m["answer_key_missing_rate"] == m["traditional_missing_rate"]).all()
    else:  # the paper release: every answer was read
        assert (m[["traditional_missing_rate", "answer_key_missing_rate"]] == 0).all().all()
