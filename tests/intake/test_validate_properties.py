"""For every broken input, the validator answers with findings, never with an exception.

Hypothesis feeds ``check_run`` thousands of generated submissions (total
examples: see EXAMPLES): random bytes, broken JSON, wrong types, huge numbers
and strings, control characters, deep nesting, YAML aliases, bombs and tags.
Every rejection must be a Finding naming the file, the field and a fix.
"""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dualboard.intake.validate import Limits, check_run
from tests.conftest import tiny_metadata, tiny_predictions

EXAMPLES = {"bytes": 1500, "json": 900, "nesting": 500, "metadata": 800, "yaml": 1400}
LIMITS = Limits(predictions_bytes=200_000, response_bytes=2_000, metadata_bytes=8_000)
CHECKED = {"submissions": 0}
"""How many generated submissions check_run saw in this session."""
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check(workspace, predictions: bytes | None = None, metadata: bytes | None = None):
    root, run, benchmarks = workspace
    valid_lines = b"".join(json.dumps(p).encode() + b"\n" for p in tiny_predictions())
    (run / "predictions.jsonl").write_bytes(valid_lines if predictions is None else predictions)
    (run / "metadata.yaml").write_bytes(yaml.safe_dump(tiny_metadata()).encode() if metadata is None else metadata)
    result, findings = check_run(run, benchmarks, LIMITS, submissions_root=root / "submissions")
    CHECKED["submissions"] += 1
    for f in findings:
        assert f.file and str(run) in f.file, f
        assert f.field and f.problem and f.fix, f
        assert f.severity in ("error", "warning"), f
        assert f.line is None or f.line >= 1, f
        assert " — " in str(f)
    errors = [f for f in findings if f.severity == "error"]
    assert (result is None) == bool(errors), findings
    return result, findings


# -- predictions.jsonl ---------------------------------------------------------

control = st.characters(min_codepoint=0, max_codepoint=31) | st.sampled_from("\x7f\u2028\u2029\ufeff\ud7ff\U0010ffff")
texts = st.text(alphabet=st.characters(codec="utf-8") | control, max_size=60)
big_ints = st.integers() | st.integers(min_value=18, max_value=5000).map(
    lambda digits: -(10**digits) if digits % 2 else 10**digits
)
scalars = st.none() | st.booleans() | big_ints | st.floats(allow_nan=True, allow_infinity=True) | texts
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4), max_leaves=8
)
keys = st.sampled_from(["question_id", "round", "response", "choice_order", "recorded", "extra", ""]) | texts


def _dump(value) -> bytes:
    try:
        return json.dumps(value, allow_nan=True).encode()
    except ValueError:  # integers above Python's 4,300-digit str() limit: write them by hand
        return b"1" * 5000


@pytest.mark.slow
@settings(max_examples=EXAMPLES["bytes"], **SETTINGS)
@given(lines=st.lists(st.binary(max_size=80), min_size=1, max_size=6))
def test_random_bytes_never_raise(workspace, lines):
    result, findings = _check(workspace, b"\n".join(lines))
    assert result is None, "random bytes are not three valid answers"


@pytest.mark.slow
@settings(max_examples=EXAMPLES["json"], **SETTINGS)
@given(
    rows=st.lists(st.dictionaries(keys, json_values, max_size=5) | json_values, min_size=1, max_size=5),
    keep_valid=st.booleans(),
)
@example(rows=[{"": float("nan")}], keep_valid=False)  # a refused value under an empty key: the field is "-"
@example(rows=[{"a\nb": float("inf")}], keep_valid=True)
def test_wrong_types_and_values_never_raise(workspace, rows, keep_valid):
    valid = [json.dumps(p).encode() for p in tiny_predictions()] if keep_valid else []
    _check(workspace, b"\n".join(valid + [_dump(r) for r in rows]) + b"\n")


@pytest.mark.slow
@settings(max_examples=EXAMPLES["nesting"], **SETTINGS)
@given(
    depth=st.integers(min_value=1, max_value=200_000),
    opener=st.sampled_from(["[", '{"a":']),
    where=st.sampled_from(["line", "recorded", "response"]),
    huge=st.integers(min_value=0, max_value=150_000),
)
def test_deep_nesting_and_huge_strings_never_raise(workspace, depth, opener, where, huge):
    closer = "]" if opener == "[" else "}"
    nested = opener * depth + "1" + closer * depth
    line = {
        "line": nested,
        "recorded": f'{{"question_id": "q1", "response": "x", "recorded": {nested}}}',
        "response": json.dumps({"question_id": "q1", "response": "\x00\x1b" * (huge // 2)}),
    }[where]
    result, findings = _check(workspace, line.encode())
    assert result is None and findings


# -- metadata.yaml -------------------------------------------------------------

metadata_fields = st.sampled_from(list(tiny_metadata()) + ["notes", "decoding", "license", "unknown"])


@pytest.mark.slow
@settings(max_examples=EXAMPLES["metadata"], **SETTINGS)
@given(changes=st.dictionaries(metadata_fields, json_values, max_size=4), drop=st.lists(metadata_fields, max_size=3))
def test_metadata_with_wrong_fields_never_raises(workspace, changes, drop):
    meta = {k: v for k, v in {**tiny_metadata(), **changes}.items() if k not in drop}
    try:
        text = yaml.dump(meta, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=False)
    except (yaml.YAMLError, ValueError):
        text = "model: [unclosed\n"
    _check(workspace, metadata=text.encode())


yaml_snippets = st.sampled_from(
    [
        "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n",
        "model: &m x\nsubmitter: *m\n",
        "notes: !!python/object/apply:os.system ['echo pwned']\n",
        "date: 2024-02-30\n",
        "rounds: 1e999999\n",
        "rounds: 0x" + "f" * 6000 + "\n",
        "? [a, b]\n: c\n",
        "model: " + "[" * 500 + "]" * 500 + "\n",
        "--- a\n--- b\n",
        "%YAML 9.9\n---\nx: 1\n",
        "model: '\x00'\n",
        "\ufeffmodel: x\n",
        "<<: {model: x}\n",
        "model: !!binary aGVsbG8=\n",
        "date: !!timestamp 2001-12-14\n",
    ]
)


@pytest.mark.slow
@settings(max_examples=EXAMPLES["yaml"], **SETTINGS)
@given(
    parts=st.lists(yaml_snippets | texts.map(lambda t: t + "\n"), min_size=1, max_size=4), raw=st.binary(max_size=40)
)
@example(parts=["date: !!timestamp 2001-12-14\n"], raw=b" !")  # PyYAML raised AttributeError on it
def test_yaml_bombs_aliases_and_garbage_never_raise(workspace, parts, raw):
    result, findings = _check(workspace, metadata="".join(parts).encode("utf-8", "surrogatepass") + raw)
    if any("&" in p and "*" in p for p in parts) and result is None:
        assert findings


def test_at_least_5000_generated_submissions(request):
    assert sum(EXAMPLES.values()) >= 5000
    ran_all = all(
        request.session.items and any(item.name == name for item in request.session.items)
        for name in ("test_random_bytes_never_raise", "test_yaml_bombs_aliases_and_garbage_never_raise")
    )
    if ran_all and CHECKED["submissions"]:
        print(f"check_run saw {CHECKED['submissions']} generated submissions")
        assert CHECKED["submissions"] >= 5000
