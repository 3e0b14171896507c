"""Validation over worker processes reports exactly what one process reports, in the same order.

:func:`check_runs` reads the predictions of several runs in worker processes
when there are enough bytes (``POOL_MIN_BYTES``, set to 0 here so that a small
board takes that path). Valid and broken runs side by side must give the same
findings, word for word and in the same order, the same runs with the same
rows (read again on first use), and the same validation cache.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
from pathlib import Path

import pytest
import yaml

from dualboard import pipeline
from dualboard.build_cache import BuildCache
from dualboard.intake import validate
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.validate import DeferredPredictions, check_runs, find_run_dirs
from dualboard.project import Project
from tests.conftest import git_repository, tiny_metadata, tiny_predictions, write_run, write_tiny_board


def _board(root: Path) -> Path:
    """The tiny board with valid runs and runs broken in every way a line or a file can be."""
    write_tiny_board(root)
    write_run(root, "run-b", [{**p, "response": p["response"] + " ünïcode"} for p in tiny_predictions()])
    good = [json.dumps(p).encode() for p in tiny_predictions()]
    write_run(root, "bad-lines", raw_lines=[good[0], b"{not json", b'{"question_id": "q2", "response": 5}', good[2]])
    write_run(root, "dup-key", raw_lines=[good[0], b'{"question_id": "q2", "response": "B", "response": "C"}', good[2]])
    write_run(root, "missing-answers", tiny_predictions()[:1])
    write_run(root, "bad-meta", metadata=tiny_metadata(rounds="two"))
    write_run(root, "z-valid", tiny_predictions())
    return root


def _check(root: Path, jobs: int, cache: BuildCache | None = None):
    benchmarks = load_benchmarks(root / "data")
    dirs = find_run_dirs([root / "submissions"])
    return check_runs(dirs, benchmarks, submissions_root=root / "submissions", cache=cache, jobs=jobs)


@pytest.fixture
def pooled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validate, "POOL_MIN_BYTES", 0)


def test_workers_report_what_one_process_reports(tmp_path: Path, pooled: None):
    root = _board(tmp_path)
    alone, pooled_report = _check(root, jobs=1), _check(root, jobs=2)
    assert [str(f) for f in pooled_report.findings] == [str(f) for f in alone.findings]
    assert len(alone.findings) >= 5
    assert [(r.benchmark, r.run_id, r.metadata) for r in pooled_report.runs] == [
        (r.benchmark, r.run_id, r.metadata) for r in alone.runs
    ]
    assert [r.run_id for r in alone.runs] == ["run-a", "run-b", "z-valid"]
    for run, expected in zip(pooled_report.runs, alone.runs, strict=True):
        assert isinstance(run.predictions, DeferredPredictions)  # the rows stayed in the worker
        assert len(run.predictions) == len(expected.predictions)
        assert tuple(run.predictions) == tuple(expected.predictions)  # read again on use: the same rows


def test_workers_fill_the_validation_cache_like_one_process(tmp_path: Path, pooled: None):
    root = _board(tmp_path)
    caches = {jobs: BuildCache.empty(tmp_path / f"cache-{jobs}.json") for jobs in (1, 2)}
    for jobs, cache in caches.items():
        _check(root, jobs, cache)
        cache.save()
    valid = {jobs: json.loads((tmp_path / f"cache-{jobs}.json").read_text())["valid_runs"] for jobs in caches}
    assert valid[2] == valid[1]
    assert sorted(valid[2].values()) == [3, 3, 3]  # the three valid runs, three answers each
    again = _check(root, jobs=2, cache=BuildCache.load(tmp_path / "cache-2.json"))
    assert [r.run_id for r in again.runs] == ["run-a", "run-b", "z-valid"]
    assert all(isinstance(r.predictions, DeferredPredictions) for r in again.runs)


def test_a_file_changed_after_a_worker_read_it_is_refused_on_use(tmp_path: Path, pooled: None):
    root = _board(tmp_path)
    run = next(r for r in _check(root, jobs=2).runs if r.run_id == "run-a")
    write_run(root, "run-a", [*tiny_predictions(), {"question_id": "q1", "round": 0, "response": "again"}])
    with pytest.raises(validate.InvalidInputError, match="q1"):
        list(run.predictions)


def test_the_pull_request_check_runs_its_own_checks_while_workers_read(tmp_path: Path, pooled: None, monkeypatch):
    """check_pull_request does its other checks while the workers read the predictions: every finding, of the
    folders, the runs, the graders, the settings and the committed outputs, comes word for word and in the
    order one process gives (the folders', the runs', then the project's)."""
    root = _board(tmp_path)
    bench = root / "data" / "benchmarks" / "tiny"
    (bench / "notes.txt").symlink_to(bench / "questions.jsonl")  # a link in data/
    nested = root / "submissions" / "tiny" / "group" / "run-c"  # a run folder one level too deep
    nested.mkdir(parents=True)
    (nested / "predictions.jsonl").write_text("")
    config = yaml.safe_load((bench / "benchmark.yaml").read_text("utf-8"))
    config["graders"]["answer_key"].append({"name": "numeric", "options": {"tolerance": -1}})
    (bench / "benchmark.yaml").write_text(yaml.safe_dump(config), "utf-8")
    (root / "dualboard.yaml").write_text("store:\n  token: hf_secret\n")
    (root / "build").mkdir()
    (root / "build" / "planted.txt").write_text("planted")
    git_repository(root)
    subprocess.run(["git", "-C", str(root), "add", "-f", "build/planted.txt"], check=True)
    monkeypatch.setattr(validate, "default_jobs", lambda: 2)
    workers_alive = []
    settings_findings = pipeline._settings_findings

    def settings_seen_by_workers(project):
        workers_alive.append(len(multiprocessing.active_children()))
        return settings_findings(project)

    monkeypatch.setattr(pipeline, "_settings_findings", settings_seen_by_workers)
    pooled_report = pipeline.check_pull_request(Project(root))
    monkeypatch.setattr(validate, "POOL_MIN_BYTES", 2**62)
    alone = pipeline.check_pull_request(Project(root))
    assert workers_alive[0] == 2 and workers_alive[1] == 0  # the project's checks ran while the workers read
    assert [str(f) for f in pooled_report.findings] == [str(f) for f in alone.findings]
    where = [f.file for f in alone.findings]
    first = [next(i for i, file in enumerate(where) if part in file) for part in PARTS]
    assert first == sorted(first), where


PARTS = (
    "data/benchmarks/tiny/notes.txt",
    "submissions/tiny/group",
    "submissions/tiny/bad-lines",
    "data/benchmarks/tiny/benchmark.yaml",
    "dualboard.yaml",
    "build/planted.txt",
)
"""Where a finding of each check of :func:`~dualboard.pipeline.check_pull_request` is, in the order reported."""
