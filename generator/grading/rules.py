"""``rules``: the default answer-key grader — deterministic, no dependencies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from generator.grading.choices import extract_choice, shown_options
from generator.grading.final_answer import extract_final_answer
from generator.grading.matching import (
    number_matches,
    numeric_key,
    pattern_matches,
    text_contains,
    text_equals,
)
from generator.grading.verdict import Grader, Verdict
from generator.linear_regex import compile_linear

_MARKER_ENDS_LINE = compile_linear(r"final answer\W*(?:is\W*)?", ignore_case=True)


def match_key(candidate: str, question: dict[str, Any], *, explicit: bool = True) -> str | None:
    """Return why ``candidate`` passes the answer key, or None when it fails.

    Precedence (the first that applies decides the reported reason):
    numeric key within tolerance (the first number of an ``explicit`` final
    answer, else the last number), equality with the answer or an alias,
    the answer or an alias as whole words inside the candidate, then the
    key's patterns (RE2 syntax, case ignored: linear time on any response).
    """
    key = numeric_key(question)
    if key is not None and (number := number_matches(candidate, *key, last=not explicit)) is not None:
        return f"number {number:g} within {key[1]:g} of {key[0]:g}"
    if (text := text_equals(candidate, question)) is not None:
        return f"equals {text!r}"
    if (text := text_contains(candidate, question)) is not None:
        return f"contains {text!r}"
    if (pattern := pattern_matches(candidate, question)) is not None:
        return f"matches pattern {pattern!r}"
    return None


def _final_answer_line(response: str) -> str:
    """The final-answer statement as written: the marker's line, or the next line when
    the marker ends its line ("The final answer is:" followed by the answer)."""
    start = response.lower().rfind("final answer")
    line, _, rest = response[start:].partition("\n")
    if _MARKER_ENDS_LINE.fullmatch(line.strip()):
        following = next((other for other in rest.split("\n") if other.strip()), "")
        return f"{line}\n{following}"
    return line


def _candidate(question: dict[str, Any], prediction: dict[str, Any]) -> tuple[str, str, str]:
    """Return (candidate text, how it was found, verdict_parse) for one answer."""
    response = str(prediction.get("response") or "")
    is_mc = question.get("type") == "multiple_choice" and bool(question.get("choices"))
    shown = shown_options(question, prediction) if is_mc else []
    # A stated final answer outranks the option letter: strict grading holds a
    # response to what it finally says, even when its letter is right. When the
    # statement itself names an option ('Final answer: {"ANSWER": "C"}'), that
    # option is the answer.
    stated = extract_final_answer(response, markers=("final_answer",))
    if stated.method == "final_answer":
        named = extract_choice(_final_answer_line(response), shown) if is_mc else None
        if named is not None and named.index is not None:
            return shown[named.index], f"final answer names option {named.method}", "ok"
        return stated.text, stated.method, "ok"
    if is_mc:
        choice = extract_choice(response, shown)
        if choice.index is not None:
            parse = "ok" if choice.method in ("json", "bare") and not choice.ambiguous else "recovered"
            return shown[choice.index], f"option {choice.method}", parse
    final = extract_final_answer(response)
    parse = {"none": "none", "last_line": "recovered"}.get(final.method, "ok")
    return final.text, final.method, parse


@dataclass(frozen=True)
class RulesGrader(Grader):
    """Pass (100) when the response's final answer matches the answer key, else fail (0).

    The final answer is, for a multiple-choice question, the text of the option
    the response committed to; otherwise the explicitly marked final answer
    ("Final answer: ...", ``{"ANSWER": ...}``, ``\\boxed{...}``, "Answer: ...",
    "the answer is ..."), else the last non-empty line (``recovered``). It is
    then checked by :func:`match_key`. An empty response fails with
    ``verdict_parse = none``. No options.

    Examples
    --------
    >>> q = {"id": "1", "type": "open", "answer_key": {"answer": "Paris", "aliases": [], "patterns": []}}
    >>> RulesGrader().grade(q, {"response": "Final answer: Paris, France."}).score
    100.0
    """

    name: ClassVar[str] = "rules"
    version: ClassVar[str] = "3"
    default_role: ClassVar[str] = "answer_key"

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        candidate, method, parse = _candidate(question, prediction)
        if parse == "none":
            return Verdict(0.0, "none", "empty response")
        reason = match_key(candidate, question, explicit=parse == "ok")
        detail = f"final answer {candidate[:80]!r} ({method}) "
        if reason is None:
            return Verdict(0.0, parse, (detail + "matches no key")[:300])
        return Verdict(100.0, parse, (detail + reason)[:300])
