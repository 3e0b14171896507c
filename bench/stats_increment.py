"""What the statistics stage costs when one run is added, with and without per-run pieces.

Reads the scored tables of a graded board (``build/scored/``, e.g. one that ``bench/scale.py``'s
stages or ``dualboard build`` left) and times, in this process, for each benchmark:

* ``fresh``: :func:`dualboard.stats.analyse` of every run, nothing known (what every stats run cost
  before pieces were kept);
* ``+1 run``: the same with the pieces of an analysis of every run but the last
  (:mod:`dualboard.stats.pieces`), i.e. the stats of a rebuild after one run was added;

and checks that both give the same tables, frame by frame. Reading the tables is not timed.

Usage::

    python bench/stats_increment.py BOARD [--seed N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd

from dualboard.scored_files import benchmark_names, read_scored, read_verdicts
from dualboard.stats import analyse
from dualboard.stats.pieces import Pieces
from dualboard.stats.tables import SEED, TABLES


def timed(scored: pd.DataFrame, verdicts: pd.DataFrame, seed: int, pieces: Pieces | None = None):
    started = time.perf_counter()
    tables = analyse(scored, verdicts=verdicts, seed=seed, pieces=pieces)
    return tables, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("board", type=Path, help="leaderboard folder whose build/scored/ holds graded tables")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    scored_dir = args.board / "build" / "scored"
    for name in benchmark_names(scored_dir):
        scored, verdicts = read_scored(scored_dir, name), read_verdicts(scored_dir, name)
        runs = sorted(scored["run_id"].unique())
        fewer = scored["run_id"] != runs[-1]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp, "pieces.json")
            pieces = Pieces.load(path)
            timed(scored[fewer], verdicts[verdicts["run_id"] != runs[-1]], args.seed, pieces)
            pieces.save()
            known = Pieces.load(path)  # read back, as the next stats run reads them
            added, added_s = timed(scored, verdicts, args.seed, known)
        fresh, fresh_s = timed(scored, verdicts, args.seed)
        for table in TABLES:
            pd.testing.assert_frame_equal(getattr(added, table), getattr(fresh, table), check_exact=True)
        print(
            f"{name}: {len(runs)} runs, {len(scored):,} answers: fresh {fresh_s:.1f} s, +1 run {added_s:.1f} s "
            f"({known.reused} of {known.asked} per-run results reused); tables equal",
            flush=True,
        )


if __name__ == "__main__":
    main()
