"""The real graders score every simulated demo answer exactly as the simulator intended.

This is what makes the simulator a ground truth for the statistics: if a
grader and the simulator disagree, one of them misreads the contract
(``choice_order`` holds canonical letters; the answer-key grading reads the
``Final answer:`` sentence, which may contradict the committed letter).
Skipped until the grading package is present.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.intake.benchmark import load_benchmark
from generator.simulation.runs import load_simulated_models, load_wrong_answers, simulate_run

registry = pytest.importorskip("generator.grading.registry")

DEMO = Path(__file__).resolve().parents[2] / "data" / "benchmarks" / "demo"


@pytest.fixture(scope="module")
def graded():
    """(question, prediction, truth row) for every demo answer under two seeds."""
    benchmark = load_benchmark(DEMO)
    models = load_simulated_models(DEMO / "simulated_models.yaml")
    wrong = load_wrong_answers(DEMO / "simulated_models.yaml")
    rows = []
    for seed in (7, 8):
        for model in models:
            sim = simulate_run(benchmark, model, seed=seed, wrong_answers=wrong)
            for prediction, truth in zip(sim.run.predictions, sim.truth.itertuples(), strict=True):
                rows.append((benchmark.question(prediction["question_id"]), prediction, truth))
    return benchmark, rows


def disagreements(grader_for, rows, column: str) -> list[str]:
    out = []
    for question, prediction, truth in rows:
        verdict = grader_for(question).grade(question, prediction)
        if (verdict.score or 0.0) != getattr(truth, column):
            out.append(f"{question['id']}: {prediction['response']!r} {prediction.get('choice_order')} "
                       f"-> {verdict.score} ({verdict.detail}); truth {getattr(truth, column)}")
    return out


def test_traditional_graders_reproduce_the_truth(graded):
    benchmark, rows = graded
    graders = {t: registry.get_grader(spec) for t, spec in benchmark.traditional.items()}
    wrong = disagreements(lambda q: graders[q["type"]], rows, "traditional")
    assert not wrong, f"{len(wrong)} of {len(rows)} disagree, e.g.\n" + "\n".join(wrong[:5])


def test_answer_key_grader_reproduces_the_truth(graded):
    benchmark, rows = graded
    grader = registry.get_grader(benchmark.answer_key[0])
    wrong = disagreements(lambda q: grader, rows, "answer_key")
    assert not wrong, f"{len(wrong)} of {len(rows)} disagree, e.g.\n" + "\n".join(wrong[:5])
