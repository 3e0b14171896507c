"""Benchmark ``dualboard validate`` on one large submission: lines per second and peak memory.

Writes a leaderboard folder with a benchmark of ``--questions`` questions and
one run answering each of them in ``--rounds`` rounds (``questions × rounds``
lines, 10⁶ by default), then validates it in a child process twice: once
valid, once with every line broken (the rejection case, where findings are
capped and rows are no longer kept). Each child reports its wall time and
peak RSS (``ru_maxrss``), so the figures are the validator's alone.

The target is :data:`TARGET_LINES_PER_SECOND` lines per CPU second on the
valid case at the defaults; the last line says whether it is met. Lines the
fast decoder confirms (``dualboard.intake.prediction_decoder``) skip the JSON
Schema; every rejected line still takes the exact path that words findings.

Usage::

    python bench/validation.py [--questions 10000] [--rounds 100] [--response-chars 20]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

TARGET_LINES_PER_SECOND = 200_000
"""Validation speed the scale issue asks for (a million answers validated in seconds on two cores)."""

CHILD = """
import resource, sys, time
from pathlib import Path
from dualboard.intake.validate import Limits, validate_submissions
root = Path(sys.argv[1])
limits = Limits(predictions_bytes=1 << 30)  # the default 50 MB would reject 10^6 lines unread
start, cpu = time.perf_counter(), time.process_time()
report = validate_submissions(root / "data", [root / "submissions"], root / "submissions", limits)
usage = resource.getrusage(resource.RUSAGE_SELF)
print(time.perf_counter() - start, time.process_time() - cpu, usage.ru_maxrss, len(report.errors))
"""


def write_board(root: Path, questions: int, rounds: int, response_chars: int, *, broken: bool) -> int:
    """Write the benchmark and the run; return the number of prediction lines."""
    bench = root / "data" / "benchmarks" / "big"
    bench.mkdir(parents=True)
    config = {
        "name": "big",
        "version": "1",
        "graders": {"traditional": {"name": "exact"}, "answer_key": [{"name": "rules"}]},
    }
    (bench / "benchmark.yaml").write_text(yaml.safe_dump(config))
    key = {"answer": "4", "aliases": [], "patterns": [], "numeric": None, "reference": "4", "notes": ""}
    with (bench / "questions.jsonl").open("w") as out:
        for i in range(questions):
            out.write(
                json.dumps({"id": f"q{i}", "category": "c", "prompt": "p", "type": "open", "answer_key": key}) + "\n"
            )
    run = root / "submissions" / "big" / "run"
    run.mkdir(parents=True)
    meta = {
        "model": "m",
        "submitter": "bench",
        "date": "2026-01-01",
        "benchmark": "big",
        "benchmark_version": "1",
        "rounds": rounds,
    }
    (run / "metadata.yaml").write_text(yaml.safe_dump(meta))
    response = "x" * response_chars
    with (run / "predictions.jsonl").open("w") as out:
        for r in range(rounds):
            for i in range(questions):
                row = {"question_id": f"q{i}", "round": r, "response": response}
                out.write(("{" if broken else "") + json.dumps(row) + "\n")
    return questions * rounds


def measure(root: Path) -> tuple[float, float, float, int]:
    """Validate in a child process; return wall and CPU seconds, peak RSS in MB and the error count."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(root)], capture_output=True, text=True, check=True, cwd=ROOT)
    seconds, cpu, rss_kb, errors = out.stdout.split()
    return float(seconds), float(cpu), int(rss_kb) / 1024, int(errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--response-chars", type=int, default=20)
    args = parser.parse_args()
    # CPU seconds are the figure to compare: wall time also counts whatever else the machine runs
    print("case      lines      wall s  CPU s  lines/CPU s  peak RSS MB  errors")
    speed = 0.0
    for broken in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            lines = write_board(Path(tmp), args.questions, args.rounds, args.response_chars, broken=broken)
            print(f"# wrote {lines:,} lines in {time.perf_counter() - start:.1f} s", file=sys.stderr)
            seconds, cpu, rss, errors = measure(Path(tmp))
            name = "rejected" if broken else "valid"
            print(f"{name:<9} {lines:<10,} {seconds:<7.1f} {cpu:<6.1f} {lines / cpu:<12,.0f} {rss:<12.0f} {errors}")
            if not broken:
                speed = lines / cpu
    verdict = "met" if speed >= TARGET_LINES_PER_SECOND else "NOT met"
    print(f"target {TARGET_LINES_PER_SECOND:,} valid lines per CPU second: {verdict} ({speed:,.0f})")


if __name__ == "__main__":
    main()
