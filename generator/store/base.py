"""The interface every store implements, and the logical layout they share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from generator.intake.models import Benchmark
from generator.intake.validate import RUN_FILES

BENCHMARKS = "benchmarks"
RUNS = "runs"
VERDICTS = "verdicts"
BENCHMARK_FILES = ("benchmark.yaml", "questions.jsonl", "human_labels.csv")


@dataclass(frozen=True)
class IngestResult:
    """What one ingest changed."""

    revision: str
    """Store revision after the ingest (unchanged when nothing was new)."""
    added: tuple[str, ...]
    """``benchmark/run_id`` of runs new to the store."""
    replaced: tuple[str, ...]
    """Runs whose files changed."""
    unchanged: tuple[str, ...]
    """Runs already stored byte for byte."""


@dataclass(frozen=True)
class StagedFile:
    """One file an ingest wants in the store: logical path and bytes."""

    path: str
    """Path inside the logical tree, with forward slashes."""
    data: bytes
    """Exact bytes to store."""


def staged_files(run_dirs: list[Path], benchmarks: dict[str, Benchmark]) -> list[StagedFile]:
    """List the files an ingest of these (already validated) runs writes.

    Benchmark definitions travel with their runs so that a store is a
    self-contained dataset: anyone can rebuild a release from it alone.
    """
    files: list[StagedFile] = []
    used = sorted({d.parent.name for d in run_dirs})
    for name in used:
        folder = benchmarks[name].path
        for fname in BENCHMARK_FILES:
            if folder is not None and (folder / fname).is_file():
                files.append(StagedFile(f"{BENCHMARKS}/{name}/{fname}", (folder / fname).read_bytes()))
    for run_dir in run_dirs:
        for fname in RUN_FILES:
            if (run_dir / fname).is_file():
                files.append(StagedFile(f"{RUNS}/{run_dir.parent.name}/{run_dir.name}/{fname}", (run_dir / fname).read_bytes()))
    return files


def classify(base: Path, wanted: list[StagedFile]) -> tuple[list[str], list[str], list[str]]:
    """Sort the runs of ``wanted`` into added, replaced and unchanged against the tree at ``base``."""
    added, replaced, unchanged = [], [], []
    by_run: dict[str, list[StagedFile]] = {}
    for f in wanted:
        if f.path.startswith(f"{RUNS}/"):
            by_run.setdefault("/".join(f.path.split("/")[1:3]), []).append(f)
    for run, files in sorted(by_run.items()):
        if not (base / RUNS / run).exists():
            added.append(run)
        elif all(same_bytes(base, f) for f in files):
            unchanged.append(run)
        else:
            replaced.append(run)
    return added, replaced, unchanged


def same_bytes(base: Path, f: StagedFile) -> bool:
    """Whether the tree at ``base`` already holds ``f`` byte for byte."""
    path = base / f.path
    return path.is_file() and path.read_bytes() == f.data


class Store(ABC):
    """A place that holds accepted runs, readable as a local folder."""

    @abstractmethod
    def revision(self) -> str:
        """The current revision (a snapshot name or a commit hash)."""

    @abstractmethod
    def snapshot(self, revision: str | None = None) -> Path:
        """A local folder holding the logical tree at ``revision`` (default: current)."""

    @abstractmethod
    def ingest(self, run_dirs: list[Path], benchmarks: dict[str, Benchmark]) -> IngestResult:
        """Validate and add runs in one atomic step; raise and change nothing on any problem."""

    def run_dirs(self, benchmark: str | None = None) -> list[Path]:
        """Stored run folders (of one benchmark, or all), sorted."""
        root = self.snapshot() / RUNS
        pattern = f"{benchmark}/*" if benchmark else "*/*"
        return sorted(p for p in root.glob(pattern) if p.is_dir())
