"""The grade stage as runs grow: ``dualboard grade`` from scratch, and after one run is added.

For each size RUNSxQUESTIONSxROUNDS (``--sizes``), a board is made and ingested as
``scale.py`` makes it (not timed), then measured with :func:`scale.run` (a child
process; wall seconds, CPU seconds and peak RSS of its whole process tree, the
workers included):

* ``grade``: from scratch (no build cache, run grades or verdict cache);
* ``+1 run``: one more run added and ingested, then ``dualboard grade`` again,
  which grades that run only and writes the tables of every run;
* ``tables``: the writing of build/scored/ alone, in this process, on the board
  graded: joined from every run's kept files as the stage does (their column
  chunks copied), and, for comparison, the way it was written before (every
  run's kept rows decoded and written again; the files must be the same bytes);
  CPU seconds of each, best of three.

The last line gives the growth per run between the first two sizes (CPU
seconds of a full grade, of the +1 run grade and of writing the tables) and a straight line drawn to
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
import time
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
from scale import Step, run  # bench/scale.py, beside this script
from synthetic_board import add_runs, make_board, pad_responses

EXTRAPOLATE_TO = 100
"""Runs of the board the per-run growth is drawn to (100 × 2000 × 5 is the issue's 10⁶ answers)."""


def _line(label: str, step: Step) -> str:
    return (
        f"{label:<22} {step.seconds:7.1f} s wall {step.cpu_seconds:7.1f} s CPU  peak RSS "
        f"{step.peak_rss / 1e9:5.2f} GB  (load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )


def tables(root: Path) -> tuple[float, float]:
    """CPU seconds (best of three) of writing build/scored/ of the graded board at ``root``: joined as the
    stage does, and decoded and written again as before; the two must be the same bytes."""
    from dualboard import pipeline
    from dualboard.grading.by_run import grade_stored
    from dualboard.grading.cache import VerdictCache, VerdictFolders
    from dualboard.grading.run_cache import GRADED_DIR, RunCache
    from dualboard.project import Project
    from dualboard.scored_files import ANSWERS, SCORED, TABLES, join_scored_parts, write_scored_parts
    from dualboard.store import LocalStore

    project = Project(root)
    store = LocalStore(project.store_dir)
    ((name, (benchmark, run_dirs)),) = pipeline.stored_run_dirs(store).items()
    verdicts = VerdictCache(VerdictFolders.of(store))
    graded = grade_stored(benchmark, run_dirs, RunCache(project.build_dir / GRADED_DIR / name), verdicts)

    def decoded():  # each run's rows read back and written again, as the stage wrote them before
        for part in graded.parts():
            answers, key = (pq.read_table(path) for path in part.answers)
            full = pa.table({c: key[c] if c in key.column_names else answers[c] for c in ANSWERS.names})
            verdicts = pq.read_table(part.verdicts[0])
            yield SimpleNamespace(scored=full.select(list(SCORED.names)), answers=full, verdicts=verdicts)

    def cpu(write, folder: Path) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            write(folder)
            best = min(best, time.process_time() - started)
        return best

    joined = cpu(lambda folder: join_scored_parts(graded.parts(), folder, name, "0"), root / "tables-joined")
    again = cpu(lambda folder: write_scored_parts(decoded(), folder, name, "0"), root / "tables-decoded")
    for table in TABLES:  # tests/grading/test_parquet_join.py says why they are the same bytes
        a, b = (table.path(root / folder, name).read_bytes() for folder in ("tables-joined", "tables-decoded"))
        assert a == b, f"{table.name}: the joined file differs from the one written again"
    return joined, again


def measure(runs: int, questions: int, rounds: int, chars: tuple[int, int]) -> tuple[Step, Step, float]:
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
        joined, again = tables(root)
        print(
            f"{runs}x{questions}x{rounds} tables      {joined:7.2f} s CPU joined, {again:7.2f} s CPU decoded and "
            f"written again  (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
        return full, added, joined


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10x2000x5,30x2000x5", help="comma-separated RUNSxQUESTIONSxROUNDS")
    parser.add_argument("--answer-chars", default="300-2000", help="answer length range MIN-MAX")
    args = parser.parse_args()
    chars = tuple(int(x) for x in args.answer_chars.split("-"))
    sizes = [tuple(int(x) for x in size.split("x")) for size in args.sizes.split(",")]
    results = [(size[0], *measure(*size, chars)) for size in sizes]
    if len(results) >= 2:
        (small, full_a, plus_a, tables_a), (large, full_b, plus_b, tables_b) = results[:2]
        per_run = (full_b.cpu_seconds - full_a.cpu_seconds) / (large - small)
        plus_per_run = (plus_b.cpu_seconds - plus_a.cpu_seconds) / (large - small)
        tables_per_run = (tables_b - tables_a) / (large - small)
        print(
            f"per run: grade {per_run:.2f} CPU-s, +1 run {plus_per_run:.3f} CPU-s, tables {tables_per_run:.4f} CPU-s; "
            f"extrapolated to {EXTRAPOLATE_TO} runs: grade "
            f"{full_b.cpu_seconds + per_run * (EXTRAPOLATE_TO - large):.0f} CPU-s, "
            f"+1 run {plus_b.cpu_seconds + plus_per_run * (EXTRAPOLATE_TO - large):.1f} CPU-s"
        )


if __name__ == "__main__":
    main()
