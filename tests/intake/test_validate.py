"""Submission validation: every problem found, located and explained, nothing changed."""

from __future__ import annotations

import json

import pytest

from dualboard.errors import InvalidInputError
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.validate import Limits, check_run, load_runs
from tests.conftest import tiny_metadata, tiny_predictions, write_run


def _findings(root, run_dir, limits=Limits()):
    run, findings = check_run(run_dir, load_benchmarks(root / "data"), limits)
    return run, [str(f) for f in findings]


def test_valid_run_loads_with_default_round(tiny_root):
    preds = [{k: v for k, v in p.items() if k != "round"} for p in tiny_predictions()]
    run_dir = write_run(tiny_root, "no-rounds", preds)
    run, findings = _findings(tiny_root, run_dir)
    assert findings == []
    assert [p["round"] for p in run.predictions] == [0, 0, 0]
    assert run.model == "tiny-model"


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda lines: lines[:1] + [b'{"question_id": "q2", "response": '] + lines[2:], ":2: -: invalid JSON"),
        (
            lambda lines: lines[:2] + [json.dumps({"question_id": "q9", "response": "x"}).encode()],
            ":3: question_id: unknown question id 'q9'",
        ),
        (lambda lines: lines + [lines[0]], ":4: question_id: duplicate answer for question 'q1' round 0"),
        (lambda lines: lines[:1] + [b'{"question_id": "q2", "response": "\xff\xfe"}'] + lines[2:], ":2: -: not UTF-8"),
        (
            lambda lines: lines[:2] + [json.dumps({"question_id": "q3", "round": 5, "response": "x"}).encode()],
            ":3: round: round 5 but metadata.yaml says rounds: 1",
        ),
        (
            lambda lines: lines[:2] + [json.dumps({"question_id": "q3", "response": 7}).encode()],
            ":3: response: 7 is a whole number, not text — write text",
        ),
        (
            lambda lines: lines[:2] + [json.dumps({"question_id": "q3", "response": "x", "extra": 1}).encode()],
            ":3: extra: is not a field of this file — remove it, or rename it to one of: question_id,",
        ),
    ],
)
def test_bad_prediction_lines_are_located(tiny_root, mutate, expected):
    lines = [json.dumps(p).encode() for p in tiny_predictions()]
    run_dir = write_run(tiny_root, "bad", raw_lines=mutate(lines))
    run, findings = _findings(tiny_root, run_dir)
    assert run is None
    assert any(expected in f and "predictions.jsonl" in f for f in findings), findings
    assert all(" — " in f for f in findings), "every finding says the fix"


def test_missing_answers_are_a_coverage_error(tiny_root):
    run_dir = write_run(tiny_root, "short", tiny_predictions()[:2])
    run, findings = _findings(tiny_root, run_dir)
    assert run is None
    assert any("coverage: 1 of 3 answers (question, round) missing: q3 round 0" in f for f in findings), findings


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (tiny_metadata(benchmark="nope"), "benchmark: unknown benchmark 'nope'"),
        (tiny_metadata(benchmark_version="9"), "benchmark_version: '9' does not exist"),
        (
            {k: v for k, v in tiny_metadata().items() if k != "model"},
            "metadata.yaml:1: model: missing — add model: model name as it should appear on the leaderboard",
        ),
        (tiny_metadata(rounds=0), "rounds: 0 is below the smallest allowed value, 1 — use 1 or more"),
    ],
)
def test_bad_metadata_is_located(tiny_root, metadata, expected):
    run_dir = write_run(tiny_root, "meta", metadata=metadata)
    _, findings = _findings(tiny_root, run_dir)
    assert any(expected in f and "metadata.yaml" in f for f in findings), findings


@pytest.mark.parametrize("run_id", ["Upper", "-dash", "has space", "a" * 101])
def test_invalid_run_ids_are_rejected(tiny_root, run_id):
    run_dir = write_run(tiny_root, run_id)
    _, findings = _findings(tiny_root, run_dir)
    assert any("run_id" in f and "is not a valid run id" in f for f in findings), findings


def test_oversized_response_is_rejected(tiny_root):
    preds = tiny_predictions()
    preds[0]["response"] = "x" * 2000
    run_dir = write_run(tiny_root, "big", preds)
    _, findings = _findings(tiny_root, run_dir, Limits(response_bytes=1000))
    assert any(":1: response: response is over the 1000-byte limit" in f for f in findings), findings


def test_load_runs_reports_all_runs_at_once(tiny_root):
    bad_a = write_run(tiny_root, "bad-a", raw_lines=[b"not json"])
    bad_b = write_run(tiny_root, "bad-b", metadata=tiny_metadata(benchmark_version="0"))
    with pytest.raises(InvalidInputError) as info:
        load_runs([bad_a, bad_b], load_benchmarks(tiny_root / "data"))
    files = {f.file for f in info.value.findings}
    assert any("bad-a" in f for f in files) and any("bad-b" in f for f in files)
    assert "nothing was changed" in str(info.value)


def test_yaml_alias_bomb_is_refused_by_size(tiny_root):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi")
    )
    run_dir = write_run(tiny_root, "bomb")
    (run_dir / "metadata.yaml").write_text(bomb)
    _, findings = _findings(tiny_root, run_dir)
    assert findings, "a YAML bomb must be rejected, not expanded"
