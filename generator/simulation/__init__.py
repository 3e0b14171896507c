"""Seeded simulation of benchmark runs with known truth.

The numeric core (:mod:`generator.simulation.outcomes`) draws per-question
pass probabilities and per-round outcomes under both gradings; the statistics
tests and ``bench/calibration.py`` use it as ground truth.
:mod:`generator.simulation.responses` turns each outcome into response text
that graders must score back to it, and :mod:`generator.simulation.runs`
writes whole runs as ordinary submissions (``dualboard simulate``).
"""

from generator.simulation.outcomes import draw_rounds, question_probabilities, simulate_outcomes
from generator.simulation.responses import Outcome, SimulatedAnswer, simulate_answer
from generator.simulation.runs import (
    SimulatedModel,
    SimulatedRun,
    draw_truth,
    load_simulated_models,
    load_wrong_answers,
    simulate_benchmark,
    simulate_demo,
    simulate_run,
    simulate_runs,
    true_scores,
    write_run,
)

__all__ = [
    "Outcome",
    "SimulatedAnswer",
    "SimulatedModel",
    "SimulatedRun",
    "draw_rounds",
    "draw_truth",
    "load_simulated_models",
    "load_wrong_answers",
    "question_probabilities",
    "simulate_answer",
    "simulate_benchmark",
    "simulate_demo",
    "simulate_outcomes",
    "simulate_run",
    "simulate_runs",
    "true_scores",
    "write_run",
]
