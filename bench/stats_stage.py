"""What `dualboard stats` costs as a process of its own: from scratch, and after one run is added.

Takes a graded board (the ``build/scored/`` that ``bench/scale.py``'s stages or ``dualboard build``
left) and copies only what the stage reads (each benchmark's scored and verdicts tables,
``build/store-source.json``) into a temporary folder, then runs, each as a child process:

* ``full``: ``dualboard stats`` with nothing kept (every run, every pair);
* ``fewer``: the same on every run but the last (its pieces are kept, not timed in the table);
* ``+1 run``: ``dualboard stats`` on every run, with the pieces ``fewer`` left: the stats of a
  rebuild after one run was added.

For each it prints wall seconds, CPU seconds of the child (user + sys, steadier than wall time on a
shared machine), peak RSS of its process tree (sampled as ``scale.py`` does) and the machine's load,
then checks that ``+1 run`` wrote the tables of ``full``, byte for byte.

Usage::

    python bench/stats_stage.py BOARD
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

from scale import REPO, communicate_watched  # bench/scale.py, beside this script

from dualboard.scored_files import SCORED, VERDICTS, ScoredFolder, benchmark_names


def stats(root: Path) -> tuple[float, float, int, str]:
    """Run ``dualboard stats`` on ``root``: wall s, CPU s, peak RSS bytes, its output line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, "-m", "dualboard", "stats", "--root", str(root)]
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    (output, _), peak = communicate_watched(proc)
    if proc.returncode != 0:
        sys.exit(f"dualboard stats failed ({proc.returncode}):\n{output[-4000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.perf_counter() - started, cpu, peak, output.strip()


def copy_inputs(board: Path, root: Path, drop_run: str | None = None) -> None:
    """Copy the stage's inputs of ``board`` into ``root``, without the files of ``drop_run``."""
    (root / "build").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(board / "build" / "store-source.json", root / "build" / "store-source.json")
    for name in benchmark_names(board / "build" / "scored"):
        source = ScoredFolder.of(board / "build" / "scored", name)
        target = ScoredFolder.of(root / "build" / "scored", name)
        about = source.about()
        about.runs.pop(drop_run, None)
        for table in (SCORED, VERDICTS):
            for path in source.files(table, list(about.runs)):
                target.run_file(table, path.stem).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target.run_file(table, path.stem))
        target.write_about(about)


def last_run(board: Path) -> str:
    """The run that sorts last across the board's benchmarks: the one ``+1 run`` adds."""
    scored = board / "build" / "scored"
    return max(run for name in benchmark_names(scored) for run in ScoredFolder.of(scored, name).runs())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("board", type=Path, help="leaderboard folder whose build/scored/ holds graded tables")
    args = parser.parse_args()
    added = last_run(args.board)
    with tempfile.TemporaryDirectory(prefix="dualboard-stats-") as tmp:
        full, fewer, plus = Path(tmp, "full"), Path(tmp, "fewer"), Path(tmp, "plus")
        copy_inputs(args.board, full)
        copy_inputs(args.board, fewer, drop_run=added)
        copy_inputs(args.board, plus)
        print(f"{os.cpu_count()} cores; +1 run adds {added}")
        for label, root in (("full", full), ("fewer", fewer), ("+1 run", plus)):
            if root is plus:
                shutil.copytree(fewer / "build" / "stats-pieces", plus / "build" / "stats-pieces")
            load = os.getloadavg()[0]
            wall, cpu, peak, line = stats(root)
            print(f"{label:<7} {wall:7.1f} s wall {cpu:7.1f} CPU-s {peak / 1e9:6.2f} GB  load {load:.1f}  {line}")
        same = all(
            a.read_bytes() == (plus / "build" / "stats" / a.relative_to(full / "build" / "stats")).read_bytes()
            for a in sorted((full / "build" / "stats").rglob("*.csv"))
        )
        print("+1 run tables equal the full ones, byte for byte" if same else "TABLES DIFFER")


if __name__ == "__main__":
    main()
