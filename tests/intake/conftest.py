"""Fixtures of the intake tests."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.models import Benchmark
from tests.conftest import TINY_BENCHMARK, TINY_QUESTIONS

Workspace = tuple[Path, Path, dict[str, Benchmark]]
"""(leaderboard folder, its one run folder ``submissions/tiny/run-x``, the loaded benchmarks)."""


@pytest.fixture(scope="module")
def workspace() -> Iterator[Workspace]:
    """One leaderboard folder that property tests reuse for every example (Hypothesis runs thousands).

    The tiny benchmark and an empty run folder, on a RAM disk where there is one: thousands of small
    writes stay fast. Each example writes the run's files itself.
    """
    memory = Path("/dev/shm")
    root = Path(tempfile.mkdtemp(prefix="dualboard-intake-", dir=memory if memory.is_dir() else None))
    bench = root / "data" / "benchmarks" / "tiny"
    bench.mkdir(parents=True)
    (bench / "benchmark.yaml").write_text(yaml.safe_dump(TINY_BENCHMARK), "utf-8")
    (bench / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in TINY_QUESTIONS), "utf-8")
    run = root / "submissions" / "tiny" / "run-x"
    run.mkdir(parents=True)
    yield root, run, load_benchmarks(root / "data")
    shutil.rmtree(root)
