"""The changelog: what each release changed from the one before, and the page that says it.

It compares the manifests of past releases (read by
:mod:`dualboard.release_files`): runs added, resubmitted and removed (with the
store's reason), benchmarks whose questions or graders changed (a grader's new
version named: its verdicts were computed again), every rank that moved,
marked significant when the data support the move, and every score that moved.
"""

from __future__ import annotations

import copy
import io
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dualboard.names import is_run_name
from dualboard.release_files import ReleaseRecord, run_standings
from dualboard.render.escape import escape_text
from dualboard.render.html import Cell, table
from dualboard.render.pages import Page, front_matter
from dualboard.stats.scores import GRADINGS
from dualboard.store.base import Removal


@dataclass(frozen=True)
class RankChange:
    """A run whose rank under one grading moved between two releases."""

    benchmark: str
    run_id: str
    grading: str
    before: int
    after: int
    interval: tuple[int, int] | None
    """The new release's simultaneous 95 % rank interval, when it has one."""

    @property
    def significant(self) -> bool:
        """The old rank lies outside the new rank interval, so the data say the run really moved."""
        return self.interval is not None and not self.interval[0] <= self.before <= self.interval[1]


@dataclass(frozen=True)
class ScoreChange:
    """A run whose score under one grading moved between two releases (as shown: one decimal)."""

    benchmark: str
    run_id: str
    grading: str
    before: float
    after: float


@dataclass(frozen=True)
class ReleaseChanges:
    """What a release changed compared with the previous one."""

    version: str
    previous: str | None
    released: str
    new_runs: list[tuple[str, str]]
    """(benchmark, run id) present now and not before."""
    removed_runs: list[tuple[str, str]]
    """(benchmark, run id) present before and not now."""
    removals: dict[tuple[str, str], Removal]
    """Why and when each of ``removed_runs`` left, where the store recorded it (manifest ``removed``)."""
    changed_runs: list[tuple[str, str]]
    """(benchmark, run id) in both releases whose submitted files changed."""
    changed_benchmarks: list[str]
    """Benchmarks whose questions or grading configuration changed."""
    rank_changes: list[RankChange]
    """Every rank that moved; :attr:`RankChange.significant` says which moves the data support."""
    score_changes: list[ScoreChange]
    """Every score that moved, of runs in both releases (a manifest without scores gives none)."""
    grader_changes: list[str]
    """Graders whose version changed, per benchmark ("demo: rules 4 → 5"): why scores moved with no new run."""


def compare(previous: dict[str, Any] | None, current: dict[str, Any]) -> ReleaseChanges:
    """Compare two manifests (``previous`` None for the first release)."""
    before = _runs(previous) if previous else {}
    after = _runs(current)
    return ReleaseChanges(
        version=str(current["version"]),
        previous=str(previous["version"]) if previous else None,
        released=str(current.get("released", "")),
        new_runs=sorted(set(after) - set(before)),
        removed_runs=sorted(set(before) - set(after)),
        removals={k: r for k, r in _removals(current).items() if k in set(before) - set(after)},
        changed_runs=sorted(
            k for k in set(after) & set(before) if after[k]["content_hash"] != before[k]["content_hash"]
        ),
        changed_benchmarks=_changed_benchmarks(previous, current),
        rank_changes=_rank_changes(previous, current) if previous else [],
        score_changes=_score_changes(previous, current) if previous else [],
        grader_changes=_grader_changes(previous, current) if previous else [],
    )


def history(records: list[ReleaseRecord]) -> list[ReleaseChanges]:
    """The changes of every release against the one before it, newest first."""
    changes, previous = [], None
    for record in records:
        manifest = with_scores(record)
        changes.append(compare(previous, manifest))
        previous = manifest
    return changes[::-1]


def with_scores(record: ReleaseRecord) -> dict[str, Any]:
    """The record's manifest with each run's scores, read from the release's ``stats/<benchmark>/models.csv``
    where the manifest predates them (releases made before manifests recorded scores)."""
    manifest = copy.deepcopy(record.manifest)
    for bench, info in manifest.get("benchmarks", {}).items():
        ranks = info.get("ranks", {})
        table = record.folder_bytes(f"stats/{bench}/models.csv")
        if table is None or all("score" in grading for run in ranks.values() for grading in run.values()):
            continue
        scored = run_standings(pd.read_csv(io.BytesIO(table), keep_default_na=False, na_values=[""]))
        for run_id, gradings in ranks.items():
            for grading, entry in gradings.items():
                entry.setdefault("score", scored.get(run_id, {}).get(grading, {}).get("score"))
    return manifest


def _runs(manifest: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (b, r): info for b, bench in manifest.get("benchmarks", {}).items() for r, info in bench.get("runs", {}).items()
    }


def _removals(manifest: dict[str, Any]) -> dict[tuple[str, str], Removal]:
    """The removal records a manifest carries (``removed``: ``benchmark/run`` → date and reason)."""
    out = {}
    for run, info in (manifest.get("removed") or {}).items():
        if isinstance(info, dict) and is_run_name(run):
            out[tuple(run.split("/"))] = Removal(run, str(info.get("date", "")), str(info.get("reason", "")))
    return out


def removed_since(records: list[ReleaseRecord], removals: list[Removal]) -> list[Removal]:
    """The removals not yet in a release: runs the last release holds and the store has since removed
    (every removal when nothing was released yet)."""
    if not records:
        return list(removals)
    released = _runs(records[-1].manifest)
    return [r for r in removals if tuple(r.run.split("/")) in released]


def _changed_benchmarks(previous: dict[str, Any] | None, current: dict[str, Any]) -> list[str]:
    if not previous:
        return []
    old = previous.get("benchmarks", {})
    return sorted(
        b
        for b, info in current.get("benchmarks", {}).items()
        if b in old
        and (info.get("content_hash") != old[b].get("content_hash") or info.get("graders") != old[b].get("graders"))
    )


def _rank_changes(previous: dict[str, Any], current: dict[str, Any]) -> list[RankChange]:
    changes = []
    for bench, info in current.get("benchmarks", {}).items():
        old_ranks = previous.get("benchmarks", {}).get(bench, {}).get("ranks", {})
        for run_id, ranks in info.get("ranks", {}).items():
            for grading in GRADINGS:
                old, new = old_ranks.get(run_id, {}).get(grading), ranks.get(grading)
                if (
                    not old
                    or not new
                    or old.get("rank") is None
                    or new.get("rank") is None
                    or old["rank"] == new["rank"]
                ):
                    continue
                interval = (
                    (new["low"], new["high"]) if new.get("low") is not None and new.get("high") is not None else None
                )
                changes.append(RankChange(bench, run_id, grading, int(old["rank"]), int(new["rank"]), interval))
    return changes


def _score_changes(previous: dict[str, Any], current: dict[str, Any]) -> list[ScoreChange]:
    changes = []
    for bench, info in current.get("benchmarks", {}).items():
        old_ranks = previous.get("benchmarks", {}).get(bench, {}).get("ranks", {})
        for run_id, ranks in info.get("ranks", {}).items():
            for grading in GRADINGS:
                old = (old_ranks.get(run_id, {}).get(grading) or {}).get("score")
                new = (ranks.get(grading) or {}).get("score")
                if old is not None and new is not None and old != new:
                    changes.append(ScoreChange(bench, run_id, grading, float(old), float(new)))
    return changes


def _grader_changes(previous: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """ "benchmark: grader old → new" for each grader (by name and role) whose version differs."""
    out = []
    for bench, info in current.get("benchmarks", {}).items():
        old = {
            (g["name"], g["role"]): g["version"]
            for g in previous.get("benchmarks", {}).get(bench, {}).get("graders", [])
        }
        for grader in info.get("graders", []):
            was = old.get((grader["name"], grader["role"]))
            if was is not None and was != grader["version"]:
                out.append(f"{bench}: {grader['name']} {was} → {grader['version']}")
    return sorted(set(out))


def changelog_page(changes: list[ReleaseChanges], unreleased: list[Removal] = ()) -> Page:
    """What each release changed: runs added, removed (and why), resubmitted, and rank moves the data support.

    ``unreleased``: runs removed from the store since the last release, listed first.
    """
    parts = [
        front_matter("Changelog"),
        "# Changelog\n\n",
        "A rank move is **significant** when the run's previous rank lies outside its new simultaneous 95 % rank "
        "interval; other moves are within what the data cannot tell apart.\n\n",
    ]
    if unreleased:
        parts.append("## Since the last release\n\n")
        parts += [f"- Removed `{r.run}`: {_why(r)}\n" for r in unreleased]  # run names are checked names
        parts.append("\n")
    if not changes:
        parts.append("No release yet.\n")
    for c in changes:
        parts.append(_release_changes(c))
    return Page("changelog.md", "".join(parts))


def _why(removal: Removal) -> str:
    """``removed on DATE: reason`` (the reason is escaped: it is whatever ``dualboard remove --reason`` was given)."""
    reason = f": {escape_text(removal.reason)}" if removal.reason else " (no reason given)"
    return f"removed on {escape_text(removal.date)}{reason}."


def _release_changes(c: ReleaseChanges) -> str:
    against = f"compared with {escape_text(c.previous)}" if c.previous else "first release"
    lines = [f"## {escape_text(c.version)}\n\n", f"Released {escape_text(c.released)}, {against}.\n\n"]
    for label, items in (("New runs", c.new_runs), ("Resubmitted runs", c.changed_runs)):
        if items:
            lines.append(f"- {label}: " + ", ".join(f"`{b}/{r}`" for b, r in items) + "\n")
    for b, r in c.removed_runs:
        why = _why(c.removals[(b, r)]) if (b, r) in c.removals else "removed."
        lines.append(f"- Removed `{b}/{r}`: {why}\n")
    if c.changed_benchmarks:
        lines.append(
            "- Benchmarks with changed questions or graders: "
            + ", ".join(f"`{b}`" for b in c.changed_benchmarks)
            + "\n"
        )
    for change in c.grader_changes:
        lines.append(f"- New grader version (its verdicts were computed again): {escape_text(change)}\n")
    if c.score_changes:
        rows = [
            [
                Cell(ch.benchmark),
                Cell(ch.run_id),
                Cell(ch.grading),
                Cell(f"{ch.before:.1f}", sort=ch.before),
                Cell(f"{ch.after:.1f}", sort=ch.after),
            ]
            for ch in c.score_changes
        ]
        lines.append("\n" + table(["Benchmark", "Run", "Grading", "Score before", "Score now"], rows))
    if c.rank_changes:
        rows = [
            [
                Cell(ch.benchmark),
                Cell(ch.run_id),
                Cell(ch.grading),
                Cell(str(ch.before), sort=ch.before),
                Cell(str(ch.after), sort=ch.after),
                Cell(f"{ch.interval[0]}–{ch.interval[1]}" if ch.interval else "—"),
                Cell("significant" if ch.significant else "not significant"),
            ]
            for ch in c.rank_changes
        ]
        lines.append(
            "\n" + table(["Benchmark", "Run", "Grading", "Rank before", "Rank now", "Rank interval now", "Move"], rows)
        )
    elif c.previous:
        lines.append("- No rank changed.\n")
    if c.previous and not c.score_changes:
        lines.append("- No score changed.\n")
    return "".join(lines) + "\n"
