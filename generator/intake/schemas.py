"""The JSON Schemas of the input files: the single definition of each contract.

Validation uses them and the site's "How to submit" page prints them, so the
documentation cannot drift from what is enforced. Each is a file of
``schemas/``, but for predictions.jsonl's: its fast decoder's struct
(:class:`~dualboard.intake.prediction_decoder.Prediction`) is the contract, and
its schema is made from it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import fastjsonschema
import msgspec

from dualboard.errors import Finding
from dualboard.intake.prediction_decoder import Prediction
from dualboard.intake.schema_messages import plain_problems

if TYPE_CHECKING:
    import jsonschema

SCHEMA_NAMES = ("question", "prediction", "metadata", "benchmark", "provenance")
DRAFT = "https://json-schema.org/draft/2020-12/schema"


FROM_STRUCTS = {"prediction": (Prediction, "Prediction (one line of predictions.jsonl)")}
"""Schemas made from a msgspec struct, the contract that decodes the file: its struct and its title."""


@cache
def load_schema(name: str) -> dict[str, Any]:
    """Return the parsed JSON Schema called ``name`` (one of SCHEMA_NAMES)."""
    if name not in SCHEMA_NAMES:
        raise KeyError(f"unknown schema {name!r}; expected one of {SCHEMA_NAMES}")
    if name in FROM_STRUCTS:
        return _struct_schema(name, *FROM_STRUCTS[name])
    text = resources.files("dualboard.intake").joinpath(f"schemas/{name}.schema.json").read_text("utf-8")
    return json.loads(text)


def _struct_schema(name: str, struct: type[msgspec.Struct], title: str) -> dict[str, Any]:
    """The schema msgspec makes of ``struct``, standing alone as the files of ``schemas/`` do."""
    _, components = msgspec.json.schema_components([struct])
    body = {k: _one_number(v) for k, v in components[struct.__name__].items() if k not in ("title", "description")}
    return {"$schema": DRAFT, "$id": f"dualboard/{name}.schema.json", "title": title, **body}


def _one_number(schema: Any) -> Any:
    """``schema`` with each ``anyOf`` of an integer and a number under the same bounds written as one number.

    msgspec writes ``int | float`` so; JSON Schema's ``number`` is both, and jsonschema words a value outside
    the bounds plainly only under one schema (under ``anyOf``: "not valid under any of the given schemas").
    """
    if isinstance(schema, list):
        return [_one_number(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and [o.get("type") for o in options] == ["integer", "number"]:
        whole, number = ({k: v for k, v in o.items() if k != "type"} for o in options)
        if whole == number:
            rest = {k: v for k, v in schema.items() if k != "anyOf"}
            return {**rest, "type": "number", **number}
    return {k: _one_number(v) for k, v in schema.items()}


def _is_integer(_checker: object, value: object) -> bool:
    """Only true integers: JSON Schema counts 1.0 as an integer, and ``rounds: 1.0`` then breaks ``range``."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_finite_number(_checker: object, value: object) -> bool:
    """Numbers without NaN or infinity: NaN passes every ``minimum``/``maximum`` (YAML writes it ``.nan``)."""
    return _is_integer(_checker, value) or (isinstance(value, float) and math.isfinite(value))


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    import jsonschema  # here: only an instance with a finding needs it, and it takes a third of a second to load

    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    checker = cls.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_finite_number})
    return jsonschema.validators.extend(cls, type_checker=checker)(schema)


@cache
def _compiled(name: str) -> Callable[[Any], Any]:
    # without $id: fastjsonschema would resolve "#/$defs/…" against it as a URL
    return fastjsonschema.compile({k: v for k, v in load_schema(name).items() if k != "$id"})


def schema_findings(
    instance: Any, name: str, *, file: str, line: int | None = None, lines: Mapping[str, int] | None = None
) -> list[Finding]:
    """Check ``instance`` against schema ``name``; one Finding in plain words per violation.

    ``line`` is where the whole instance sits (one line of a JSON-lines file);
    ``lines`` maps dotted field names to their lines (a YAML file, see
    :func:`~dualboard.intake.untrusted.yaml_field_lines`), and a finding takes
    the line of its field or of the nearest field above it.

    A valid instance is confirmed by the compiled validator (fastjsonschema,
    about 50x faster than jsonschema); only an instance it rejects, or one
    holding a float it cannot judge (1.0 for an integer, NaN), goes through
    jsonschema, whose errors name every violation with its path. Prediction
    lines mostly never come here: :mod:`~dualboard.intake.prediction_decoder`
    confirms the valid ones faster still.
    """
    if _fast_valid(instance, name):
        return []
    errors = sorted(_validator(name).iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
    findings = [
        Finding(file, _line_of(field, lines, line), field, problem, fix)
        for error in errors
        for field, problem, fix in plain_problems(error, load_schema(name))
    ]
    return list(dict.fromkeys(findings))  # one "missing" per field, however many rules require it


def _line_of(field: str, lines: Mapping[str, int] | None, line: int | None) -> int | None:
    """The line of ``field`` or of the nearest field above it; ``line`` when no map is given."""
    if lines is None:
        return line
    parts = field.split(".") if field != "-" else []
    while parts and ".".join(parts) not in lines:
        parts.pop()
    return lines.get(".".join(parts), line)


def _fast_valid(instance: Any, name: str) -> bool:
    try:
        _compiled(name)(instance)
    except fastjsonschema.JsonSchemaException:
        return False
    return _floats_allowed(instance, load_schema(name))


def _floats_allowed(value: Any, schema: Any) -> bool:
    """True when every float in ``value`` is finite and sits where ``schema`` says ``number``.

    fastjsonschema counts 1.0 as an integer and lets NaN through; a float
    under a schema this walk cannot resolve (``$ref``, ``oneOf``) counts as
    not allowed, which only sends the instance to the slow, exact check.
    """
    if isinstance(value, (str, int)):  # the common case first: bools and ints are judged right by fastjsonschema
        return True
    if isinstance(value, float):
        types = schema.get("type") if isinstance(schema, dict) else None
        return math.isfinite(value) and (types == "number" or (isinstance(types, list) and "number" in types))
    if isinstance(value, dict):
        properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
        extra = schema.get("additionalProperties", {}) if isinstance(schema, dict) else {}
        # a string or an integer needs no walk: skip the call for them, the most common values by far
        return all(isinstance(v, (str, int)) or _floats_allowed(v, properties.get(k, extra)) for k, v in value.items())
    if isinstance(value, list):
        items = schema.get("items", {}) if isinstance(schema, dict) else {}
        return all(_floats_allowed(v, items) for v in value)
    return True
