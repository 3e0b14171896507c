"""``mc_letter``: the traditional grading of multiple-choice answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from generator.grading.choices import LETTERS, correct_index, extract_choice, shown_options
from generator.grading.errors import GradingInputError
from generator.grading.verdict import Grader, Verdict


@dataclass(frozen=True)
class McLetterGrader(Grader):
    """Score 100 when the option the response committed to is the correct one.

    The chosen option is read by :func:`generator.grading.choices.extract_choice`;
    ``verdict_parse`` is ``ok`` for a JSON answer or a bare letter, ``recovered``
    for a fallback method or several different answers (the last one counts),
    and ``none`` when no option can be read (score 0: counted, never dropped).

    Examples
    --------
    >>> q = {"id": "1", "type": "multiple_choice", "choices": ["One", "Two"], "correct_choice": "One"}
    >>> McLetterGrader().grade(q, {"response": 'I pick {"ANSWER": "B"}', "choice_order": ["B", "A"]})
    Verdict(score=100.0, verdict_parse='ok', detail='chose B (json) = One; correct B', transient=False)
    """

    name: ClassVar[str] = "mc_letter"
    version: ClassVar[str] = "1"
    default_role: ClassVar[str] = "traditional"

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        shown = shown_options(question, prediction)
        correct = correct_index(question, shown)
        if correct is None:
            raise GradingInputError(
                f"question {question.get('id')!r}: correct_choice {question.get('correct_choice')!r} is not "
                f"among the options shown {shown!r} — fix correct_choice in questions.jsonl or the run's choice_order"
            )
        extraction = extract_choice(str(prediction.get("response") or ""), shown)
        if extraction.index is None:
            return Verdict(0.0, "none", f"no choice found; correct {LETTERS[correct]}")
        chosen = LETTERS[extraction.index]
        detail = f"chose {chosen} ({extraction.method}) = {shown[extraction.index]}; correct {LETTERS[correct]}"
        if extraction.ambiguous:
            others = ", ".join(LETTERS[i] for i in extraction.candidates)
            detail = f"several answers ({others}), took the last; " + detail
        strict = extraction.method in ("json", "bare") and not extraction.ambiguous
        score = 100.0 if extraction.index == correct else 0.0
        return Verdict(score, "ok" if strict else "recovered", detail[:300])
