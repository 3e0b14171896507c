"""Find which option a free-text answer to a multiple-choice question committed to.

Real answers say it many ways: ``{"ANSWER": "C"}`` (in a ```json fence, with
single quotes, lower case, after an explanation key), ``Answer: C``, ``**C**``,
``(C)``, "the answer is C.", or the option's text instead of its letter. The
methods below are tried in a fixed order; within a method the *last*
commitment wins (models reason first and answer last) — except that a caller
may ask for the *first* JSON answer, the rule of sources that parse the first
JSON object — and when a method finds several different options the
extraction records the ambiguity.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dualboard.grading.errors import GradingInputError
from dualboard.linear_regex import RegexMatch, Screened, compile_linear

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
JSON_ANSWER_RULES = ("last", "first")
"""Which of several JSON answers counts (:func:`extract_choice`); the first listed is the default."""

# {"ANSWER": "C"}, {'answer': 'c'}, {ANSWER: C}, "final_answer": "B. text". A bare letter must
# end its word: _json_matches checks the character after it (RE2 has no lookahead).
_JSON_ANSWER = Screened(
    compile_linear(
        r"""(?:["']|\{\s*)(?:final[ _]?)?answer["']?\s*:\s*(?:"([^"\n]{0,300})"|'([^'\n]{0,300})'|([A-Za-z]))""",
        ignore_case=True,
    ),
    ("answer",),
    ignore_case=True,
    lead=7,  # a quote and "final_" before "answer", or "{", any whitespace (spaced), and "final_"
    spaced=True,
)
# "Answer: C", "the answer is C.", "Final answer: **(C)**", "correct option is B". The last
# group takes the character that must follow the letter; no later match can start with it.
_PHRASE_ANSWER = Screened(
    compile_linear(
        r"(?m)(?i:final answer|correct answer|best answer|answer|correct option|correct choice|best option)"
        r"(?:\s+(?i:is|would be|should be|will be))?\s*(?i:option|choice)?\s*[:=\-]?\s*[*_`\"']*\(?"
        r"([A-Z])\)?[*_`\"']*($|[\s.,;:!)\]])"
    ),
    ("answer", "option", "choice"),
    ignore_case=True,  # the words are matched ignoring case
    lead=8,  # a match starts with its word, or "correct ", "best " or "final " before it
)
_BOLD_LETTER = Screened(compile_linear(r"\*\*\(?([A-Z])\)?[.):]?\*\*|\*\*\(?([A-Z])[.):]"), ("**",), lead=0)
# "(C)"; _paren_matches checks that it is neither inside a word nor doubled.
_PAREN_LETTER = Screened(compile_linear(r"\(([A-Z])\)"), ("(",), lead=0)
_LEADING_LETTER = compile_linear(r"(?s)^\s*\(?([A-Z])\)?(?:[.):\-]\s+.*|\s*)\z")
_ANSWER_IS = compile_linear("answer is", ignore_case=True)


@dataclass(frozen=True)
class ChoiceExtraction:
    """Result of reading one answer for its chosen option."""

    index: int | None
    """Position of the chosen option among the options *as shown*, or None."""
    method: str
    """``bare``, ``json``, ``phrase``, ``bold``, ``paren``, ``option_text`` or ``none``."""
    candidates: tuple[int, ...]
    """Distinct positions the winning method found, in order of last mention."""
    took: str = "last"
    """Which of several commitments counts: ``last``, or ``first`` when the caller asked so for JSON."""

    @property
    def ambiguous(self) -> bool:
        """Whether the winning method saw more than one different option."""
        return len(self.candidates) > 1


def _is_word_char(char: str) -> bool:
    """Whether ``char`` (one character, or "" at either end of a text) is a word character to ``re``."""
    return char.isalnum() or char == "_"


TEXTS_REMEMBERED = 16
"""Results :func:`normalize_text` remembers: the few texts one answer's grading normalizes, each several times."""

_ASCII_BLANKED = str.maketrans(
    {chr(c): " " for c in range(128) if not (_is_word_char(chr(c)) or chr(c).isspace() or chr(c) in "'.,")}
)
"""What :func:`normalize_text` blanks in an ASCII text, every point and comma kept (they are decided next)."""


@functools.lru_cache(maxsize=TEXTS_REMEMBERED)
def normalize_text(text: str) -> str:
    """Lower-case, drop punctuation except inside numbers, collapse spaces.

    An ASCII text (nearly every answer) goes through one ``str.translate`` and
    a look at each point and comma; any other text through the loop over its
    characters. Both keep exactly the same characters (tests compare them on
    every code point). The last :data:`TEXTS_REMEMBERED` results are
    remembered: grading normalizes an answer it read when it compares the
    answers a response states, then again against the key's texts, twice.

    Examples
    --------
    >>> normalize_text("It’s 3.5 or 1,000!  (Paris.)")
    'its 3.5 or 1,000 paris'
    """
    text = text.lower().replace("’", "'").replace("‘", "'")
    if text.isascii():
        kept = _blank_lone_points(text.translate(_ASCII_BLANKED))
    else:  # one pass over the characters (no regular expression: linear, and fast on 100 KB)
        kept = "".join(
            char
            if _is_word_char(char) or char.isspace() or char == "'" or (char in ".," and _touches_digit(text, at))
            else " "
            for at, char in enumerate(text)
        )
    return " ".join(kept.replace("'", "").split())


def _blank_lone_points(text: str) -> str:
    """``text`` with every point and comma that touches no digit blanked (the point of 3.5 stays)."""
    pieces, start = [], 0
    for at in sorted(_positions(text, ".") + _positions(text, ",")):
        if not _touches_digit(text, at):
            pieces += [text[start:at], " "]
            start = at + 1
    return "".join([*pieces, text[start:]])


def _positions(text: str, char: str) -> list[int]:
    """Where ``char`` occurs in ``text`` (found by ``str.find``, in C)."""
    found, at = [], text.find(char)
    while at >= 0:
        found.append(at)
        at = text.find(char, at + 1)
    return found


def _touches_digit(text: str, at: int) -> bool:
    """Whether the character at ``at`` has a digit on either side (the point of 3.5, the comma of 1,000)."""
    return text[at - 1 : at].isdecimal() or text[at + 1 : at + 2].isdecimal()


@functools.lru_cache(maxsize=1 << 16)
def normalize_question_text(text: str) -> str:
    """:func:`normalize_text` of a question's own text (an option, the correct choice, a key's answer or
    alias), remembered: every answer to the question reads it again, several times. Never for a response,
    whose texts are each read once (the cache would hold them for nothing; :func:`normalize_text` remembers
    only the last few)."""
    return normalize_text(text)


def shown_options(question: dict[str, Any], prediction: dict[str, Any]) -> list[str]:
    """Return the option texts in the order the model saw them.

    ``choice_order`` lists the canonical letters of ``choices`` in the order
    shown (the predictions.jsonl contract), e.g. ``["C", "A", "D", "B"]``.
    """
    choices = [str(c) for c in question.get("choices") or []]
    order = prediction.get("choice_order")
    if not order:
        return choices
    if any(not isinstance(letter, str) or letter not in LETTERS[: len(choices)] for letter in order):
        raise GradingInputError(
            f"question {question.get('id')!r}: choice_order {order!r} names options outside the "
            f"{len(choices)} choices — "
            "list the canonical letters of questions.jsonl's choices (A, B, ...) in the order shown"
        )
    return [choices[LETTERS.index(letter)] for letter in order]


def options_as_shown(question: dict[str, Any], prediction: dict[str, Any]) -> tuple[str, str, str]:
    """One answer's ``choice_order`` (letters joined), its options lettered as shown, and the correct letter.

    Empty strings for an open question; the options show "—" for an order validation would refuse.

    Examples
    --------
    >>> q = {"id": "q", "choices": ["96", "102", "112"], "correct_choice": "B"}
    >>> options_as_shown(q, {"choice_order": ["C", "B", "A"]})
    ('CBA', 'A. 112  B. 102  C. 96', 'B')
    """
    if not question.get("choices"):
        return "", "", ""
    order = prediction.get("choice_order")
    joined = "".join(order) if isinstance(order, list) and all(isinstance(x, str) for x in order) else ""
    try:
        shown = shown_options(question, prediction)
    except GradingInputError:
        return joined, "—", ""
    correct = correct_index(question, shown)
    letters = "  ".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(shown))
    return joined, letters, LETTERS[correct] if correct is not None else ""


def correct_index(question: dict[str, Any], shown: Sequence[str]) -> int | None:
    """Return the position of the correct option among ``shown``.

    ``correct_choice`` may be the option text (preferred: it survives
    shuffling), an index into ``choices`` or a letter of the unshuffled list.
    """
    correct = question.get("correct_choice")
    choices = [str(c) for c in question.get("choices") or []]
    if isinstance(correct, int) and 0 <= correct < len(choices):
        correct = choices[correct]
    elif isinstance(correct, str) and correct not in choices and len(correct) == 1:
        position = LETTERS.find(correct.upper())
        correct = choices[position] if 0 <= position < len(choices) else correct
    wanted = normalize_question_text(str(correct))
    matches = [i for i, text in enumerate(shown) if normalize_question_text(text) == wanted]
    return matches[0] if matches else None


def _value_to_index(value: str, shown: Sequence[str], allow_lower: bool) -> int | None:
    """Map an answer value (a letter, "C. text" or an option's text) to a position."""
    value = value.strip().strip("*_`").strip()
    match = _LEADING_LETTER.match(value if not allow_lower else value.upper()[:1] + value[1:])
    if match and LETTERS.index(match.group(1)) < len(shown):
        return LETTERS.index(match.group(1))
    wanted = normalize_text(value)
    hits = [i for i, text in enumerate(shown) if wanted and normalize_question_text(text) == wanted]
    return hits[0] if len(hits) == 1 else None


def _last_distinct(positions: list[int]) -> tuple[int, ...]:
    """Return the distinct positions ordered by their last mention."""
    seen: dict[int, int] = {}
    for order, position in enumerate(positions):
        seen[position] = order
    return tuple(sorted(seen, key=seen.__getitem__))


def _json_matches(response: str) -> Iterator[RegexMatch]:
    """Yield each JSON-style answer whose bare letter, if any, ends its word ({answer: Because} is no "B")."""
    for match in _JSON_ANSWER.finditer(response):
        if match.group(3) is None or not _is_word_char(response[match.end() : match.end() + 1]):
            yield match


def _json_positions(response: str, shown: Sequence[str]) -> list[int]:
    positions = []
    for match in _json_matches(response):
        value = next(g for g in match.groups() if g is not None)
        position = _value_to_index(value, shown, allow_lower=True)
        if position is not None:
            positions.append(position)
    return positions


def _paren_matches(response: str) -> Iterator[RegexMatch]:
    """Yield each "(C)" that is neither inside a word nor doubled ("((C))" is not an answer)."""
    for match in _PAREN_LETTER.finditer(response):
        before, after = response[match.start() - 1 : match.start()], response[match.end() : match.end() + 1]
        if not (_is_word_char(before) or before == "(" or _is_word_char(after)):
            yield match


def _letter_positions(matches: Iterable[RegexMatch], n_options: int) -> list[int]:
    positions = []
    for match in matches:
        letter = next(g for g in match.groups() if g is not None)
        if LETTERS.index(letter) < n_options:
            positions.append(LETTERS.index(letter))
    return positions


def _phrase_positions(response: str, shown: Sequence[str]) -> list[int]:
    """Find "Answer: C"-style commitments; "the answer is A pound of feathers" names an option's text."""
    several_words = [
        (i, normalize_question_text(text) + " ") for i, text in enumerate(shown) if " " in normalize_question_text(text)
    ]
    positions = []
    for match in _PHRASE_ANSWER.finditer(response):
        tail = normalize_text(response[match.start(1) : match.start(1) + 300]) + " " if several_words else ""
        named = [i for i, text in several_words if tail.startswith(text)]
        letter = LETTERS.index(match.group(1))
        if named or letter < len(shown):
            positions.append(named[0] if named else letter)
    return positions


def _option_text_positions(response: str, shown: Sequence[str]) -> list[int]:
    """Find an option named by its exact text on the last non-empty line.

    The line itself, or what follows its last colon or "answer is", must be the
    option's text: a word that merely occurs ("a difficult one") is not a choice.
    """
    lines = [line for line in response.splitlines() if line.strip()]
    if not lines:
        return []
    last = lines[-1]
    tails = {last, last.rsplit(":", 1)[-1], _ANSWER_IS.split(last)[-1]}
    wanted = {normalize_text(tail) for tail in tails} - {""}
    return [i for i, text in enumerate(shown) if normalize_question_text(text) in wanted][:1]


CHOICES_REMEMBERED = 1 << 14
"""Readings :func:`extract_choice` remembers. ``mc_letter`` and ``rules`` both read every multiple-choice
answer, one grader over a whole run, then the other: remembering a run's readings (up to this many answers)
reads each answer once. The memory held is the references to responses already in memory, and the results."""


def extract_choice(response: str, shown: Sequence[str], json_answer: str = "last") -> ChoiceExtraction:
    """Return the option the response committed to, and how it was found (remembered: :data:`CHOICES_REMEMBERED`).

    Parameters
    ----------
    response
        The raw model text.
    shown
        Option texts in the order the model saw them (letter A is ``shown[0]``).
    json_answer
        ``last`` (default) or ``first``: which of several JSON answers counts.
        Other methods always take the last commitment.

    Examples
    --------
    >>> extract_choice('Because... ```json\\n{"ANSWER": "B"}\\n```', ["x", "y"]).index
    1
    >>> extract_choice("The answer is A.", ["x", "y"]).method
    'phrase'
    >>> extract_choice('{"ANSWER": "A"} or rather {"ANSWER": "B"}', ["x", "y"], json_answer="first").index
    0
    """
    return _extract_choice(response, tuple(shown), json_answer)


@functools.lru_cache(maxsize=CHOICES_REMEMBERED)
def _extract_choice(response: str, shown: tuple[str, ...], json_answer: str) -> ChoiceExtraction:
    """:func:`extract_choice`, computed (its result is a frozen value, safe to hand out twice)."""
    n_options = min(len(shown), len(LETTERS))
    core = response.strip().strip("*_`\"'").strip("().").strip()
    if len(core) == 1 and core.upper() in LETTERS[:n_options]:
        index = LETTERS.index(core.upper())
        return ChoiceExtraction(index, "bare", (index,))
    finders = (
        ("json", lambda: _json_positions(response, shown)),
        ("phrase", lambda: _phrase_positions(response, shown)),
        ("bold", lambda: _letter_positions(_BOLD_LETTER.finditer(response), n_options)),
        ("paren", lambda: _letter_positions(_paren_matches(response), n_options)),
        ("option_text", lambda: _option_text_positions(response, shown)),
    )
    for method, find in finders:
        positions = find()
        if positions:
            took = json_answer if method == "json" else "last"
            chosen = positions[0] if took == "first" else positions[-1]
            return ChoiceExtraction(chosen, method, _last_distinct(positions), took)
    return ChoiceExtraction(None, "none", ())
