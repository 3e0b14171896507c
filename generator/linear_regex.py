r"""Regular expressions that run in linear time on any text (RE2).

Model responses, judge replies and the answer-key ``patterns`` of
questions.jsonl all arrive by pull request. Python's ``re`` backtracks: a
pattern with two adjacent ``\s*`` took 39 s on a 2,000-character answer and
would take days on a 100 KB one. RE2 matches in time linear in the text for
every pattern it accepts, so every pattern that grading applies to such text is
compiled here, with one set of options, and intake checks answer-key patterns
with the function grading uses (:func:`compile_key_pattern`).

Two differences from ``re`` shape the patterns grading writes:

* RE2's ``\w``, ``\d`` and ``\s`` are ASCII-only; ``re``'s are Unicode.
  :func:`compile_linear` rewrites them to classes equal to ``re``'s on every
  code point Python's Unicode database assigns, so "é1" or a no-break space
  reads as before. RE2's ``\b`` cannot be made Unicode: grading's patterns
  write word boundaries as context characters instead (see below), and
  :func:`compile_linear` refuses ``\b``. (One known difference stays: ``re``
  folds Turkish ``İ`` and ``ı`` onto ``i`` when ignoring case, RE2 does not.)
* RE2 has no lookaround and no backreferences. A one-character lookaround
  becomes a consumed character; :class:`ContextPattern` searches so that the
  character one match consumed after itself can still precede the next match.

Answer-key patterns are RE2 syntax as written (:func:`compile_key_pattern`):
there ``\w``, ``\d``, ``\s`` and ``\b`` are ASCII, and ``\pL`` is any letter.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import re2

from dualboard.errors import DualboardError

_WORD = r"\pL\pN_"
_SPACE = r"\t\n\v\f\r\x1c-\x1f \x85\xa0\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
_CLASSES = {  # re's Unicode shorthand: (RE2 outside a class, RE2 inside one or None)
    "w": (f"[{_WORD}]", _WORD),
    "W": (f"[^{_WORD}]", None),
    "d": (r"\p{Nd}", r"\p{Nd}"),
    "D": (r"\P{Nd}", r"\P{Nd}"),
    "s": (f"[{_SPACE}]", _SPACE),
    "S": (f"[^{_SPACE}]", None),
}

KEY_PATTERN_MAX_SIZE = 2000
"""Largest answer-key pattern, in RE2 instructions. Matching stays linear in the text at any
size, but each character may cost a step per instruction: ``.{0,1000}.{0,1000}x`` (18,005)
takes 3 s on 100 KB; answer keys need a few dozen."""

GRADING_MAX_MEM = 16 << 20
"""RE2's memory for each of grading's own patterns (:func:`compile_linear`; its default is 8 MB). A marker
taking up to 500 characters (``[^\\n]{1,500}``) compiles to 31,000 instructions, which leave the default
too little room for the automaton's states: RE2 then drops back to its slower engine, and a 2 KB answer's
markers cost four times as long. Matches are the same either way (RE2 picks the engine, not the result); the
memory is taken only as states are built, and is bounded by this figure."""

PATTERN_FIX = (
    r"rewrite it in RE2 syntax: no lookaround ((?=, (?!, (?<=, (?<!), no backreferences (\1), "
    r"\z instead of \Z; \w, \d, \s and \b are ASCII there (write \pL for any letter)"
)
"""What to do about an answer-key pattern RE2 cannot compile."""

Regex = Any
"""A compiled RE2 pattern (``re2.compile``'s result; re2 names its type only privately)."""
RegexMatch = Any
"""A match of a :data:`Regex`."""


class PatternSyntaxError(DualboardError):
    """A regular expression RE2 cannot compile (lookaround, backreference, bad syntax)."""

    def __init__(self, pattern: str, reason: str, fix: str = PATTERN_FIX):
        self.problem = f"pattern {pattern[:80]!r} cannot run in linear time (RE2): {reason}"
        self.fix = fix
        super().__init__(f"{self.problem} — {fix}")


def compile_linear(pattern: str, *, ignore_case: bool = False) -> Regex:
    r"""Compile one of grading's own patterns: ``re`` syntax without lookaround, ``\b`` or backreferences.

    ``\w``, ``\d`` and ``\s`` keep their Unicode meaning (:func:`unicode_classes`).

    Raises
    ------
    PatternSyntaxError
        When RE2 rejects the pattern; the message names the pattern and the reason.
    """
    return _compile(unicode_classes(pattern), ignore_case, GRADING_MAX_MEM)


@functools.lru_cache(maxsize=4096)
def compile_key_pattern(pattern: str) -> Regex:
    r"""Compile one answer-key pattern (``answer_key.patterns``): RE2 syntax as written, ignoring case.

    Examples
    --------
    >>> bool(compile_key_pattern(r"\bno\s+smoke\b").search("No  smoke without fire"))
    True
    >>> compile_key_pattern(r"(?<!not )true")
    Traceback (most recent call last):
    ...
    dualboard.linear_regex.PatternSyntaxError: pattern '(?<!not )true' cannot run in linear time (RE2):
    invalid perl operator: (?<! — rewrite it in RE2 syntax: no lookaround ((?=, (?!, (?<=, (?<!),
    no backreferences (\1), \z instead of \Z; \w, \d, \s and \b are ASCII there (write \pL for any letter)
    """
    regex = _compile(pattern, ignore_case=True)
    if regex.programsize > KEY_PATTERN_MAX_SIZE:
        raise PatternSyntaxError(
            pattern,
            f"it compiles to {regex.programsize} RE2 instructions, over the {KEY_PATTERN_MAX_SIZE} allowed",
            "shorten its counted repetitions ({0,1000} repeats its operand a thousand times)",
        )
    return regex


def _compile(pattern: str, ignore_case: bool, max_mem: int | None = None) -> Regex:
    """Compile ``pattern`` with RE2 and the options every pattern shares (``max_mem``: RE2's default unless
    given)."""
    options = re2.Options()
    options.log_errors = False  # a rejected pattern becomes a finding, not noise on stderr
    options.case_sensitive = not ignore_case
    if max_mem is not None:
        options.max_mem = max_mem
    try:
        return re2.compile(pattern, options)
    except re2.error as error:
        reason = error.args[0].decode("utf-8", "replace") if error.args else "invalid pattern"
        raise PatternSyntaxError(pattern, reason) from None


def unicode_classes(pattern: str) -> str:
    r"""Rewrite ``\w \W \d \D \s \S`` in ``pattern`` as RE2 classes that mean what they mean to ``re``.

    Examples
    --------
    >>> print(unicode_classes(r"\d+[\w.]"))
    \p{Nd}+[\pL\pN_.]
    """
    out, in_class, opened, at = [], False, 0, 0
    while at < len(pattern):
        char = pattern[at]
        if char == "\\":
            out.append(_rewrite_escape(pattern, pattern[at + 1 : at + 2], in_class))
            at += 2
            continue
        if char == "[" and not in_class:
            in_class, opened = True, at
        elif char == "]" and in_class and pattern[opened + 1 : at] not in ("", "^"):  # "[]" and "[^]" open a class
            in_class = False
        out.append(char)
        at += 1
    return "".join(out)


def _rewrite_escape(pattern: str, letter: str, in_class: bool) -> str:
    """Return the RE2 form of the escape backslash-``letter`` (inside a character class or not)."""
    if letter in ("b", "B"):
        raise PatternSyntaxError(
            pattern, rf"\{letter} is ASCII-only in RE2", "consume the neighbouring character instead"
        )
    if letter not in _CLASSES:
        return "\\" + letter
    rewritten = _CLASSES[letter][in_class]
    if rewritten is None:
        raise PatternSyntaxError(
            pattern, rf"\{letter} has no Unicode form inside a class", "write the complement class"
        )
    return rewritten


@dataclass(frozen=True)
class ContextMatch:
    """One match of a :class:`ContextPattern`, without its trailing context group."""

    texts: tuple[str | None, ...]
    """Text of each group but the last (None where a group did not take part)."""

    def groups(self) -> tuple[str | None, ...]:
        """Return the group texts, as ``re.Match.groups`` does."""
        return self.texts


class ContextPattern:
    r"""A pattern that inspects one character on each side of its matches, as lookarounds do.

    ``(?<!\w)(x)(?!\w)`` is written ``(?:^|\W)(x)(\z|\W)``: the pattern
    consumes the character before (or starts at the start of the text) and ends
    with a group holding the character after (or nothing). Lookarounds only
    look, so the character after one match may be the character before the
    next ("1 2"); the search therefore goes on from the last character before
    that final group. Every match must consume its leading character or start
    the text, so no match can begin inside the previous one.

    Examples
    --------
    >>> numbers = ContextPattern(r"(?:^|[^\w.])(\d+)(\z|\W)")
    >>> [m.texts[0] for m in numbers.finditer("1 2 x3 4é 5")]
    ['1', '2', '5']
    """

    def __init__(self, pattern: str, *, ignore_case: bool = False):
        self.regex = compile_linear(pattern, ignore_case=ignore_case)

    def finditer(self, text: str, pos: int = 0) -> Iterator[ContextMatch]:
        """Yield every match in ``text`` that starts at character ``pos`` or later, left to right."""
        data = text.encode("utf-8")
        for match in self._matches(data, len(text[:pos].encode("utf-8")) if pos else 0):
            yield ContextMatch(tuple(None if g is None else g.decode("utf-8") for g in match.groups()[:-1]))

    def _matches(self, data: bytes, pos: int = 0) -> Iterator[RegexMatch]:
        """Yield the RE2 matches in UTF-8 ``data`` from byte ``pos`` on; each search is linear in the bytes it
        reads (the character before ``pos`` is still read as the context of a match starting there)."""
        last = self.regex.groups
        while pos <= len(data) and (match := self.regex.search(data, pos)) is not None:
            yield match
            # Go on from the last character of the match proper; always strictly later, so the loop ends.
            pos = max(_char_boundary(data, match.start(last) - 1, -1), _char_boundary(data, match.start() + 1, +1))


def _char_boundary(data: bytes, offset: int, step: int) -> int:
    """Step ``offset`` by ``step`` (-1 or +1) until it is the start of a UTF-8 character or an end."""
    while 0 < offset < len(data) and data[offset] & 0xC0 == 0x80:
        offset += step
    return offset


@dataclass(frozen=True)
class Screened:
    """A linear pattern behind a test in C that skips, unsearched, the texts it cannot match.

    Every match of ``pattern`` contains one of the literal words ``needs``
    (lower case when ``ignore_case``); a text without any of them has no match,
    so the search is skipped. Grading runs a dozen patterns over each of a
    million answers, most of which hold none of their words. A text that is
    not ASCII is always searched: RE2 folds case over Unicode ("ſ" is an "s"
    to it), which ``str.lower`` does not follow, and the screen must never say
    no where RE2 would say yes.

    Where every match starts at most :attr:`lead` characters before the first
    of its words, an ASCII text is searched from its first word less ``lead``:
    no earlier character can start a match, and RE2 matches each position with
    the whole text as context (``^``, a non-word character before it), so the matches are the
    same, and an answer that commits at its end is read from there (a 2 KB
    answer's search costs a fifth, or a twentieth for ``(?m)^`` patterns).

    An ASCII text is searched as its bytes (:class:`AsciiMatch`): the same
    bytes RE2 searches for a ``str``, without the wrapper mapping every
    offset between bytes and characters (a third of the time on a 2 KB answer).

    Examples
    --------
    >>> answer = Screened(compile_linear(r"answer: (\\w)", ignore_case=True), ("answer",), ignore_case=True, lead=0)
    >>> [m.group(1) for m in answer.finditer("ANSWER: B")], answer.might_match("no letter here")
    (['B'], False)
    >>> answer.might_match("anſwer: B")  # not ASCII: searched
    True
    >>> answer.start("It is long. Answer: B")  # the first character a match may start at
    12
    """

    pattern: Any
    """A compiled RE2 pattern or a :class:`ContextPattern` (which searches bytes itself)."""
    needs: tuple[str, ...]
    ignore_case: bool = False
    lead: int | None = None
    """When set: every match starts at most this many characters before an occurrence of one of
    :attr:`needs` (the one it contains); the comment by each pattern says why. None: anywhere before."""
    spaced: bool = False
    """Whether a match may also hold, right after its first character, a run of whitespace of any length
    that :attr:`lead` does not count (``\\{\\s*`` before a word)."""

    def start(self, text: str) -> int | None:
        """Where a search of ``text`` may start its first match (0, or later for an ASCII text when :attr:`lead`
        is set), or None when ``text`` holds none of :attr:`needs`, so the pattern cannot match it."""
        if not text.isascii():
            if self.ignore_case or any(word in text for word in self.needs):
                return 0
            return None
        haystack = _lowered(text) if self.ignore_case else text
        found = [at for at in map(haystack.find, self.needs) if at >= 0]
        if not found:
            return None
        if self.lead is None:
            return 0
        if not self.spaced:
            return max(0, min(found) - self.lead)
        # at most lead - 1 characters before the word, the whitespace run before them, and its first character
        return max(0, len(text[: max(0, min(found) - self.lead + 1)].rstrip()) - 1)

    def might_match(self, text: str) -> bool:
        """False only when ``text`` holds none of :attr:`needs`, so the pattern cannot match it."""
        return self.start(text) is not None

    def finditer(self, text: str) -> Iterator[Any]:
        """The pattern's matches in ``text``, as its own ``finditer`` yields them."""
        start = self.start(text)
        if start is None:
            return iter(())
        if isinstance(self.pattern, ContextPattern):
            return self.pattern.finditer(text, start)
        if text.isascii():
            return map(AsciiMatch, self.pattern.finditer(text.encode("ascii"), start))
        return self.pattern.finditer(text)

    def search(self, text: str) -> Any:
        """The pattern's first match in ``text``, or None (the first of :meth:`finditer`, for either kind of
        pattern)."""
        return next(self.finditer(text), None)


@functools.lru_cache(maxsize=8)
def _lowered(text: str) -> str:
    """``text.lower()``, remembered for the last few texts: every screen of one answer reads the same copy."""
    return text.lower()


class AsciiMatch:
    """A match in the bytes of an ASCII text, read as the match in the text: byte and character offsets agree.

    Offers what grading reads of a match: :meth:`group`, :meth:`groups`, :meth:`start`, :meth:`end`.
    """

    __slots__ = ("_match",)

    def __init__(self, match: Any):
        self._match = match

    def group(self, *groups: int) -> Any:
        value = self._match.group(*groups)
        return tuple(map(_ascii_text, value)) if isinstance(value, tuple) else _ascii_text(value)

    def groups(self) -> tuple[str | None, ...]:
        return tuple(map(_ascii_text, self._match.groups()))

    def start(self, group: int = 0) -> int:
        return self._match.start(group)

    def end(self, group: int = 0) -> int:
        return self._match.end(group)


def _ascii_text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("ascii")
