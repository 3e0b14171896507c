"""One `dualboard validate` pass finds every mistake of a submission, located relative to the leaderboard folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, write_run

METADATA = """\
model: many-mistakes
date: 1 March 2026
benchmark: tiny
benchmark_version: '1'
rounds: 2
decoding:
  temperature: -1
colour: red
"""
"""Missing submitter, a date in the wrong form, a negative temperature and an unknown field."""
PREDICTIONS = [
    {"question_id": "q1", "round": 0, "response": "Final answer: 4"},
    {"question_id": "q1", "round": 0, "response": "Final answer: 4"},  # 2: duplicate
    {"question_id": "q9", "round": 0, "response": "x"},  # 3: unknown question
    {"question_id": "q2", "round": 5, "response": "x"},  # 4: round beyond rounds: 2
    {"question_id": "q3", "round": 0, "response": 7},  # 5: not text
    {"question_id": "q3", "round": 1, "response": "x", "answer": "x"},  # 6: unknown field
]
RUN = "submissions/tiny/many-mistakes"
EXPECTED = [
    f"{RUN}/metadata.yaml:1: submitter: missing — add submitter: who ran the model (name or GitHub handle)",
    f"{RUN}/metadata.yaml:2: date: '1 March 2026' is not a date in the form YYYY-MM-DD — write a date in the form "
    "YYYY-MM-DD, such as 2026-03-01",
    f"{RUN}/metadata.yaml:7: decoding.temperature: -1 is below the smallest allowed value, 0 — use 0 or more",
    f"{RUN}/metadata.yaml:8: colour: is not a field of this file — remove it, or rename it to one of: model,",
    f"{RUN}/predictions.jsonl:2: question_id: duplicate answer for question 'q1' round 0",
    f"{RUN}/predictions.jsonl:3: question_id: unknown question id 'q9' — use an id from "
    "data/benchmarks/tiny/questions.jsonl",
    f"{RUN}/predictions.jsonl:4: round: round 5 but metadata.yaml says rounds: 2",
    f"{RUN}/predictions.jsonl:5: response: 7 is a whole number, not text — write text",
    f"{RUN}/predictions.jsonl:6: answer: is not a field of this file",
    f"{RUN}/predictions.jsonl: coverage: 3 of 6 answers (question, round) missing: "
    "q1 round 1, q2 round 0, q2 round 1 —",
    "submissions/tiny/run_a: run_id: run id run_a of tiny names the same run page as run-a",
]


def _validate(root: Path, *args: str) -> subprocess.CompletedProcess:
    """`dualboard validate` as a user runs it, from another folder than the leaderboard's."""
    return subprocess.run(
        [sys.executable, "-m", "dualboard", "validate", "--root", str(root), *args],
        capture_output=True,
        text=True,
        cwd=root.parent,
        timeout=120,
    )


def _submission_with_every_kind_of_mistake(root: Path) -> None:
    run = write_run(root, "many-mistakes", PREDICTIONS)
    (run / "metadata.yaml").write_text(METADATA, "utf-8")
    write_run(root, "run_a")  # a valid run whose id shares run-a's page


def test_one_pass_reports_every_mistake_with_its_line(tiny_root: Path) -> None:
    _submission_with_every_kind_of_mistake(tiny_root)
    result = _validate(tiny_root)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for expected in EXPECTED:
        assert any(line.startswith(expected) for line in lines), f"missing {expected!r} in:\n{result.stdout}"
    assert lines[-1].startswith(f"invalid: {len(EXPECTED)} problem(s)"), result.stdout
    assert str(tiny_root) not in result.stdout and "None" not in result.stdout


def test_json_report_holds_the_same_findings_with_relative_files(tiny_root: Path) -> None:
    _submission_with_every_kind_of_mistake(tiny_root)
    result = _validate(tiny_root, "--format", "json")
    assert result.returncode == 1, result.stdout + result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert len(findings) == len(EXPECTED)
    for f in findings:
        assert not Path(f["file"]).is_absolute() and (tiny_root / f["file"]).exists(), f
        assert f["line"] is None or (isinstance(f["line"], int) and f["line"] >= 1), f
    text = [
        f"{f['file']}" + (f":{f['line']}" if f["line"] else "") + f": {f['field']}: {f['problem']} — {f['fix']}"
        for f in findings
    ]
    assert text == _validate(tiny_root).stdout.splitlines()[:-1]


def test_a_fixed_submission_validates(tiny_root: Path) -> None:
    """The findings' fixes lead to a valid run: none of them hid another mistake."""
    _submission_with_every_kind_of_mistake(tiny_root)
    shutil.rmtree(tiny_root / "submissions" / "tiny" / "run_a")
    answers = [
        {"question_id": q, "round": r, "response": "Final answer: 4"} for q in ("q1", "q2", "q3") for r in (0, 1)
    ]
    run = write_run(tiny_root, "many-mistakes", answers)
    fixed = (
        METADATA.replace("1 March 2026", "2026-03-01\nsubmitter: tests").replace("-1", "0").replace("colour: red\n", "")
    )
    (run / "metadata.yaml").write_text(fixed, "utf-8")
    result = _validate(tiny_root)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ingest_refuses_with_the_same_relative_findings(tiny_root: Path) -> None:
    _submission_with_every_kind_of_mistake(tiny_root)
    result = subprocess.run(
        [sys.executable, "-m", "dualboard", "ingest", "--root", str(tiny_root)],
        capture_output=True,
        text=True,
        cwd=tiny_root.parent,
        timeout=120,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{RUN}/predictions.jsonl:3: question_id: unknown question id 'q9'" in result.stderr
    assert str(tiny_root) not in result.stderr
    assert not (tiny_root / ".dualboard" / "store").exists() or not any(
        (tiny_root / ".dualboard" / "store").rglob("*.jsonl")
    )


def test_benchmark_yaml_findings_carry_lines_too(tiny_root: Path) -> None:
    config = tiny_root / "data" / "benchmarks" / "tiny" / "benchmark.yaml"
    config.write_text(config.read_text("utf-8") + "allow_incomplete: sometimes\n", "utf-8")
    result = _validate(tiny_root)
    assert result.returncode == 1, result.stdout + result.stderr
    line = len(config.read_text("utf-8").splitlines())
    assert (
        f"data/benchmarks/tiny/benchmark.yaml:{line}: allow_incomplete: 'sometimes' is text, not true or false "
        "— write true or false"
    ) in result.stdout


def test_the_readme_example_is_what_validate_prints(tmp_path: Path) -> None:
    """README's "Submitting a run" output, reproduced on the demo benchmark (a line ending in … is a prefix)."""
    readme = (REPO / "README.md").read_text("utf-8")
    block = readme.split("## Submitting a run", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    shutil.copytree(REPO / "data" / "benchmarks" / "demo", tmp_path / "data" / "benchmarks" / "demo")
    run = tmp_path / "submissions" / "demo" / "my-run"
    run.mkdir(parents=True)
    (run / "metadata.yaml").write_text(
        "model: my-model\ndate: 1 March 2026\nbenchmark: demo\nbenchmark_version: '1.0'\nrounds: 2\n", "utf-8"
    )
    rows = [("demo-001", 0), ("demo-001", 1), ("q9", 0), ("demo-002", 5)]
    (run / "predictions.jsonl").write_text(
        "".join(json.dumps({"question_id": q, "round": r, "response": "Final answer: 1"}) + "\n" for q, r in rows),
        "utf-8",
    )
    printed = _validate(tmp_path).stdout.splitlines()
    assert len(printed) == len(block.splitlines())
    for shown, line in zip(block.splitlines(), printed, strict=True):
        assert line.startswith(shown.split(" …")[0]) if " … " in shown else line == shown, (shown, line)
