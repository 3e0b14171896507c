"""Progress counted by the one who works: grade_benchmark reports (done, total), the bar only draws it."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pandas as pd
import pytest
from tqdm import tqdm

from dualboard import pipeline
from dualboard.grading import GradedTables, VerdictCache, grade_benchmark
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.models import Benchmark, Run
from dualboard.intake.validate import find_run_dirs, load_runs
from dualboard.store import LocalStore
from tests.conftest import LABELS_HEADER, REPO, tiny_label
from tests.grading.grading_fixtures import make_benchmark, make_run


def _graded_with_reports(benchmark: Benchmark, runs: list[Run], **kwargs) -> tuple[GradedTables, list[tuple]]:
    reports: list[tuple[int, int]] = []
    tables = grade_benchmark(benchmark, runs, progress=lambda done, total: reports.append((done, total)), **kwargs)
    return tables, reports


def _assert_counts_every_verdict_row(tables: GradedTables, reports: list[tuple[int, int]]) -> None:
    """The first report announces the total, done only grows, and the last report is (rows, rows)."""
    rows = len(tables.verdicts)
    assert reports[0] == (0, rows)
    assert {total for _, total in reports} == {rows}
    done = [d for d, _ in reports]
    assert all(later > earlier for earlier, later in zip(done, done[1:], strict=False))
    assert reports[-1] == (rows, rows)


@pytest.fixture(scope="module")
def demo() -> tuple[Benchmark, list[Run]]:
    benchmarks = load_benchmarks(REPO / "data")
    return benchmarks["demo"], load_runs(find_run_dirs([REPO / "submissions" / "demo"]), benchmarks)


def test_demo_progress_reaches_the_number_of_verdict_rows_cold_and_from_the_cache(demo, tmp_path: Path) -> None:
    benchmark, runs = demo
    labels = pipeline.human_labels(benchmark)
    assert labels is not None  # the demo has human labels on a sample: three graders' rows, one of them partial
    for _ in ("cold", "every verdict but the human ones from the cache"):
        cache = VerdictCache(LocalStore(tmp_path))
        tables, reports = _graded_with_reports(benchmark, runs, cache=cache, human_labels=labels)
        _assert_counts_every_verdict_row(tables, reports)
    assert set(tables.verdicts.role) == {"traditional", "answer_key", "human"}
    assert len(tables.verdicts) == 2 * len(tables.scored) + len(labels)


def test_tiny_progress_leaves_out_the_labels_it_sets_aside(tiny_root: Path) -> None:
    """Labels of a run that is not graded make no verdict, so they are not counted either."""
    rows = [("run-a", "q1", "pass"), ("run-a", "q3", "fail"), ("gone", "q1", "pass"), ("gone", "q2", "pass")]
    labels = LABELS_HEADER + "".join(tiny_label(*row) for row in rows)
    (tiny_root / "data" / "benchmarks" / "tiny" / "human_labels.csv").write_text(labels, "utf-8")
    benchmarks = load_benchmarks(tiny_root / "data")
    runs = load_runs(find_run_dirs([tiny_root / "submissions"]), benchmarks)
    tables, reports = _graded_with_reports(
        benchmarks["tiny"], runs, human_labels=pipeline.human_labels(benchmarks["tiny"])
    )
    _assert_counts_every_verdict_row(tables, reports)
    assert reports[-1] == (3 + 3 + 2, 3 + 3 + 2)  # traditional, rules, two labels of run-a
    assert tables.notes and "2 label(s) of 1 run(s) not graded ('gone')" in tables.notes[0]


def test_progress_leaves_out_answers_to_questions_dropped_since_the_runs_version(open_question) -> None:
    benchmark = dataclasses.replace(
        make_benchmark([open_question]), previous_versions={"0": frozenset({"capital", "dropped"})}
    )
    old = Run(
        "demo",
        "old",
        {"model": "m", "benchmark_version": "0"},
        (
            {"question_id": "capital", "round": 0, "response": "Final answer: Paris", "recorded": {"judge": 100}},
            {"question_id": "dropped", "round": 0, "response": "Final answer: 3", "recorded": {"judge": 0}},
        ),
    )
    tables, reports = _graded_with_reports(benchmark, [old])
    _assert_counts_every_verdict_row(tables, reports)
    assert reports[-1] == (2, 2)


def test_a_bar_shows_what_grading_reports(tiny_root: Path) -> None:
    benchmarks = load_benchmarks(tiny_root / "data")
    runs = load_runs(find_run_dirs([tiny_root / "submissions"]), benchmarks)
    with tqdm(file=io.StringIO(), mininterval=0) as bar:
        tables = grade_benchmark(benchmarks["tiny"], runs, progress=pipeline.bar_progress(bar))
        assert bar.n == bar.total == len(tables.verdicts) == 6


def test_grade_with_bar_grades_with_the_benchmarks_labels(tiny_root: Path, tmp_path: Path) -> None:
    (tiny_root / "data" / "benchmarks" / "tiny" / "human_labels.csv").write_text(
        LABELS_HEADER + tiny_label("run-a", "q2", "60"), "utf-8"
    )
    benchmarks = load_benchmarks(tiny_root / "data")
    runs = load_runs(find_run_dirs([tiny_root / "submissions"]), benchmarks)
    cache = VerdictCache(LocalStore(tmp_path / "store"))
    tables = pipeline.grade_with_bar(benchmarks["tiny"], runs, cache, progress=False)
    human = tables.verdicts[tables.verdicts.role == "human"]
    assert (human.question_id.tolist(), human.score.tolist()) == (["q2"], [60.0])


def test_progress_with_nothing_to_grade_reports_zero_of_zero(mc_question) -> None:
    _, reports = _graded_with_reports(make_benchmark([mc_question]), [make_run("empty", [])])
    assert reports == [(0, 0)]


def test_a_human_label_key_in_a_prediction_is_not_a_label(open_question) -> None:
    """Labels come only from human_labels.csv: a prediction cannot carry its own."""
    run = make_run(
        "forger", [{"question_id": "capital", "response": "Lyon", "recorded": {"judge": 0}, "human_label": 100}]
    )
    tables = grade_benchmark(make_benchmark([open_question]), [run])
    assert "human" not in set(tables.verdicts.role)
    assert tables.scored.answer_key_grader.tolist() == ["rules"]
    with_labels = grade_benchmark(
        make_benchmark([open_question]),
        [run],
        human_labels=pd.DataFrame(columns=["run_id", "question_id", "round", "score", "response_sha256"]),
    )
    assert "human" not in set(with_labels.verdicts.role)
