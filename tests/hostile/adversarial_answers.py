"""Answers built to make regular expressions backtrack, and every grader as a function of one answer.

Shared by ``test_regex_bombs.py`` and ``bench/regex_worst_case.py``. Each
answer repeats a short unit up to a size in UTF-8 bytes, between a head and a
tail: runs of spaces after "answer" (39 s at 2,000 characters under the former
``re`` pattern), letters, ``**``, ``(``, digits, ``\\boxed{``, nested brackets,
and many small matches in a row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dualboard.grading.exact import ExactGrader, NumericGrader
from dualboard.grading.judge_replies import parse_judge_reply
from dualboard.grading.mc_letter import McLetterGrader
from dualboard.grading.rules import RulesGrader

SHAPES: tuple[tuple[str, str, str, str], ...] = (
    ("answer, spaces, !", "answer", " ", "!"),
    ("final answer, tabs", "Final answer", "\t", "x"),
    ("answer, no-break spaces", "answer", "\xa0", "!"),
    ("answer, newlines", "answer", "\n", "!"),
    ("the answer is, spaces", "the answer is", " ", ""),
    ("spaces", "", " ", ""),
    ("letters", "", "a", ""),
    ("capitals", "", "A", ""),
    ("multibyte letters", "", "é", ""),
    ("bold markers", "", "**", ""),
    ("bold letters", "", "**A", ""),
    ("open brackets", "", "(", ""),
    ("bracketed letters", "", "(A)", ""),
    ("nested brackets", "", "{[(", ""),
    ("digits", "", "1", "x"),
    ("thousands", "1", ",000", ""),
    ("numbers", "", "1 ", ""),
    ("fractions", "", "1/ ", ""),
    ("points", "", "1.", ""),
    ("minus signs", "", "−", "5"),
    ("number words", "", "one ", ""),
    ("boxed", "", "\\boxed{", ""),
    ("json keys", "", '{"answer": "', ""),
    ("answer lines", "", "Answer: C\n", ""),
    ("answer phrases", "", "the answer is option ", ""),
    ("final answer is", "", "final answer is ", ""),
    ("verdict lines", "", "Verdict: pass\n", ""),
    ("fail phrases", "", "not correct ", ""),
    ("score, punctuation", "score", "!", "100"),
    ("punctuation", "", "!", ""),
    ("quotes", "", "'\"", ""),
)
"""(name, head, unit, tail) of each adversarial answer."""


def adversarial_answers(size: int) -> dict[str, str]:
    """Return each adversarial answer, at most ``size`` UTF-8 bytes long, by name."""
    answers = {}
    for name, head, unit, tail in SHAPES:
        room = size - len((head + tail).encode("utf-8"))
        answers[name] = head + unit * (room // len(unit.encode("utf-8"))) + tail
    return answers


MC_QUESTION = {
    "id": "mc",
    "category": "c",
    "prompt": "Pick one.",
    "type": "multiple_choice",
    "choices": ["One", "Two", "A single race", "Unknown"],
    "correct_choice": "A",
    "answer_key": {
        "answer": "One",
        "aliases": ["1"],
        "patterns": [],
        "numeric": None,
        "reference": "One.",
        "notes": "",
    },
}
OPEN_QUESTION = {
    "id": "open",
    "category": "c",
    "prompt": "Where?",
    "type": "open",
    "answer_key": {
        "answer": "Paris",
        "aliases": ["City of Paris"],
        "patterns": [r"\bparis\b", r"^7\s*/\s*12$"],
        "numeric": None,
        "reference": "Paris.",
        "notes": "",
    },
}
NUMERIC_QUESTION = {
    "id": "num",
    "category": "c",
    "prompt": "How far?",
    "type": "open",
    "answer_key": {
        "answer": "8.05 km",
        "aliases": [],
        "patterns": [r"8[.,]0\d\s*km"],
        "numeric": {"value": 8.05, "tolerance": 0.05},
        "reference": "8.05 km.",
        "notes": "",
    },
}


def _grade(grader: Any, question: dict[str, Any]) -> Callable[[str], Any]:
    return lambda answer: grader.grade(question, {"response": answer})


GRADERS: dict[str, Callable[[str], Any]] = {
    "mc_letter": _grade(McLetterGrader(), MC_QUESTION),
    "rules (multiple choice)": _grade(RulesGrader(), MC_QUESTION),
    "rules (open, patterns)": _grade(RulesGrader(), OPEN_QUESTION),
    "rules (numeric)": _grade(RulesGrader(), NUMERIC_QUESTION),
    "exact": _grade(ExactGrader(), OPEN_QUESTION),
    "numeric": _grade(NumericGrader(), NUMERIC_QUESTION),
    "llm (judge reply parser)": lambda reply: parse_judge_reply(reply, "0123456789abcdef01234567"),
}
"""Every grader that reads text, as a function of one answer. ``embedding`` reads the final
answer as ``exact`` does, then needs its model; ``recorded`` and ``human`` read no text."""
