"""A release's own published table is kept, reconciled with ours, and shown (issue 26, item 11).

The 2024-04-28 paper release publishes ``final_stats.csv``: means, sds and 1.96·sd/√30 of the authors' marks,
rounded, and ``ci_lower``/``ci_upper`` (23–55 around 38 for gpt-4-turbo) that are not mean ± 1.96·sd/√n. The
source's ``calculate_llm_stats`` takes them as the 2.5 and 97.5 percentiles of 10,000 bootstrap means of the
answers, drawn without a seed: the reconciliation must find that method and no other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dualboard import pipeline
from dualboard.grading import grade_benchmark
from dualboard.project import Project
from dualboard.render.leaderboard import leaderboard_page
from dualboard.render.published_table import published_section
from dualboard.stats.published import PUBLISHED_COLUMNS, load_published, method_summary, published_grading, reconcile
from dualboard.store import LocalStore
from tests.importers.import_fixtures import (
    import_and_analyse_paper,
    load_imported,
    load_labels,
)

BOOTSTRAP = "bootstrap percentile"


def _reconciled(dest, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The imported release's published.csv and its reconciliation with the graded answers."""
    graded = grade_benchmark(*load_imported(dest, name), human_labels=load_labels(dest, name))
    published = load_published(dest / "data" / "benchmarks" / name / "published.csv", dest / "data")
    return published, reconcile(published, graded.scored)


@pytest.fixture(scope="module")
def paper(imported_open):
    return _reconciled(imported_open, "easy-problems-open")


def test_importing_the_paper_release_keeps_its_published_table(paper, imported_open):
    published, _ = paper
    assert tuple(published.columns) == PUBLISHED_COLUMNS
    runs = {p.name for p in (imported_open / "submissions" / "easy-problems-open").iterdir()}
    assert set(published["run_id"]) == runs and len(published) == 7
    row = published.set_index("run_id").loc["gpt-4-turbo"]
    assert row[["mean_score", "std_dev_score", "z_interval_error", "ci_lower", "ci_upper"]].tolist() == [
        38.0,
        46.0,
        17.0,
        23.0,
        55.0,
    ]


def test_the_paper_release_is_reconciled_with_the_authors_marks(paper):
    _, table = paper
    assert published_grading(table) == "answer_key"  # the authors' marks, as the release README says
    summary = method_summary(table, "answer_key").set_index(["column", "method"])
    for column in ("mean_score", "std_dev_score", "z_interval_error"):
        assert summary.loc[column, "n_matching"].tolist() == [7], column
    matching = summary["n_matching"]
    assert matching["ci_lower", "mean − 1.96·sd/√n"] == 0  # not mean ± z: 21.5 for gpt-4-turbo, published 23
    assert matching["ci_upper", "mean + 1.96·sd/√n"] < 7
    assert matching["ci_lower", "bootstrap percentile 2.5 % (10,000 resamples of the answers)"] == 7
    assert matching["ci_upper", "bootstrap percentile 97.5 % (10,000 resamples of the answers)"] == 7


def test_our_bootstrap_percentiles_agree_with_scipys(paper, imported_open):
    """The method found is the plain percentile bootstrap of the mean over answers (scipy as the reference)."""
    _, table = paper
    marks = pd.read_csv(imported_open / "data" / "benchmarks" / "easy-problems-open" / "human_labels.csv")
    gpt = marks.loc[marks["run"].eq("gpt-4-turbo"), "label"].to_numpy(dtype=float)
    assert len(gpt) == 30
    reference = stats.bootstrap(
        (gpt,), np.mean, n_resamples=10_000, method="percentile", random_state=np.random.default_rng(1)
    ).confidence_interval
    ours = table[table["run_id"].eq("gpt-4-turbo") & table["grading"].eq("answer_key")]
    ours = ours[ours["method"].str.startswith(BOOTSTRAP)].set_index("column")["ours"]
    assert ours["ci_lower"] == pytest.approx(reference.low, abs=1.0)
    assert ours["ci_upper"] == pytest.approx(reference.high, abs=1.0)


@pytest.mark.slow
def test_the_multiple_choice_release_matches_to_full_precision(imported_mc):
    _, table = _reconciled(imported_mc, "easy-problems-mc")
    assert published_grading(table) == "traditional"
    exact = table[table["grading"].eq("traditional") & table["column"].isin(["mean_score", "std_dev_score"])]
    assert len(exact) == 26 and exact["matches"].all() and (exact["tolerance"] < 1e-5).all()
    summary = method_summary(table, "traditional").set_index(["column", "method"])["reproduces"]
    assert [m for (c, m), ok in summary.items() if c == "ci_lower" and ok] == [
        "bootstrap percentile 2.5 % (10,000 resamples of the answers)"
    ]


@pytest.mark.slow
def test_the_built_leaderboard_shows_the_published_table_beside_ours(tmp_path):
    import_and_analyse_paper(tmp_path)
    project = Project(tmp_path)
    [result] = pipeline.analysed_results(project, LocalStore(project.store_dir))
    page, _ = leaderboard_page(result)
    assert "## The release's own table" in page.content
    assert "The published means are those of answer-key grading." in page.content
    assert "gpt&#45;4&#45;turbo</td><td>38&#46;0 &#47; 38&#46;0 &#10003;" in page.content  # published / ours ✓
    assert "bootstrap percentile 2&#46;5 &#37;" in page.content and "7 of 7 runs &#8212; reproduces it" in page.content


def test_a_benchmark_without_a_published_table_shows_no_section(tmp_path):
    assert load_published(tmp_path / "published.csv", tmp_path) is None
    assert published_section(None) == ""
