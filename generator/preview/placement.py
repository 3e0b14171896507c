"""Place previewed runs on the current board: grade board and runs together, then analyse.

A previewed run takes the place of the stored run with its id (a pull request
that replaces a run shows the new one), and the board's runs are sorted by id,
so the same board and runs give the same numbers however they arrived.
Grading reads the board's verdict cache through a private copy (hard links)
in the preview's working folder: new verdicts land there and are dropped with
it, so the store is never written.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from generator import pipeline
from generator.errors import DualboardError, InvalidInputError
from generator.grading import VerdictCache, grade_benchmark, verdict_count
from generator.intake.models import Benchmark, Run
from generator.intake.validate import load_runs
from generator.preview.board import Board
from generator.stats import StatsTables, analyse


class BoardLoadError(DualboardError):
    """The board's stored runs do not load against this leaderboard's data/."""


@dataclass(frozen=True)
class Placement:
    """One benchmark's board with the previewed runs on it, analysed."""

    benchmark: str
    """Benchmark name."""
    previewed: tuple[str, ...]
    """Run ids of the previewed runs, sorted."""
    board_runs: int
    """Runs on the board: the stored ones (less those replaced) plus the previewed."""
    scored: pd.DataFrame
    """The scored table of every run on the board (which graders judged, per answer)."""
    stats: StatsTables
    """The statistics tables of the whole board."""


def place_runs(board: Board, benchmarks: dict[str, Benchmark], previewed: list[Run], workdir: Path, *,
               seed: int, progress: bool = True) -> list[Placement]:
    """Grade and analyse each benchmark of ``previewed`` together with the board's runs of it."""
    cache = VerdictCache(_private_copy(board.verdicts_dir, workdir / "verdicts"))
    placements = []
    for name in sorted({run.benchmark for run in previewed}):
        mine = sorted((r for r in previewed if r.benchmark == name), key=lambda r: r.run_id)
        runs = sorted([*_stored_runs(board, benchmarks, name, {r.run_id for r in mine}), *mine], key=lambda r: r.run_id)
        tables = _grade(benchmarks[name], runs, cache, progress)
        placements.append(Placement(name, tuple(r.run_id for r in mine), len(runs), tables.scored,
                                    analyse(tables.scored, verdicts=tables.verdicts, seed=seed)))
    return placements


def _stored_runs(board: Board, benchmarks: dict[str, Benchmark], name: str, replaced: set[str]) -> list[Run]:
    """The board's runs of benchmark ``name``, less those a previewed run replaces, checked against data/."""
    try:
        return load_runs([d for d in board.run_dirs(name) if d.name not in replaced], benchmarks)
    except InvalidInputError as exc:
        first = exc.findings[0] if exc.findings else None
        raise BoardLoadError(f"the board's stored runs of {name} do not pass validation against this data/ "
                             f"({len(exc.findings)} finding(s), first: {first.field}: {first.problem}) — the pull "
                             "request changes the benchmark in a way the runs already on the board do not fit; "
                             "run `dualboard build` on it to see every finding") from exc


def _grade(benchmark: Benchmark, runs: list[Run], cache: VerdictCache, progress: bool):
    labels = pipeline.human_labels(benchmark)
    if labels is not None:
        # Labels of runs not on this board (a run that left, or one the base does not have yet)
        # have no answer to attach to; grading refuses such stray labels.
        labels = labels[labels["run_id"].isin({r.run_id for r in runs})]
    total = verdict_count(benchmark, sum(len(r.predictions) for r in runs), 0 if labels is None else len(labels))
    with tqdm(total=total, desc=f"grade {benchmark.name}", unit="verdict", disable=not progress, leave=False) as bar:
        update: Callable[[int], object] = bar.update
        return grade_benchmark(benchmark, runs, cache=cache, progress=update, human_labels=labels)


def _private_copy(verdicts: Path | None, target: Path) -> Path:
    """A copy of the verdict cache at ``target`` that grading may add to (hard links where the disk allows)."""
    if verdicts is not None and verdicts.is_dir():
        shutil.copytree(verdicts, target, copy_function=_link_or_copy, symlinks=False)
    target.mkdir(parents=True, exist_ok=True)
    return target


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system: copy the bytes
        shutil.copy2(source, target)
