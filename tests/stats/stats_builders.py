"""Builders of small scored tables for the statistics tests (imported by test modules)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dualboard.intake.models import Benchmark, Run
from dualboard.render.pages import BenchmarkResults
from dualboard.simulation.outcomes import simulate_outcomes


def scored_run(run_id: str, traditional, answer_key, *, categories=None) -> pd.DataFrame:
    """Return a scored table for one run from (questions × rounds) score arrays on 0–100.

    NaN in a cell means the round exists with no verdict; a whole row of NaN in
    both arrays (``None`` entries are not allowed) would still be a question
    answered, so drop rows instead to model questions never run.
    """
    trad, key = np.atleast_2d(np.asarray(traditional, float)), np.atleast_2d(np.asarray(answer_key, float))
    n, k = trad.shape
    q = np.repeat(np.arange(n), k)
    return pd.DataFrame(
        {
            "benchmark": "b",
            "run_id": run_id,
            "model": f"model-{run_id}",
            "question_id": [f"q{i:03d}" for i in q],
            "round": np.tile(np.arange(k), n),
            "category": [categories[i] if categories else "c" for i in q],
            "traditional": trad.ravel(),
            "answer_key": key.ravel(),
            "traditional_grader": "mc",
            "answer_key_grader": "rules",
            "verdict_parse": "ok",
        }
    )


def simulated_runs(means: dict[str, tuple[float, float]], n: int, rounds: int, seed: int = 0) -> pd.DataFrame:
    """Return several simulated runs (traditional, answer_key truths) as one scored table."""
    frames = []
    for i, (run_id, (t, k)) in enumerate(means.items()):
        df = simulate_outcomes(n, rounds, {"traditional": t, "answer_key": k}, seed=seed + i)
        frames.append(
            scored_run(
                run_id,
                100.0 * df["traditional"].to_numpy().reshape(n, rounds),
                100.0 * df["answer_key"].to_numpy().reshape(n, rounds),
            )
        )
    return pd.concat(frames, ignore_index=True)


def board_results(scored: pd.DataFrame, stats, n_questions: int, run_ids) -> BenchmarkResults:
    """Return a rendered benchmark ``b`` of ``n_questions`` plain questions with the given scored rows and stats."""
    benchmark = Benchmark(
        name="b",
        version="1",
        title="B",
        description="A test benchmark.",
        traditional={},
        answer_key=(),
        questions=tuple({"id": f"q{i:03d}"} for i in range(n_questions)),
    )
    runs = tuple(Run("b", r, {"model": f"model-{r}"}, ()) for r in run_ids)
    return BenchmarkResults(benchmark, scored, pd.DataFrame(), runs, stats=stats)
