"""``exact`` and ``numeric``: traditional graders that compare a final answer with the key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from dualboard.grading.errors import GraderConfigError
from dualboard.grading.final_answer import extract_final_answer
from dualboard.grading.matching import number_matches, numeric_key, text_equals
from dualboard.grading.verdict import Grader, Verdict


def _parse_outcome(method: str) -> str:
    return "ok" if method not in ("last_line", "none") else "recovered"


@dataclass(frozen=True)
class ExactGrader(Grader):
    """Score 100 when the final answer equals the key's answer or an alias.

    Both sides are normalized (case, punctuation, spacing). The final answer is
    the explicitly marked one, else the last non-empty line (``recovered``).

    Examples
    --------
    >>> q = {"id": "1", "answer_key": {"answer": "Paris", "aliases": ["City of Paris"]}}
    >>> ExactGrader().grade(q, {"response": "Hmm.\\nFinal answer: paris."}).score
    100.0
    """

    name: ClassVar[str] = "exact"
    version: ClassVar[str] = "1"
    default_role: ClassVar[str] = "traditional"

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        final = extract_final_answer(str(prediction.get("response") or ""))
        if final.method == "none":
            return Verdict(0.0, "none", "empty response")
        hit = text_equals(final.text, question)
        detail = f"final answer {final.text[:80]!r} ({final.method})"
        if hit is None:
            return Verdict(0.0, _parse_outcome(final.method), detail + " matches no key text")
        return Verdict(100.0, _parse_outcome(final.method), detail + f" equals {hit!r}")


@dataclass(frozen=True)
class NumericGrader(Grader):
    """Score 100 when the final answer's first number is within tolerance of the key.

    Options: ``tolerance`` (absolute) overrides the key's own tolerance.

    Examples
    --------
    >>> q = {"id": "1", "answer_key": {"answer": "42", "numeric": {"value": 42, "tolerance": 0.5}}}
    >>> NumericGrader().grade(q, {"response": "Final answer: 42.3 km"}).score
    100.0
    """

    name: ClassVar[str] = "numeric"
    version: ClassVar[str] = "1"
    default_role: ClassVar[str] = "traditional"

    def __post_init__(self) -> None:
        tolerance = self.options.get("tolerance")
        if tolerance is not None and (
            isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0
        ):
            raise GraderConfigError(
                f"grader 'numeric': options.tolerance must be a number ≥ 0, got {tolerance!r} — "
                "write e.g. {name: numeric, options: {tolerance: 0.01}}"
            )

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        key = numeric_key(question, self.options.get("tolerance"))
        if key is None:
            raise GraderConfigError(
                f"grader 'numeric' used on question {question.get('id')!r}, whose answer_key has no numeric "
                "value — add answer_key.numeric {value, tolerance} or choose another grader for this question type"
            )
        final = extract_final_answer(str(prediction.get("response") or ""))
        if final.method == "none":
            return Verdict(0.0, "none", "empty response")
        found = number_matches(final.text, *key)
        detail = f"final answer {final.text[:80]!r} ({final.method}); key {key[0]:g} ± {key[1]:g}"
        return Verdict(100.0 if found is not None else 0.0, _parse_outcome(final.method), detail)
