"""Render seconds after adding one run: the whole render stage, and the mkdocs build inside it.

A built board (``--board``, e.g. one that ``scale.py``'s ``make_board`` wrote and ``dualboard build``
built) is copied to a temporary folder, where:

1. ``dualboard render`` runs once in-process, from scratch (the copy's site, MkDocs' kept output, docs
   folder and kept data files deleted first): the *full render*;
2. one more run is simulated (answers padded as ``scale.py`` pads them), then validated, ingested,
   graded and analysed by ``dualboard`` commands (not timed);
3. ``dualboard render`` runs in-process again: the *+1 run render*.

Each render is timed whole and by its mkdocs child processes (``subprocess.run`` of ``site.py``
wrapped with a clock), so the figure does not depend on which functions the render is split into:
the same script measures an older checkout (run it with that checkout on ``PYTHONPATH``). Its CPU
seconds are given apart, steadier than wall time on a shared machine: this process's (the render's
own Python work) and its children's (mkdocs). Python's
start-up and imports are not counted (``scale.py`` counts them). Quote ``uptime``'s load beside
the figures: the machine may be shared.

Usage::

    python bench/render_rebuild.py --board BUILT_BOARD [--answer-chars 300-2000]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from synthetic_board import add_runs, pad_responses  # bench/synthetic_board.py, beside this script

from dualboard import pipeline
from dualboard.project import Project
from dualboard.render import answer_shards, run_pages, site
from dualboard.store import LocalStore

SETUP_STAGES = ("validate", "ingest", "grade", "stats")


class MkdocsClock:
    """Wraps ``site.subprocess.run``: the seconds spent in commands that run mkdocs."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.run = subprocess.run

    def __call__(self, cmd, *args, **kwargs):
        started = time.perf_counter()
        try:
            return self.run(cmd, *args, **kwargs)
        finally:
            if any("mkdocs" in str(part) for part in cmd):
                self.seconds += time.perf_counter() - started


def cpu_seconds(who: int) -> float:
    """User + system CPU seconds of this process (``RUSAGE_SELF``) or of its waited-for children."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def timed_render(root: Path) -> tuple[float, float, float, float, str]:
    """Render ``root`` in-process: (render seconds, mkdocs seconds, this process's CPU seconds, the mkdocs
    children's CPU seconds, the stage's summary line)."""
    clock = MkdocsClock()
    site.subprocess.run = clock
    try:
        project = Project(root)
        own, children = cpu_seconds(resource.RUSAGE_SELF), cpu_seconds(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        summary = pipeline.render(project, LocalStore(project.store_dir))
        wall = time.perf_counter() - started
        own, children = cpu_seconds(resource.RUSAGE_SELF) - own, cpu_seconds(resource.RUSAGE_CHILDREN) - children
        return wall, clock.seconds, own, children, str(summary)
    finally:
        site.subprocess.run = clock.run


def forget_render(root: Path) -> None:
    """Delete what an earlier render left for the next one to reuse, so that the next render starts from scratch."""
    project = Project(root)
    for folder in (
        project.site_dir,
        site.docs_folder(project.build_dir),
        project.build_dir / answer_shards.CACHE_DIR,
        project.build_dir / run_pages.RUN_CACHE_DIR,
    ):
        shutil.rmtree(folder, ignore_errors=True)


def dualboard(root: Path, stage: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", stage, "--root", str(root)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        sys.exit(f"dualboard {stage} failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board", type=Path, required=True, help="a built board (copied, never changed)")
    parser.add_argument("--answer-chars", default="300-2000", help="length range of the added run's answers")
    args = parser.parse_args()
    low, high = (int(x) for x in args.answer_chars.split("-"))
    with tempfile.TemporaryDirectory(prefix="dualboard-render-") as tmp:
        root = Path(tmp) / "board"
        shutil.copytree(args.board, root, symlinks=True)
        forget_render(root)
        full = timed_render(root)
        runs = len([p for p in (root / "submissions").glob("*/*") if p.is_dir()])
        rounds = _rounds(root)
        pad_responses(add_runs(root, 1, rounds, first=runs), low, high)
        for stage in SETUP_STAGES:
            dualboard(root, stage)
        plus_one = timed_render(root)
    print(f"load {os.getloadavg()[0]:.2f} (1-min) on {os.cpu_count()} cores")
    print(
        f"peak RSS (MB, over both renders): python {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}, "
        f"largest child {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}"
    )
    for name, (seconds, mkdocs, own, children, line) in (("full render", full), ("+1 run render", plus_one)):
        print(
            f"{name:>14}: {seconds:6.1f} s, of which mkdocs {mkdocs:5.1f} s; CPU s: python {own:5.1f}, "
            f"mkdocs {children:5.1f} — {line.strip()}"
        )


def _rounds(root: Path) -> int:
    """Rounds of the board's first run (its metadata.yaml)."""
    metadata = next((root / "submissions").glob("*/*/metadata.yaml"))
    return int(yaml.safe_load(metadata.read_text("utf-8"))["rounds"])


if __name__ == "__main__":
    main()
