"""Whether a final answer commits to one answer: what ``rules`` passes must be a commitment, not a hedge.

A final answer that contains the key may still not say it: "not 36", "24 or 36",
"36 is tempting, but it is 37", every option of a multiple-choice question.
:func:`uncommitted` takes the key's own text out of the final answer and looks
at what is left: another candidate (a second number, another option, a second
item of a list), a word that negates, hedges or offers an alternative, or far
more words than the key has. Any of them means the model did not commit, and
``rules`` fails the answer (score 0, the reason in its detail): no verdict
would let a run hedge away the questions it finds hardest.

Plain string operations only (no regular expression on the response): linear
in its length.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dualboard.grading.choices import normalize_question_text, normalize_text
from dualboard.grading.final_answer import find_numbers
from dualboard.grading.matching import number_within

NEGATIONS = frozenset(
    "not no never none nothing neither nor isnt arent wasnt werent doesnt dont didnt cannot cant wont "
    "except excluding besides wrong incorrect false".split()
)
"""Words that negate what stands beside them (normalized: "isn't" is ``isnt``), unless the key itself
negates ("No", "It cannot be known"): there they agree with it."""
HEDGES = frozenset(
    "or either and versus vs maybe perhaps possibly probably likely unlikely might could unsure uncertain "
    "unclear guess tempting but however although though unless instead rather alternatively otherwise "
    "anything whatever other others something".split()
)
"""Words that offer an alternative, a list or a doubt, outside the key's own text."""
SEPARATORS = ",;/|&"
"""Characters that join the items of a list ("24, 36"; "24/36"), unless they sit inside a number
("1,000", "7/12")."""
EXTRA_WORDS = 8
"""A final answer may run to twice the key's words plus this many (a unit, "the answer is", a title);
a longer one is a passage, not one committed answer."""


@dataclass(frozen=True)
class KeyTexts:
    """What a final answer may say to commit to the key: the texts taken out before the rest is read."""

    texts: tuple[str, ...]
    """The key's answer and aliases, or the chosen option's text and letter, as they may appear."""
    number: tuple[float, float] | None = None
    """A numeric key's value and tolerance: any other number in the final answer is another candidate."""
    others: tuple[str, ...] = ()
    """The other options of a multiple-choice question: naming one is another candidate."""


def uncommitted(answer: str, key: KeyTexts, matched: Iterable[str] = ()) -> str | None:
    """Return why ``answer`` (a final answer that passed the key) does not commit to it, or None.

    ``matched`` are spans of ``answer`` that matched one of the key's patterns: taken out with the key's texts.

    Examples
    --------
    >>> key = KeyTexts(("36", "thirty six"), (36.0, 0.0))
    >>> uncommitted("36 apples", key) is None
    True
    >>> uncommitted("24 or 36", key)
    "names 2 different numbers (the key's and 24)"
    >>> uncommitted("not 36", key)
    "says 'not' beside it"
    """
    words = normalize_text(answer).split()
    keyed = [normalize_question_text(text).split() for text in key.texts]
    longest = max((len(text) for text in keyed), default=1)
    if len(words) > 2 * longest + EXTRA_WORDS:
        return f"runs to {len(words)} words against the key's {longest}"
    rest = _without(_without(words, *(normalize_text(span).split() for span in matched)), *keyed)
    if key.number is not None and (others := _other_numbers(" ".join(rest), key.number)):
        return f"names {len(others) + 1} different numbers (the key's and {', '.join(f'{n:g}' for n in others[:5])})"
    named = [other for other in key.others if _holds(rest, normalize_question_text(other).split())]
    if named:
        return f"also names the option {named[0][:40]!r}"
    # A key that negates ("No", "It cannot be known") is agreed with in negations, not hedged.
    negating_key = any(word in NEGATIONS for text in keyed for word in text)
    flagged = [word for word in rest if word in HEDGES or (word in NEGATIONS and not negating_key)]
    if flagged:
        return f"says {flagged[0]!r} beside it"
    if rest and _is_list(answer, max(longest + 1, 3)):
        return f"lists {' '.join(rest)[:40]!r} beside it"
    return None


def _other_numbers(text: str, key: tuple[float, float]) -> list[float]:
    """The different numbers of ``text`` that are not the key's (within its tolerance)."""
    return list(dict.fromkeys(n for n in find_numbers(text) if not number_within(n, *key)))


def _holds(words: list[str], text: list[str]) -> bool:
    """Whether ``text`` (words) occurs in ``words`` as whole words."""
    return bool(text) and f" {' '.join(text)} " in f" {' '.join(words)} "


def _without(words: list[str], *texts: list[str]) -> list[str]:
    """``words`` with every whole-word occurrence of each text taken out (longest texts first)."""
    line = f" {' '.join(words)} "
    for text in sorted(texts, key=len, reverse=True):
        taken = f" {' '.join(text)} "
        while text and taken in line:  # a second pass takes what the first skipped: adjacent ones share a space
            line = line.replace(taken, " ")
    return line.split()


def _is_list(answer: str, item_words: int) -> bool:
    """Whether ``answer`` is a list: separators (:data:`SEPARATORS`, none inside a number) between items of at
    most ``item_words`` words each ("oxygen, carbon dioxide"; not "yes, ask him to spin again")."""
    items, start = [], 0
    for at, char in enumerate(answer):
        if char in SEPARATORS and not (answer[at - 1 : at].isdecimal() and answer[at + 1 : at + 2].isdecimal()):
            items.append(answer[start:at])
            start = at + 1
    words = [len(normalize_text(item).split()) for item in [*items, answer[start:]]]
    return len([n for n in words if n]) > 1 and max(words) <= item_words
