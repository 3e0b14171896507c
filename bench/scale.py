"""The scale yardstick: build a synthetic leaderboard stage by stage and print one table.

For each size RUNSxQUESTIONSxROUNDS (``--sizes``), a board is simulated (answers padded to
``--answer-chars`` characters, like real ones) and then measured with Dualboard's own commands,
each in a child process:

* ``validate``, ``ingest``, ``grade``, ``stats``, ``render``: the full build, one stage at a time;
* ``+1 run``: ``dualboard build`` after one more run is added as a pull request adds it (``data/`` unchanged);
* ``no change``: ``dualboard build`` again with nothing changed.

Peak RSS is sampled from /proc every 50 ms and summed over the child's whole process tree (a
pool's workers count). The site's size and page count are read from ``site/``. Setting up the board
is not timed. Figures depend on the machine: quote them with its core count. A row of 1M answers
is followed by the issue's targets (:data:`TARGETS`), each said met or not.

Usage::

    python bench/scale.py [--sizes 10x2000x5,30x2000x5,100x2000x5,100x10000x1] [--answer-chars 300-2000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from synthetic_board import (  # bench/synthetic_board.py, beside this script
    add_pull_request_run,
    make_board,
    pad_responses,
)

REPO = Path(__file__).resolve().parents[1]

STAGES = ("validate", "ingest", "grade", "stats", "render")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
TARGET_ANSWERS = 1_000_000
"""The size the issue's targets are set at; rows of other sizes are printed without a verdict."""
TARGETS = {
    "full build s": 120,
    "peak RSS GB": 2,
    "validation lines/s": 200_000,
    "+1 run s": 15,
    "no change s": 5,
    "site MB": 300,
}
"""The scale targets at 1M answers on two cores: lines/s is a floor, every other figure a ceiling."""


@dataclass(frozen=True)
class Step:
    """One measured command: wall seconds, peak RSS of its process tree in bytes, CPU seconds of the tree."""

    seconds: float
    peak_rss: int
    cpu_seconds: float = 0.0
    """User + system seconds of every process of the tree, each as last sampled: a pool's workers count even
    when no process waits for them (a fork server's), which ``getrusage(RUSAGE_CHILDREN)`` would miss."""


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, list[tuple[int, list[str]]]]:
    """Every live process's children, each with the fields of its /proc stat after the command name."""
    tree: dict[int, list[tuple[int, list[str]]]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            tree.setdefault(int(fields[1]), []).append((int(entry.name), fields))
    return tree


def _tree_usage(pid: int, cpu: dict[tuple[int, str], float]) -> int:
    """Resident bytes of ``pid`` and all its descendants now; their CPU seconds so far go into ``cpu``,
    keyed by process id and start time (a reused id is another process)."""
    tree, total, todo = _processes(), 0, [pid]
    while todo:
        current = todo.pop()
        for child, fields in tree.get(current, ()):
            # fields after the name: state is 0, so utime, stime, starttime and rss are 11, 12, 19 and 21
            cpu[(child, fields[19])] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
            total += int(fields[21]) * PAGE_SIZE
            todo.append(child)
    return total


def communicate_watched(
    proc: subprocess.Popen, cpu: dict[tuple[int, str], float] | None = None
) -> tuple[tuple[str, str], int]:
    """``proc.communicate()``, and the peak resident bytes of its process tree, sampled every 50 ms meanwhile.

    ``cpu``, when given, receives each process's CPU seconds as last sampled (sum its values).
    """
    peak = 0
    done = threading.Event()
    seen: dict[tuple[int, str], float] = {} if cpu is None else cpu

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.05):
            peak = max(peak, _tree_usage(os.getpid(), seen))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    outputs = proc.communicate()
    done.set()
    sampler.join()
    return outputs, peak


def run(root: Path, *args: str) -> Step:
    """Run ``dualboard ARGS --root ROOT``; stop the script with its output if it fails."""
    command = [sys.executable, "-m", "dualboard", *args, "--root", str(root)]
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    cpu: dict[tuple[int, str], float] = {}
    (output, _), peak = communicate_watched(proc, cpu)
    if proc.returncode != 0:
        sys.exit(f"dualboard {' '.join(args)} failed ({proc.returncode}):\n{output[-4000:]}")
    return Step(time.perf_counter() - started, peak, sum(cpu.values()))


def folder_bytes(folder: Path) -> int:
    """Bytes of every file under ``folder``."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(runs: int, questions: int, rounds: int, chars: tuple[int, int]) -> dict[str, object]:
    """Simulate one board and measure every stage, the site, and the two rebuilds."""
    with tempfile.TemporaryDirectory(prefix="dualboard-scale-") as tmp:
        root = make_board(Path(tmp), questions, runs, rounds)
        jsonl = pad_responses(sorted((root / "submissions").glob("*/*")), *chars)
        steps = {stage: run(root, stage) for stage in STAGES}
        site = root / "site"
        pages = sum(1 for _ in site.rglob("index.html"))
        site_bytes = folder_bytes(site)
        add_pull_request_run(root, rounds, chars)
        steps["+1 run"] = run(root, "build", "--no-progress")
        steps["no change"] = run(root, "build", "--no-progress")
        return {
            "answers": runs * questions * rounds,
            "jsonl": jsonl,
            "steps": steps,
            "pages": pages,
            "site": site_bytes,
        }


def print_row(size: str, m: dict[str, object]) -> None:
    """One line of the table: times per stage, build total, peak RSS, site, rebuilds."""
    steps: dict[str, Step] = m["steps"]  # type: ignore[assignment]
    full = sum(steps[s].seconds for s in STAGES)
    peak = max(steps[s].peak_rss for s in STAGES)
    cells = [f"{steps[s].seconds:7.1f}" for s in STAGES]
    print(
        f"{size:<13} {m['answers']:>9,} {m['jsonl'] / 1e6:>7.0f} "
        + " ".join(cells)
        + f" {full:>7.1f} {peak / 1e9:>6.2f} {m['site'] / 1e6:>8.0f} {m['pages']:>6}"
        + f" {steps['+1 run'].seconds:>7.1f} {steps['no change'].seconds:>7.1f}",
        flush=True,
    )


def verdicts(m: dict[str, object]) -> dict[str, tuple[float, bool]]:
    """Each target's measured figure and whether it is met."""
    steps: dict[str, Step] = m["steps"]  # type: ignore[assignment]
    figures = {
        "full build s": sum(steps[s].seconds for s in STAGES),
        "peak RSS GB": max(steps[s].peak_rss for s in STAGES) / 1e9,
        "validation lines/s": m["answers"] / steps["validate"].seconds,  # type: ignore[operator]
        "+1 run s": steps["+1 run"].seconds,
        "no change s": steps["no change"].seconds,
        "site MB": m["site"] / 1e6,  # type: ignore[operator]
    }
    return {
        name: (value, value >= TARGETS[name] if name == "validation lines/s" else value <= TARGETS[name])
        for name, value in figures.items()
    }


def print_verdicts(size: str, m: dict[str, object]) -> None:
    """One line per target for a row at the target size: the figure, the target, met or not."""
    for name, (value, met) in verdicts(m).items():
        bound = "≥" if name == "validation lines/s" else "≤"
        print(f"  {size} {name:<19} {value:>12,.1f}  target {bound} {TARGETS[name]:,}  {'met' if met else 'NOT MET'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sizes", default="10x2000x5,30x2000x5,100x2000x5,100x10000x1", help="comma-separated RUNSxQUESTIONSxROUNDS"
    )
    parser.add_argument("--answer-chars", default="300-2000", help="answer length range MIN-MAX in characters")
    args = parser.parse_args()
    low, high = (int(x) for x in args.answer_chars.split("-"))
    print(
        f"{os.cpu_count()} cores; answers {low}-{high} characters; seconds per stage, peak RSS of the "
        "largest stage (summed over its process tree)"
    )
    print(
        f"{'size':<13} {'answers':>9} {'JSONL MB':>7} "
        + " ".join(f"{s:>7}" for s in STAGES)
        + f" {'build s':>7} {'RSS GB':>6} {'site MB':>8} {'pages':>6} {'+1 run':>7} {'no chg':>7}"
    )
    for size in args.sizes.split(","):
        runs, questions, rounds = (int(x) for x in size.split("x"))
        measured = measure(runs, questions, rounds, (low, high))
        print_row(size, measured)
        steps: dict[str, Step] = measured["steps"]  # type: ignore[assignment]
        print(f"  {size} peak RSS GB by stage: " + ", ".join(f"{n} {st.peak_rss / 1e9:.2f}" for n, st in steps.items()))
        # CPU seconds (the process tree's user + system) next to wall time: on a shared machine they say what the
        # stage itself cost
        print(f"  {size} CPU s by stage: " + ", ".join(f"{n} {st.cpu_seconds:.1f}" for n, st in steps.items()))
        if measured["answers"] == TARGET_ANSWERS:
            print_verdicts(size, measured)


if __name__ == "__main__":
    main()
