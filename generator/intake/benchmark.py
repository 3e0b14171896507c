"""Load benchmark definitions from ``data/benchmarks/<name>/``."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

from dualboard.errors import DualboardError, Finding, InvalidInputError
from dualboard.intake.human_labels import LABELS_FILE, HumanLabelsError, label_files, read_label_file
from dualboard.intake.models import Benchmark, GraderSpec
from dualboard.intake.schemas import schema_findings
from dualboard.intake.untrusted import decode_utf8, iter_json_lines
from dualboard.intake.yaml_mapping import read_yaml_fields
from dualboard.linear_regex import PatternSyntaxError, compile_key_pattern
from dualboard.names import RUN_ID_RULE, is_name
from dualboard.safe_read import UnsafeFileError, read_regular

QUESTION_TYPES = ("multiple_choice", "open")
DEFINITION_FILES = ("benchmark.yaml", "questions.jsonl", LABELS_FILE)
"""The fixed files of ``data/benchmarks/<name>/`` that define a benchmark; :func:`definition_files` adds the
labellers' files."""
MAX_QUESTIONS_BYTES = 200 * 1024 * 1024
"""Largest questions.jsonl or human_labels.csv read (benchmarks of 10⁵ questions stay far below)."""


def definition_files(folder: Path) -> list[str]:
    """Every file of a benchmark folder that defines it, relative to it: what the loader reads and the store keeps."""
    return [*DEFINITION_FILES, *(name for name in label_files(folder) if name != LABELS_FILE)]


class BenchmarkNotFoundError(DualboardError):
    """A run names a benchmark that has no folder under data/benchmarks/."""


def load_benchmarks(data_dir: Path) -> dict[str, Benchmark]:
    """Load every ``data/benchmarks/*/benchmark.yaml`` under ``data_dir``, by name.

    Raises one InvalidInputError with the findings of every broken benchmark,
    so a pull request that breaks two benchmarks hears about both.
    """
    root = data_dir / "benchmarks"
    if not root.is_dir():
        raise BenchmarkNotFoundError(
            f"{root}: no benchmarks folder — create data/benchmarks/<name>/ with "
            "benchmark.yaml and questions.jsonl (or run `dualboard init`)"
        )
    folders = sorted(
        p for p in root.iterdir() if (p / "benchmark.yaml").is_file() or (p / "benchmark.yaml").is_symlink()
    )
    benchmarks, findings = {}, []
    for folder in folders:
        try:
            benchmark = load_benchmark(folder, root=data_dir)
        except InvalidInputError as exc:
            findings += exc.findings
            continue
        benchmarks[benchmark.name] = benchmark
    if findings:
        raise InvalidInputError(findings)
    return benchmarks


def load_benchmark(folder: Path, *, root: Path | None = None) -> Benchmark:
    """Load and check one benchmark folder; raise InvalidInputError listing every problem.

    ``root`` is the trusted folder above (``data/``; default: the benchmark
    folder itself): nothing below it is read through a link.
    """
    root = root or folder
    config_path = folder / "benchmark.yaml"
    config, lines, config_digest = read_yaml_fields(
        config_path, example="data/benchmarks/demo/benchmark.yaml", root=root
    )
    findings = _plain_version_findings(config, str(config_path), lines) or schema_findings(
        config, "benchmark", file=str(config_path), lines=lines
    )
    findings += _previous_version_findings(config, str(config_path), lines) if not findings else []
    if not findings and not (is_name(config["name"]) and config["name"] == folder.name):
        findings.append(
            Finding(
                str(config_path),
                lines.get("name"),
                "name",
                f"{config['name'][:100]!r} differs from the folder name {folder.name[:100]!r}",
                f"rename the folder or the benchmark so they match ({RUN_ID_RULE})",
            )
        )
    digests = {"benchmark.yaml": config_digest}
    questions, question_findings = _read_questions(folder / "questions.jsonl", root, digests)
    findings += question_findings
    for name in label_files(folder):
        findings += _human_label_findings(folder, name, root, digests)
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
        previous_versions={v["version"]: frozenset(v["questions"]) for v in config.get("previous_versions", ())},
        min_answered=float(config.get("min_answered", 0.9)),
        digests=digests,
    )


def _plain_version_findings(config: dict[str, Any], file: str, lines: dict[str, int]) -> list[Finding]:
    """The form before each previous version named its questions (``previous_versions: ["1"]``), refused with
    the fix: without the question set, every question a run left out would count as never run, not unanswered."""
    entries = config.get("previous_versions")
    plain = [str(v) for v in entries if isinstance(v, (str, int, float))] if isinstance(entries, list) else []
    if not plain:
        return []
    return [
        Finding(
            file,
            lines.get("previous_versions"),
            "previous_versions",
            f"version {plain[0][:50]!r} is a plain name: each previous version must now list the ids of the "
            "questions it asked (a run of it may leave out only the questions added since)",
            f"write it as - {{version: {json.dumps(plain[0][:50])}, questions: [<every question id version "
            f"{plain[0][:50]} had>]}} (the ids of its questions.jsonl)",
        )
    ]


def _previous_version_findings(config: dict[str, Any], file: str, lines: dict[str, int]) -> list[Finding]:
    """A previous version named twice, or named like the current version."""
    names = [entry["version"] for entry in config.get("previous_versions", ())]
    clashes = sorted({n for n in names if names.count(n) > 1 or n == str(config["version"])})
    return [
        Finding(
            file,
            lines.get("previous_versions"),
            "previous_versions",
            f"version {name[:50]!r} is listed twice, or is the current version",
            "list each earlier version once, and never the current one (version)",
        )
        for name in clashes
    ]


def _spec(entry: dict[str, Any]) -> GraderSpec:
    return GraderSpec(name=entry["name"], options=dict(entry.get("options") or {}))


def _traditional_specs(entry: dict[str, Any]) -> dict[str, GraderSpec]:
    """Expand the ``traditional`` entry to one grader per question type."""
    if "name" in entry:
        return {t: _spec(entry) for t in QUESTION_TYPES}
    return {t: _spec(g) for t, g in entry.items()}


def _read_questions(path: Path, root: Path, digests: dict[str, str]) -> tuple[list[dict[str, Any]], list[Finding]]:
    """The questions of questions.jsonl and its findings; the sha256 of the bytes read goes into ``digests``."""
    if not path.is_file() and not path.is_symlink():
        return [], [Finding(str(path), None, "-", "file is missing", "add one question per line")]
    try:
        data = read_regular(path, root=root, limit=MAX_QUESTIONS_BYTES)
    except UnsafeFileError as exc:
        return [], [exc.finding()]
    digests[path.name] = hashlib.sha256(data).hexdigest()
    questions, findings, seen = [], [], set()
    with io.BytesIO(data) as handle:
        for number, question, problem in iter_json_lines(handle, str(path)):
            problems = [problem] if problem else schema_findings(question, "question", file=str(path), line=number)
            problems += _pattern_findings(question, str(path), number) if not problems else []
            if not problems and question["id"] in seen:
                problems.append(
                    Finding(
                        str(path),
                        number,
                        "id",
                        f"duplicate id {question['id'][:100]!r}",
                        "give every question a unique id",
                    )
                )
            findings += problems
            if not problems:
                seen.add(question["id"])
                questions.append(question)
    return questions, findings


def _human_label_findings(folder: Path, name: str, root: Path, digests: dict[str, str]) -> list[Finding]:
    """Check a label file (``name``, relative to ``folder``) as the grading stage will read it, so a broken file
    fails review, not the build; the sha256 of the bytes read goes into ``digests``."""
    path = folder / name
    try:
        raw = read_regular(path, root=root, limit=MAX_QUESTIONS_BYTES)
    except UnsafeFileError as exc:
        return [exc.finding()]
    digests[name] = hashlib.sha256(raw).hexdigest()
    text, problem = decode_utf8(raw, str(path))
    if problem is not None:
        return [problem]
    import pandas as pd  # here, not at the top: most benchmarks have no labels, and pandas takes a second to load

    try:
        read_label_file(text, name, str(path))
    except HumanLabelsError as exc:
        return [_label_finding(str(exc), str(path))]
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        return [
            Finding(
                str(path),
                None,
                "-",
                f"not a readable CSV: {str(exc)[:200]}",
                "write a header run,question,round,label,response_sha256 and one label per line",
            )
        ]
    return []


def _label_finding(message: str, file: str) -> Finding:
    """The grading parser's ``file[:line]: problem — fix`` message as a finding."""
    where, _, rest = message.removeprefix(file).partition(": ")
    problem, _, fix = rest.partition(" — ")
    line = int(where[1:]) if where[1:].isdigit() else None
    return Finding(file, line, "label", problem, fix or "correct human_labels.csv (header run,question,round,label)")


def _pattern_findings(question: dict[str, Any], file: str, line: int) -> list[Finding]:
    """One finding per answer-key pattern that grading could not run in linear time (RE2)."""
    findings = []
    for index, pattern in enumerate(question.get("answer_key", {}).get("patterns", [])):
        try:
            compile_key_pattern(pattern)
        except PatternSyntaxError as error:
            findings.append(Finding(file, line, f"answer_key.patterns.{index}", error.problem, error.fix))
    return findings
