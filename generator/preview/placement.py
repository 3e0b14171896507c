"""Place previewed runs on the current board: grade board and runs together, then analyse.

A previewed run takes the place of the stored run with its id (a pull request
that replaces a run shows the new one), and the board's runs are sorted by id,
so the same board and runs give the same numbers however they arrived.
Grading reads the board's verdict cache; the verdicts it adds stay in memory
for this preview, so the store is never written.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from dualboard import pipeline
from dualboard.errors import DualboardError, InvalidInputError
from dualboard.grading import VerdictCache
from dualboard.intake.model_names import with_shown_models
from dualboard.intake.models import Benchmark, Run
from dualboard.intake.validate import load_runs
from dualboard.preview.board import Board
from dualboard.stats import StatsTables, analyse
from dualboard.store import Store


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
    before: StatsTables | None
    """The statistics tables of the board as it stands, before the pull request (None: it has no run)."""
    before_scored: pd.DataFrame | None
    """The scored table of the board before the pull request (None: it has no run)."""


class ReadOnlyVerdicts:
    """What :class:`VerdictCache` asks of a store, answered from the board's store without writing to it."""

    def __init__(self, store: Store | None):
        self.store = store
        """The board's store, or None: no verdict is cached."""

    def verdict_parts(self, grader: str, config_hash: str) -> list[Path]:
        """The store's verdict parts of one grader configuration (none without a store)."""
        return [] if self.store is None else self.store.verdict_parts(grader, config_hash)

    def save_verdicts(self, grader: str, config_hash: str, frame: pd.DataFrame) -> None:
        """Keep nothing: the cache holds new verdicts in memory for the rest of this preview."""
        return None


def place_runs(
    board: Board, benchmarks: dict[str, Benchmark], previewed: list[Run], *, seed: int, progress: bool = True
) -> list[Placement]:
    """Grade and analyse each benchmark of ``previewed`` together with the board's runs of it."""
    cache = VerdictCache(ReadOnlyVerdicts(board.store))
    placements = []
    for name in sorted({run.benchmark for run in previewed}):
        mine = sorted((r for r in previewed if r.benchmark == name), key=lambda r: r.run_id)
        ids = {r.run_id for r in mine}
        stored = _stored_runs(board, benchmarks, name)
        runs = sorted([*(r for r in stored if r.run_id not in ids), *mine], key=lambda r: r.run_id)
        # labels of runs not on this board are set aside by grading
        tables = pipeline.grade_with_bar(benchmarks[name], runs, cache, progress=progress)
        stats = analyse(tables.scored, verdicts=tables.verdicts, seed=seed)
        stats = replace(stats, models=with_shown_models(stats.models, runs))  # a shared name with its revision
        placements.append(
            Placement(
                name,
                tuple(r.run_id for r in mine),
                len(runs),
                tables.scored,
                stats,
                *_analysed(benchmarks[name], stored, cache, seed),
            )
        )
    return placements


def _analysed(
    benchmark: Benchmark, runs: list[Run], cache: VerdictCache, seed: int
) -> tuple[StatsTables | None, pd.DataFrame | None]:
    """The board as it stands, before the pull request, analysed: what its runs' numbers move from (their
    verdicts are cached by now, so this grades nothing again)."""
    if not runs:
        return None, None
    tables = pipeline.grade_with_bar(benchmark, runs, cache, progress=False)
    stats = analyse(tables.scored, verdicts=tables.verdicts, seed=seed)
    return replace(stats, models=with_shown_models(stats.models, runs)), tables.scored


def _stored_runs(board: Board, benchmarks: dict[str, Benchmark], name: str) -> list[Run]:
    """The board's runs of benchmark ``name``, checked against data/."""
    try:
        return load_runs(board.run_dirs(name), benchmarks)
    except InvalidInputError as exc:
        first = exc.findings[0] if exc.findings else None
        raise BoardLoadError(
            f"the board's stored runs of {name} do not pass validation against this data/ "
            f"({len(exc.findings)} finding(s), first: {first.field}: {first.problem}) — the pull "
            "request changes the benchmark in a way the runs already on the board do not fit; "
            "run `dualboard build` on it to see every finding"
        ) from exc
