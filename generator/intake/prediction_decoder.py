"""Confirm valid lines of predictions.jsonl fast; every other line gets the exact, worded checks.

A million-line predictions file cannot afford Python's ``json`` with a hook
per object and a JSON Schema call per line. Here one compiled msgspec decoder
parses a line and checks its types in C, against :class:`Prediction`: the
contract itself, from which the documented JSON Schema is made
(:func:`dualboard.intake.schemas.load_schema`). The fast path only ever says "valid": a line it cannot
confirm returns ``None`` and goes through
:func:`~dualboard.intake.untrusted.parse_json_line` and the schema, which word
the finding. So the fast path decides speed, never a message.

msgspec is strict where the contract is (no ``NaN``, no ``1.0`` for an
integer, no ``true`` for a number, no lone surrogate, no invalid UTF-8), with
one exception: like every JSON library it keeps the last of two equal keys,
where the contract refuses the line (a reviewer would read one ``response``,
the grader another). :func:`_keys_given_once` closes that gap.

A whole file is confirmed at once by :func:`confirmed_lines`: one C call decodes every line (the file read as
one JSON array, a comma after each line break, so that a value can neither span two lines nor share one: a
line break inside a string is refused as ever, and anywhere else but between two values the comma is
misplaced), and one pass counting the keys' names stands in for the per-line duplicate check.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import chain
from operator import attrgetter
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

_Score = Annotated[int, Meta(ge=0, le=100)] | Annotated[float, Meta(ge=0, le=100)]
"""A score as given: an integer stays one (msgspec would make a float of it), so rows match the exact path's."""


class Prediction(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, gc=False):
    """One line of predictions.jsonl: the contract, and the JSON Schema made from it (fields in the documented
    order: ``kw_only`` lets ``round``, which has a default, come before ``response``).

    Not tracked by the garbage collector (``gc=False``): its fields, strings, numbers and their lists and
    dicts, can form no cycle, and a million decoded lines would otherwise make every collection walk them.
    """

    question_id: Annotated[
        str, Meta(min_length=1, max_length=200, description="Id of the answered question in questions.jsonl.")
    ]
    round: (
        Annotated[
            int,
            Meta(
                ge=0,
                description="Sampling round, 0-based; (question_id, round) is unique.",
                extra_json_schema={"default": 0},
            ),
        ]
        | UnsetType
    ) = UNSET
    response: Annotated[str, Meta(description="The raw model text. Untrusted: always escaped on the site.")]
    choice_order: (
        Annotated[
            list[Annotated[str, Meta(pattern="^[A-Z]$")]],
            Meta(description="Canonical letters in the order the options were shown (MC, shuffled rounds)."),
        ]
        | UnsetType
    ) = UNSET
    recorded: (
        Annotated[
            dict[str, _Score],
            Meta(description="Scores imported from a source, by grading name, on 0–100."),
        ]
        | UnsetType
    ) = UNSET


_DECODER = msgspec.json.Decoder(Prediction)
LEAD = b"["
"""What :func:`confirmed_framed` wants before a file's bytes: a file read into a buffer behind it (see
``validate._read_hashed``) decodes as one JSON array without a copy made only to put a bracket in front."""
_FILE_DECODER = msgspec.json.Decoder(list[Prediction])
_QUESTION_ID, _ROUND, _CHOICE_ORDER, _RECORDED = map(attrgetter, ("question_id", "round", "choice_order", "recorded"))
"""A field of every line of a file at once (``map``), as the checks of a whole file take them."""
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.-]+")
"""Keys the duplicate check can vouch for: JSON can spell them otherwise only with a ``\\u00XX`` escape."""
_ESCAPED_PLAIN_CHARACTER = re.compile(rb"\\u00(?:2[dDeE]|3[0-9]|[4-6][0-9A-Fa-f]|7[0-9aA])")
"""An escape of a character of :data:`_PLAIN_KEY` (``\\u0072`` spells ``r``), which json.dumps never writes."""


def confirmed_row(raw: bytes) -> dict[str, Any] | None:
    """The row of a line that surely passes the strict parser and the schema; ``None`` when unsure.

    The row is what the exact path would give: the line's fields, ``round``
    filled in with the contract's default 0.

    Examples
    --------
    >>> confirmed_row(b'{"question_id": "q1", "response": "4"}\\n')
    {'question_id': 'q1', 'round': 0, 'response': '4'}
    >>> confirmed_row(b'{"question_id": "q1", "response": "4", "response": "5"}') is None  # duplicate key
    True
    >>> confirmed_row(b'{"question_id": "q1", "response": "4", "round": 1.0}') is None  # not an integer
    True
    """
    try:
        line = _DECODER.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError):  # not JSON, not the contract, or not UTF-8
        return None
    if not _keys_given_once(raw, line):
        return None
    return as_row(line)


def confirmed_lines(data: bytes) -> list[Prediction] | None:
    """Every line of a whole predictions.jsonl, when each surely passes the strict parser and the schema.

    ``None`` when unsure about any line (a blank line included): the caller
    then reads the file line by line. One final line break is allowed. A line
    is taken as a ``confirmed_row`` would take it; :func:`as_row` makes its row.
    :func:`confirmed_framed` does the work, for a file read behind :data:`LEAD`.

    Examples
    --------
    >>> [as_row(line) for line in confirmed_lines(b'{"question_id": "q1", "response": "4", "round": 1}\\n')]
    [{'question_id': 'q1', 'round': 1, 'response': '4'}]
    >>> confirmed_lines(b'{"question_id": "q1", "response": "4"} {"question_id": "q2", "response": "5"}') is None
    True
    >>> confirmed_lines(b'{"question_id": "q1", "response": "4"},{"question_id": "q2", "response": "5"}') is None
    True
    """
    return confirmed_framed(bytearray(LEAD) + data)


def confirmed_framed(framed: bytearray) -> list[Prediction] | None:
    """:func:`confirmed_lines` of the file whose bytes follow :data:`LEAD` in ``framed`` (left as it was).

    The file is decoded as one JSON array: ``framed`` already opens it, and the
    one copy made puts a comma after each line break and closes it.
    """
    # the comma after each line break is misplaced unless the break stands between two values
    array = framed.replace(b"\n", b"\n,")
    breaks = len(array) - len(framed)
    if framed.endswith(b"\n"):  # one final line break is allowed: it and its comma go
        del array[-2:]
        breaks -= 1
    array += b"]"
    try:
        lines = _FILE_DECODER.decode(array) if len(array) > 2 else []
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    if lines and len(lines) != breaks + 1:  # two values on one line, joined by a comma of their own
        return None
    return lines if _file_keys_given_once(memoryview(framed)[len(LEAD) :], lines) else None


def as_row(line: Prediction) -> dict[str, Any]:
    """The row of a confirmed line: its fields, ``round`` filled in with the contract's default 0."""
    row = {
        "question_id": line.question_id,
        "round": 0 if line.round is UNSET else line.round,
        "response": line.response,
    }
    if line.choice_order is not UNSET:
        row["choice_order"] = line.choice_order
    if line.recorded is not UNSET:
        row["recorded"] = line.recorded
    return row


def _keys_given_once(raw: bytes, line: Prediction) -> bool:
    """True only when no key of ``raw`` is given twice (msgspec keeps the last one silently).

    Every key is a plain name, spelt in ``raw`` as ``"name"`` unless written
    with a ``\\u00XX`` escape, and a line holding such an escape is not
    vouched for. So a key given twice leaves ``"name"`` twice in ``raw``, and
    counting it is enough. A count above one that comes from inside a string
    (``say \\"round"``) only sends the line to the exact check.
    """
    if b"\\u00" in raw and _ESCAPED_PLAIN_CHARACTER.search(raw):
        return False
    if raw.count(b'"question_id"') > 1 or raw.count(b'"response"') > 1 or raw.count(b'"round"') > 1:
        return False
    if line.choice_order is not UNSET and raw.count(b'"choice_order"') > 1:
        return False
    if line.recorded is UNSET:
        return True
    if raw.count(b'"recorded"') > 1 or not all(_PLAIN_KEY.fullmatch(key) for key in line.recorded):
        return False
    return all(raw.count(f'"{key}"'.encode()) <= 1 for key in line.recorded)


def answer_keys(lines: list[Prediction]) -> list[tuple[str, int]]:
    """(question_id, round) of each confirmed line, ``round`` filled in with the contract's default 0.

    Examples
    --------
    >>> lines = b'{"question_id": "q1", "response": "4"}\\n{"question_id": "q1", "response": "5", "round": 1}'
    >>> answer_keys(confirmed_lines(lines))
    [('q1', 0), ('q1', 1)]
    """
    rounds = list(map(_ROUND, lines))  # over a column in C: ten thousand lines take a few milliseconds
    if UNSET in rounds:
        rounds = [0 if round_ is UNSET else round_ for round_ in rounds]
    return list(zip(map(_QUESTION_ID, lines), rounds))


def _file_keys_given_once(data: bytes | memoryview, lines: list[Prediction]) -> bool:
    """True only when no line of ``data`` gives a key twice: :func:`_keys_given_once` over a whole file.

    Every key of every line is decoded (unknown ones are refused), and a key
    given twice still decodes once. With no ``\\u00XX`` escape of a plain
    character, every key is spelt ``"name"`` in ``data``, so each name is
    found at least as often as the decoded lines hold it, and more often if
    some line gives it twice. Found as often in all, every name is found
    exactly as often: every key is given once.
    """
    if _ESCAPED_PLAIN_CHARACTER.search(data):  # the regex's literal prefix scans faster than bytes' ``in``
        return False
    recorded = list(map(_RECORDED, lines))
    unrecorded = recorded.count(UNSET)
    expected = Counter(
        chain.from_iterable(scores for scores in recorded if scores is not UNSET) if unrecorded < len(lines) else ()
    )
    expected.update(
        question_id=len(lines),
        response=len(lines),
        round=len(lines) - list(map(_ROUND, lines)).count(UNSET),
        choice_order=len(lines) - list(map(_CHOICE_ORDER, lines)).count(UNSET),
        recorded=len(lines) - unrecorded,
    )
    names = [name for name, count in expected.items() if count]
    if not all(_PLAIN_KEY.fullmatch(name) for name in names):
        return False
    # one pass for every name: alternatives that all start with '"' are scanned for fast
    spelt = re.compile(b'"(?:' + b"|".join(re.escape(name.encode()) for name in names) + b')"')
    return len(spelt.findall(data)) == sum(expected.values())
