"""Validate submitted runs: every problem found in one pass, then one verdict.

A run folder is ``submissions/<benchmark>/<run_id>/`` holding
``predictions.jsonl`` and ``metadata.yaml``. :func:`check_run` returns the
parsed :class:`~generator.intake.models.Run` (or ``None``) and the list of
findings; :func:`check_runs` collects the findings of every run (what
``dualboard validate`` prints) and :func:`load_runs` raises one
:class:`InvalidInputError` carrying them all, so a submitter sees all problems
at once.

Submissions are untrusted: a run folder must sit inside ``submissions/``, hold
no symbolic links (they could point at any file of the build machine), and its
YAML may use neither aliases (a "billion laughs" bomb expands a few KB into
gigabytes) nor deep nesting.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import Finding, InvalidInputError
from generator.intake.benchmark import load_benchmarks
from generator.intake.models import Benchmark, Run
from generator.intake.schemas import schema_findings
from generator.intake.untrusted import iter_json_lines, parse_yaml
from generator.names import RUN_ID_RULE, colliding, is_name
from generator.safe_read import UnsafeFileError, open_regular, read_regular, untrusted_findings

PREDICTIONS = "predictions.jsonl"
METADATA = "metadata.yaml"
PROVENANCE = "provenance.jsonl"
"""Optional: where each answer came from (e.g. an importer's source fields); stored, never graded."""
RUN_FILES = (METADATA, PREDICTIONS, PROVENANCE)
"""Files a run folder may hold; everything else is reported."""
MAX_REPORTED_PER_FILE = 50


@dataclass(frozen=True)
class Limits:
    """Size limits that protect the build from oversized submissions."""

    predictions_bytes: int = 50 * 1024 * 1024
    """Largest accepted predictions.jsonl."""
    response_bytes: int = 100 * 1024
    """Largest accepted single response (UTF-8 bytes)."""
    metadata_bytes: int = 64 * 1024
    """Largest accepted metadata.yaml (also bounds YAML alias expansion)."""
    provenance_bytes: int = 50 * 1024 * 1024
    """Largest accepted provenance.jsonl (it is stored and published like the predictions)."""


def find_run_dirs(paths: list[Path]) -> list[Path]:
    """Expand submission paths to run folders.

    A path may be a run folder (holding predictions.jsonl), a benchmark folder
    (``submissions/<benchmark>``) or the submissions root; folders are sorted so
    every build sees runs in the same order.
    """
    found: list[Path] = []
    for path in paths:
        if (path / PREDICTIONS).exists() or (path / METADATA).exists():
            found.append(path)
            continue
        for depth in ("*", "*/*"):
            found += sorted(p.parent for p in path.glob(f"{depth}/{METADATA}"))
            found += sorted(p.parent for p in path.glob(f"{depth}/{PREDICTIONS}"))
    return sorted(set(found))


@dataclass(frozen=True)
class ValidationReport:
    """Everything one validation pass found: the valid runs and every finding."""

    runs: tuple[Run, ...]
    """Runs without errors (warnings allowed), in folder order."""
    findings: tuple[Finding, ...] = field(default=())
    """Every problem of every run, errors and warnings."""

    @property
    def errors(self) -> list[Finding]:
        """The findings that reject the submission."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        """True when nothing is rejected (warnings may remain)."""
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        """The report as ``dualboard validate --format json`` prints it."""
        return {
            "valid": self.ok,
            "runs": [{"benchmark": r.benchmark, "run_id": r.run_id, "answers": len(r.predictions)} for r in self.runs],
            "findings": [{"file": f.file, "line": f.line, "field": f.field, "problem": f.problem,
                          "fix": f.fix, "severity": f.severity} for f in self.findings],
        }


def check_runs(run_dirs: list[Path], benchmarks: dict[str, Benchmark], limits: Limits = Limits(),
               *, submissions_root: Path | None = None) -> ValidationReport:
    """Check every run folder in one pass; never raises for bad input.

    ``submissions_root``, when given, is the folder every run must sit inside
    (``<benchmark>/<run_id>/`` directly under it).
    """
    runs, findings = [], []
    for run_dir in run_dirs:
        run, problems = check_run(run_dir, benchmarks, limits, submissions_root=submissions_root)
        findings += problems
        if run is not None:
            runs.append(run)
    findings += _duplicate_findings(runs)
    return ValidationReport(tuple(runs), tuple(findings))


def validate_submissions(data_dir: Path, paths: list[Path], submissions_root: Path, limits: Limits = Limits()) -> ValidationReport:
    """Check everything a pull request can change that the build reads; never raises for bad input.

    That is the runs under ``paths`` and the whole of ``data/`` and
    ``submissions/``: a link anywhere in them is a finding, and so is a run
    folder at the wrong depth (it would be silently skipped). A broken
    benchmark definition comes back as findings too, so ``--format json``
    always prints one JSON document.
    """
    findings = [*untrusted_findings(data_dir), *untrusted_findings(submissions_root), *_misplaced_run_findings(submissions_root)]
    try:
        benchmarks = load_benchmarks(data_dir)
    except InvalidInputError as exc:
        return ValidationReport((), tuple(dict.fromkeys([*findings, *exc.findings])))
    report = check_runs(find_run_dirs(paths), benchmarks, limits, submissions_root=submissions_root)
    return ValidationReport(report.runs, tuple(dict.fromkeys([*findings, *report.findings])))


def _misplaced_run_findings(submissions_root: Path) -> list[Finding]:
    """Run files deeper than ``submissions/<benchmark>/<run_id>/``: the build would never see them."""
    findings = []
    for folder, dirs, files in os.walk(submissions_root):  # links are not followed (and reported above)
        depth = len(Path(folder).relative_to(submissions_root).parts)
        if depth > 2 and ({METADATA, PREDICTIONS} & set(files)):
            findings.append(Finding(folder, None, "path", "run folder is nested too deep: the build only reads submissions/<benchmark>/<run_id>/",
                                    "move the run folder up to submissions/<benchmark>/<run_id>/"))
        dirs.sort()
    return findings


def load_runs(run_dirs: list[Path], benchmarks: dict[str, Benchmark], limits: Limits = Limits(),
              *, submissions_root: Path | None = None) -> list[Run]:
    """Check every run folder; return the runs, or raise once with every finding."""
    report = check_runs(run_dirs, benchmarks, limits, submissions_root=submissions_root)
    if not report.ok:
        raise InvalidInputError(list(report.findings))
    return list(report.runs)


def _duplicate_findings(runs: list[Run]) -> list[Finding]:
    """Runs submitted twice, and distinct run ids that would share a page (``fjord_3b``, ``fjord-3b``)."""
    ids = Counter((r.benchmark, r.run_id) for r in runs)
    duplicated = [f"{b}/{r}" for (b, r), n in ids.items() if n > 1]
    findings = []
    if duplicated:
        findings.append(Finding(", ".join(duplicated), None, "run_id", "submitted twice", "keep one folder per run id"))
    for benchmark in sorted({r.benchmark for r in runs}):
        for group in colliding({r.run_id for r in runs if r.benchmark == benchmark}):
            findings.append(Finding(", ".join(f"{benchmark}/{g}" for g in group), None, "run_id",
                                    "these run ids name the same run page (ids are compared ignoring case, '.', '_' and '-')",
                                    "rename the new run so its id differs in letters or digits"))
    return findings


def check_run(run_dir: Path, benchmarks: dict[str, Benchmark], limits: Limits = Limits(),
              *, submissions_root: Path | None = None) -> tuple[Run | None, list[Finding]]:
    """Check one run folder; return the Run when it has no errors, and all findings.

    Bad input never raises: every problem, however the file is broken, comes
    back as a Finding naming the file, the field and the fix.
    """
    findings = _check_run_id(run_dir) + _location_findings(run_dir, submissions_root)
    if any(f.field == "path" and f.severity == "error" for f in findings):
        return None, findings  # never read through a link or outside submissions/
    metadata, meta_findings = _read_metadata(run_dir / METADATA, limits)
    findings += meta_findings
    benchmark = _resolve_benchmark(run_dir, metadata, benchmarks, findings)
    predictions, pred_findings = _read_predictions(run_dir / PREDICTIONS, benchmark, metadata, limits)
    findings += pred_findings + _provenance_findings(run_dir / PROVENANCE, limits)
    if benchmark is not None and metadata is not None and not any(f.severity == "error" for f in pred_findings):
        findings += _coverage_findings(run_dir / PREDICTIONS, predictions, benchmark, metadata)
    if any(f.severity == "error" for f in findings) or benchmark is None or metadata is None:
        return None, findings
    return Run(benchmark=benchmark.name, run_id=run_dir.name, metadata=metadata, predictions=tuple(predictions)), findings


def _location_findings(run_dir: Path, submissions_root: Path | None) -> list[Finding]:
    """Refuse symbolic links and run folders outside ``submissions/<benchmark>/``."""
    findings = []
    if submissions_root is not None:
        root = Path(submissions_root).resolve()
        if run_dir.resolve().parent.parent != root:
            findings.append(Finding(str(run_dir), None, "path", f"run folder is not at {root}/<benchmark>/<run_id>",
                                    "move the run to submissions/<benchmark>/<run_id>/"))
    links = [p for p in (run_dir.parent, run_dir) if p.is_symlink()]
    entries = sorted(run_dir.iterdir()) if run_dir.is_dir() and not run_dir.is_symlink() else []
    links += [p for p in entries if p.is_symlink()]
    findings += [Finding(str(p), None, "path", "is a symbolic link", "commit the real file or folder, not a link")
                 for p in links]
    findings += [Finding(str(p), None, "path", f"unexpected entry: only {', '.join(RUN_FILES)} are stored",
                         "remove it from the run folder", "warning")
                 for p in entries if p.name not in RUN_FILES and not p.is_symlink()]
    return findings


def _check_run_id(run_dir: Path) -> list[Finding]:
    if is_name(run_dir.name):
        return []
    return [Finding(str(run_dir), None, "run_id", f"folder name {run_dir.name[:120]!r} is not a valid run id",
                    f"rename the folder to {RUN_ID_RULE}")]


def _read_metadata(path: Path, limits: Limits) -> tuple[dict[str, Any] | None, list[Finding]]:
    if not path.is_file() or path.is_symlink():
        return None, [Finding(str(path), None, "-", "metadata.yaml is missing", "add metadata.yaml (model, submitter, date, benchmark, benchmark_version, rounds)")]
    try:
        raw = read_regular(path, root=path.parent, limit=limits.metadata_bytes)
    except UnsafeFileError as exc:
        return None, [exc.finding()]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [Finding(str(path), None, "-", f"not UTF-8 (byte {exc.start})", "save the file as UTF-8")]
    data, problem = parse_yaml(text, str(path))
    if problem is not None:
        return None, [problem]
    if not isinstance(data, dict):
        return None, [Finding(str(path), None, "-", "expected a mapping of fields", "write key: value pairs")]
    data = _stringify_dates(data)
    findings = _schema_findings(data, "metadata", str(path), None)
    return (None if findings else data), findings


def _schema_findings(instance: Any, name: str, file: str, line: int | None) -> list[Finding]:
    """Schema findings; values too big or too deep even to describe become a finding too."""
    try:
        return schema_findings(instance, name, file=file, line=line)
    except RecursionError:
        return [Finding(file, line, "-", "nested too deeply to check", "flatten the structure")]
    except ValueError:  # an integer too long to print in the message (0xfff… in YAML)
        return [Finding(file, line, "-", "a number has thousands of digits", "write numbers of ordinary size")]


def _stringify_dates(data: dict[str, Any]) -> dict[str, Any]:
    """YAML reads 2024-05-01 as a date; the contract stores the ISO string."""
    if "date" in data and hasattr(data["date"], "isoformat"):
        return {**data, "date": data["date"].isoformat()}
    return data


def _resolve_benchmark(run_dir: Path, metadata: dict[str, Any] | None, benchmarks: dict[str, Benchmark], findings: list[Finding]) -> Benchmark | None:
    folder_benchmark = run_dir.parent.name
    name = metadata["benchmark"] if metadata else folder_benchmark
    meta_file = str(run_dir / METADATA)
    if name not in benchmarks:
        known = ", ".join(sorted(benchmarks)) or "none"
        findings.append(Finding(meta_file, None, "benchmark", f"unknown benchmark {name[:100]!r}", f"use one of: {known}"))
        return None
    if name != folder_benchmark:
        findings.append(Finding(meta_file, None, "benchmark", f"{name!r} but the run sits in submissions/{folder_benchmark[:100]}/", f"move the run to submissions/{name}/"))
    benchmark = benchmarks[name]
    if metadata and str(metadata["benchmark_version"]) != benchmark.version and not benchmark.answers_older_version(metadata):
        findings.append(Finding(meta_file, None, "benchmark_version", f"{str(metadata['benchmark_version'])[:50]!r} does not exist",
                                f"answer version {benchmark.version!r} of {name} (a run of an earlier version stays "
                                f"on the board once data/benchmarks/{name}/benchmark.yaml lists it under previous_versions)"))
    return benchmark


def _read_predictions(path: Path, benchmark: Benchmark | None, metadata: dict[str, Any] | None, limits: Limits) -> tuple[list[dict[str, Any]], list[Finding]]:
    """Check predictions.jsonl line by line; rows are kept only while the file is valid.

    Streaming keeps a rejected million-line file from costing a million
    parsed rows of memory: after the first error only findings are counted.
    """
    if not path.is_file() or path.is_symlink():
        return [], [Finding(str(path), None, "-", "predictions.jsonl is missing", "add one JSON answer per line")]
    try:
        handle = open_regular(path, root=path.parent, limit=limits.predictions_bytes)
    except UnsafeFileError as exc:
        return [], [exc.finding()]
    predictions, findings, seen = [], _FindingCap(str(path)), set()
    with handle:
        for number, row, problem in iter_json_lines(handle, str(path)):
            row, problems = (None, [problem]) if problem else _check_prediction(row, number, str(path), benchmark, metadata, limits, seen)
            findings.extend(problems)
            if findings.errors == 0:
                predictions.append(row)
    return (predictions if findings.errors == 0 else []), findings.list()


def _check_prediction(row: Any, number: int, file: str, benchmark: Benchmark | None, metadata: dict[str, Any] | None,
                      limits: Limits, seen: set) -> tuple[dict[str, Any] | None, list[Finding]]:
    """The row with its round filled in (the contract's default 0), and its findings."""
    problems = _schema_findings(row, "prediction", file, number)
    if problems:
        return None, problems
    row = {**row, "round": row.get("round", 0)}
    return row, _semantic_findings(row, number, file, benchmark, metadata, limits, seen)


def _semantic_findings(row: dict[str, Any], number: int, file: str, benchmark: Benchmark | None, metadata: dict[str, Any] | None, limits: Limits, seen: set) -> list[Finding]:
    problems = []
    if len(row["response"].encode("utf-8")) > limits.response_bytes:
        problems.append(Finding(file, number, "response", f"response is over the {limits.response_bytes}-byte limit", "truncate the response or raise --max-response-bytes"))
    if benchmark is not None and row["question_id"] not in benchmark._by_id:
        problems.append(_unknown_question(row, number, file, benchmark, metadata))
    if metadata is not None and row["round"] >= metadata["rounds"]:
        problems.append(Finding(file, number, "round", f"round {row['round']} but metadata.yaml says rounds: {metadata['rounds']}", "number rounds from 0 to rounds-1, or correct rounds in metadata.yaml"))
    key = (row["question_id"], row["round"])
    if key in seen:
        problems.append(Finding(file, number, "question_id", f"duplicate answer for question {key[0][:100]!r} round {key[1]}", "keep one answer per (question_id, round)"))
    seen.add(key)
    return problems


def _unknown_question(row: dict[str, Any], number: int, file: str, benchmark: Benchmark,
                      metadata: dict[str, Any] | None) -> Finding:
    """An answer to a question the benchmark lacks: an error, or for a run of an earlier version
    (the question was dropped since) a warning, and the answer is left out of grading."""
    if metadata is not None and benchmark.answers_older_version(metadata):
        return Finding(file, number, "question_id", f"question {row['question_id'][:100]!r} is not in version "
                       f"{benchmark.version!r} of {benchmark.name}", "nothing to do: this answer of an earlier "
                       "version is left out of grading", "warning")
    return Finding(file, number, "question_id", f"unknown question id {row['question_id'][:100]!r}",
                   f"use an id from data/benchmarks/{benchmark.name}/questions.jsonl")


def _provenance_findings(path: Path, limits: Limits) -> list[Finding]:
    """provenance.jsonl is stored and published: check it is size-capped JSON lines of flat records."""
    if not path.exists() or path.is_symlink():
        return []  # optional; a link is reported by _location_findings
    try:
        handle = open_regular(path, root=path.parent, limit=limits.provenance_bytes)
    except UnsafeFileError as exc:
        return [exc.finding()]
    findings = _FindingCap(str(path))
    with handle:
        for number, row, problem in iter_json_lines(handle, str(path)):
            findings.extend([problem] if problem else _schema_findings(row, "provenance", str(path), number))
    return findings.list()


def _coverage_findings(path: Path, predictions: list[dict[str, Any]], benchmark: Benchmark, metadata: dict[str, Any]) -> list[Finding]:
    answered = {(p["question_id"], p["round"]) for p in predictions}
    expected = {(q["id"], r) for q in benchmark.questions for r in range(metadata["rounds"])}
    missing = sorted(expected - answered)
    if not missing or benchmark.answers_older_version(metadata):
        return []  # an earlier version's run was never asked the questions added since: never run, not wrong
    severity = "warning" if benchmark.allow_incomplete else "error"
    shown = ", ".join(f"{q}#{r}" for q, r in missing[:10]) + (" …" if len(missing) > 10 else "")
    return [Finding(str(path), None, "coverage", f"{len(missing)} of {len(expected)} (question, round) answers missing: {shown}",
                    "answer every question in every round (missing answers would silently lower the score)", severity)]


class _FindingCap:
    """Keep reports readable and memory flat: at most MAX_REPORTED_PER_FILE findings, the rest counted."""

    def __init__(self, file: str):
        self.file, self.count, self.errors, self._kept = file, 0, 0, []

    def extend(self, findings: list[Finding]) -> None:
        """Count ``findings`` (and, apart, the errors) and keep them while under the cap."""
        self.count += len(findings)
        self.errors += sum(f.severity == "error" for f in findings)
        self._kept += findings[:max(0, MAX_REPORTED_PER_FILE - len(self._kept))]

    def list(self) -> list[Finding]:
        """The kept findings, and one more saying how many were not shown."""
        rest = self.count - len(self._kept)
        if rest == 0:
            return list(self._kept)
        return self._kept + [Finding(self.file, None, "-", f"{rest} more problems not shown", "fix the ones above and validate again")]
