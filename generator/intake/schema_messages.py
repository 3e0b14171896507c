"""JSON Schema violations in plain words: which field, what is wrong with it, what to write instead.

jsonschema speaks its own language (``'submitter' is a required property``,
``'x' does not match '^\\d{4}-\\d{2}-\\d{2}$'``). A submitter reads the field,
the problem and the fix, with the field's description from the schema where it
tells what belongs there. :func:`plain_problems` translates one error; every
keyword that can fail has an entry in :data:`_MESSAGES`, and a test walks
every keyword the schemas use.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from dualboard.names import RUN_ID, RUN_ID_RULE

if TYPE_CHECKING:
    from jsonschema import ValidationError

Problem = tuple[str, str, str]
"""``(field, problem, fix)`` of one finding."""

PATTERN_WORDS = {
    f"^{RUN_ID.pattern}$": (f"a name of {RUN_ID_RULE}", "easy-problems"),
    "^\\d{4}-\\d{2}-\\d{2}$": ("a date in the form YYYY-MM-DD", "2026-03-01"),
    "^[A-Z]$": ("one capital letter, A to Z", "B"),
    "^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%!&()*+,;=:@/?#-]*)?$": (
        "an https:// link without spaces or quotes",
        "https://huggingface.co/my-org/my-model-7b",
    ),
}
"""Every ``pattern`` of the schemas in words, with an example (a test checks none is missing)."""
TYPE_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "object": "a set of fields (key: value)",
    "array": "a list",
    "null": "null (empty)",
}
"""JSON Schema type names as a submitter says them."""
SHOWN_CHARACTERS = 60
"""Longest piece of a submitted value quoted back in a message."""
SEE_PAGE = "see the field table on the 'How to submit' page"


def plain_problems(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    """Translate one jsonschema error of ``schema`` into ``(field, problem, fix)`` triples.

    Usually one; ``required`` and ``additionalProperties`` give one per field
    they name, so every finding points at one field.
    """
    return _MESSAGES.get(str(error.validator), _other)(error, schema)


def _field(path: Sequence[Any], *more: Any) -> str:
    """Dotted field name (``decoding.seed``, ``choice_order.0``), ``-`` for the whole file or line."""
    return ".".join(str(p)[:100] for p in (*path, *more)) or "-"


def _kind(value: Any) -> str:
    """What a value is, in words: the other half of a type message."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a decimal number"
    return {str: "text", dict: "a set of fields", list: "a list"}.get(type(value), "null (empty)")


def _shown(value: Any) -> str:
    """A short quote of a submitted value, spelled as JSON and YAML spell it."""
    if isinstance(value, str):
        return repr(value[:SHOWN_CHARACTERS] + ("…" if len(value) > SHOWN_CHARACTERS else ""))
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, (int, float)):
        return str(value)  # ValueError for an integer of thousands of digits: the caller reports it
    return _kind(value)


def _spec(schema: dict[str, Any], path: Sequence[Any]) -> dict[str, Any]:
    """The subschema that describes the field at ``path`` ({} where the schema says nothing)."""
    node: Any = schema
    for part in path:
        node = _deref(schema, node)
        if isinstance(part, int):
            node = node.get("items", {})
        else:
            extra = node.get("additionalProperties")
            node = node.get("properties", {}).get(part, extra if isinstance(extra, dict) else {})
    return _deref(schema, node)


def _deref(schema: dict[str, Any], node: Any) -> dict[str, Any]:
    """Follow a local ``$ref`` (``#/$defs/grader``)."""
    if not isinstance(node, dict):
        return {}
    ref = node.get("$ref", "")
    if ref.startswith("#/"):
        for part in ref[2:].split("/"):
            schema = schema.get(part, {})
        return schema
    return node


def _about(schema: dict[str, Any], path: Sequence[Any]) -> str:
    """``: description`` of the field at ``path`` (its first sentence), to tell what belongs there; "" if none."""
    text = str(_spec(schema, path).get("description", "")).strip().split(". ")[0].rstrip(".")
    if not text:
        return ""
    first = text.split()[0]
    return ": " + (
        text if len(first) > 1 and first.isupper() else text[0].lower() + text[1:]
    )  # "MC" keeps its capitals


def _either(words: list[str]) -> str:
    """``a, b or c`` (``a, b, or c`` when a choice holds "or" itself)."""
    if len(words) < 2:
        return "".join(words)
    last = ", or " if any(" or " in w for w in words) else " or "
    return ", ".join(words[:-1]) + last + words[-1]


def _required(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    path = list(error.absolute_path)
    missing = [
        name for name in error.validator_value if isinstance(error.instance, dict) and name not in error.instance
    ]
    return [(_field(path, name), "missing", f"add {name}{_about(schema, [*path, name])}") for name in missing]


def _additional(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    path, known = list(error.absolute_path), list(error.schema.get("properties", {}))
    extras = [key for key in error.instance if key not in known] if isinstance(error.instance, dict) else []
    fix = f"remove it, or rename it to one of: {', '.join(known)}" if known else "remove it"
    return [(_field(path, key), "is not a field of this file", fix) for key in extras]


def _type(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    value, path = error.instance, list(error.absolute_path)
    if isinstance(value, float) and not math.isfinite(value):
        return [(_field(path), f"{value} is not a finite number", "write a finite number")]
    kinds = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
    expected = _either([TYPE_WORDS.get(k, str(k)) for k in kinds])
    shown = _shown(value)
    problem = f"is {_kind(value)}" if shown == _kind(value) else f"{shown} is {_kind(value)}"
    return [(_field(path), f"{problem}, not {expected}", f"write {expected}")]


def _pattern(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    path = list(error.absolute_path)
    if error.validator_value not in PATTERN_WORDS:  # a new pattern without words: say where its form is described
        return [(_field(path), f"{_shown(error.instance)} is not in the expected form", SEE_PAGE)]
    words, example = PATTERN_WORDS[error.validator_value]
    return [(_field(path), f"{_shown(error.instance)} is not {words}", f"write {words}, such as {example}")]


def _enum(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    allowed = ", ".join(map(str, error.validator_value))
    return [
        (
            _field(error.absolute_path),
            f"{_shown(error.instance)} is not one of the allowed values",
            f"use one of: {allowed}",
        )
    ]


def _const(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    return [
        (
            _field(error.absolute_path),
            f"{_shown(error.instance)} is not the only allowed value",
            f"write {_shown(error.validator_value)}",
        )
    ]


def _length(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    value, limit, path = error.instance, error.validator_value, list(error.absolute_path)
    if "propertyNames" in error.schema_path:  # the instance is a field name, the path its parent
        return [
            (
                _field(path),
                f"the field name {_shown(value)} is {len(value):,} characters long; at most {limit:,} are allowed",
                "use a shorter field name",
            )
        ]
    if error.validator == "minLength":
        problem = "is empty" if value == "" else f"is {len(value):,} characters long; at least {limit:,} are needed"
        return [(_field(path), problem, f"fill it in{_about(schema, path)}")]
    return [
        (
            _field(path),
            f"is {len(value):,} characters long; at most {limit:,} are allowed",
            f"shorten it to {limit:,} characters or fewer",
        )
    ]


def _bound(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    words = {
        "minimum": ("is below the smallest allowed value", "use {} or more"),
        "maximum": ("is above the largest allowed value", "use {} or less"),
        "exclusiveMinimum": ("is not above the limit", "use a value above {}"),
        "exclusiveMaximum": ("is not below the limit", "use a value below {}"),
    }[str(error.validator)]
    limit = error.validator_value
    return [(_field(error.absolute_path), f"{_shown(error.instance)} {words[0]}, {limit}", words[1].format(limit))]


def _count(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    value, limit, path = error.instance, error.validator_value, list(error.absolute_path)
    unit = "item" if isinstance(value, list) else "field"
    has = f"has {len(value)} {unit}{'s' if len(value) != 1 else ''}" if value else f"has no {unit}s"
    if str(error.validator).startswith("min"):
        names = list(error.schema.get("properties", {}))
        choose = f" of: {', '.join(names)}" if unit == "field" and names else ""
        return [(_field(path), f"{has}; at least {limit} needed", f"give at least {limit}{choose}")]
    return [(_field(path), f"{has}; at most {limit} allowed", f"keep at most {limit}")]


def _one_of(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    """The problem inside the form that came closest, when one got past the field itself; else what the forms are."""
    path = list(error.absolute_path)
    closest = max(error.context or [], key=lambda e: len(e.absolute_path), default=None)
    if closest is not None and len(closest.absolute_path) > len(path):
        return plain_problems(closest, schema)
    problem = "fits none of the accepted forms" if error.context else "fits more than one of the accepted forms"
    about = _about(schema, path)
    return [(_field(path), problem, f"write {about[2:]}" if about else SEE_PAGE)]


def _unique(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    return [(_field(error.absolute_path), "lists the same value more than once", "keep each value once")]


def _other(error: ValidationError, schema: dict[str, Any]) -> list[Problem]:
    """A keyword without its own words yet (the keyword test lists those the schemas use)."""
    return [(_field(error.absolute_path), "is not allowed here", SEE_PAGE)]


_MESSAGES: dict[str, Callable[[ValidationError, dict[str, Any]], list[Problem]]] = {
    "required": _required,
    "additionalProperties": _additional,
    "type": _type,
    "pattern": _pattern,
    "enum": _enum,
    "const": _const,
    "minLength": _length,
    "maxLength": _length,
    "minimum": _bound,
    "maximum": _bound,
    "exclusiveMinimum": _bound,
    "exclusiveMaximum": _bound,
    "minItems": _count,
    "maxItems": _count,
    "minProperties": _count,
    "maxProperties": _count,
    "oneOf": _one_of,
    "anyOf": _one_of,
    "uniqueItems": _unique,
}
"""The plain message of every keyword that can fail (``format`` only annotates: the validators check no formats)."""
TRANSLATED = frozenset(_MESSAGES)
"""Keywords with their own plain message."""
