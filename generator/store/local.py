"""The embedded default store: a local folder with atomic snapshots.

Layout on disk::

    <root>/current          symlink to snapshots/<revision>
    <root>/snapshots/<rev>/ the logical tree (see generator.store)

An ingest builds a new snapshot next to the current one (unchanged files are
hard links, so it costs little), then swaps the ``current`` symlink with one
``os.replace``. A crash at any point leaves ``current`` pointing at a complete
snapshot: the store is either as it was or fully updated, never in between.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from generator.errors import DualboardError
from generator.intake.models import Benchmark
from generator.intake.validate import load_runs
from generator.store.base import IngestResult, StagedFile, Store, classify, same_bytes, staged_files

CURRENT = "current"
SNAPSHOTS = "snapshots"
EMPTY = "000000"
KEEP_SNAPSHOTS = 5


class LocalStore(Store):
    """A store in a local folder (default ``.dualboard/store``)."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def revision(self) -> str:
        link = self.root / CURRENT
        return os.readlink(link).split("/")[-1] if link.is_symlink() else EMPTY

    def snapshot(self, revision: str | None = None) -> Path:
        if revision is None:
            revision = self.revision()
        if revision == EMPTY and not (self.root / SNAPSHOTS / EMPTY).exists():
            self._create_empty()
        path = self.root / SNAPSHOTS / revision
        if not path.is_dir():
            raise DualboardError(f"{self.root}: no revision {revision!r} — list {self.root / SNAPSHOTS} for the revisions this store holds")
        return path

    def ingest(self, run_dirs: list[Path], benchmarks: dict[str, Benchmark]) -> IngestResult:
        load_runs(run_dirs, benchmarks)
        wanted = staged_files(run_dirs, benchmarks)
        base = self.snapshot()
        added, replaced, unchanged = classify(base, wanted)
        if not added and not replaced and all(same_bytes(base, f) for f in wanted):
            return IngestResult(self.revision(), (), (), tuple(unchanged))
        revision = self._commit(base, wanted)
        return IngestResult(revision, tuple(added), tuple(replaced), tuple(unchanged))

    def _create_empty(self) -> None:
        (self.root / SNAPSHOTS / EMPTY).mkdir(parents=True, exist_ok=True)

    def _commit(self, base: Path, wanted: list[StagedFile]) -> str:
        snapshots = self.root / SNAPSHOTS
        revision = f"{int(self.revision()) + 1:06d}"
        staging = snapshots / f".staging-{uuid.uuid4().hex}"
        _link_tree(base, staging)
        for f in wanted:
            target = staging / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                target.unlink()  # break the hard link before writing new bytes
            target.write_bytes(f.data)
        _fsync_tree(staging)
        os.replace(staging, snapshots / revision)
        _swap_symlink(self.root / CURRENT, f"{SNAPSHOTS}/{revision}")
        self._prune()
        return revision

    def _prune(self) -> None:
        """Drop old snapshots and leftovers of killed ingests."""
        snapshots = self.root / SNAPSHOTS
        for leftover in snapshots.glob(".staging-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        revisions = sorted(p for p in snapshots.iterdir() if p.name.isdigit())
        for old in revisions[:-KEEP_SNAPSHOTS]:
            shutil.rmtree(old, ignore_errors=True)


def _link_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, copy_function=os.link, symlinks=False)


def _fsync_tree(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            with path.open("rb") as handle:
                os.fsync(handle.fileno())


def _swap_symlink(link: Path, target: str) -> None:
    tmp = link.with_name(f".{link.name}.{uuid.uuid4().hex}")
    os.symlink(target, tmp)
    os.replace(tmp, link)
