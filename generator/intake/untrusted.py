"""Parse text a pull request wrote: JSON lines and YAML, strictly, with a finding for every trick.

Everything under ``data/`` and ``submissions/`` arrives by pull request, so the
parsers here refuse what Python's permissive defaults let through:

- duplicate keys (JSON and YAML keep the last value: a reviewer reads one
  ``response``, the grader another);
- ``NaN``, ``Infinity`` and numbers that overflow to infinity (they pass a
  ``"type": "number"`` schema and then poison every mean);
- lone surrogates (``"\\ud800"`` decodes, then fails the first UTF-8 encode);
- invalid UTF-8, nesting too deep to check, integers of thousands of digits,
  impossible dates (``2026-02-30``), YAML aliases ("billion laughs").

Lines are split on ``\\n`` only: ``str.splitlines`` also splits on U+2028 and
friends, which would shift every line number a submitter is told.
Each parser returns ``(value, None)`` or ``(None, Finding)``; none raises for bad input.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

import yaml

from dualboard.errors import Finding

MAX_YAML_DEPTH = 10
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: same rules, 10x faster
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
"""An escaped UTF-16 surrogate; only then can a decoded string hold a lone one."""


class _Refused(ValueError):
    """A value the JSON grammar allows but the contracts refuse."""

    def __init__(self, problem: str, fix: str):
        super().__init__(problem)
        self.problem, self.fix = problem, fix


def _key_given_twice(pairs: list[tuple[str, Any]]) -> str | None:
    """The first key of an object's pairs that an earlier pair already gave, or None."""
    seen: set[str] = set()
    return next((k for k, _ in pairs if k in seen or seen.add(k)), None)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise _Refused(f"duplicate key {_key_given_twice(pairs)[:100]!r}", "keep one value per key")
    return mapping


def _refuse_constant(name: str) -> float:
    raise _Refused(f"{name} is not a number", "write a finite number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"{text[:30]} overflows to infinity", "write a number of ordinary size")
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_no_duplicate_keys, parse_constant=_refuse_constant, parse_float=_finite_float
)


class _Pairs(list):
    """A JSON object decoded leniently: all its (key, value) pairs in order, a key given twice kept twice."""


_LENIENT_REFUSED = object()
"""What the lenient decoder puts where the strict one refused a number (``NaN``, ``Infinity``, ``1e999``)."""


def _lenient_float(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else _LENIENT_REFUSED


_LENIENT = json.JSONDecoder(
    object_pairs_hook=_Pairs, parse_constant=lambda _: _LENIENT_REFUSED, parse_float=_lenient_float
)


def _refused_field(text: str) -> str:
    """The dotted field of the value the strict decoder refused first in ``text``, or ``-`` when unknown.

    Run only on a refused line, for the finding's words. The strict decoder
    stops at the first number it refuses or the first object to close with a
    key twice, which is the first such item of a post-order walk (children
    before their object), in document order.

    Examples
    --------
    >>> _refused_field('{"round": 0, "recorded": {"judge": NaN}}')
    'recorded.judge'
    >>> _refused_field('{"a": [1, {"x": 1, "x": 2}], "a": 3}')
    'a.1.x'
    >>> _refused_field('{"": NaN}'), _refused_field('{"a\\nb": NaN}')
    ('-', '-')
    """
    try:
        found = _first_refused(_LENIENT.decode(text), ())
    except (ValueError, RecursionError):
        return "-"
    return ".".join(found) if found and all(map(_plain_key, found)) else "-"


def _plain_key(key: str) -> bool:
    """Whether a key of the submission may be shown as a finding's field: 1 to 64 ASCII letters, digits, ``_``
    and ``-``. A hostile key could be empty, or hold a newline that would forge a line of the report."""
    return 0 < len(key) <= 64 and key.isascii() and key.replace("_", "").replace("-", "").isalnum()


def _first_refused(item: Any, path: tuple[str, ...]) -> tuple[str, ...] | None:
    if item is _LENIENT_REFUSED:
        return path
    children = item if isinstance(item, _Pairs) else enumerate(item) if isinstance(item, list) else ()
    for key, child in children:
        found = _first_refused(child, (*path, str(key)))
        if found is not None:
            return found
    twice = _key_given_twice(item) if isinstance(item, _Pairs) else None
    return None if twice is None else (*path, twice)


def parse_json_line(raw: bytes, file: str, line: int | None) -> tuple[Any, Finding | None]:
    """Decode one line of a JSON-lines file strictly.

    ``line`` None: ``raw`` is a whole JSON file (an importer's source), and a syntax error names its own line.

    Examples
    --------
    >>> parse_json_line(b'{"a": 1}', "f.jsonl", 1)
    ({'a': 1}, None)
    >>> print(parse_json_line(b'{"a": 1, "a": 2}', "f.jsonl", 3)[1])
    f.jsonl:3: a: duplicate key 'a' — keep one value per key
    >>> print(parse_json_line(b'{"recorded": {"judge": NaN}}', "f.jsonl", 4)[1])
    f.jsonl:4: recorded.judge: NaN is not a number — write a finite number
    >>> print(parse_json_line(b'{"a": 1\\n', "f.jsonl", 5)[1])  # the error is at the line's end, not on a next line
    f.jsonl:5: -: invalid JSON: Expecting ',' delimiter (column 8) — write one JSON object per line
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, Finding(file, line, "-", f"not UTF-8 (byte {exc.start} of the line)", "save the file as UTF-8")
    if line is not None:
        text = text.rstrip("\r\n")  # its line break: an error at the line's end is not at column 1 of the next
    try:
        value = _DECODER.decode(text)
    except _Refused as exc:
        return None, Finding(file, line, _refused_field(text), exc.problem, exc.fix)
    except json.JSONDecodeError as exc:
        return None, Finding(
            file,
            exc.lineno if line is None else line,
            "-",
            f"invalid JSON: {exc.msg} (column {exc.colno})",
            "write one JSON object per line",
        )
    except RecursionError:
        return None, Finding(file, line, "-", "invalid JSON: nested too deeply", "write one flat JSON object per line")
    except ValueError as exc:  # an integer of more than 4,300 digits
        return None, Finding(
            file, line, "-", f"unreadable JSON value: {str(exc)[:200]}", "write numbers of ordinary size"
        )
    if _ESCAPED_SURROGATE.search(raw) and _has_lone_surrogate(value):
        return None, Finding(
            file,
            line,
            "-",
            "a string holds a lone UTF-16 surrogate (\\ud800–\\udfff)",
            "write the character itself, or a complete surrogate pair",
        )
    return value, None


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a string anywhere in ``value`` holds a lone surrogate; a loop, so any depth the parser took is fine."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
    return False


def iter_json_lines(handle: BinaryIO, file: str) -> Iterator[tuple[int, Any, Finding | None]]:
    """Yield ``(line number, value, finding)`` for every non-blank line, splitting on ``\\n`` only."""
    for number, raw in enumerate(handle, start=1):
        if raw.strip():
            value, problem = parse_json_line(raw, file, number)
            yield number, value, problem


class _StrictLoader(SAFE_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader, refusing a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        self.flatten_mapping(node)
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:
                continue  # an unhashable key: the base constructor reports it
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {str(key)[:100]!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_yaml(text: str, file: str) -> tuple[Any, Finding | None]:
    """Parse YAML without aliases, deep nesting or duplicate keys; a Finding instead of any exception.

    Examples
    --------
    >>> parse_yaml("a: 1\\nb: 2\\n", "m.yaml")
    ({'a': 1, 'b': 2}, None)
    >>> print(parse_yaml("a: 1\\na: 2\\n", "m.yaml")[1])
    m.yaml:2: -: invalid YAML: duplicate key 'a' — fix the YAML syntax
    """
    try:
        problem = _alias_or_depth(text, file)
        return (None, problem) if problem else (yaml.load(text, Loader=_StrictLoader), None)
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        problem = str(getattr(exc, "problem", None) or exc)[:200]
        # A tag the safe loader does not know (!!python/object...) is well-formed YAML: the syntax is not the fault.
        tag = problem.startswith("could not determine a constructor for the tag")
        fix = "remove the tag (the word starting with !) and write a plain value" if tag else "fix the YAML syntax"
        return None, Finding(file, None if line is None else line + 1, "-", f"invalid YAML: {problem}", fix)
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. "date: 2026-02-30"
        return None, Finding(
            file, None, "-", f"unreadable YAML value: {str(exc)[:200]}", "quote the value or correct it"
        )
    except (
        AttributeError
    ):  # PyYAML's constructors fail so on a value its tag cannot read ("!!timestamp 2001-12-14\n !")
        return None, Finding(
            file,
            None,
            "-",
            "unreadable YAML value: a tagged value (such as !!timestamp) that its tag cannot read",
            "remove the tag or quote the value",
        )


def yaml_field_lines(text: str) -> dict[str, int]:
    """The 1-based line of every field of a YAML document, by dotted name; ``""`` is the document itself.

    Names are the ones findings use (``decoding.seed``, ``items.0``), so a
    finding about a field can point at the line that sets it. Call it on text
    :func:`parse_yaml` accepted: composing runs no constructor, and that text
    holds no aliases and no deep nesting.

    Examples
    --------
    >>> yaml_field_lines("model: m\\ndecoding:\\n  seed: 1\\n")
    {'': 1, 'model': 1, 'decoding': 2, 'decoding.seed': 3}
    """
    root = yaml.compose(text, Loader=SAFE_LOADER)
    if root is None:
        return {}
    lines, stack = {"": root.start_mark.line + 1}, [(root, "")]
    while stack:
        node, name = stack.pop()
        if isinstance(node, yaml.MappingNode):
            children = [(str(key.value), key, value) for key, value in node.value if isinstance(key, yaml.ScalarNode)]
        elif isinstance(node, yaml.SequenceNode):
            children = [(str(i), item, item) for i, item in enumerate(node.value)]
        else:
            continue
        for part, marked, value in children:
            child = f"{name}.{part}" if name else part
            lines.setdefault(child, marked.start_mark.line + 1)
            stack.append((value, child))
    return lines


def _alias_or_depth(text: str, file: str) -> Finding | None:
    depth = 0
    for event in yaml.parse(text, Loader=SAFE_LOADER):
        if isinstance(event, yaml.AliasEvent):
            return Finding(
                file,
                event.start_mark.line + 1,
                "-",
                "YAML aliases (*name) are not allowed",
                "write the value out instead of referring to an anchor",
            )
        depth += isinstance(event, yaml.CollectionStartEvent) - isinstance(event, yaml.CollectionEndEvent)
        if depth > MAX_YAML_DEPTH:
            return Finding(
                file,
                event.start_mark.line + 1,
                "-",
                f"nested deeper than {MAX_YAML_DEPTH} levels",
                "flatten the structure",
            )
    return None


def decode_utf8(raw: bytes, file: str) -> tuple[str | None, Finding | None]:
    """Decode a whole file as UTF-8, or say which byte is wrong."""
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, Finding(
            file, raw.count(b"\n", 0, exc.start) + 1, "-", f"not UTF-8 (byte {exc.start})", "save the file as UTF-8"
        )
