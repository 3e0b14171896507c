"""The embedded default store: a local folder with atomic snapshots.

Layout on disk::

    <root>/current          symlink to snapshots/<revision>
    <root>/snapshots/<rev>/ the logical tree (see dualboard.store)
    <root>/verdicts/        the verdict cache (dualboard.store.verdicts), outside
                            the snapshots: it holds whatever the revision

An ingest builds a new snapshot next to the current one (unchanged files are
hard links, so it costs little), then swaps the ``current`` symlink with one
``os.replace``. A crash at any point leaves ``current`` pointing at a complete
snapshot: the store is either as it was or fully updated, never in between.

Ingests take turns through ``<root>/ingest.lock`` (see dualboard.store.lock),
so an ingest compares against the snapshot it will build on, and whatever the
lock holder finds besides ``current`` and its predecessors is a leftover of a
killed ingest: a staging folder, or a snapshot newer than ``current`` (killed
between its rename and the swap). The next ingest removes those first.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from dualboard.build_cache import BuildCache
from dualboard.errors import DualboardError
from dualboard.intake.models import Benchmark
from dualboard.intake.validate import load_runs
from dualboard.store.base import (
    CopiedFile,
    IngestResult,
    Removal,
    StagedFile,
    Store,
    check_sources,
    check_stored,
    classify_runs,
    compare_sources,
    departures,
    expected_files,
    leaving_paths,
    staged_sources,
)
from dualboard.store.lock import LOCK_TIMEOUT_S, exclusive
from dualboard.store.tree import build_tree, write_failed

CURRENT = "current"
SNAPSHOTS = "snapshots"
EMPTY = "000000"
KEEP_SNAPSHOTS = 5
LOCK = "ingest.lock"
STAGING_PREFIX = ".staging-"


class LocalStore(Store):
    """A store in a local folder (default ``.dualboard/store``)."""

    def __init__(self, root: Path, *, lock_timeout_s: float = LOCK_TIMEOUT_S):
        self.root = Path(root)
        self.lock_timeout_s = lock_timeout_s
        """How long an ingest waits for another one to finish."""

    def describe(self) -> str:
        return f"local store {self.root}"

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
            raise DualboardError(
                f"{self.root}: no revision {revision!r} — list {self.root / SNAPSHOTS} "
                "for the revisions this store holds"
            )
        return path

    def verdict_root(self) -> Path:
        return self.root

    def ingest(
        self,
        run_dirs: list[Path],
        benchmarks: dict[str, Benchmark],
        *,
        removal_date: Callable[[str], str] | None = None,
        cache: BuildCache | None = None,
    ) -> IngestResult:
        runs = load_runs(run_dirs, benchmarks, cache=cache)
        cache = cache or BuildCache.empty(None)
        expected = expected_files(runs, benchmarks)  # what was validated: the store gets it or nothing
        with exclusive(self.root / LOCK, what="ingest", timeout_s=self.lock_timeout_s):
            self._recover()
            base = self.snapshot()
            sources = staged_sources(run_dirs, benchmarks)
            check_sources(sources, expected)
            changed, same = compare_sources(base, sources, cache, expected)
            added, replaced, unchanged = classify_runs(base, run_dirs, changed)
            gone = departures(base, run_dirs, removal_date) if removal_date is not None else []
            if not changed and not gone:
                return IngestResult(self.revision(), (), (), tuple(unchanged), skipped=True)
            # Only new or changed files are read, once, as they are copied; the rest are hard links.
            copies = [CopiedFile(logical, source, expected[logical]) for logical, source in changed]
            drop = leaving_paths(base, [r.run for r in gone], added)
            revision = self._commit(base, [r.file() for r in gone], drop, copies)
            # Every stored file's digest is known, so the next ingest reads none of them: the hard links' were
            # hashed above, the copies' when they were copied (a copy keeps its source's modification time).
            known = {**same, **{c.path: c.expected.digest for c in copies}}
            stored = self.snapshot(revision)
            for logical, value in known.items():
                cache.remember(stored / logical, value)
        return IngestResult(revision, tuple(added), tuple(replaced), tuple(unchanged), tuple(r.run for r in gone))

    def remove(self, removal: Removal) -> str:
        with exclusive(self.root / LOCK, what="remove", timeout_s=self.lock_timeout_s):
            self._recover()
            base = self.snapshot()
            check_stored(base, removal.run, self.describe())
            return self._commit(base, [removal.file()], leaving_paths(base, [removal.run], []))

    def _create_empty(self) -> None:
        (self.root / SNAPSHOTS / EMPTY).mkdir(parents=True, exist_ok=True)

    def _commit(self, base: Path, wanted: list[StagedFile], drop: list[str], copies: Sequence[CopiedFile] = ()) -> str:
        """Write snapshot current+1 (``base`` less ``drop``, plus ``wanted`` and ``copies``) and swap
        ``current`` to it.

        The caller holds the lock.
        """
        snapshots = self.root / SNAPSHOTS
        revision = f"{int(self.revision()) + 1:06d}"
        staging = snapshots / f"{STAGING_PREFIX}{uuid.uuid4().hex}"
        build_tree(base, wanted, staging, drop, copies)
        try:
            os.replace(staging, snapshots / revision)
            _swap_symlink(self.root / CURRENT, f"{SNAPSHOTS}/{revision}")
        except OSError as exc:
            self._recover()
            raise write_failed(self.root, exc) from exc
        self._prune()
        return revision

    def _recover(self) -> None:
        """Remove what killed or failed ingests left: staging folders and snapshots newer than ``current``."""
        snapshots = self.root / SNAPSHOTS
        if not snapshots.is_dir():
            return
        current = self.revision()
        for leftover in snapshots.iterdir():
            if leftover.name.startswith(STAGING_PREFIX) or (leftover.name.isdigit() and leftover.name > current):
                shutil.rmtree(leftover, ignore_errors=True)

    def _prune(self) -> None:
        """Keep ``current`` and the snapshots just before it, KEEP_SNAPSHOTS in all."""
        current = self.revision()
        older = sorted(p for p in (self.root / SNAPSHOTS).iterdir() if p.name.isdigit() and p.name < current)
        for old in older[: max(0, len(older) - (KEEP_SNAPSHOTS - 1))]:
            shutil.rmtree(old, ignore_errors=True)


def _swap_symlink(link: Path, target: str) -> None:
    tmp = link.with_name(f".{link.name}.{uuid.uuid4().hex}")
    os.symlink(target, tmp)
    try:
        os.replace(tmp, link)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
