"""Which answer formats the graders read, shown on the How-to-submit page by running the graders themselves.

Each example response is graded by the real grader when the page is built,
so the table shows what the code does today. ``read_by`` records what the
examples are meant to show; a test checks the graders still do it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dualboard.grading.registry import REGISTRY
from dualboard.grading.verdict import Verdict
from dualboard.stats.kappa import PASS_MARK

SAMPLE_QUESTIONS = {
    "multiple_choice": {
        "id": "sample-mc",
        "category": "sample",
        "type": "multiple_choice",
        "prompt": "What is 17 × 6?",
        "choices": ["96", "102", "112", "106"],
        "correct_choice": "B",
        "answer_key": {"answer": "102", "aliases": [], "patterns": [], "numeric": {"value": 102, "tolerance": 0}},
    },
    "open": {
        "id": "sample-open",
        "category": "sample",
        "type": "open",
        "prompt": "What is 15 % of 240?",
        "answer_key": {
            "answer": "36",
            "aliases": ["thirty-six"],
            "patterns": [],
            "numeric": {"value": 36, "tolerance": 0},
        },
    },
}
"""One question of each type that the examples answer."""
APPLIES = {
    "mc_letter": ("multiple_choice",),
    "rules": ("multiple_choice", "open"),
    "exact": ("open",),
    "numeric": ("open",),
}
"""Graders shown with examples, and the question types each judges. The others read no response
(recorded, human), call a service (llm) or load a model (embedding): their rule says what they do."""


@dataclass(frozen=True)
class AnswerFormat:
    """One way of ending a response, for one type of question."""

    kind: str
    """Question type: ``multiple_choice`` or ``open``."""
    label: str
    """The format in words."""
    response: str
    """An example response to the sample question of that type."""
    read_by: tuple[str, ...]
    """Graders that read an answer from it (the others give no verdict or score it unreadable)."""


ANSWER_FORMATS = (
    AnswerFormat(
        "multiple_choice", "a JSON answer", 'The product is 102, option B.\n{"ANSWER": "B"}', ("mc_letter", "rules")
    ),
    AnswerFormat("multiple_choice", "Answer: B", "17 × 6 = 102.\nAnswer: B", ("mc_letter", "rules")),
    AnswerFormat("multiple_choice", "a bold letter", "17 × 6 = 102, so **B**", ("mc_letter", "rules")),
    AnswerFormat("multiple_choice", "no option named", "It is the product of two numbers.", ()),
    AnswerFormat(
        "open",
        "Final answer:",
        "Ten percent is 24 and five percent is 12.\nFinal answer: 36",
        ("rules", "exact", "numeric"),
    ),
    AnswerFormat(
        "open",
        "a JSON answer",
        'Ten percent is 24 and five percent is 12.\n{"ANSWER": "36"}',
        ("rules", "exact", "numeric"),
    ),
    AnswerFormat(
        "open", "\\boxed{…}", "Ten percent is 24 and five percent is 12: \\boxed{36}", ("rules", "exact", "numeric")
    ),
    AnswerFormat("open", "the answer is …", "Adding both parts, the answer is 36", ("rules", "exact", "numeric")),
    AnswerFormat("open", "a short line", "36", ("rules", "exact", "numeric")),
    AnswerFormat(
        "open",
        "unmarked text",
        "Ten percent of 240 is 24 and five percent is 12,\nso together they make 36, which is the share asked for.",
        ("exact", "numeric"),
    ),
)
"""The formats the page shows, in order."""


def grade_example(grader: str, example: AnswerFormat) -> Verdict | None:
    """The real grader's verdict on the example (default options); None where it does not judge that type."""
    if example.kind not in APPLIES.get(grader, ()):
        return None
    return REGISTRY[grader]({}).grade(SAMPLE_QUESTIONS[example.kind], {"response": example.response, "round": 0})


def outcome(verdict: Verdict | None) -> str:
    """A verdict in words for the table: what was read and how it scored, or why nothing was."""
    if verdict is None:
        return "—"
    if verdict.score is None:
        return "no verdict"
    if verdict.verdict_parse == "none":
        return f"unreadable ({verdict.score:.0f})"
    how = " (fallback)" if verdict.verdict_parse == "recovered" else ""
    return f"{'pass' if verdict.score >= PASS_MARK else 'fail'}{how}"
