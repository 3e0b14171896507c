"""Write what an importer made: benchmark and run folders, checked by ``dualboard validate``'s own checks first.

Every importer builds a :data:`Plan` (relative folder → file name → text) and hands it to
:func:`write_plan`, which writes it into a staging folder beside the destination, checks the staged
benchmark and runs exactly as a pull request's are checked, and only then moves each folder into place.
A plan that fails a check leaves the destination unchanged.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from dualboard.errors import DualboardError, Finding, InvalidInputError
from dualboard.intake.benchmark import load_benchmark
from dualboard.intake.validate import check_runs, find_run_dirs
from dualboard.names import is_name

Plan = dict[str, dict[str, str]]
"""Files to write: ``{folder relative to the leaderboard: {file name: text}}``."""
BENCHMARKS, SUBMISSIONS = "data/benchmarks", "submissions"


class SourceFormatError(DualboardError):
    """The source cannot be imported as it is."""


def slug(name: str, taken: Iterable[str] = ()) -> str:
    """Derive a safe folder name (run id or benchmark name) from a model or task name, unique among ``taken``.

    Examples
    --------
    >>> slug("Meta-Llama-3-1-405B-Instruct")
    'meta-llama-3-1-405b-instruct'
    >>> slug("../gpt 4", {"gpt-4"})
    'gpt-4-2'
    >>> slug("openai/gpt-4o")
    'openai-gpt-4o'
    """
    taken = set(taken)
    text = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("._-")
    text = re.sub(r"-{2,}", "-", text)[:90] or "model"
    if not text[0].isalnum():
        text = "m" + text
    candidate, n = text, 2
    while candidate in taken:
        candidate, n = f"{text}-{n}", n + 1
    if not is_name(candidate):  # the substitutions above should make this impossible
        raise SourceFormatError(f"name {name[:80]!r} gives no valid folder name — rename it in the source")
    return candidate


def jsonl(rows: Iterable[dict[str, Any]]) -> str:
    """Rows as JSON lines, non-ASCII kept as written."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def yaml_text(value: dict[str, Any]) -> str:
    """A mapping as YAML in its own key order."""
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=100)


KEY_ANSWER_MAX_WORDS = 4
"""A target of at most this many words is a short answer a response can be checked against; a longer one is a
reference sentence that right answers paraphrase (``answer_key.reference`` alone: people or a judge grade it)."""


def answer_key(target: str, aliases: Sequence[str], notes: str, *, option: bool = False) -> dict[str, Any]:
    """The ``answer_key`` of an imported question: a short target is the answer, a sentence only the reference.

    The text of a multiple-choice question's right ``option`` is its answer however long: the options are what
    responses name.

    Examples
    --------
    >>> answer_key("Paris", [], "x")["answer"]
    'Paris'
    >>> sorted(answer_key("Alice ate an apple after an argument.", [], "x"))
    ['notes', 'reference']
    """
    if len(target.split()) > KEY_ANSWER_MAX_WORDS and not option:
        return {"reference": target, "notes": notes}
    return {
        "answer": target,
        "aliases": list(aliases),
        "patterns": [],
        "numeric": None,
        "reference": target,
        "notes": notes,
    }


def write_plan(plan: Plan, dest: Path, overwrite: bool) -> list[Path]:
    """Write every folder of ``plan`` under ``dest``, after checking the staged runs as ``dualboard validate`` does.

    Raises SourceFormatError when a folder exists (without ``overwrite``) and InvalidInputError with every finding
    when a staged benchmark or run fails its checks; either way nothing under ``dest`` changes.
    """
    dest = Path(dest).absolute()  # findings then name files relative to it, never the staging folder
    targets = [dest / folder for folder in plan]
    existing = [t for t in targets if t.exists()]
    if existing and not overwrite:
        raise SourceFormatError(f"{existing[0]} already exists — remove it, or pass --overwrite to replace it")
    dest.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".import-", dir=dest))
    try:
        for folder, files in plan.items():
            for name, text in files.items():
                path = staging / folder / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
        _check_staged(staging, plan, dest)
        for folder, target in zip(plan, targets, strict=True):
            if target.exists():
                shutil.rmtree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / folder, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return targets


def _check_staged(staging: Path, plan: Plan, dest: Path) -> None:
    """Check the staged benchmarks and runs; findings name the files as they will be under ``dest``.

    A run of a benchmark the plan does not write is checked against ``dest``'s definition of it, and its id and
    model name against the runs already there (the ones the plan replaces aside).
    """
    folders = [Path(folder) for folder in plan]
    try:
        benchmarks = {
            b.name: b
            for b in (load_benchmark(staging / f, root=staging) for f in folders if f.parent.as_posix() == BENCHMARKS)
        }
    except InvalidInputError as exc:
        raise InvalidInputError(_as_written(exc.findings, staging, dest)) from None
    runs = [staging / f for f in folders if f.parent.parent.as_posix() == SUBMISSIONS]
    for name in sorted({run.parent.name for run in runs} - benchmarks.keys()):
        folder = dest / BENCHMARKS / name
        if (folder / "benchmark.yaml").is_file():
            benchmarks[name] = load_benchmark(folder, root=dest / "data")
    replaced = {(dest / f).resolve() for f in folders}
    board = [
        d
        for name in {run.parent.name for run in runs}
        for d in find_run_dirs([dest / SUBMISSIONS / name])
        if d.resolve() not in replaced
    ]
    report = check_runs(runs, benchmarks, submissions_root=staging / SUBMISSIONS, new=runs, board=board)
    if not report.ok:
        raise InvalidInputError(_as_written(report.findings, staging, dest))


def _as_written(findings: Iterable[Finding], staging: Path, dest: Path) -> list[Finding]:
    """Findings naming files as they would be (or are) under ``dest``, not in the staging folder."""
    return [f.relative_to(staging if Path(f.file).is_relative_to(staging) else dest) for f in findings]
