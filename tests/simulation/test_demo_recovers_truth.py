"""The board's numbers on the committed demo cover the truth in simulated_models.yaml.

The committed runs are graded and analysed in-process, as ``dualboard build``
does. The truth they are checked against is computed here from the documented
parameters, independently of the simulator: the expected score each grading
observes (``true_scores``' ``observed_mean``), and the κ between ``rules`` and
the human labels that the configured error rates imply.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dualboard.intake.benchmark import load_benchmark, load_benchmarks
from dualboard.intake.validate import find_run_dirs, load_runs
from dualboard.simulation import (
    SimulatedModel,
    load_labelled_runs,
    load_simulated_models,
    true_scores,
)
from dualboard.simulation.models import MODELS_FILE
from tests.conftest import DEMO, REPO

grading = pytest.importorskip("dualboard.grading")
stats = pytest.importorskip("dualboard.stats")

MODELS = DEMO / MODELS_FILE


@pytest.fixture(scope="module")
def tables():
    """The demo's stats tables, from the committed runs and human labels."""
    benchmark = load_benchmark(DEMO)
    runs = load_runs(find_run_dirs([REPO / "submissions" / "demo"]), load_benchmarks(REPO / "data"))
    graded = grading.grade_benchmark(benchmark, runs, human_labels=grading.load_human_labels(DEMO / "human_labels.csv"))
    return stats.analyse(graded.scored, verdicts=graded.verdicts)


def test_score_intervals_cover_what_the_graders_observe(tables):
    """At 95 % each, at least 12 of the 14 intervals should cover (P(fewer) ≈ 0.4 %)."""
    truth = true_scores(load_simulated_models(MODELS), load_benchmark(DEMO)).query("category == 'all'")
    board = tables.models.set_index("run_id")
    covered = [
        board.loc[row.run_id, f"{row.grading}_ci_low"]
        <= row.observed_mean
        <= board.loc[row.run_id, f"{row.grading}_ci_high"]
        for row in truth.itertuples()
    ]
    assert len(covered) == 14 and sum(covered) >= 12, truth.assign(covered=covered)


def expected_cells(model: SimulatedModel, question: dict) -> np.ndarray:
    """Expected (rules, human) cells (pass-pass, pass-fail, fail-pass, fail-fail) of one judged answer.

    Unmarked open answers are left out: ``rules`` cannot read them.
    """
    p = model.accuracy[question["category"]]["answer_key"]
    m, h = model.malformed_rate, model.human_error_rate
    readable = np.array([p * (1 - h), p * h, (1 - p) * h, (1 - p) * (1 - h)])  # rules = ideal verdict
    if question["type"] == "open":
        misread = _misread(p, model.rules_false_fail_rate, model.rules_false_pass_rate, h)
        readable = (readable + misread) * (1 - model.unmarked_rate)
    return (1 - m) * readable + m * np.array([0, 0, 0, 1])


def _misread(p: float, ff: float, fp: float, h: float) -> np.ndarray:
    """Change in the cells when rules fails an ``ff`` share of correct answers
    and passes an ``fp`` share of wrong ones."""
    to_fail = p * ff * np.array([-(1 - h), -h, 1 - h, h])
    to_pass = (1 - p) * fp * np.array([h, 1 - h, -h, -(1 - h)])
    return to_fail + to_pass


def kappa(cells: np.ndarray) -> float:
    total = cells / cells.sum()
    observed = total[0] + total[3]
    rules_pass, human_pass = total[0] + total[1], total[0] + total[2]
    chance = rules_pass * human_pass + (1 - rules_pass) * (1 - human_pass)
    return (observed - chance) / (1 - chance)


def test_kappa_of_rules_against_people_covers_the_configured_error_rates(tables):
    benchmark = load_benchmark(DEMO)
    models = {m.run_id: m for m in load_simulated_models(MODELS)}
    cells = sum(
        models[run].rounds * expected_cells(models[run], q)
        for run in load_labelled_runs(MODELS)
        for q in benchmark.questions
    )
    expected = kappa(cells)
    agreement = tables.agreement
    row = agreement[
        (agreement["grader_a"] == "rules") & (agreement["grader_b"] == "human") & (agreement["category"] == "all")
    ].iloc[0]
    assert 0.5 < expected < 0.95  # graders and people really disagree, but not wildly
    assert row["kappa_ci_low"] <= expected <= row["kappa_ci_high"], (expected, row.to_dict())
    assert row["accuracy"] < 1 and row["kappa"] < 1
    assert pd.notna(row["sensitivity"]) and row["specificity"] < 1
