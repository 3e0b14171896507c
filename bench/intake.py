"""Validation and ingest at growing sizes: from scratch, and after one run is added.

For each size RUNSxQUESTIONSxROUNDS (``--sizes``) a board is simulated as ``scale.py`` simulates it
(or the data and submissions of each ``--board DIR`` are copied, never changed), and four commands
run in child processes, as ``scale.py`` runs them (wall seconds, peak RSS summed over the process tree, a pool's workers
included), with the CPU seconds of the whole tree and the machine's load beside them:

* ``validate``, ``ingest``: from scratch, as a first build runs them;
* ``+1 validate``, ``+1 ingest``: after one more run is added, with the build cache the two
  left behind, as the first two stages of ``dualboard build`` run (only the new run should be read).

Lines per second are answers over the ``validate`` wall seconds. On a shared machine prefer the
CPU seconds, and compare two versions of the code back to back.

Usage::

    python bench/intake.py [--sizes 10x2000x5,30x2000x5] [--board DIR ...] [--answer-chars 300-2000]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
from pathlib import Path

from scale import run  # bench/scale.py, beside this script
from synthetic_board import add_pull_request_run, make_board, pad_responses

COMMANDS = ("validate", "ingest", "+1 validate", "+1 ingest")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _answers(root: Path) -> int:
    return sum(sum(1 for line in p.open("rb") if line.strip()) for p in root.glob("submissions/*/*/predictions.jsonl"))


def measure(root: Path, rounds: int, chars: tuple[int, int]) -> list[str]:
    """The four commands on the board at ``root`` (changed: a run is added); one line of figures each."""
    lines, answers = [], _answers(root)
    for name in COMMANDS:
        if name == "+1 validate":
            add_pull_request_run(root, rounds, chars)
            answers = _answers(root)
        load, cpu = os.getloadavg()[0], _children_cpu()
        step = run(root, name.removeprefix("+1 "))
        cpu = _children_cpu() - cpu
        speed = f"{answers / step.seconds:>10,.0f}" if name == "validate" else f"{'':>10}"
        figures = f"{step.seconds:>7.2f} {cpu:>7.2f} {step.peak_rss / 1e9:>6.2f} {speed} {load:>5.2f}"
        lines.append(f"{name:<12} {answers:>9,} {figures}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10x2000x5,30x2000x5", help="comma-separated RUNSxQUESTIONSxROUNDS")
    parser.add_argument("--board", action="append", type=Path, default=[], help="a board to copy (then no --sizes)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the run added to a --board")
    parser.add_argument("--answer-chars", default="300-2000", help="answer length range MIN-MAX in characters")
    args = parser.parse_args()
    chars = tuple(int(x) for x in args.answer_chars.split("-"))
    print(f"{os.cpu_count()} cores; wall and CPU seconds, peak RSS (GB) of the process tree, load before each")
    print(f"{'command':<12} {'answers':>9} {'wall s':>7} {'CPU s':>7} {'RSS GB':>6} {'lines/s':>10} {'load':>5}")
    with tempfile.TemporaryDirectory(prefix="dualboard-intake-") as tmp:
        if args.board:
            boards = [(board.name, args.rounds, board) for board in args.board]
        else:
            boards = [(size, int(size.split("x")[2]), None) for size in args.sizes.split(",")]
        for label, rounds, source in boards:
            root = Path(tmp) / "board"
            if source is not None:  # its submissions and data only: from scratch, nothing to reuse
                for name in ("data", "submissions", "site_src", "mkdocs.yml"):
                    copy = shutil.copytree if (source / name).is_dir() else shutil.copy2
                    copy(source / name, root / name)
            else:
                runs, questions, _ = (int(x) for x in label.split("x"))
                make_board(root, questions, runs, rounds)
                pad_responses(sorted((root / "submissions").glob("*/*")), *chars)
            print(f"# {label}", flush=True)
            for line in measure(root, rounds, chars):
                print(line, flush=True)
            shutil.rmtree(root)


if __name__ == "__main__":
    main()
