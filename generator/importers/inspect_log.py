"""Read Inspect AI logs (``.eval`` or ``.json``) into :class:`~dualboard.importers.harness.HarnessRun`\\ s.

Each log is one task run by one model: its samples (one per question and epoch) give the questions, the
targets as answer keys, the completions as responses and every scorer's value as a recorded score. Epochs
become rounds. Needs the ``inspect`` extra (``pip install "dualboard[inspect]"``), whose ``read_eval_log``
reads both formats.

Logs are untrusted like a pull request's files: no links, a size cap (on a ``.eval`` archive, on what it
unpacks to as well), strict JSON in a ``.json`` log, and every failed, cancelled or errored sample a finding.
"""

from __future__ import annotations

import math
import os
import stat
import zipfile
from dataclasses import replace
from pathlib import Path
from string import ascii_uppercase as LETTERS
from typing import Any

from dualboard.errors import Finding, InvalidInputError
from dualboard.importers.harness import Answer, HarnessRun, day_of, short_json
from dualboard.importers.run_folders import answer_key
from dualboard.intake.untrusted import parse_json_line

HARNESS = "Inspect AI"
MAX_LOG_BYTES = 1024**3
"""Largest log read (a ``.eval`` archive as stored)."""
MAX_UNPACKED_BYTES = 4 * 1024**3
"""Largest total a ``.eval`` archive may unpack to (a zip bomb is refused before it is opened)."""
EXTRA_HINT = 'install the extra that reads Inspect logs: pip install "dualboard[inspect]"'


def read_inspect_logs(paths: list[Path]) -> list[HarnessRun]:
    """Read every log; raise InvalidInputError with every finding of every log (nothing is imported then)."""
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError:
        raise InvalidInputError([Finding("inspect_ai", None, "-", "Inspect AI is not installed", EXTRA_HINT)]) from None
    runs, findings = [], []
    for path in paths:
        problem = _unsafe(Path(path))
        if problem is not None:
            findings.append(problem)
            continue
        try:
            log = read_eval_log(str(path))
        except Exception as exc:  # noqa: BLE001 - any failure to parse is the log's, and is reported as such
            findings.append(
                _finding(
                    path,
                    "-",
                    f"is not a readable Inspect log ({type(exc).__name__}: {str(exc)[:200]})",
                    "pass the .eval or .json file `inspect eval` wrote, complete and unchanged",
                )
            )
            continue
        run, found = _run(Path(path), log, value_to_float())
        findings += found
        runs += [run] if run is not None else []
    if findings:
        raise InvalidInputError(findings)
    return runs


def _finding(path: Path | str, field: str, problem: str, fix: str) -> Finding:
    return Finding(str(path), None, field, problem, fix)


def _unsafe(path: Path) -> Finding | None:
    """Why the log must not be read: a link, not a regular file, too large, not strict JSON, a zip bomb."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        return _finding(path, "path", f"cannot be read ({exc.strerror})", "name an Inspect log file")
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        return _finding(path, "path", "is a link or not a regular file", "name the log file itself")
    if info.st_size > MAX_LOG_BYTES:
        return _finding(
            path,
            "path",
            f"is {info.st_size} bytes, over the {MAX_LOG_BYTES}-byte limit",
            "split the evaluation into smaller logs",
        )
    if path.suffix == ".json":
        return _json_finding(path)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
        if unpacked > MAX_UNPACKED_BYTES:
            return _finding(
                path,
                "path",
                f"unpacks to {unpacked} bytes, over the {MAX_UNPACKED_BYTES}-byte limit",
                "split the evaluation into smaller logs",
            )
    return None


def _json_finding(path: Path) -> Finding | None:
    """What makes a ``.json`` log other than strict JSON (a syntax error, a NaN, a key given twice)."""
    _, problem = parse_json_line(path.read_bytes(), str(path), None)
    return None if problem is None else replace(problem, fix="pass the log as `inspect eval` wrote it, complete")


def _run(path: Path, log: Any, to_float: Any) -> tuple[HarnessRun | None, list[Finding]]:
    """The run of one log, or the findings that stop it."""
    if log.status != "success":
        return None, [
            _finding(
                path,
                "status",
                f"the evaluation ended with status {log.status!r}, not 'success'",
                "import a log of a finished evaluation (finish it with `inspect eval-retry`)",
            )
        ]
    if not log.samples:
        return None, [
            _finding(path, "samples", "the log holds no samples", "rerun the evaluation without --no-log-samples")
        ]
    if log.results is None or not log.results.scores:
        return None, [_finding(path, "results", "the log holds no scores", "score the log (`inspect score`)")]
    primary = log.results.scores[0]
    metric = "accuracy" if "accuracy" in primary.metrics else next(iter(primary.metrics), None)
    if metric is None:
        return None, [
            _finding(
                path,
                "results",
                f"scorer {primary.name!r} reported no metric",
                "give the scorer a metric such as accuracy()",
            )
        ]
    answers, findings = [], []
    for sample in log.samples:
        answer, problems = _answer(path, log.eval.task, sample, to_float)
        findings += problems
        answers += [answer] if answer is not None else []
    findings = findings or _missing_samples(path, log, answers)  # a sample refused above is not also "missing"
    if primary.name not in {name for a in answers for name in a.recorded}:
        findings.append(_finding(path, "results", f"no sample has a score of {primary.name!r}", "score every sample"))
    config = log.eval.model_generate_config
    run = HarnessRun(
        source=str(path),
        harness=HARNESS,
        harness_version=str(log.eval.packages.get("inspect_ai", "unknown")),
        task=log.eval.task,
        task_version=str(log.eval.task_version),
        model=log.eval.model,
        date=day_of(log.eval.created),
        decoding={
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_tokens,
            "seed": config.seed,
        },
        score=primary.name,
        metric=metric,
        reported=float(primary.metrics[metric].value),
        reducer=primary.reducer or ",".join(log.eval.config.epochs_reducer or ["mean"]),
        answers=answers,
        model_revision=_revision(log.eval.model_args),
    )
    return (None if findings else run), findings


def _missing_samples(path: Path, log: Any, answers: list[Answer]) -> list[Finding]:
    """Samples the evaluation ran (its dataset's ids, every epoch) that the log does not hold: a log must not
    drop the answers it got wrong."""
    ids = log.eval.dataset.sample_ids
    held = {(a.question["id"], a.round) for a in answers}
    epochs = log.eval.config.epochs or 1
    missing = [f"{i} (epoch {e + 1})" for i in ids or () for e in range(epochs) if (str(i), e) not in held]
    if not missing:
        return []
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return [
        _finding(
            path,
            "samples",
            f"{len(missing)} sample(s) the evaluation ran are not in the log: {shown}",
            "import the log `inspect eval` wrote, with every sample of every epoch",
        )
    ]


def _revision(model_args: dict[str, Any]) -> str | None:
    value = model_args.get("revision")
    return str(value) if value else None


def _prompt(value: Any) -> str:
    """The sample's input as text: a string, or the text of its chat messages."""
    return value if isinstance(value, str) else "\n\n".join(message.text for message in value)


def _answer(path: Path, task: str, sample: Any, to_float: Any) -> tuple[Answer | None, list[Finding]]:
    """One sample as an answer, or the findings that stop it."""
    where = f"sample {sample.id} (epoch {sample.epoch})"
    if sample.error is not None:
        return None, [
            _finding(
                path,
                where,
                f"failed: {str(sample.error.message)[:200]}",
                "rerun the failed samples (`inspect eval-retry`) so every sample has an answer",
            )
        ]
    targets = [sample.target] if isinstance(sample.target, str) else list(sample.target)
    if not targets or not all(t.strip() for t in targets):
        return None, [_finding(path, where, "has no target", "give every sample its target (the answer key)")]
    if not sample.scores:
        return None, [_finding(path, where, "has no score", "score every sample (`inspect score`)")]
    recorded, findings = {}, []
    for name, score in sample.scores.items():
        value = to_float(score.value) if isinstance(score.value, str | int | float | bool) else math.nan
        if not 0 <= value <= 1:
            findings.append(
                _finding(
                    path,
                    f"{where}: scores.{name}",
                    f"value {short_json(score.value)[:80]} is not a score from 0 to 1",
                    "import logs whose scorers give one value from 0 to 1",
                )
            )
        recorded[name] = value * 100
    question, problem = _question(task, sample, targets)
    if problem is not None:
        findings.append(
            _finding(path, where, problem, "give a multiple-choice sample one target letter of its choices")
        )
    if findings:
        return None, findings
    provenance = {"sample_id": str(sample.id), "epoch": sample.epoch}
    provenance |= {f"{name}.answer": score.answer for name, score in sample.scores.items() if score.answer is not None}
    return Answer(question, sample.epoch - 1, sample.output.completion, recorded, provenance), []


def _question(task: str, sample: Any, targets: list[str]) -> tuple[dict[str, Any], str | None]:
    """The questions.jsonl row of a sample, and what is wrong with it (None: nothing)."""
    category = (sample.metadata or {}).get("category")
    question: dict[str, Any] = {
        "id": str(sample.id),
        "category": category if isinstance(category, str) and category.strip() else task,
        "prompt": _prompt(sample.input),
        "type": "multiple_choice" if sample.choices else "open",
    }
    answer, aliases = targets[0], targets[1:]
    if sample.choices:
        letters = LETTERS[: len(sample.choices)]
        if len(targets) != 1 or targets[0] not in letters:
            return question, f"target {short_json(sample.target)[:80]} is not one letter of {letters}"
        question["choices"] = list(sample.choices)
        question["correct_choice"] = targets[0]
        answer, aliases = sample.choices[letters.index(targets[0])], []
    question["answer_key"] = answer_key(
        answer, aliases, "the task's target, imported from an Inspect AI log", option=bool(sample.choices)
    )
    return question, None
