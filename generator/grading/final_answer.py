"""Pull the final answer and the numbers out of a free-text response.

Used by the ``rules``, ``exact``, ``numeric`` and ``embedding`` graders. The
explicit markers are tried in a fixed order and the last occurrence of the
first marker found wins; when that marker states several different answers,
the result says so (``ambiguous``). :func:`extract_marked_answer` stops there;
:func:`extract_final_answer` lets the last non-empty line stand in for an
unmarked answer, which its callers record as ``recovered``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dualboard.grading.choices import normalize_text
from dualboard.linear_regex import ContextPattern, Screened, compile_linear


def _screened(pattern: str, word: str, lead: int) -> Screened:
    """A marker pattern, ignoring case, whose every match contains ``word``, at most ``lead`` characters after
    the match's start (the screen skips other texts, and the text before the first ``word`` less ``lead``)."""
    return Screened(compile_linear(pattern, ignore_case=True), (word,), ignore_case=True, lead=lead)


# Each marker's lead (Screened.lead) is the most its pattern can put before its word: a quote and "final_" (7),
# nothing ("\boxed{", "final answer"), four non-word characters after a line's start (4), the context
# character and "the correct " (13).
_MARKERS = (
    (
        "json",
        _screened(r"""["']?(?:final[ _]?)?answer["']?\s*:\s*(?:"([^"\n]{1,500})"|'([^'\n]{1,500})')""", "answer", 7),
    ),
    ("boxed", Screened(compile_linear(r"\\boxed\{([^{}\n]{1,500})\}"), ("\\boxed{",), lead=0)),
    # "is" must end its word: either the non-word characters after it, or the answer starts with one.
    (
        "final_answer",
        _screened(
            r"final answer\W{0,6}?(?:is(?:\W{1,3}([^\n]{1,500})|([^\w\n][^\n]{0,499}))|[:\-]\W{0,3}([^\n]{1,500}))",
            "final answer",
            0,
        ),
    ),
    ("answer_line", _screened(r"(?m)^\W{0,4}answer\W{0,4}?[:\-]\W{0,3}([^\n]{1,500})", "answer", 4)),
    # "the" or "my" must start a word: the pattern takes the character before it. After the
    # spaces the answer starts at the next other character or, where spaces end the text, is the
    # last space before the closing newlines: what re's backtracking took from "\s+([^\n]{1,500})",
    # written so that RE2 need not follow 500 ways to split a long run of spaces.
    (
        "answer_is",
        Screened(
            ContextPattern(
                r"(?:^|\W)(?:the|my) (?:correct |short )?answer is:?\s+(?:(\S[^\n]{0,499})|([^\n])\n*\z)()",
                ignore_case=True,
            ),
            ("answer is",),
            ignore_case=True,
            lead=13,
        ),
    ),
)
"""Explicit answer markers, in the order they are tried (RE2: linear in the response), each screened by the
word every match of it contains."""

_NUMBER_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "none": 0,
}
# A number or a number word that is no part of a longer word; digits also not right after a point.
_NUMBER = ContextPattern(
    r"(?:(?:^|[^\w.])([-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s*/\s*\d+)?)|(?:^|\W)("
    + "|".join(_NUMBER_WORDS)
    + r"))(\z|\W)",
    ignore_case=True,
)


@dataclass(frozen=True)
class FinalAnswer:
    """The part of a response taken as its answer."""

    text: str
    """The answer text (stripped of markdown emphasis), or "" when the response is empty."""
    method: str
    """Marker that found it (``json``, ``boxed``, ``final_answer``, ``answer_line``,
    ``answer_is``), ``last_line`` without a marker, or ``none`` for an empty response."""
    stated: tuple[str, ...] = ()
    """The different answers the winning marker stated, in order of last mention
    (``text`` is the last); more than one makes the answer ambiguous."""

    @property
    def explicit(self) -> bool:
        """Whether the response marked its answer explicitly."""
        return self.method not in ("last_line", "none")

    @property
    def ambiguous(self) -> bool:
        """Whether the response marked two or more different answers the same way."""
        return len(self.stated) > 1


def _clean(text: str) -> str:
    return text.strip().strip("*_`\"'").strip().rstrip(".").strip()


def _stated(texts: list[str]) -> tuple[str, ...]:
    """Keep one text per different answer (compared normalized), ordered by its last mention."""
    last: dict[str, tuple[int, str]] = {}
    for order, text in enumerate(texts):
        last[normalize_text(text)] = (order, text)
    return tuple(text for _, text in sorted(last.values()))


def extract_marked_answer(response: str, markers: tuple[str, ...] | None = None) -> FinalAnswer | None:
    """Return the response's explicitly marked final answer, or None when it marks none.

    ``markers`` restricts the markers tried (names as in :attr:`FinalAnswer.method`).

    Examples
    --------
    >>> extract_marked_answer("Paris is big.\\nFinal answer: **Paris**").text
    'Paris'
    >>> extract_marked_answer("Answer: 5\\nno, wait.\\nAnswer: 7").stated
    ('5', '7')
    >>> extract_marked_answer("I think it is London") is None
    True
    """
    for method, pattern in _MARKERS:
        if markers is not None and method not in markers:
            continue
        texts = [_clean(next(g for g in match.groups() if g is not None)) for match in pattern.finditer(response)]
        if texts and texts[-1]:
            return FinalAnswer(texts[-1], method, _stated([text for text in texts if text]))
    return None


def extract_final_answer(response: str, markers: tuple[str, ...] | None = None) -> FinalAnswer:
    """Return the response's final answer and how it was found: the marked one, else the last line.

    Examples
    --------
    >>> extract_final_answer("Paris is big.\\nFinal answer: **Paris**").text
    'Paris'
    >>> extract_final_answer("I think it is London").method
    'last_line'
    """
    marked = extract_marked_answer(response, markers)
    if marked is not None:
        return marked
    lines = [line for line in response.splitlines() if line.strip()]
    if not lines:
        return FinalAnswer("", "none")
    return FinalAnswer(_clean(lines[-1]), "last_line", (_clean(lines[-1]),))


def parse_number(token: str) -> float | None:
    """Turn one number token ("1,000", "-2.5", "3/4", "seven") into a float."""
    token = token.strip().lower().replace("−", "-").replace(",", "")
    if token in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[token])
    if "/" in token:
        top, bottom = (part.strip() for part in token.split("/", 1))
        return float(top) / float(bottom) if float(bottom) != 0 else None
    try:
        return float(token)
    except ValueError:
        return None


def find_numbers(text: str) -> list[float]:
    """Return every number in ``text``, in order (digits, fractions, words up to twenty)."""
    numbers = (parse_number(next(filter(None, match.texts))) for match in _NUMBER.finditer(text))
    return [number for number in numbers if number is not None]
