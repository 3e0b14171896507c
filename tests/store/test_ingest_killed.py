"""An ingest killed at any moment leaves the local store as it was, or fully updated.

Each trial starts ``python -m generator ingest`` in a subprocess and sends it
SIGKILL after a random delay: every other trial anywhere in the run
(interpreter start, validation, staging, fsync, the symlink swap), the others
within 250 ms after the staging snapshot appears, where a crash could hurt. Whatever the moment, the
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

import pytest

from generator.intake.benchmark import load_benchmarks
from generator.project import Project
from generator.store import LocalStore

from tests.conftest import REPO, tiny_predictions, tree_bytes, write_run

TRIALS = 10
RERUNS = 2
NEW_RUNS = 30


def _ingest_process(root):
    return subprocess.Popen([sys.executable, "-m", "generator", "ingest", "--root", str(root)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONHASHSEED": "0"})


def _current(root) -> dict[str, bytes]:
    return tree_bytes(LocalStore(Project(root).store_dir).snapshot())


def _wait_for_staging(snapshots, process, timeout=60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if any(p.name.startswith(".staging-") for p in snapshots.iterdir()):
            return
        time.sleep(0.002)


@pytest.fixture
def prepared(tiny_root, tmp_path_factory):
    """A leaderboard whose store holds run-a, with NEW_RUNS more runs (one changed) waiting in submissions/."""
    LocalStore(Project(tiny_root).store_dir).ingest([tiny_root / "submissions" / "tiny" / "run-a"],
                                                     load_benchmarks(tiny_root / "data"))
    for i in range(NEW_RUNS):
        write_run(tiny_root, f"run-{i:03d}")
    preds = tiny_predictions()
    preds[0]["response"] = "Final answer: 5"
    write_run(tiny_root, "run-a", preds)
    complete = tmp_path_factory.mktemp("complete") / "root"
    shutil.copytree(tiny_root, complete, symlinks=True)
    started = time.perf_counter()
    finished = _ingest_process(complete)
    assert finished.wait(timeout=60) == 0, finished.stdout.read()
    return tiny_root, _current(tiny_root), _current(complete), time.perf_counter() - started


@pytest.mark.slow
def test_killed_ingest_leaves_store_before_or_after(prepared, tmp_path_factory):
    root, before, after, duration = prepared
    assert before != after
    rng = random.Random(20261129)
    outcomes = []
    for trial in range(TRIALS):
        copy = tmp_path_factory.mktemp(f"trial{trial}") / "root"
        shutil.copytree(root, copy, symlinks=True)
        process = _ingest_process(copy)
        if trial % 2:  # anywhere in the run
            time.sleep(rng.uniform(0.1, 1.1) * duration)
        else:  # inside the commit: once the staging snapshot appears
            _wait_for_staging(Project(copy).store_dir / "snapshots", process)
            time.sleep(rng.uniform(0, 0.25))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        state = _current(copy)
        assert state in (before, after), f"trial {trial}: the store is neither as it was nor fully updated"
        outcomes.append("after" if state == after else "before")
        if list((Project(copy).store_dir / "snapshots").glob(".staging-*")):
            outcomes.append("mid-commit")
        if state == before and outcomes.count("rerun") < RERUNS:  # a few suffice; each costs a full ingest
            outcomes.append("rerun")
            rerun = _ingest_process(copy)
            assert rerun.wait(timeout=60) == 0, rerun.stdout.read()
            assert _current(copy) == after, f"trial {trial}: the ingest after a kill must complete the update"
            assert not list((Project(copy).store_dir / "snapshots").glob(".staging-*")), "leftovers are cleaned up"
    print(f"kill trials: {outcomes.count('before')} before, {outcomes.count('after')} after "
          f"({outcomes.count('mid-commit')} killed while staging, {outcomes.count('rerun')} re-ingested), "
          f"ingest {duration:.2f} s")
