"""Seeded simulation of benchmark runs with known truth.

The numeric core (:mod:`dualboard.simulation.outcomes`) draws per-question
pass probabilities and per-round outcomes under both gradings; the statistics
tests and ``bench/calibration.py`` use it as ground truth.
:mod:`dualboard.simulation.models` reads the fictional models of a
``simulated_models.yaml``; :mod:`dualboard.simulation.truth` draws each
answer's ideal verdicts and the errors of its writer, graders and human
labeller; :mod:`dualboard.simulation.responses` turns each outcome into
response text that graders must score back to it; and
:mod:`dualboard.simulation.runs` writes whole runs as ordinary submissions
(``dualboard simulate``).
"""

from dualboard.simulation.models import (
    SimulatedModel,
    load_answer_texts,
    load_labelled_runs,
    load_simulated_models,
)
from dualboard.simulation.outcomes import (
    draw_rounds,
    question_probabilities,
    simulate_outcomes,
)
from dualboard.simulation.responses import (
    AnswerTexts,
    Outcome,
    SimulatedAnswer,
    simulate_answer,
)
from dualboard.simulation.runs import (
    DEMO_SEED,
    SimulatedRun,
    human_labels,
    simulate_benchmark,
    simulate_demo,
    simulate_run,
    simulate_runs,
    write_run,
)
from dualboard.simulation.truth import draw_truth, true_scores

__all__ = [
    "DEMO_SEED",
    "AnswerTexts",
    "Outcome",
    "SimulatedAnswer",
    "SimulatedModel",
    "SimulatedRun",
    "draw_rounds",
    "draw_truth",
    "human_labels",
    "load_answer_texts",
    "load_labelled_runs",
    "load_simulated_models",
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
