"""The labelling design by simulation with known truth: coverage of its κ interval, and labels needed for ±0.1.

A benchmark of 1,500 distinct answers whose people's verdicts are all known (tests/labelling/design_simulation.py)
is labelled again and again: by the design (strata of the graders' verdicts, disagreements first, Neyman
allocation) and by simple random sampling, each estimated the same way (one stratum for the random sample).
Prints, per number of labels, the share of 95 % κ intervals that cover the true κ and their mean half-width,
then the fewest labels whose mean half-width is at most 0.1.

    python bench/label_design.py [--reps 400] [--seed 1] [--right 0.4]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.labelling.design_simulation import GRADERS, draw, estimate, population, true_kappa  # noqa: E402

SIZES = (40, 100, 200)
GRID = tuple(range(40, 1001, 40))


def run(items, truth, n: int, reps: int, design: bool) -> dict[str, tuple[float, float]]:
    """Per grader: (coverage, mean half-width) of the κ interval over ``reps`` labellings of ``n`` answers."""
    out = {}
    for grader in GRADERS:
        truth_kappa, covered, halves = true_kappa(items, truth, grader), [], []
        for rep in range(reps):
            row = estimate(items, truth, draw(items, truth, n, np.random.default_rng(rep), design), grader, design)
            if row["estimable"]:
                covered.append(row["kappa_ci_low"] <= truth_kappa <= row["kappa_ci_high"])
                halves.append((row["kappa_ci_high"] - row["kappa_ci_low"]) / 2)
        out[grader] = (float(np.mean(covered)), float(np.mean(halves)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--right", type=float, default=0.4, help="share of distinct answers people pass")
    args = parser.parse_args()
    items, truth = population(args.seed, right=args.right)
    print(f"{len(items)} distinct answers, {items['n_answers'].sum()} answers, {items['stratum'].nunique()} strata;")
    print("true κ: " + ", ".join(f"{g} {true_kappa(items, truth, g):.3f}" for g in GRADERS))
    print(f"\n{'labels':>6} {'sampling':>8} " + " ".join(f"{g + ' cover':>13} {g + ' ±':>9}" for g in GRADERS))
    for n in SIZES:
        for design in (True, False):
            result = run(items, truth, n, args.reps, design)
            cells = " ".join(f"{result[g][0]:13.3f} {result[g][1]:9.3f}" for g in GRADERS)
            print(f"{n:>6} {'design' if design else 'random':>8} {cells}")
    print("\nfewest labels with mean κ half-width ≤ 0.1 (grid of 40, 50 labellings each):")
    for design in (True, False):
        needed = {}
        for grader in GRADERS:
            needed[grader] = next((n for n in GRID if run_one(items, truth, n, design, grader) <= 0.1), f"> {GRID[-1]}")
        print(f"  {'design' if design else 'random'}: " + ", ".join(f"{g} {needed[g]}" for g in GRADERS))


def run_one(items, truth, n: int, design: bool, grader: str, reps: int = 50) -> float:
    halves = []
    for rep in range(reps):
        row = estimate(items, truth, draw(items, truth, n, np.random.default_rng(10_000 + rep), design), grader, design)
        halves.append((row["kappa_ci_high"] - row["kappa_ci_low"]) / 2 if row["estimable"] else np.inf)
    return float(np.mean(halves))


if __name__ == "__main__":
    main()
