"""The RE2 patterns of grading find exactly what the former ``re`` patterns found.

The ``re`` patterns below are the ones grading used before it moved to RE2
(linear time, no lookaround); they are the specification. For every generated
text, each RE2 rewrite must yield the same matches, groups and offsets, so
``mc_letter``, ``exact``, ``numeric`` and ``llm`` keep their versions. The
alphabet leaves out Turkish ``İ``/``ı``: ``re`` folds them onto ``i`` when
ignoring case and RE2 does not (documented in ``linear_regex``).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualboard.grading import choices, final_answer, rules
from dualboard.linear_regex import PatternSyntaxError, compile_linear, unicode_classes

OLD_JSON = re.compile(
    r"""(?:["']|(?<=\{)\s*)(?:final[ _]?)?answer["']?\s*:\s*(?:"([^"\n]{0,300})"|'([^'\n]{0,300})'|([A-Za-z]\b))""",
    re.IGNORECASE,
)
OLD_PHRASE = re.compile(
    r"(?i:final answer|correct answer|best answer|answer|correct option|correct choice|best option)"
    r"(?:\s+(?i:is|would be|should be|will be))?\s*(?i:option|choice)?\s*[:=\-]?\s*[*_`\"']*\(?"
    r"([A-Z])\)?[*_`\"']*(?=$|[\s.,;:!)\]])",
    re.MULTILINE,
)
OLD_BOLD = re.compile(r"\*\*\(?([A-Z])\)?[.):]?\*\*|\*\*\(?([A-Z])[.):]")
OLD_PAREN = re.compile(r"(?<![\w(])\(([A-Z])\)(?![\w])")
OLD_LEADING = re.compile(r"^\s*\(?([A-Z])\)?(?:[.):\-]\s+.*|\s*)$", re.DOTALL)
OLD_MARKERS = {
    "json": re.compile(
        r"""["']?(?:final[ _]?)?answer["']?\s*:\s*(?:"([^"\n]{1,500})"|'([^'\n]{1,500})')""", re.IGNORECASE
    ),
    "boxed": re.compile(r"\\boxed\{([^{}\n]{1,500})\}"),
    "final_answer": re.compile(r"final answer\W{0,6}?(?:is\b|:|-)\W{0,3}([^\n]{1,500})", re.IGNORECASE),
    "answer_line": re.compile(r"^\W{0,4}answer\W{0,4}?[:\-]\W{0,3}([^\n]{1,500})", re.IGNORECASE | re.MULTILINE),
    "answer_is": re.compile(r"\b(?:the|my) (?:correct |short )?answer is:?\s+([^\n]{1,500})", re.IGNORECASE),
}
OLD_NUMBER = re.compile(
    r"(?<![\w.])[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s*/\s*\d+)?(?![\w])|\b(?:"
    + "|".join(final_answer._NUMBER_WORDS)
    + r")\b",
    re.IGNORECASE,
)
MARKERS = [
    "answer",
    "Answer",
    "ANSWER",
    "final answer",
    "Final Answer is",
    "correct answer",
    "best option",
    "correct choice",
    "The answer would be",
    "the answer is",
    "my correct answer is",
    "The short answer is",
    '{"ANSWER"',
    "{answer",
    "{ 'answer'",
    '"final_answer"',
    "\\boxed{",
    "**",
    "(",
    "((",
    "\nVerdict",
    "verdict",
    "\n**Score",
    "score",
    "",
]
SEPARATORS = ["", " ", ": ", ":", "=", " - ", ': "', ": '", "\xa0", ":\xa0", " is ", ":\n", "  ", "**", " option "]
VALUES = [
    "A",
    "B",
    "c",
    "(C)",
    "C)",
    "**B**",
    "Because",
    "Paris",
    "pass",
    "PASS",
    "fail",
    "100",
    "0",
    "0 / 100",
    "12",
    "1,000",
    "3.5",
    "-2",
    "−7",
    "3/4",
    "twelve",
    "none",
    "٣",
    "é",
    "not correct",
    "does not match",
    "incorrect",
    "correctly",
    "mismatches",
    "equivalent",
    "inaccurate",
    "wrong",
]
ENDINGS = ["", ".", "}", '"}', "'}", ")", "\n", " ", "x", "é", "**", "!", "]", "_", "\u2028"]
ALPHABET = "ABCabc019٣é_ .,:;!?-−/=*`'\"(){}[]\n\t\xa0\u2009"
statements = st.tuples(*(st.sampled_from(part) for part in (MARKERS, SEPARATORS, VALUES, ENDINGS))).map("".join)
texts = st.lists(statements | st.text(ALPHABET, max_size=4), max_size=25).map("".join)
values = st.tuples(*(st.sampled_from(part) for part in (SEPARATORS, VALUES, ENDINGS, SEPARATORS))).map("".join)

EDGES = [
    "1 2 3",
    "1.5a",
    "x-5",
    "--5",
    "é1 / 2",
    "a12 ٣٤",
    "(A)(B)",
    "((A)) (B)x (C)",
    "wrong wrong",
    "wrong not correct",
    "score 0 / 100x",
    "score: incorrect 100",
    '{answer: C"answer": "D"}',
    "{answer: Because}",
    "Answer:\xa0C",
    "Final answer is.",
    "final answer is X\nfinal answer is.",
    "x" * 499 + " the answer is 5",
    "the answer is " + "y" * 499 + ". the answer is 6",
    "éthe answer is 7",
    "Verdict:\npass",
    "fail.pass",
    "the answer is \t \n",
    "the answer is  \n\n",
    "the answer is\n\n \n",
    "the answer is \n x",
    "my answer is\n",
    "the answer is " + " " * 600,
    "a.1,b .1. 1.,",
    "x" * 600 + "\nfinal answer: y",
]


def first_group(match) -> str:
    return next(g for g in match.groups() if g is not None)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_choice_patterns_agree_with_re(text: str) -> None:
    assert [m.groups() for m in choices._json_matches(text)] == [m.groups() for m in OLD_JSON.finditer(text)]
    assert [(m.group(1), m.start(1)) for m in choices._PHRASE_ANSWER.finditer(text)] == [
        (m.group(1), m.start(1)) for m in OLD_PHRASE.finditer(text)
    ]
    assert [m.groups() for m in choices._BOLD_LETTER.finditer(text)] == [m.groups() for m in OLD_BOLD.finditer(text)]
    assert [m.groups() for m in choices._paren_matches(text)] == [m.groups() for m in OLD_PAREN.finditer(text)]
    assert choices._ANSWER_IS.split(text)[-1] == re.split(r"(?i)answer is", text)[-1]
    old_normalized = " ".join(re.sub(r"(?<!\d)[.,](?!\d)|[^\w\s.,']", " ", text.lower()).replace("'", "").split())
    assert choices.normalize_text(text) == old_normalized


@given(values)
def test_leading_letter_agrees_with_re(value: str) -> None:
    new, old = choices._LEADING_LETTER.match(value), OLD_LEADING.match(value)
    assert (new and new.groups()) == (old and old.groups())


@settings(max_examples=300, deadline=None)
@given(texts)
def test_final_answer_patterns_agree_with_re(text: str) -> None:
    for method, pattern in final_answer._MARKERS:
        new = [first_group(m) for m in pattern.finditer(text)]
        assert new == [first_group(m) for m in OLD_MARKERS[method].finditer(text)], method
    assert [next(filter(None, m.texts)) for m in final_answer._NUMBER.finditer(text)] == OLD_NUMBER.findall(text)
    line = text.strip()
    assert bool(rules._MARKER_ENDS_LINE.fullmatch(line)) == bool(
        re.fullmatch(r"final answer\W*(?:is\W*)?", line, re.IGNORECASE)
    )


@pytest.mark.slow
@pytest.mark.parametrize("text", EDGES)
def test_edge_cases_agree_with_re(text: str) -> None:
    """Cases where a consumed context character could hide the next match."""
    test_choice_patterns_agree_with_re.hypothesis.inner_test(text)
    test_final_answer_patterns_agree_with_re.hypothesis.inner_test(text)


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [(r"\bword", r"\\b is ASCII-only"), (r"[\W_]", r"\\W has no Unicode form"), (r"(?<=a)b", "invalid perl operator")],
)
def test_grading_patterns_refuse_what_re2_cannot_mean(pattern: str, problem: str) -> None:
    with pytest.raises(PatternSyntaxError, match=problem):
        compile_linear(pattern)


def test_unicode_classes_leave_escaped_brackets_and_other_escapes() -> None:
    assert unicode_classes(r"\[\w\]\.") == r"\[[\pL\pN_]\]\."
    assert unicode_classes(r"[]\s]") == "[]" + unicode_classes(r"[\s]")[1:]
