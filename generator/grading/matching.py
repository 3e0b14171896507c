"""Compare an extracted answer with a question's answer key.

Shared by the ``rules`` (answer-key) and ``exact``/``numeric`` (traditional)
graders so both read a key the same way.
"""

from __future__ import annotations

from typing import Any

from dualboard.grading.choices import normalize_question_text, normalize_text
from dualboard.grading.final_answer import find_numbers
from dualboard.linear_regex import compile_key_pattern


def key_texts(question: dict[str, Any]) -> list[str]:
    """Return the key's answer and aliases, normalized, without empties."""
    key = question.get("answer_key") or {}
    texts = [key.get("answer") or "", *(key.get("aliases") or [])]
    return [t for t in (normalize_question_text(str(text)) for text in texts) if t]


def key_answer(question: dict[str, Any]) -> str:
    """The key as one text for readers: its short answer, or its reference sentence when it has none."""
    key = question.get("answer_key") or {}
    return str(key.get("answer") or key.get("reference") or "")


def numeric_key(question: dict[str, Any], tolerance: float | None = None) -> tuple[float, float] | None:
    """Return ``(value, tolerance)`` of the key's numeric answer, if it has one."""
    numeric = (question.get("answer_key") or {}).get("numeric")
    if not numeric or numeric.get("value") is None:
        return None
    tol = tolerance if tolerance is not None else float(numeric.get("tolerance") or 0.0)
    return float(numeric["value"]), tol


def text_equals(candidate: str, question: dict[str, Any]) -> str | None:
    """Return the key text equal to ``candidate`` after normalization, or None."""
    wanted = normalize_text(candidate)
    return next((text for text in key_texts(question) if text == wanted), None)


def text_contains(candidate: str, question: dict[str, Any]) -> str | None:
    """Return the first key text found as whole words inside ``candidate``, or None."""
    padded = f" {normalize_text(candidate)} "
    return next((text for text in key_texts(question) if f" {text} " in padded), None)


def number_within(number: float, value: float, tolerance: float) -> bool:
    """Whether ``number`` is within ``tolerance`` of ``value`` (plus float noise)."""
    return abs(number - value) <= tolerance + 1e-12


def number_matches(candidate: str, value: float, tolerance: float) -> float | None:
    """Return the first number of ``candidate`` if it is within tolerance of ``value``.

    A final answer states its number first ("8.05 km (5 miles)").
    """
    numbers = find_numbers(candidate)
    return numbers[0] if numbers and number_within(numbers[0], value, tolerance) else None


def pattern_matches(candidate: str, question: dict[str, Any]) -> str | None:
    """Return the first key pattern (case-insensitive, RE2 syntax) found in ``candidate``.

    Raises
    ------
    PatternSyntaxError
        When a pattern is not RE2 syntax (intake reports it when the benchmark loads).
    """
    for pattern in (question.get("answer_key") or {}).get("patterns") or []:
        if compile_key_pattern(str(pattern)).search(candidate):
            return str(pattern)
    return None


def pattern_spans(candidate: str, question: dict[str, Any]) -> list[str]:
    """Return what each of the key's patterns matched in ``candidate`` (first match of each; none: left out)."""
    patterns = (question.get("answer_key") or {}).get("patterns") or []
    return [match.group(0) for p in patterns if (match := compile_key_pattern(str(p)).search(candidate))]
