"""The answer-key grader is chosen by κ against people, under agreement.csv's estimability rule (issue 26 §7)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dualboard.grading.answer_key_choice import ChoiceEvidence, choose_answer_key
from dualboard.grading.registry import get_grader
from dualboard.intake.models import GraderSpec
from dualboard.stats.agreement import agreement_table
from tests.grading.grading_fixtures import make_benchmark

N = 20
HUMAN = np.where(np.arange(N) < 10, 100.0, 0.0)
RULES = np.where(np.arange(N) == 0, 100.0, 0.0)  # passes one question: κ = 0.10, yet passes nothing in 36% of resamples
EXACT = np.where(np.arange(N) % 10 < 5, 100.0, 0.0)  # passes half the questions, at chance: κ = 0.00


def _verdicts(specs: list[GraderSpec]) -> pd.DataFrame:
    base = pd.DataFrame({"run_id": "r", "question_id": [f"q{i:02d}" for i in range(N)], "round": 0})
    frames = [base.assign(grader="human", role="human", config_hash=None, score=HUMAN)]
    for spec, score in zip(specs, (RULES, EXACT), strict=True):
        grader = get_grader(spec)
        frames.append(base.assign(grader=grader.name, role="answer_key", config_hash=grader.config_hash, score=score))
    return pd.concat(frames, ignore_index=True)


def test_a_grader_whose_kappa_is_not_estimable_is_not_chosen():
    """Before: rules won on κ 0.10 > 0.00 although agreement.csv calls its κ not estimable."""
    specs = [GraderSpec("rules"), GraderSpec("exact")]
    verdicts = _verdicts(specs)
    evidence = ChoiceEvidence()
    evidence.add(N, verdicts)
    choice = choose_answer_key(make_benchmark([], answer_key=(*specs, GraderSpec("human"))), evidence)
    assert choice.grader == "exact"
    table = agreement_table(verdicts.assign(category="c"), n_boot=200)
    against = table[(table.grader_b == "human") & (table.category == "all")].set_index("grader_a")
    assert against.loc["rules", "reason"].startswith("rules passed 1 of 20: 35.8 % of question resamples")
    assert bool(against.loc["exact", "estimable"]) and abs(against.loc["exact", "kappa"]) < 1e-12
