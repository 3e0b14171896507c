"""Turn an evaluation harness's log into a benchmark and runs: what the Inspect AI and lm-evaluation-harness
importers share once each has read its own format.

A reader returns :class:`HarnessRun`\\ s, one per (model, task), each a list of :class:`Answer`\\ s holding the
question as ``questions.jsonl`` writes it. :func:`plan_harness_import` names the benchmark and runs, checks the
questions against a benchmark the leaderboard already has, and builds the files; the shared writer
(:mod:`dualboard.importers.run_folders`) checks and writes them.

The harness's own scores travel under ``recorded`` (0–100, one field per scorer or metric) and its primary one
is the traditional grading; answer-key grading (``rules``) re-grades every response against the targets.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dualboard.errors import Finding, InvalidInputError
from dualboard.importers.run_folders import BENCHMARKS, SUBMISSIONS, Plan, jsonl, slug, write_plan, yaml_text
from dualboard.intake.benchmark import load_benchmark
from dualboard.names import RUN_ID_RULE, is_name

ANSWER_KEY_GRADERS = ({"name": "rules"},)
"""Answer-key graders of a benchmark an importer creates."""


@dataclass(frozen=True)
class Answer:
    """One response of a run, as a reader found it in the log."""

    question: dict[str, Any]
    """The question as ``questions.jsonl`` writes it (id, category, prompt, type, choices, answer key)."""
    round: int
    response: str
    recorded: dict[str, float]
    """The harness's scores of this response, by scorer or metric name, on 0–100."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """Source fields kept beside the answer in ``provenance.jsonl`` (short scalars)."""


@dataclass(frozen=True)
class HarnessRun:
    """Everything one (model, task) of a log gives."""

    source: str
    """The log file or samples file it was read from, as the user named it."""
    harness: str
    """``Inspect AI`` or ``lm-evaluation-harness``."""
    harness_version: str
    task: str
    task_version: str
    model: str
    date: str
    """The day the evaluation ran, YYYY-MM-DD."""
    decoding: dict[str, Any]
    """temperature, top_p, max_tokens, seed (None where the log has none)."""
    score: str
    """The primary scorer or metric: its ``recorded`` field is the traditional grading."""
    metric: str
    """The name of the number the harness reported for it (``accuracy``, ``acc``)."""
    reported: float
    """That number, as the harness reported it (0–1)."""
    reducer: str
    """How the harness reduced a question's rounds to the number it reported (``mean``, ``mode``, ``take_first``)."""
    answers: list[Answer]
    model_revision: str | None = None


@dataclass(frozen=True)
class HarnessImport:
    """What an import wrote."""

    benchmarks: tuple[str, ...]
    """Benchmark folders it created (empty when every run answered a benchmark the leaderboard has)."""
    runs: tuple[tuple[str, str, HarnessRun], ...]
    """(benchmark, run id, the run as read) per run folder written."""


def import_harness_runs(
    runs: list[HarnessRun], *, dest: Path, submitter: str, benchmark: str | None = None, overwrite: bool = False
) -> HarnessImport:
    """Write the runs read from a harness's logs (and any benchmark they define) under ``dest``.

    ``benchmark`` names the benchmark instead of the task's name (one task only). Raises InvalidInputError with
    every finding, and writes nothing, when a run's questions disagree with the leaderboard's benchmark.
    """
    plan, written, created = plan_harness_import(runs, dest=Path(dest), submitter=submitter, benchmark=benchmark)
    write_plan(plan, Path(dest), overwrite)
    return HarnessImport(tuple(created), tuple(written))


def plan_harness_import(
    runs: list[HarnessRun], *, dest: Path, submitter: str, benchmark: str | None = None
) -> tuple[Plan, list[tuple[str, str, HarnessRun]], list[str]]:
    """Return the files to write, (benchmark, run id, run) per run, and the benchmarks created."""
    tasks = sorted({run.task for run in runs})
    if benchmark is not None and len(tasks) > 1:
        raise InvalidInputError(
            [
                Finding(
                    runs[0].source,
                    None,
                    "task",
                    f"the logs hold {len(tasks)} tasks ({', '.join(tasks)})",
                    "drop --benchmark (each task becomes the benchmark of its name) or import one task at a time",
                )
            ]
        )
    if benchmark is not None and not is_name(benchmark):
        raise InvalidInputError([Finding("--benchmark", None, "-", f"{benchmark!r} is not a safe name", RUN_ID_RULE)])
    names = {task: benchmark or slug(task) for task in tasks}
    plan: Plan = {}
    written, created, findings = [], [], []
    for task in tasks:
        of_task = [run for run in runs if run.task == task]
        name = names[task]
        folder = dest / BENCHMARKS / name
        if (folder / "benchmark.yaml").is_file():
            findings += _question_findings(of_task, load_benchmark(folder, root=dest / "data").questions, folder)
        else:
            questions, disagreements = _questions(of_task)
            findings += disagreements
            plan[f"{BENCHMARKS}/{name}"] = _benchmark_files(name, of_task[0], questions)
            created.append(name)
        findings += _twice_findings(of_task)
        chosen: set[str] = set()
        for run in sorted(of_task, key=lambda r: r.model):
            run_id = slug(run.model, chosen)
            chosen.add(run_id)
            findings += _answer_findings(run)
            plan[f"{SUBMISSIONS}/{name}/{run_id}"] = _run_files(run, name, submitter)
            written.append((name, run_id, run))
    if findings:
        raise InvalidInputError(findings)
    return plan, written, created


def _comparable(question: Mapping[str, Any]) -> dict[str, Any]:
    """What a log must agree on with a benchmark's question: its prompt, options and correct answer."""
    key = question.get("answer_key") or {}
    return {
        "prompt": question.get("prompt"),
        "type": question.get("type"),
        "choices": question.get("choices"),
        "correct answer": question.get("correct_choice") if question.get("choices") else key.get("answer"),
    }


def _question_findings(runs: list[HarnessRun], known: Iterable[Mapping[str, Any]], folder: Path) -> list[Finding]:
    """A finding per question of the logs that the benchmark lacks or words differently."""
    by_id = {q["id"]: q for q in known}
    findings, seen = [], set()
    for run in runs:
        for answer in run.answers:
            question = answer.question
            if (run.source, question["id"]) in seen:
                continue
            seen.add((run.source, question["id"]))
            ours = by_id.get(question["id"])
            if ours is None:
                findings.append(
                    Finding(
                        run.source,
                        None,
                        f"question {question['id']}",
                        f"is not a question of {folder / 'questions.jsonl'}",
                        "import the log of the benchmark's own questions, or ask a maintainer to add it",
                    )
                )
                continue
            differ = [k for k, v in _comparable(question).items() if _comparable(ours)[k] != v]
            if differ:
                findings.append(
                    Finding(
                        run.source,
                        None,
                        f"question {question['id']}",
                        f"its {' and '.join(differ)} {'differs' if len(differ) == 1 else 'differ'} from "
                        f"{folder / 'questions.jsonl'}",
                        "evaluate with the benchmark's own questions and targets, or ask a maintainer to "
                        "publish a new benchmark version",
                    )
                )
    return findings


def _questions(runs: list[HarnessRun]) -> tuple[list[dict[str, Any]], list[Finding]]:
    """The benchmark's questions, from the first run that has each; runs that word one differently are findings."""
    first: dict[str, tuple[dict[str, Any], str]] = {}
    findings = []
    for run in runs:
        for answer in run.answers:
            question = answer.question
            kept = first.setdefault(question["id"], (question, run.source))
            if _comparable(kept[0]) != _comparable(question):
                where = "elsewhere in this log" if kept[1] == run.source else f"in {kept[1]}"
                findings.append(
                    Finding(
                        run.source,
                        None,
                        f"question {question['id']}",
                        f"differs from the question of the same id {where}",
                        "give each question one id, and import logs of one version of the task together",
                    )
                )
    return [q for q, _ in first.values()], list(dict.fromkeys(findings))


def _answer_findings(run: HarnessRun) -> list[Finding]:
    """Answers given twice for one (question, round)."""
    counts: dict[tuple[str, int], int] = defaultdict(int)
    for answer in run.answers:
        counts[answer.question["id"], answer.round] += 1
    return [
        Finding(
            run.source,
            None,
            f"question {question_id}",
            f"round {round_ + 1} is answered {n} times",
            "keep one sample per question and epoch (repeat): a log of two evaluations cannot be one run",
        )
        for (question_id, round_), n in counts.items()
        if n > 1
    ]


def _twice_findings(runs: list[HarnessRun]) -> list[Finding]:
    """Two logs of one model on one task: which is the run?"""
    first: dict[str, str] = {}
    findings = []
    for run in runs:
        if run.model in first:
            findings.append(
                Finding(
                    run.source,
                    None,
                    "model",
                    f"{run.model} ran {run.task} in {first[run.model]} too",
                    "import one log per model and task (rerun with --epochs for more rounds)",
                )
            )
        first.setdefault(run.model, run.source)
    return findings


def _benchmark_files(name: str, run: HarnessRun, questions: list[dict[str, Any]]) -> dict[str, str]:
    header = {
        "name": name,
        "version": run.task_version,
        "title": run.task,
        "description": f"Task {run.task} (version {run.task_version}) as {run.harness} {run.harness_version} ran it; "
        "imported with `dualboard import`. Answer keys are the task's targets. Traditional grading is the "
        f"harness's own {run.score} score; answer-key grading re-grades every response against the targets.",
        "allow_incomplete": False,
        "graders": {
            "traditional": {"name": "recorded", "options": {"field": run.score}},
            "answer_key": [dict(g) for g in ANSWER_KEY_GRADERS],
        },
    }
    return {"benchmark.yaml": yaml_text(header), "questions.jsonl": jsonl(questions)}


def _run_files(run: HarnessRun, benchmark: str, submitter: str) -> dict[str, str]:
    answers = sorted(run.answers, key=lambda a: (a.round, a.question["id"]))
    predictions = [
        {"question_id": a.question["id"], "round": a.round, "response": a.response, "recorded": a.recorded}
        for a in answers
    ]
    provenance = [{"question_id": a.question["id"], "round": a.round, **a.provenance} for a in answers if a.provenance]
    files = {"predictions.jsonl": jsonl(predictions), "metadata.yaml": yaml_text(_metadata(run, benchmark, submitter))}
    return files | ({"provenance.jsonl": jsonl(provenance)} if provenance else {})


def _metadata(run: HarnessRun, benchmark: str, submitter: str) -> dict[str, Any]:
    rounds = max((a.round for a in run.answers), default=0) + 1
    return {
        "model": run.model,
        **({"model_revision": run.model_revision} if run.model_revision else {}),
        "submitter": submitter,
        "date": run.date,
        "benchmark": benchmark,
        "benchmark_version": run.task_version,
        "decoding": run.decoding,
        "rounds": rounds,
        "notes": f"Imported from {Path(run.source).name} ({run.harness} {run.harness_version}) with dualboard import.",
        "harness": {
            "name": run.harness,
            "version": run.harness_version,
            "task": run.task,
            "score": run.score,
            "metric": run.metric,
            "reported": run.reported,
            "reducer": run.reducer,
        },
    }


def day_of(timestamp: str | float) -> str:
    """The UTC day of an ISO 8601 time or a Unix timestamp.

    Examples
    --------
    >>> day_of("2026-12-07T10:20:21+00:00"), day_of(1796638865.0)
    ('2026-12-07', '2026-12-07')
    """
    if isinstance(timestamp, int | float):
        return dt.datetime.fromtimestamp(timestamp, dt.UTC).date().isoformat()
    return dt.datetime.fromisoformat(timestamp).astimezone(dt.UTC).date().isoformat()


def short_json(value: Any) -> str:
    """A source value kept in provenance as compact JSON text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
