"""Schema findings speak plain words: every keyword the schemas use has a message and a fix without jargon."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from dualboard.errors import Finding
from dualboard.intake.schema_messages import PATTERN_WORDS, TRANSLATED, plain_problems
from dualboard.intake.schemas import _validator, schema_findings
from dualboard.intake.untrusted import parse_yaml, yaml_field_lines
from tests.conftest import TINY_QUESTIONS, tiny_metadata

JARGON = (
    "is a required property",
    "does not match '^",
    "is not of type",
    "Additional properties",
    "is not valid under any of the given schemas",
    "should be non-empty",
    "is too long",
    "is too short",
    "is less than the minimum",
    "is greater than the maximum",
    "is not one of [",
    "contract",
)
"""jsonschema's own phrases (and the word it made us use): none may reach a submitter."""
NEVER_FAIL = {
    "$schema",
    "$id",
    "$defs",
    "$ref",
    "title",
    "description",
    "default",
    "examples",
    "format",
    "properties",
    "items",
    "allOf",
    "if",
    "then",
}
"""Keywords that only annotate or apply other keywords: they never fail themselves (no format checker runs)."""

PREDICTION = {"question_id": "q1", "round": 0, "response": "4"}
QUESTION = TINY_QUESTIONS[0]
BENCHMARK = {
    "name": "tiny",
    "version": "1",
    "graders": {"traditional": {"name": "exact"}, "answer_key": [{"name": "rules"}]},
}


def _with(base: dict, path: str, value: Any) -> dict:
    """A deep copy of ``base`` with the dotted ``path`` set to ``value`` (or removed when value is ...)."""
    copy = json.loads(json.dumps(base))
    *parents, last = path.split(".")
    node = copy
    for part in parents:
        node = node.setdefault(part, {})
    if value is ...:
        node.pop(last)
    else:
        node[last] = value
    return copy


CASES = [
    # keyword, schema, instance, field, words in the problem, words in the fix
    (
        "required",
        "metadata",
        _with(tiny_metadata(), "submitter", ...),
        "submitter",
        "missing",
        "add submitter: who ran the model (name or GitHub handle)",
    ),
    ("required", "question", _with(QUESTION, "type", "multiple_choice"), "choices", "missing", "add choices"),
    (
        "additionalProperties",
        "prediction",
        {**PREDICTION, "answer": "4"},
        "answer",
        "is not a field of this file",
        "rename it to one of: question_id, round, response",
    ),
    (
        "additionalProperties",
        "metadata",
        _with(tiny_metadata(), "decoding.temp", 0.5),
        "decoding.temp",
        "is not a field of this file",
        "temperature",
    ),
    ("type", "prediction", {**PREDICTION, "response": 7}, "response", "7 is a whole number, not text", "write text"),
    (
        "type",
        "prediction",
        {**PREDICTION, "round": 1.0},
        "round",
        "1.0 is a decimal number, not a whole number",
        "write a whole number",
    ),
    (
        "type",
        "metadata",
        _with(tiny_metadata(), "decoding.top_p", float("nan")),
        "decoding.top_p",
        "nan is not a finite number",
        "write a finite number",
    ),
    (
        "enum",
        "question",
        {**QUESTION, "type": "essay"},
        "type",
        "'essay' is not one of the allowed values",
        "use one of: multiple_choice, open",
    ),
    (
        "pattern",
        "metadata",
        tiny_metadata(date="1 March 2026"),
        "date",
        "is not a date in the form YYYY-MM-DD",
        "such as 2026-03-01",
    ),
    (
        "pattern",
        "prediction",
        {**PREDICTION, "choice_order": ["B", "a"]},
        "choice_order.1",
        "is not one capital letter",
        "such as B",
    ),
    (
        "pattern",
        "benchmark",
        {**BENCHMARK, "name": "My Bench"},
        "name",
        "is not a name of lower-case letters",
        "such as",
    ),
    (
        "minimum",
        "metadata",
        tiny_metadata(rounds=0),
        "rounds",
        "0 is below the smallest allowed value, 1",
        "use 1 or more",
    ),
    (
        "maximum",
        "metadata",
        tiny_metadata(rounds=5000),
        "rounds",
        "5000 is above the largest allowed value, 1000",
        "use 1000 or less",
    ),
    (
        "minLength",
        "metadata",
        tiny_metadata(model=""),
        "model",
        "is empty",
        "fill it in: model name as it should appear",
    ),
    (
        "maxLength",
        "metadata",
        tiny_metadata(model="m" * 201),
        "model",
        "is 201 characters long; at most 200 are allowed",
        "shorten it to 200 characters or fewer",
    ),
    (
        "minItems",
        "question",
        {**QUESTION, "choices": ["only"]},
        "choices",
        "has 1 item; at least 2 needed",
        "give at least 2",
    ),
    (
        "maxItems",
        "question",
        {**QUESTION, "choices": ["x"] * 27},
        "choices",
        "has 27 items; at most 26 allowed",
        "keep at most 26",
    ),
    (
        "minProperties",
        "benchmark",
        _with(BENCHMARK, "graders.traditional", {}),
        "graders.traditional",
        "fits none of the accepted forms",
        "write one grader for all questions, or one per question type",
    ),
    (
        "maxProperties",
        "provenance",
        {"question_id": "q1", "round": 0, **{f"f{i}": i for i in range(20)}},
        "-",
        "has 22 fields; at most 20 allowed",
        "keep at most 20",
    ),
    (
        "propertyNames",
        "provenance",
        {"question_id": "q1", "round": 0, "x" * 101: 1},
        "-",
        "the field name 'xxx",
        "use a shorter field name",
    ),
    # keywords a schema may take up next, checked against a schema of their own
    (
        "exclusiveMinimum",
        {"properties": {"size": {"exclusiveMinimum": 0}}},
        {"size": 0},
        "size",
        "0 is not above the limit, 0",
        "use a value above 0",
    ),
    (
        "exclusiveMaximum",
        {"properties": {"size": {"exclusiveMaximum": 1}}},
        {"size": 1},
        "size",
        "1 is not below the limit, 1",
        "use a value below 1",
    ),
    (
        "uniqueItems",
        {"properties": {"tags": {"uniqueItems": True}}},
        {"tags": ["a", "a"]},
        "tags",
        "lists the same value more than once",
        "keep each value once",
    ),
    (
        "const",
        {"properties": {"kind": {"const": "run"}}},
        {"kind": "walk"},
        "kind",
        "'walk' is not the only allowed value",
        "write 'run'",
    ),
    (
        "anyOf",
        {"properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "A count or null."}}},
        {"n": "x"},
        "n",
        "fits none of the accepted forms",
        "write a count or null",
    ),
    (
        "oneOf",
        "question",
        _with(QUESTION, "answer_key.numeric", {"value": "four"}),
        "answer_key.numeric.value",
        "'four' is text, not a number",
        "write a number",
    ),
]


def _keywords(schema: Any) -> set[str]:
    """Every keyword of a schema, however deep (names under properties and $defs are not keywords)."""
    if isinstance(schema, list):
        return set().union(*map(_keywords, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, value in schema.items():
        children = value.values() if key in ("properties", "$defs") and isinstance(value, dict) else [value]
        found |= set().union(*map(_keywords, children)) if children else set()
    return found


def _schema_files() -> dict[str, dict]:
    folder = resources.files("dualboard.intake").joinpath("schemas")
    return {p.name: json.loads(p.read_text("utf-8")) for p in folder.iterdir() if p.name.endswith(".json")}


def test_every_failing_keyword_of_every_schema_has_plain_words_and_a_case_here() -> None:
    used = set().union(*map(_keywords, _schema_files().values()))
    failing = used - NEVER_FAIL
    assert failing <= TRANSLATED | {"propertyNames"}, f"keywords without a plain message: {failing - TRANSLATED}"
    assert failing | TRANSLATED <= {case[0] for case in CASES}, "add a case for every keyword that can fail"


def test_every_pattern_of_every_schema_is_in_words() -> None:
    def patterns(node: Any) -> set[str]:
        if isinstance(node, dict):
            own = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
            return own.union(*map(patterns, node.values()))
        return set().union(*map(patterns, node)) if isinstance(node, list) and node else set()

    assert set().union(*map(patterns, _schema_files().values())) <= set(PATTERN_WORDS)


@pytest.mark.parametrize(
    ("keyword", "name", "instance", "field", "problem", "fix"),
    CASES,
    ids=[f"{c[0]}-{c[1] if isinstance(c[1], str) else 'own'}-{c[3]}" for c in CASES],
)
def test_each_keyword_reads_plainly(keyword, name, instance, field, problem, fix) -> None:
    validator = _validator(name) if isinstance(name, str) else Draft202012Validator(name)
    errors = list(validator.iter_errors(instance))
    broken = {p for e in errors for inner in [e, *(e.context or [])] for p in [inner.validator, *inner.schema_path]}
    assert keyword in broken, f"the case must break {keyword}, broke {[e.validator for e in errors]}"
    findings = (
        schema_findings(instance, name, file="x", line=3)
        if isinstance(name, str)
        else [Finding("x", 3, *problem) for e in errors for problem in plain_problems(e, name)]
    )
    [finding] = [f for f in findings if f.field == field]
    assert problem in finding.problem and fix in finding.fix, str(finding)
    assert finding.line == 3
    for text in map(str, findings):
        assert not any(j in text for j in JARGON), text


def test_yaml_findings_carry_the_line_of_their_field() -> None:
    text = (
        "model: m\nsubmitter: s\ndate: 2026-01-01\nbenchmark: tiny\nbenchmark_version: '1'\nrounds: 1\n"
        "decoding:\n  seed: 1.5\n"
    )
    data, _ = parse_yaml(text, "m.yaml")
    data["date"] = str(data["date"])
    [finding] = schema_findings(data, "metadata", file="m.yaml", lines=yaml_field_lines(text))
    assert str(finding) == (
        "m.yaml:8: decoding.seed: 1.5 is a decimal number, not a whole number or null (empty) "
        "— write a whole number or null (empty)"
    )
    missing = schema_findings(
        {k: v for k, v in data.items() if k != "model"}, "metadata", file="m.yaml", lines=yaml_field_lines(text)
    )
    assert [(f.line, f.field, f.problem) for f in missing] == [
        (1, "model", "missing"),
        (8, "decoding.seed", missing[1].problem),
    ]
