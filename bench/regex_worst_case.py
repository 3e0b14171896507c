"""Benchmark the graders on answers built to make regular expressions backtrack.

For each grader that reads text, prints the worst time per answer over the
adversarial corpus (``tests/hostile/adversarial_answers.py``) at 1 KB, 10 KB
and the 100 KB answer limit, and which answer was worst. Linear-time matching
shows as times that grow about tenfold per column; the former ``re`` pattern
took 39 s on 2,000 characters.

Usage::

    python bench/regex_worst_case.py [--sizes 1024 10240 102400] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from dualboard.intake.validate import Limits

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
# The corpus lives in the checkout's tests/, which `python bench/regex_worst_case.py` does not put on the
# path: this import can only come after the line above.
from tests.hostile.adversarial_answers import GRADERS, adversarial_answers  # noqa: E402


def worst_time(grade, answers: dict[str, str], repeat: int) -> tuple[float, str]:
    """Return (seconds, answer name) of the slowest answer; each answer's best of ``repeat`` runs."""
    times = {}
    for name, answer in answers.items():
        runs = []
        for _ in range(repeat):
            start = time.perf_counter()
            grade(answer)
            runs.append(time.perf_counter() - start)
        times[name] = min(runs)
    name = max(times, key=times.__getitem__)
    return times[name], name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 10 * 1024, Limits().response_bytes])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    corpora = {size: adversarial_answers(size) for size in args.sizes}
    header = "".join(f"{f'{size // 1024} KB':>34}" for size in args.sizes)
    print(f"worst time per answer over {len(corpora[args.sizes[0]])} adversarial answers (best of {args.repeat})")
    print(f"{'grader':<26}{header}")
    for grader, grade in GRADERS.items():
        cells = [worst_time(grade, corpora[size], args.repeat) for size in args.sizes]
        print(f"{grader:<26}" + "".join(f"{seconds * 1000:>10.1f} ms  {name[:20]:<20}" for seconds, name in cells))


if __name__ == "__main__":
    main()
