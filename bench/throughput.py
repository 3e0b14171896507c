"""Validation and grading throughput: ``dualboard validate`` and ``dualboard grade`` from scratch on one board.

Each command runs in a child process, as ``bench/scale.py`` runs it
(:func:`scale.run`: wall seconds and the peak RSS summed over the process
tree, a pool's workers included), on a copy of the board with what would let it
skip work removed: the build cache (validation would not read a run it
validated before), and for grading the per-run grades and the verdict cache.
CPU seconds of the whole tree (sampled from /proc, :attr:`scale.Step.cpu_seconds`) are
printed too: on a shared machine the wall time moves with the load, which is printed next to
every figure.

The board is ``--board DIR``, a leaderboard folder already ingested (copied
first, never changed), or else one made like ``scale.py`` makes it (``--size``,
``--answer-chars``) and ingested before the timing.

Usage::

    python bench/throughput.py [--board DIR | --size 10x2000x5] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from scale import run  # bench/scale.py, beside this script
from synthetic_board import make_board, pad_responses

FRESH = {
    "validate": (".dualboard/build-cache.json",),
    "grade": (".dualboard/build-cache.json", "build/scored", ".dualboard/store/verdicts"),
}
"""What each measured command would otherwise reuse, removed before it runs (relative to the board)."""


def _remove(root: Path, names: tuple[str, ...]) -> None:
    for name in names:
        path = root / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


def _answers(root: Path) -> int:
    return sum(sum(1 for line in p.open("rb") if line.strip()) for p in root.glob("submissions/*/*/predictions.jsonl"))


def measure(root: Path, command: str) -> str:
    """Run ``dualboard COMMAND`` from scratch on ``root``; one line of figures."""
    _remove(root, FRESH[command])
    load = os.getloadavg()[0]
    step = run(root, command)
    cpu = step.cpu_seconds
    answers = _answers(root)
    return (
        f"{command:<9} {step.seconds:7.1f} s wall {cpu:7.1f} s CPU {answers / step.seconds:>10,.0f} answers/s "
        f"peak RSS {step.peak_rss / 1e9:5.2f} GB  (load {load:.1f} on {os.cpu_count()} cores)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board", type=Path, help="an ingested leaderboard folder (copied, never changed)")
    parser.add_argument("--size", default="10x2000x5", help="RUNSxQUESTIONSxROUNDS of a board made when no --board")
    parser.add_argument("--answer-chars", default="300-2000", help="answer length range MIN-MAX of a made board")
    parser.add_argument("--repeat", type=int, default=1, help="measure each command this many times")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dualboard-throughput-") as tmp:
        if args.board is not None:
            root = Path(tmp) / "board"
            shutil.copytree(args.board, root, symlinks=True)
        else:
            runs, questions, rounds = (int(x) for x in args.size.split("x"))
            root = make_board(Path(tmp), questions, runs, rounds)
            low, high = (int(x) for x in args.answer_chars.split("-"))
            pad_responses(sorted((root / "submissions").glob("*/*")), low, high)
            run(root, "ingest")
        for _ in range(args.repeat):
            for command in FRESH:
                print(measure(root, command), flush=True)


if __name__ == "__main__":
    main()
