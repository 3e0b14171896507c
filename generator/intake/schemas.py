"""The JSON Schemas of the input files: the single definition of each contract.

Validation uses them and the site's "How to submit" page prints them, so the
documentation cannot drift from what is enforced.
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from generator.errors import Finding

SCHEMA_NAMES = ("question", "prediction", "metadata", "benchmark", "provenance")


@cache
def load_schema(name: str) -> dict[str, Any]:
    """Return the parsed JSON Schema called ``name`` (one of SCHEMA_NAMES)."""
    if name not in SCHEMA_NAMES:
        raise KeyError(f"unknown schema {name!r}; expected one of {SCHEMA_NAMES}")
    text = resources.files("generator.intake").joinpath(f"schemas/{name}.schema.json").read_text("utf-8")
    return json.loads(text)


def _is_integer(_checker: object, value: object) -> bool:
    """Only true integers: JSON Schema counts 1.0 as an integer, and ``rounds: 1.0`` then breaks ``range``."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_finite_number(_checker: object, value: object) -> bool:
    """Numbers without NaN or infinity: NaN passes every ``minimum``/``maximum`` (YAML writes it ``.nan``)."""
    return _is_integer(_checker, value) or (isinstance(value, float) and math.isfinite(value))


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    checker = cls.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_finite_number})
    return jsonschema.validators.extend(cls, type_checker=checker)(schema)


def schema_findings(instance: Any, name: str, *, file: str, line: int | None) -> list[Finding]:
    """Check ``instance`` against schema ``name``; one Finding per violation."""
    errors = sorted(_validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [_finding(e, name, file, line) for e in errors]


def _finding(error: jsonschema.ValidationError, name: str, file: str, line: int | None) -> Finding:
    field = ".".join(str(p) for p in error.absolute_path) or "-"
    message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
    fix = f"make it match the {name} contract (see the 'How to submit' page)"
    if error.validator == "additionalProperties":
        fix = f"remove the field or rename it to one the {name} contract defines"
    elif error.validator == "required":
        fix = "add the missing field"
    return Finding(file=file, line=line, field=field, problem=message, fix=fix)
