"""The readers' screens change no verdict: graded with and without them, the tables are equal frame by frame.

Grading's patterns sit behind :class:`~dualboard.linear_regex.Screened`, which
skips a text holding none of the words every match contains, searches an
ASCII text as bytes, and starts that search where its first word allows a
match to start. Searching every text as a ``str`` is what it replaced: here
the same runs are graded both ways — the real published runs of "Easy Problems That LLMs Get Wrong" (both
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
import re2
from hypothesis import given
from hypothesis import strategies as st

from dualboard import pipeline
from dualboard.grading import choices, final_answer, grade_benchmark, rules
from dualboard.grading.choices import _extract_choice, normalize_text
from dualboard.importers import import_autogenai
from dualboard.linear_regex import ContextPattern, Screened
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
    "Prose first. " * 50 + '{  \n\t "final_answer": "B"} and "answer": \'C\'',
    "x" * 300 + "\n  **Answer:** Paris\nMy short answer is: four\nthe correct answer is Lyon",
    "The correct option is B. " + "Then the best answer: C. " * 3,
    "answer" + " " * 40 + "\nFinal answer:",
    "a\n\\boxed{4}\n" + "**(D)** and (C)" * 3,
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


@pytest.mark.slow
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


@pytest.mark.slow
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


SCREENED = {
    **{f"final_answer.{name}": screened for name, screened in final_answer._MARKERS},
    "choices.json": choices._JSON_ANSWER,
    "choices.phrase": choices._PHRASE_ANSWER,
    "choices.bold": choices._BOLD_LETTER,
    "choices.paren": choices._PAREN_LETTER,
    "rules.empty_marker": rules._EMPTY_MARKER,
}
"""Every screened pattern grading applies to model text."""

FRAGMENTS = [
    "answer", "Answer", "ANSWER", "final", "Final answer", "final_answer", "the", "my", "correct ", "short ",
    "best ", "option", "choice", " is", "is:", ": ", "-", "=", "{", "}", "\"", "'", "**", "(", ")", "\\boxed{",
    "B", "c", "Paris", "4", " ", "  ", "\n", "\t", ".", "x", "é", "ſ",
    # whole markers, each starting as far before its word as its pattern allows
    '"final_answer": "B"', "'final answer': 'c'", "{\n  final answer: B}", " the correct answer is: B\n",
    "\n -- answer: Paris", "{ \n\t answer: B}", "{  final_answer: 'c'}", "{answer: B}",
    "  {\n\n'answer': 'D'}", "\\boxed{4}", "**(C)**", "**D.", "(B)", " correct option = (B)", ".final answer:",
]  # fmt: skip
"""Pieces of markers and their surroundings, joined at random into texts that a screen must read as RE2 does."""


def _found(pattern, text: str) -> list:
    """What a pattern's matches give grading: each match's groups, and its span where it has one."""
    return [_found_one(m) for m in pattern.finditer(text)]


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40), st.sampled_from(sorted(SCREENED)))
def test_a_screened_search_finds_what_the_whole_search_finds(pieces: list[str], name: str):
    """Starting at the first word less the lead skips nothing: the same matches, groups and spans as a search of
    the whole text as a ``str``, on ASCII texts (which the lead shortens) and others alike."""
    _assert_found_alike(SCREENED[name], "".join(pieces))


def test_a_screened_search_finds_what_the_whole_search_finds_on_every_pair_of_fragments():
    """Each fragment after each other (a marker right at the start, right after a word, after a newline)."""
    for screened in SCREENED.values():
        for first in ["", *FRAGMENTS]:
            for second in FRAGMENTS:
                _assert_found_alike(screened, f"{first}{second}")
                _assert_found_alike(screened, f"{first}{second}{first}")


def _assert_found_alike(screened: Screened, text: str) -> None:
    assert _found(screened, text) == _found(screened.pattern, text), text
    first = screened.search(text)  # the first match, a ContextPattern's too
    assert (first is None) == (not _found(screened.pattern, text)), text
    if first is not None:
        assert _found_one(first) == _found(screened.pattern, text)[0], text


def _found_one(match) -> tuple:
    return (match.groups(), (match.start(), match.end())) if hasattr(match, "start") else match.groups()


def test_every_screened_pattern_states_its_lead():
    """A pattern that can start far before its word (\\{\\s* before "answer") says so: ``spaced``."""
    assert all(screened.lead is not None for screened in SCREENED.values())
    assert [name for name, screened in SCREENED.items() if screened.spaced] == ["choices.json"]
    assert isinstance(SCREENED["final_answer.answer_is"].pattern, ContextPattern)


def _with_default_memory(regex):
    """The same pattern and options, with RE2's default memory (what grading compiled before GRADING_MAX_MEM)."""
    options = re2.Options()
    options.case_sensitive, options.log_errors = regex.options.case_sensitive, False
    return re2.compile(regex.pattern, options)


@pytest.mark.slow
@pytest.mark.parametrize("release", [MC_RELEASE, OPEN_RELEASE])
def test_more_memory_for_re2_finds_the_same_matches(release: str, tmp_path: Path):
    """RE2 given more memory picks a faster engine, never other matches: every screened pattern finds the same
    spans and groups in the real runs' responses and the hostile answers with the default memory as with more."""
    import_autogenai(real_data() / release, benchmark="b", dest=tmp_path)
    _benchmark, runs = load_imported(tmp_path, "b")
    texts = [str(p.get("response") or "") for run in runs for p in run.predictions] + HOSTILE
    for name, screened in SCREENED.items():
        regex = screened.pattern.regex if isinstance(screened.pattern, ContextPattern) else screened.pattern
        assert regex.options.max_mem > _with_default_memory(regex).options.max_mem
        default = _with_default_memory(regex)
        for text in texts:
            data = text.encode("utf-8")
            found = [(m.span(), m.groups()) for m in regex.finditer(data)]
            assert found == [(m.span(), m.groups()) for m in default.finditer(data)], (name, text[:80])


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


@pytest.mark.slow
def test_normalize_text_equals_the_character_loop_on_every_code_point():
    """Each code point next to a digit, a point and a letter: the classes of re and of str agree on all."""
    rng = random.Random(11)
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(points), 4096):
        chunk = points[start : start + 4096]
        rng.shuffle(chunk)
        text = "".join(f"{c}1.{c},a{c}" for c in chunk)
        assert normalize_text(text) == _normalize_by_characters(text), hex(ord(chunk[0]))
