"""An ingest killed at any moment leaves the local store as it was, or fully updated.

Each trial starts ``python -m dualboard ingest`` in a subprocess (all trials
at once, on copies of one leaderboard) and sends it SIGKILL: every other trial
after a random delay anywhere in the run (interpreter start, validation,
staging, fsync, the symlink swap), the others within 250 ms after the staging
snapshot appears, where a crash could hurt. Whatever the moment, the
``current`` snapshot must be byte-identical to the one before, or to the one a
complete ingest produces; and an ingest after a kill must complete the update
(checked on the first RERUNS interrupted trials: each costs a full ingest).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from dualboard.intake.benchmark import load_benchmarks
from dualboard.project import Project
from dualboard.store import LocalStore
from tests.conftest import REPO, tiny_predictions, tree_bytes, write_run

TRIALS = 10
RANDOM_KILL_S = (0.3, 8.0)
"""Kill moments of the unaimed trials, seconds after the start: from imports to past the commit."""
RERUNS = 2
NEW_RUNS = 30


def _ingest_process(root):
    return subprocess.Popen(
        [sys.executable, "-m", "dualboard", "ingest", "--root", str(root)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )


def _current(root) -> dict[str, bytes]:
    return tree_bytes(LocalStore(Project(root).store_dir).snapshot())


@dataclass
class Trial:
    """One ingest process and the moment it is to be killed."""

    root: Path
    process: subprocess.Popen
    aimed: bool
    """Kill inside the commit (after the staging snapshot appears) rather than at a random time."""
    kill_at: float | None = None

    def staging(self) -> list[str]:
        snapshots = Project(self.root).store_dir / "snapshots"
        return [name for name in os.listdir(snapshots) if name.startswith(".staging-")] if snapshots.is_dir() else []


def _start_trials(root: Path, tmp_path_factory, rng: random.Random) -> list[Trial]:
    """Start every trial at once (each takes seconds of imports; run in turn they would take minutes)."""
    trials = []
    for number in range(TRIALS):
        copy = tmp_path_factory.mktemp(f"trial{number}") / "root"
        shutil.copytree(root, copy, symlinks=True)
        trial = Trial(copy, _ingest_process(copy), aimed=number % 2 == 0)
        if not trial.aimed:
            trial.kill_at = time.monotonic() + rng.uniform(*RANDOM_KILL_S)
        trials.append(trial)
    return trials


def _kill_on_time(trials: list[Trial], rng: random.Random, timeout: float = 120.0) -> None:
    """SIGKILL each trial at its moment; aimed ones 0–250 ms after their staging snapshot appears."""
    deadline = time.monotonic() + timeout
    pending = list(trials)
    while pending and time.monotonic() < deadline:
        for trial in list(pending):
            if trial.aimed and trial.kill_at is None and trial.staging():
                trial.kill_at = time.monotonic() + rng.uniform(0, 0.25)
            if trial.process.poll() is not None or (trial.kill_at is not None and time.monotonic() >= trial.kill_at):
                trial.process.send_signal(signal.SIGKILL)
                trial.process.wait(timeout=30)
                pending.remove(trial)
        time.sleep(0.005)
    assert not pending, "some ingest processes never ended"


@pytest.fixture
def prepared(tiny_root, tmp_path_factory):
    """A leaderboard whose store holds run-a, with NEW_RUNS more runs (one changed) waiting in submissions/."""
    LocalStore(Project(tiny_root).store_dir).ingest(
        [tiny_root / "submissions" / "tiny" / "run-a"], load_benchmarks(tiny_root / "data")
    )
    for i in range(NEW_RUNS):
        write_run(tiny_root, f"run-{i:03d}")
    preds = tiny_predictions()
    preds[0]["response"] = "Final answer: 5"
    write_run(tiny_root, "run-a", preds)
    complete = tmp_path_factory.mktemp("complete") / "root"
    shutil.copytree(tiny_root, complete, symlinks=True)
    run_dirs = sorted((complete / "submissions" / "tiny").iterdir())
    LocalStore(Project(complete).store_dir).ingest(run_dirs, load_benchmarks(complete / "data"))
    return tiny_root, _current(tiny_root), _current(complete)


@pytest.mark.slow
def test_killed_ingest_leaves_store_before_or_after(prepared, tmp_path_factory):
    root, before, after = prepared
    assert before != after
    rng = random.Random(20261129)
    trials = _start_trials(root, tmp_path_factory, rng)
    _kill_on_time(trials, rng)
    outcomes = []
    for number, trial in enumerate(trials):
        state = _current(trial.root)
        assert state in (before, after), f"trial {number}: the store is neither as it was nor fully updated"
        outcomes.append("after" if state == after else "before")
        outcomes += ["mid-commit"] if trial.staging() else []
    interrupted = [t for t in trials if _current(t.root) == before][:RERUNS]
    reruns = [_ingest_process(t.root) for t in interrupted]  # a few suffice; each costs a full ingest
    for trial, rerun in zip(interrupted, reruns):
        assert rerun.wait(timeout=120) == 0, rerun.stdout.read()
        assert _current(trial.root) == after, "the ingest after a kill must complete the update"
        assert not trial.staging(), "leftovers of the killed ingest are cleaned up"
    print(
        f"kill trials: {outcomes.count('before')} before, {outcomes.count('after')} after "
        f"({outcomes.count('mid-commit')} killed while staging, {len(reruns)} re-ingested)"
    )
