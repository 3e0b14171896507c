"""The readers' screens change no verdict: graded with and without them, the tables are equal frame by frame.

Grading's patterns sit behind :class:`~dualboard.linear_regex.Screened`, which
skips a text holding none of the words every match contains and searches an
ASCII text as bytes. Searching every text as a ``str`` is what it replaced: here the same runs are graded both
ways — the real published runs of "Easy Problems That LLMs Get Wrong" (both
releases), the bundled demo, and hostile answers written to slip past a screen
(Unicode case folds, markers split by odd spaces, empty and huge answers) —
and every table must be equal. :func:`normalize_text`, rewritten as one
``re.sub``, is compared with the character loop it replaced.
"""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dualboard import pipeline
from dualboard.grading import grade_benchmark
from dualboard.grading.choices import _extract_choice, normalize_text
from dualboard.importers import import_autogenai
from dualboard.linear_regex import Screened
from tests.conftest import TINY_QUESTIONS
from tests.grading.grading_fixtures import make_benchmark, make_run
from tests.importers.import_fixtures import MC_RELEASE, OPEN_RELEASE, load_imported, load_labels, real_data

HOSTILE = [
    "",
    "   \n\t ",
    "B",
    "anſwer: B",  # long s: RE2 folds it onto "s" when ignoring case
    "FINAL ANſWER: Paris",
    "Final answer: 4",
    "final\u00a0answer: 4",  # a no-break space is no space of the marker
    "The \u212aelvin answer is: C",  # Kelvin sign, folded onto "k"
    'So {"ANSWER": "B"} then {"answer": "c"}',
    "**B**",
    "(B) and then ((C))",
    "\\boxed{Pacific}",
    "\\boxed{Pacific",
    "the answer is Paris.\nFinal answer:",
    "Answer - four",
    "ANSWER:\u0301 B",
    "I pick option B, the best option.",
    "Correct choice: D",
    "x" * 20_000 + "\nFinal answer: Pacific Ocean",
    "Answer\u2028is Paris",
    "İt is four; ıt is 4.",
    "answer" * 1000,
    "Answer: Paris\nAnswer: Lyon",
    "1,000 or 3.5 or seven",
    "\x00Final answer: four\x00",
    "{answer: Bx}",  # a bare letter must end its word: the character after the match decides
    "{ANSWER: B}",
    "See (B)x, then x(C) and (D).",
    "(A)",
]
"""Answers that a screen must not misjudge: every one is graded by each grader of the tiny benchmark."""


def _unscreened(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pattern searches every text, as a ``str``: the per-answer path before the screens."""
    monkeypatch.setattr(Screened, "finditer", lambda self, text: self.pattern.finditer(text))
    monkeypatch.setattr(Screened, "search", lambda self, text: self.pattern.search(text))


def _both_ways(monkeypatch: pytest.MonkeyPatch, grade) -> None:
    """Grade with the screens, then without; every table must be equal, row for row.

    extract_choice's memory is emptied before each: the second grade must read every answer again.
    """
    _extract_choice.cache_clear()
    screened = grade()
    with monkeypatch.context() as patch:
        _unscreened(patch)
        _extract_choice.cache_clear()
        unscreened = grade()
    for name in ("scored", "answers", "verdicts"):
        pd.testing.assert_frame_equal(getattr(screened, name), getattr(unscreened, name), obj=name)
    assert len(screened.verdicts)


@pytest.mark.parametrize(("release", "name"), [(MC_RELEASE, "easy-problems-mc"), (OPEN_RELEASE, "easy-problems-open")])
def test_real_runs_graded_alike_with_and_without_screens(
    release: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import_autogenai(real_data() / release, benchmark=name, dest=tmp_path)
    benchmark, runs = load_imported(tmp_path, name)
    labels = load_labels(tmp_path, name)
    _both_ways(monkeypatch, lambda: grade_benchmark(benchmark, runs, human_labels=labels))


def test_demo_graded_alike_with_and_without_screens(demo_board, monkeypatch: pytest.MonkeyPatch):
    _project, store = demo_board
    benchmark, runs = pipeline.stored_benchmarks(store)["demo"]
    labels = pipeline.human_labels(benchmark)
    _both_ways(monkeypatch, lambda: grade_benchmark(benchmark, runs, human_labels=labels))


def test_hostile_answers_graded_alike_with_and_without_screens(monkeypatch: pytest.MonkeyPatch):
    benchmark = make_benchmark(TINY_QUESTIONS)
    runs = [
        make_run(
            f"hostile-{i}",
            [
                {"question_id": q["id"], "response": response, "recorded": {"judge": 50}}
                | ({"choice_order": ["D", "C", "B", "A"]} if q["type"] == "multiple_choice" else {})
                for q in TINY_QUESTIONS
            ],
        )
        for i, response in enumerate(HOSTILE)
    ]
    _both_ways(monkeypatch, lambda: grade_benchmark(benchmark, runs))


def test_a_non_ascii_text_is_always_searched():
    screen = Screened(None, ("answer",), ignore_case=True)
    assert screen.might_match("anſwer")
    assert not screen.might_match("ANSWR")
    assert Screened(None, ("**",)).might_match("x ** y")


def _normalize_by_characters(text: str) -> str:
    """normalize_text as it was written before (a loop over the characters): the reference."""
    text = text.lower().replace("’", "'").replace("‘", "'")

    def word(char: str) -> bool:
        return char.isalnum() or char == "_"

    def touches_digit(at: int) -> bool:
        return text[at - 1 : at].isdecimal() or text[at + 1 : at + 2].isdecimal()

    kept = [
        char if word(char) or char.isspace() or char == "'" or (char in ".," and touches_digit(at)) else " "
        for at, char in enumerate(text)
    ]
    return " ".join("".join(kept).replace("'", "").split())


@given(st.text(alphabet=st.sampled_from("aZ9_ .,'’‘-!\n\t\u00a0\u2028é١٣²½ſİ\x1c\x00"), max_size=60))
def test_normalize_text_equals_the_character_loop_on_tricky_characters(text: str):
    assert normalize_text(text) == _normalize_by_characters(text)


@given(st.text(max_size=80))
def test_normalize_text_equals_the_character_loop_on_any_text(text: str):
    assert normalize_text(text) == _normalize_by_characters(text)


def test_normalize_text_equals_the_character_loop_on_every_code_point():
    """Each code point next to a digit, a point and a letter: the classes of re and of str agree on all."""
    rng = random.Random(11)
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(points), 4096):
        chunk = points[start : start + 4096]
        rng.shuffle(chunk)
        text = "".join(f"{c}1.{c},a{c}" for c in chunk)
        assert normalize_text(text) == _normalize_by_characters(text), hex(ord(chunk[0]))
