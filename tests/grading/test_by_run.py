"""The grading stage run by run: each run's grades kept by content, tables equal to a grade from scratch.

``dualboard grade`` grades stored runs one at a time and writes each run's files
of build/scored/, recording the hash of what can change them. Whatever it reused,
the tables it writes must equal, read back frame for frame, those of :func:`grade_benchmark` over all runs at once.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dualboard import pipeline
from dualboard.grading import grade_benchmark
from dualboard.grading.run_cache import ONCE, RunCache, run_key
from dualboard.grading.run_grades import RUN_ANSWER_COLUMNS, RunGrades
from dualboard.project import Project
from dualboard.safe_read import UnsafeFileError
from dualboard.scored_files import ANSWERS, TABLES, VERDICTS, ScoredFolder, read_table, typed, write_scored
from dualboard.store import LocalStore
from tests.conftest import copy_run

DEMO_RUNS = 7


def _tables(scored_dir: Path) -> list[pd.DataFrame]:
    return [read_table(table, scored_dir, "demo") for table in TABLES]


def _from_scratch(project: Project, store: LocalStore, folder: Path) -> list[pd.DataFrame]:
    """The three tables of one grade_benchmark call over every stored run, written and read back."""
    benchmark, runs = pipeline.stored_benchmarks(store)["demo"]
    tables = grade_benchmark(benchmark, runs, human_labels=pipeline.human_labels(benchmark))
    write_scored(tables, folder, "demo", store.revision())
    return _tables(folder)


def _assert_equal_to_scratch(project: Project, store: LocalStore, tmp_path: Path) -> None:
    scratch = _from_scratch(project, store, tmp_path / f"scratch-{store.revision()}")
    for table, built, expected in zip(TABLES, _tables(project.scored_dir()), scratch, strict=True):
        assert len(built), table.name
        pd.testing.assert_frame_equal(built, expected, obj=table.name)


def _fragments(project: Project) -> dict[str, int]:
    """Each run file of the demo's folder of build/scored with the time it was last written."""
    folder = project.scored_dir() / "demo"
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in folder.glob("*/*.parquet")}


@pytest.mark.slow
def test_a_grade_equals_one_from_scratch_and_adding_a_run_grades_that_run_only(demo_board, tmp_path: Path) -> None:
    project, store = demo_board
    first = pipeline.grade(project, store, progress=False, jobs=1)
    assert f"({DEMO_RUNS} of {DEMO_RUNS} runs graded again)" in first.line
    _assert_equal_to_scratch(project, store, tmp_path)
    kept = _fragments(project)
    assert len(kept) == 4 * DEMO_RUNS  # scored, answers, verdicts and the choice's evidence

    again = pipeline.grade(project, store, progress=False, jobs=1)
    assert f"(0 of {DEMO_RUNS} runs graded again)" in again.line
    assert _fragments(project) == kept

    copy_run(project.submissions_dir / "demo" / "fjord-3b", project.submissions_dir / "demo" / "newcomer-1b")
    pipeline.ingest(project, store, today="2026-01-01")
    added = pipeline.grade(project, store, progress=False, jobs=1)
    assert f"(1 of {DEMO_RUNS + 1} runs graded again)" in added.line
    now = _fragments(project)
    assert {name: now[name] for name in kept} == kept  # the other runs' files were not written again
    _assert_equal_to_scratch(project, store, tmp_path)

    shutil.rmtree(project.submissions_dir / "demo" / "newcomer-1b")
    pipeline.ingest(project, store, today="2026-01-01")
    pipeline.grade(project, store, progress=False, jobs=1)
    assert _fragments(project) == kept  # the departed run's grades are deleted with it


@pytest.mark.slow
def test_a_changed_label_grades_its_run_again_and_a_changed_grader_every_run(demo_board, tmp_path: Path) -> None:
    project, store = demo_board
    pipeline.grade(project, store, progress=False, jobs=1)
    labels_path = project.data_dir / "benchmarks" / "demo" / "human_labels.csv"
    labels = pd.read_csv(labels_path, dtype=str, keep_default_na=False)
    run = labels.iloc[0, 0]
    flipped = labels.copy()
    flipped.iloc[0, 3] = "fail" if labels.iloc[0, 3] == "pass" else "pass"
    flipped.to_csv(labels_path, index=False)
    pipeline.ingest(project, store, today="2026-01-01")
    relabelled = pipeline.grade(project, store, progress=False, jobs=1)
    assert f"(1 of {DEMO_RUNS} runs graded again)" in relabelled.line, run
    _assert_equal_to_scratch(project, store, tmp_path)

    yaml_path = project.data_dir / "benchmarks" / "demo" / "benchmark.yaml"
    spec = yaml.safe_load(yaml_path.read_text("utf-8"))
    spec["graders"]["traditional"]["multiple_choice"]["options"] = {"json_answer": "first"}
    yaml_path.write_text(yaml.safe_dump(spec), "utf-8")
    pipeline.ingest(project, store, today="2026-01-01")
    regraded = pipeline.grade(project, store, progress=False, jobs=1)
    assert f"({DEMO_RUNS} of {DEMO_RUNS} runs graded again)" in regraded.line
    _assert_equal_to_scratch(project, store, tmp_path)


def _grade_cli(root: Path, jobs: int) -> str:
    command = [sys.executable, "-m", "dualboard", "grade", "--no-progress", "--jobs", str(jobs), "--root", str(root)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.slow
def test_a_pool_of_workers_writes_the_tables_of_one_process(demo_board, tmp_path: Path) -> None:
    project, store = demo_board
    alone = tmp_path / "alone"
    shutil.copytree(project.root, alone, symlinks=True)
    assert f"({DEMO_RUNS} of {DEMO_RUNS} runs graded again)" in _grade_cli(alone, 1)
    assert f"({DEMO_RUNS} of {DEMO_RUNS} runs graded again)" in _grade_cli(project.root, 3)
    for table, pooled, single in zip(TABLES, _tables(project.scored_dir()), _tables(alone / "build" / "scored")):
        pd.testing.assert_frame_equal(pooled, single, obj=table.name)
    _assert_equal_to_scratch(project, store, tmp_path)
    # the workers saved their verdicts where the store keeps them: a fresh grade finds every one
    shutil.rmtree(project.scored_dir())
    parts = sorted(p.name for p in (project.store_dir / "verdicts").rglob("*.parquet"))
    assert parts and _grade_cli(project.root, 1)
    assert sorted(p.name for p in (project.store_dir / "verdicts").rglob("*.parquet")) == parts


def test_grades_holding_a_verdict_that_may_not_repeat_are_never_found_again(tmp_path: Path) -> None:
    folder = ScoredFolder(tmp_path / "demo")
    cache = RunCache(folder)
    grades = RunGrades(typed(ANSWERS, [], RUN_ANSWER_COLUMNS), typed(VERDICTS, []), transient=True)
    recorded = cache.save("run-a", "k" * 64, grades)
    assert ONCE in recorded and not cache.has("run-a", "k" * 64, {"run-a": recorded})
    assert cache.has("run-a", "k" * 64, {"run-a": "k" * 64}), "its files are there"
    folder.keep_only(set())
    assert not list(folder.path.glob("*/*.parquet"))


def test_a_link_in_a_stored_run_folder_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "predictions.jsonl").write_text("{}\n", "utf-8")
    (tmp_path / "secret").write_text("token", "utf-8")
    (run / "metadata.yaml").symlink_to(tmp_path / "secret")
    with pytest.raises(UnsafeFileError, match="metadata.yaml"):
        run_key(run, "benchmark", {})
