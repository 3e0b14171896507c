"""The grade stage as runs grow: ``dualboard grade`` from scratch, and after one run is added.

For each size RUNSxQUESTIONSxROUNDS (``--sizes``), a board is made and ingested as
``scale.py`` makes it (not timed), then measured with :func:`scale.run` (a child
process; wall seconds, CPU seconds and peak RSS of its whole process tree, the
workers included):

* ``grade``: from scratch (no build cache, run grades or verdict cache);
* ``+1 run``: one more run added and ingested, then ``dualboard grade`` again,
  which grades that run only and writes that run's files.

The last line gives the growth per run between the first two sizes (CPU
seconds of a full grade and of the +1 run grade) and a straight line drawn to
100 runs: an extrapolation, said so, for comparison with a measured 10⁶-answer
board. The machine's load is printed next to every figure: on a shared machine
compare CPU seconds, measured back to back.

Usage::

    python bench/grade_scale.py [--sizes 10x2000x5,30x2000x5] [--answer-chars 300-2000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from scale import Step, run  # bench/scale.py, beside this script
from synthetic_board import add_runs, make_board, pad_responses

EXTRAPOLATE_TO = 100
"""Runs of the board the per-run growth is drawn to (100 × 2000 × 5 is the issue's 10⁶ answers)."""


def _line(label: str, step: Step) -> str:
    return (
        f"{label:<22} {step.seconds:7.1f} s wall {step.cpu_seconds:7.1f} s CPU  peak RSS "
        f"{step.peak_rss / 1e9:5.2f} GB  (load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )


def measure(runs: int, questions: int, rounds: int, chars: tuple[int, int]) -> tuple[Step, Step]:
    """Grade one board from scratch, then again after one run is added; print both lines."""
    with tempfile.TemporaryDirectory(prefix="dualboard-grade-scale-") as tmp:
        root = make_board(Path(tmp), questions, runs, rounds)
        pad_responses(sorted((root / "submissions").glob("*/*")), *chars)
        run(root, "ingest")
        full = run(root, "grade", "--no-progress")
        print(_line(f"{runs}x{questions}x{rounds} grade", full), flush=True)
        pad_responses(add_runs(root, 1, rounds, first=runs), *chars)
        run(root, "ingest")
        added = run(root, "grade", "--no-progress")
        print(_line(f"{runs}x{questions}x{rounds} +1 run", added), flush=True)
        return full, added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10x2000x5,30x2000x5", help="comma-separated RUNSxQUESTIONSxROUNDS")
    parser.add_argument("--answer-chars", default="300-2000", help="answer length range MIN-MAX")
    args = parser.parse_args()
    chars = tuple(int(x) for x in args.answer_chars.split("-"))
    sizes = [tuple(int(x) for x in size.split("x")) for size in args.sizes.split(",")]
    results = [(size[0], *measure(*size, chars)) for size in sizes]
    if len(results) >= 2:
        (small, full_a, plus_a), (large, full_b, plus_b) = results[:2]
        per_run = (full_b.cpu_seconds - full_a.cpu_seconds) / (large - small)
        plus_per_run = (plus_b.cpu_seconds - plus_a.cpu_seconds) / (large - small)
        print(
            f"per run: grade {per_run:.2f} CPU-s, +1 run {plus_per_run:.3f} CPU-s; "
            f"extrapolated to {EXTRAPOLATE_TO} runs: grade "
            f"{full_b.cpu_seconds + per_run * (EXTRAPOLATE_TO - large):.0f} CPU-s, "
            f"+1 run {plus_b.cpu_seconds + plus_per_run * (EXTRAPOLATE_TO - large):.1f} CPU-s"
        )


if __name__ == "__main__":
    main()
