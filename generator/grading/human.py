"""``human``: labels written by people, the gold standard graders are checked against.

The labels are read and checked as an input by :mod:`dualboard.intake.human_labels`;
this grader turns them into verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from dualboard.grading.errors import GradingInputError
from dualboard.grading.verdict import Grader, Verdict
from dualboard.intake.human_labels import AnswerSlot, HumanLabels


@dataclass(frozen=True)
class HumanGrader(Grader):
    """Turn the label people gave an answer into a verdict.

    The label is already a score on 0–100 (see :func:`~dualboard.intake.human_labels.load_human_labels`);
    partial credit passes through unchanged. Only the answers that
    ``human_labels.csv`` labels (by run, question and round) get a human
    verdict row.
    Listed first in ``benchmark.yaml``, labels are the answer-key grading;
    otherwise they choose the automatic answer-key grader that fills that
    column (the rule is in :func:`~dualboard.grading.tables.grade_benchmark`).
    """

    name: ClassVar[str] = "human"
    version: ClassVar[str] = "1"
    default_role: ClassVar[str] = "human"
    cached: ClassVar[bool] = False

    def grade_labels(self, labels: HumanLabels, slots: Sequence[AnswerSlot]) -> list[Verdict]:
        """Return the verdict on each answer of ``slots``: its label, or no verdict where it has none.

        Examples
        --------
        >>> [v.detail for v in HumanGrader().grade_labels({("r1", "q1", 0): 60.0}, [("r1", "q1", 0), ("r1", "q2", 0)])]
        ['human label 60', 'no human label']
        """
        return [_label_verdict(labels.get(slot)) for slot in slots]

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        """Refuse: labels belong to a run's answer, which a (question, prediction) pair does not name."""
        raise GradingInputError(
            "the human grader reads labels by (run, question, round), not responses — call grade_labels "
            "(grade_benchmark does, given human_labels)"
        )


def _label_verdict(score: float | None) -> Verdict:
    """A label as a verdict; an answer without one gets no verdict."""
    return (
        Verdict(None, "none", "no human label")
        if score is None
        else Verdict(float(score), "ok", f"human label {score:g}")
    )
