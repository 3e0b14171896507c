"""Human labels as a pull request meets them (issue 25, items 4 and 5).

The board: the demo, where people labelled every answer of all seven runs and ``benchmark.yaml`` lists
``human`` first, so people are the answer-key grading. Before the fix, one added unlabelled run switched
every run to ``rules`` (ember-34b-pro 54.2 → 70.7, rank 4 → 2); a run replaced under its id inherited the
labels of answers nobody labelled. Now the choice is the benchmark's, a run without labels awaits them, and
a label applies only to the response whose digest it stores.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from dualboard.cli import main
from dualboard.grading import grade_benchmark
from dualboard.intake.benchmark import load_benchmark
from dualboard.intake.human_labels import LABELS_FILE, parse_human_labels
from dualboard.intake.models import GraderSpec, Run
from dualboard.intake.validate import find_run_dirs, load_runs, validate_submissions
from dualboard.render.leaderboard import leaderboard_page
from dualboard.render.pages import BenchmarkResults, home_page
from dualboard.simulation import DEMO_SEED, human_labels, load_answer_texts, load_simulated_models, simulate_run
from dualboard.simulation.models import MODELS_FILE
from dualboard.stats import analyse, read_tables, write_tables
from tests.conftest import DEMO, REPO
from tests.render.html_tables import tables

DIGEST = "response_sha256"
PEOPLE_FIRST = (GraderSpec("human"), GraderSpec("rules"))
"""benchmark.yaml's graders.answer_key when people are the answer-key grading."""
NEWCOMER = "hollow-3b"


@functools.cache
def demo() -> tuple:
    """The demo benchmark with people declared the answer-key grading, its seven runs, and people's labels of
    every answer of every run (the demo's simulated labellers, as `dualboard simulate` writes them)."""
    benchmark = load_benchmark(DEMO)
    runs = tuple(load_runs(find_run_dirs([REPO / "submissions" / "demo"]), {"demo": benchmark}))
    texts = load_answer_texts(DEMO / MODELS_FILE)
    simulated = [
        simulate_run(benchmark, model, seed=DEMO_SEED, answer_texts=texts)
        for model in load_simulated_models(DEMO / MODELS_FILE)
    ]
    labels = human_labels(simulated, [run.run_id for run in runs]).astype(str)
    return dataclasses.replace(benchmark, answer_key=PEOPLE_FIRST), runs, labels


def run_named(runs, run_id: str) -> Run:
    return next(run for run in runs if run.run_id == run_id)


def board(runs, labels: pd.DataFrame, benchmark=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Grade and analyse ``runs`` as the build does: the models table by run id, and the scored table."""
    graded = grade_benchmark(benchmark or demo()[0], list(runs), human_labels=parse_human_labels(labels))
    tables = analyse(graded.scored, verdicts=graded.verdicts, n_boot=200)
    return tables.models.set_index("run_id"), graded.scored


def newcomer() -> Run:
    """A pull request's run that nobody labelled (fjord-3b's answers, under a new id)."""
    return dataclasses.replace(run_named(demo()[1], "fjord-3b"), run_id=NEWCOMER)


ANSWER_KEY = ["answer_key_mean", "rank_answer_key", "rank_ci_low_answer_key", "rank_ci_high_answer_key", "p_holm"]


@pytest.mark.slow
def test_an_added_unlabelled_run_changes_nobody_elses_answer_key_grading() -> None:
    _, runs, labels = demo()
    before, _ = board(runs, labels)
    after, scored = board([*runs, newcomer()], labels)
    assert set(scored.answer_key_grader) == {"human"}  # was rules for every run once the newcomer came
    pd.testing.assert_frame_equal(after.loc[before.index, ANSWER_KEY], before[ANSWER_KEY])
    waiting = after.loc[NEWCOMER]
    assert not waiting["ranked_answer_key"] and pd.isna(waiting["rank_answer_key"])
    assert pd.isna(waiting["answer_key_mean"]) and pd.isna(waiting["p_holm"])
    assert waiting["n_awaiting_labels"] == waiting["n_answers"] == 144
    assert "awaiting labels: 144 of 144 answers" in waiting["note"]
    assert waiting["ranked_traditional"] and waiting["rank_traditional"] == 7  # stays: tied with fjord-3b's answers


def test_a_run_awaiting_labels_is_left_out_of_the_answer_key_pairwise_family() -> None:
    _, runs, labels = demo()
    graded = grade_benchmark(demo()[0], [*runs, newcomer()], human_labels=parse_human_labels(labels))
    pairwise = analyse(graded.scored, verdicts=graded.verdicts, n_boot=200).pairwise
    mine = pairwise[pairwise[["run_a", "run_b"]].eq(NEWCOMER).any(axis=1)]
    assert set(mine.grading) == {"traditional"}  # no answer-key comparison, so in no answer-key Holm family


@pytest.mark.slow
def test_a_partly_labelled_run_awaits_its_missing_labels() -> None:
    _, runs, labels = demo()
    ember = labels.index[labels.run == "ember-34b-pro"]
    before, _ = board(runs, labels)
    after, _ = board(runs, labels.drop(ember[:3]))
    row = after.loc["ember-34b-pro"]
    assert row["n_awaiting_labels"] == 3 and not row["ranked_answer_key"] and pd.isna(row["answer_key_mean"])
    assert row["rank_traditional"] == before.loc["ember-34b-pro", "rank_traditional"]
    others = after.drop("ember-34b-pro")
    assert sorted(others.rank_answer_key) == [1, 2, 3, 4, 5, 6]
    assert (others.n_awaiting_labels == 0).all()


def test_labels_on_every_answer_do_not_make_people_the_grading_unless_declared() -> None:
    """The choice is the benchmark's (human listed first), not the share of the runs that carry labels."""
    benchmark, runs, labels = demo()
    listed_after = dataclasses.replace(benchmark, answer_key=PEOPLE_FIRST[::-1])
    _, scored = board(runs, labels, listed_after)
    assert set(scored.answer_key_grader) == {"rules"}


def test_a_replaced_run_does_not_inherit_the_labels_of_its_id() -> None:
    """A pull request puts aurora-lm-70b's answers under ember-34b-pro's id: ember's labels judged other
    responses, so they are not applied and ember awaits labels (answers of the very same text keep theirs)."""
    _, runs, labels = demo()
    aurora = run_named(runs, "aurora-lm-70b")
    replaced = [dataclasses.replace(aurora, run_id=r.run_id) if r.run_id == "ember-34b-pro" else r for r in runs]
    models, scored = board(replaced, labels)
    ember = scored[scored.run_id == "ember-34b-pro"]
    assert ember.answer_key.isna().sum() == models.loc["ember-34b-pro", "n_awaiting_labels"] > 100
    assert not models.loc["ember-34b-pro", "ranked_answer_key"]


@pytest.fixture
def labelled_board(tmp_path: Path) -> Path:
    """A leaderboard folder: the demo with people's labels of every answer, human listed first."""
    shutil.copytree(DEMO, tmp_path / "data" / "benchmarks" / "demo")
    shutil.copytree(REPO / "submissions" / "demo", tmp_path / "submissions" / "demo")
    folder = tmp_path / "data" / "benchmarks" / "demo"
    demo()[2].to_csv(folder / LABELS_FILE, index=False, lineterminator="\n")
    config = (folder / "benchmark.yaml").read_text("utf-8")
    (folder / "benchmark.yaml").write_text(
        config.replace("    - {name: rules}", "    - {name: human}\n    - {name: rules}")
    )
    return tmp_path


def test_validate_names_each_label_whose_response_changed(labelled_board: Path) -> None:
    submissions = labelled_board / "submissions"
    aurora = (submissions / "demo" / "aurora-lm-70b" / "predictions.jsonl").read_bytes()
    (submissions / "demo" / "ember-34b-pro" / "predictions.jsonl").write_bytes(aurora)
    report = validate_submissions(labelled_board / "data", [submissions], submissions)
    stale = [f for f in report.findings if f.field == DIGEST]
    assert stale and all(f.file.endswith(LABELS_FILE) and "'ember-34b-pro'" in f.problem for f in stale)
    labels = pd.read_csv(labelled_board / "data" / "benchmarks" / "demo" / LABELS_FILE)
    first = labels.iloc[stale[0].line - 2]
    assert first.run == "ember-34b-pro" and f"question {first.question!r} round {first['round']}" in stale[0].problem
    assert not report.ok


def test_a_label_file_without_digests_is_refused_and_migrated_by_one_command(labelled_board: Path) -> None:
    path = labelled_board / "data" / "benchmarks" / "demo" / LABELS_FILE
    written = pd.read_csv(path, dtype=str)
    written.drop(columns=[DIGEST]).to_csv(path, index=False, lineterminator="\n")
    submissions = labelled_board / "submissions"
    report = validate_submissions(labelled_board / "data", [submissions], submissions)
    assert any("no response_sha256 column" in f.problem and "dualboard label-digests" in f.fix for f in report.findings)
    result = CliRunner().invoke(main, ["label-digests", "demo", "--root", str(labelled_board)])
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(pd.read_csv(path, dtype=str), written)
    assert validate_submissions(labelled_board / "data", [submissions], submissions).ok


def test_the_home_page_never_names_a_run_awaiting_labels_leader(tmp_path: Path) -> None:
    """A newcomer with delta-mind-34b's answers, people passing every answer they labelled but one left: ranked
    on its labelled answers it would lead with 100; it awaits labels, and the leaderboard says so."""
    benchmark, runs, labels = demo()
    original = run_named(runs, "delta-mind-34b")
    copy = dataclasses.replace(original, run_id=NEWCOMER, metadata={**original.metadata, "model": NEWCOMER})
    theirs = labels[labels.run == "delta-mind-34b"].iloc[1:].assign(run=NEWCOMER, label="1")
    graded = grade_benchmark(benchmark, [*runs, copy], human_labels=parse_human_labels(pd.concat([labels, theirs])))
    write_tables(analyse(graded.scored, verdicts=graded.verdicts, n_boot=200), tmp_path)
    result = BenchmarkResults(benchmark, graded.scored, graded.verdicts, (*runs, copy), stats=read_tables(tmp_path))
    leaders = tables(home_page([result], None).content)[0].rows[0]
    answer_key = leaders[4].text  # awaiting labels touches answer-key grading only: traditional ranks it
    assert "delta-mind-34b (79.2)" in answer_key and NEWCOMER not in answer_key
    board_page, _ = leaderboard_page(result)
    assert "awaiting labels: 1 answers have no human label yet" in html.unescape(board_page.content)
