"""``mc_letter``: the traditional grading of multiple-choice answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from dualboard.grading.choices import (
    JSON_ANSWER_RULES,
    LETTERS,
    correct_index,
    extract_choice,
    shown_options,
)
from dualboard.grading.errors import GraderConfigError, GradingInputError
from dualboard.grading.verdict import Grader, Verdict

OPTION_DEFAULTS = {"json_answer": JSON_ANSWER_RULES[0]}
"""mc_letter's options and their defaults (filled in, so the config hash names the rule in force)."""


def _check_options(options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - set(OPTION_DEFAULTS))
    if unknown:
        raise GraderConfigError(
            f"grader 'mc_letter': unknown option(s) {', '.join(map(repr, unknown))} — "
            f"its only option is json_answer ({' or '.join(JSON_ANSWER_RULES)})"
        )
    if options["json_answer"] not in JSON_ANSWER_RULES:
        raise GraderConfigError(
            f"grader 'mc_letter': options.json_answer must be {' or '.join(JSON_ANSWER_RULES)}, got "
            f"{options['json_answer']!r} — write e.g. {{name: mc_letter, options: {{json_answer: first}}}}"
        )


@dataclass(frozen=True)
class McLetterGrader(Grader):
    """Score 100 when the option the response committed to is the correct one.

    The chosen option is read by :func:`dualboard.grading.choices.extract_choice`;
    ``verdict_parse`` is ``ok`` for a JSON answer or a bare letter, ``recovered``
    for a fallback method or several different answers, and ``none`` when no
    option can be read: that is the model's failure, scored 0 (counted, never
    dropped). Option ``json_answer``: which of several JSON answers counts,
    ``last`` (default: models reason, then commit) or ``first`` (the rule of
    sources whose scorer parses the first JSON object, such as autogenai's).
    Other answer styles always take the last commitment.

    Examples
    --------
    >>> q = {"id": "1", "type": "multiple_choice", "choices": ["One", "Two"], "correct_choice": "One"}
    >>> McLetterGrader().grade(q, {"response": 'I pick {"ANSWER": "B"}', "choice_order": ["B", "A"]})
    Verdict(score=100.0, verdict_parse='ok', detail='chose B (json) = One; correct B', transient=False)
    """

    name: ClassVar[str] = "mc_letter"
    version: ClassVar[str] = "1"
    default_role: ClassVar[str] = "traditional"

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", {**OPTION_DEFAULTS, **self.options})
        _check_options(self.options)

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        shown = shown_options(question, prediction)
        correct = correct_index(question, shown)
        if correct is None:
            raise GradingInputError(
                f"question {question.get('id')!r}: correct_choice {question.get('correct_choice')!r} is not "
                f"among the options shown {shown!r} — fix correct_choice in questions.jsonl or the run's choice_order"
            )
        response = str(prediction.get("response") or "")
        if not response.strip():
            return Verdict(0.0, "none", f"empty response: the model's failure, scored 0; correct {LETTERS[correct]}")
        extraction = extract_choice(response, shown, self.options["json_answer"])
        if extraction.index is None:
            return Verdict(
                0.0, "none", f"no readable option: the model's failure, scored 0; correct {LETTERS[correct]}"
            )
        chosen = LETTERS[extraction.index]
        detail = f"chose {chosen} ({extraction.method}) = {shown[extraction.index]}; correct {LETTERS[correct]}"
        if extraction.ambiguous:
            others = ", ".join(LETTERS[i] for i in extraction.candidates)
            detail = (
                f"{len(extraction.candidates)} different answers given ({others}), took the {extraction.took}; "
                + detail
            )
        strict = extraction.method in ("json", "bare") and not extraction.ambiguous
        score = 100.0 if extraction.index == correct else 0.0
        return Verdict(score, "ok" if strict else "recovered", detail[:300])
