"""Copies of the demo leaderboard with one new simulated run, for the preview's tests."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

from dualboard.intake.benchmark import load_benchmark
from dualboard.simulation import DEMO_SEED, load_answer_texts, load_simulated_models, simulate_run, write_run
from tests.conftest import DEMO, REPO

STORED = sorted(p.name for p in (REPO / "submissions" / "demo").iterdir())
NEW = "zephyr-ultra-405b"


def copy_demo(dest: Path) -> Path:
    for name in ("data", "submissions"):
        shutil.copytree(REPO / name, dest / name)
    return dest


def add_strong_run(root: Path) -> Path:
    """A new simulated run whose true accuracy (0.98 / 0.96) is above every stored demo model's."""
    models = load_simulated_models(DEMO / "simulated_models.yaml")
    template = next(m for m in models if m.run_id == "delta-mind-34b")
    strong = dataclasses.replace(
        template,
        run_id=NEW,
        model=NEW,
        seed=909,
        malformed_rate=0.0,
        unmarked_rate=0.0,
        accuracy={c: {"traditional": 0.98, "answer_key": 0.96} for c in template.accuracy},
    )
    sim = simulate_run(
        load_benchmark(root / "data" / "benchmarks" / "demo"),
        strong,
        seed=DEMO_SEED,
        answer_texts=load_answer_texts(DEMO / "simulated_models.yaml"),
    )
    return write_run(sim.run, root / "submissions")


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()
