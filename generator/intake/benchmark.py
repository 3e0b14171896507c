"""Load benchmark definitions from ``data/benchmarks/<name>/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.errors import DualboardError, Finding, InvalidInputError
from generator.intake.models import Benchmark, GraderSpec
from generator.intake.schemas import schema_findings
from generator.intake.yaml_mapping import read_yaml_mapping
from generator.linear_regex import PatternSyntaxError, compile_key_pattern

QUESTION_TYPES = ("multiple_choice", "open")


class BenchmarkNotFoundError(DualboardError):
    """A run names a benchmark that has no folder under data/benchmarks/."""


def load_benchmarks(data_dir: Path) -> dict[str, Benchmark]:
    """Load every ``data/benchmarks/*/benchmark.yaml`` under ``data_dir``, by name."""
    root = data_dir / "benchmarks"
    if not root.is_dir():
        raise BenchmarkNotFoundError(
            f"{root}: no benchmarks folder — create data/benchmarks/<name>/ with "
            "benchmark.yaml and questions.jsonl (or run `dualboard init`)"
        )
    folders = sorted(p for p in root.iterdir() if (p / "benchmark.yaml").is_file())
    return {b.name: b for b in (load_benchmark(p) for p in folders)}


def load_benchmark(folder: Path) -> Benchmark:
    """Load and check one benchmark folder; raise InvalidInputError listing every problem."""
    config_path = folder / "benchmark.yaml"
    config = read_yaml_mapping(config_path, example="data/benchmarks/demo/benchmark.yaml")
    findings = schema_findings(config, "benchmark", file=str(config_path), line=None)
    if not findings and config["name"] != folder.name:
        findings.append(Finding(str(config_path), None, "name", f"{config['name']!r} differs from the folder name {folder.name!r}", "rename the folder or the benchmark so they match"))
    questions, question_findings = _read_questions(folder / "questions.jsonl")
    findings += question_findings
    if findings:
        raise InvalidInputError(findings)
    return Benchmark(
        name=config["name"],
        version=str(config["version"]),
        title=config.get("title", config["name"]),
        description=config.get("description", ""),
        traditional=_traditional_specs(config["graders"]["traditional"]),
        answer_key=tuple(_spec(g) for g in config["graders"]["answer_key"]),
        questions=tuple(questions),
        allow_incomplete=bool(config.get("allow_incomplete", False)),
        path=folder,
    )


def _spec(entry: dict[str, Any]) -> GraderSpec:
    return GraderSpec(name=entry["name"], options=dict(entry.get("options") or {}))


def _traditional_specs(entry: dict[str, Any]) -> dict[str, GraderSpec]:
    """Expand the ``traditional`` entry to one grader per question type."""
    if "name" in entry:
        return {t: _spec(entry) for t in QUESTION_TYPES}
    return {t: _spec(g) for t, g in entry.items()}


def _read_questions(path: Path) -> tuple[list[dict[str, Any]], list[Finding]]:
    if not path.is_file():
        return [], [Finding(str(path), None, "-", "file is missing", "add one question per line")]
    questions, findings, seen = [], [], set()
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            question = json.loads(line)
        except json.JSONDecodeError as exc:
            findings.append(Finding(str(path), number, "-", f"invalid JSON: {exc.msg}", "write one JSON object per line"))
            continue
        problems = schema_findings(question, "question", file=str(path), line=number)
        problems += _pattern_findings(question, str(path), number) if not problems else []
        if not problems and question["id"] in seen:
            problems.append(Finding(str(path), number, "id", f"duplicate id {question['id']!r}", "give every question a unique id"))
        findings += problems
        if not problems:
            seen.add(question["id"])
            questions.append(question)
    return questions, findings


def _pattern_findings(question: dict[str, Any], file: str, line: int) -> list[Finding]:
    """One finding per answer-key pattern that grading could not run in linear time (RE2)."""
    findings = []
    for index, pattern in enumerate(question.get("answer_key", {}).get("patterns", [])):
        try:
            compile_key_pattern(pattern)
        except PatternSyntaxError as error:
            findings.append(Finding(file, line, f"answer_key.patterns.{index}", error.problem, error.fix))
    return findings
