"""Time ``analyse`` on a synthetic leaderboard: runs × questions × rounds.

Usage: python bench/stats_scale.py [--runs 50] [--questions 1000] [--rounds 3] [--boot B]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dualboard.simulation.outcomes import simulate_outcomes  # noqa: E402
from dualboard.stats import analyse  # noqa: E402
from dualboard.stats.tables import N_BOOT  # noqa: E402


def leaderboard(runs: int, questions: int, rounds: int) -> pd.DataFrame:
    """Return a scored table of simulated runs with spread-out accuracies."""
    frames = []
    for i, mean in enumerate(np.linspace(0.2, 0.9, runs)):
        df = simulate_outcomes(questions, rounds, {"traditional": mean, "answer_key": mean * 0.8}, seed=i)
        frames.append(
            pd.DataFrame(
                {
                    "run_id": f"run{i:03d}",
                    "model": f"m{i}",
                    "question_id": df["question"].astype(str),
                    "round": df["round"],
                    "category": "c",
                    "traditional": 100.0 * df["traditional"],
                    "answer_key": 100.0 * df["answer_key"],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--boot", type=int, default=N_BOOT, help="bootstrap resamples B (default: %(default)s, as `dualboard stats`)"
    )
    args = parser.parse_args()
    scored = leaderboard(args.runs, args.questions, args.rounds)
    started = time.perf_counter()
    tables = analyse(scored, n_boot=args.boot)
    print(
        f"{len(scored):,} answers, {args.runs} runs, {len(tables.pairwise):,} pairs: "
        f"{time.perf_counter() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
