"""A Hub store read without a token, whose changes wait in a local overlay for ``dualboard publish``.

A build reads files that pull requests changed, so in CI it must never hold
the Hub token. ``dualboard build --hub ORG/NAME --stage`` therefore reads the
(public) dataset anonymously at one commit, the *base*, and an ingest writes
the runs that the base lacks into a pending overlay instead of the Hub::

    .dualboard/hub-pending/pending.json   dataset, endpoint, base commit, revision
    .dualboard/hub-pending/tree/          the logical tree: base snapshot (hard links) + staged runs
    .dualboard/hub-pending/verdicts/      verdicts graded since (dualboard.store.verdicts)

Every later read of the build (grade, render) sees ``tree/``, which stays as
the ingest wrote it; grading saves new verdicts beside it, in ``verdicts/``,
which a later staged ingest carries over (a run added later costs only its own
grading). Then ``dualboard publish``, the one step given the token, pushes
every file of ``tree/`` and every verdict part that the base lacks together
with the release, in one commit whose ``parent_commit`` is the base: if anyone
committed meanwhile, the Hub refuses and nothing is written.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

from dualboard.build_cache import BuildCache
from dualboard.errors import DualboardError
from dualboard.intake.models import Benchmark
from dualboard.intake.validate import load_runs
from dualboard.safe_read import read_regular
from dualboard.store.base import (
    HubDataset,
    IngestResult,
    Removal,
    StagedFile,
    Store,
    classify,
    departures,
    expected_files,
    leaving_paths,
    same_bytes,
    staged_files,
)
from dualboard.store.hub import HubStore
from dualboard.store.local import STAGING_PREFIX
from dualboard.store.lock import exclusive
from dualboard.store.records import Pending, read_record, write_record
from dualboard.store.tree import build_tree, write_failed
from dualboard.store.verdicts import VERDICTS, part_paths

PENDING_FILE = "pending.json"
TREE = "tree"


class StagedHubStore(Store):
    """A Hub dataset read at one commit, with ingests kept in a local pending overlay.

    Parameters
    ----------
    hub
        The dataset (reads only; no token needed for a public one). Its
        pinned revision, if any, is the base of the next staged ingest;
        default: the head of main.
    folder
        The pending overlay (``.dualboard/hub-pending``).
    """

    def __init__(self, hub: HubStore, folder: Path):
        self.hub = hub
        self.folder = Path(folder)

    def __repr__(self) -> str:
        return f"StagedHubStore({self.hub!r}, {str(self.folder)!r})"

    def describe(self) -> str:
        return self.hub.describe()

    def retried_calls(self) -> list[str]:
        return self.hub.retried_calls()  # every call goes through the Hub store it reads

    def hub_dataset(self) -> HubDataset:
        return self.hub.hub_dataset()

    def pending(self) -> Pending | None:
        """What the overlay holds, or None when nothing is staged.

        Raises DualboardError when the overlay was staged for another dataset.
        """
        record = self._record()
        if record is not None and (record.repo_id, record.endpoint) != (self.hub.repo_id, self.hub.endpoint):
            raise DualboardError(
                f"{self.folder}: holds changes staged for {record.repo_id} on {record.endpoint}, not for "
                f"{self.hub.repo_id} on {self.hub.endpoint} — run `dualboard build --stage` with this --hub "
                f"(it replaces them) or delete {self.folder}"
            )
        return record

    def _record(self) -> Pending | None:
        return read_record(self.folder / PENDING_FILE, Pending, fix=f"delete {self.folder} and build again")

    def revision(self) -> str:
        pending = self.pending()
        return pending.revision if pending is not None else self.hub.base_commit()

    def snapshot(self, revision: str | None = None) -> Path:
        pending = self.pending()
        if pending is not None and revision in (None, pending.revision):
            return self.folder / TREE
        return self.hub.snapshot(revision or self.hub.base_commit())

    def verdict_root(self) -> Path:
        return self.folder

    def waiting_verdicts(self) -> list[Path]:
        return part_paths(self.folder)

    def ingest(
        self,
        run_dirs: list[Path],
        benchmarks: dict[str, Benchmark],
        *,
        removal_date: Callable[[str], str] | None = None,
        cache: BuildCache | None = None,
    ) -> IngestResult:
        """Stage the runs the Hub's base commit lacks (and, with ``removal_date``, the removal of
        those ``run_dirs`` lacks); the Hub itself is only read.

        An overlay already holding exactly these changes on the same base is
        kept; the saved verdicts are kept in any case.
        """
        runs = load_runs(run_dirs, benchmarks, cache=cache)
        wanted = staged_files(run_dirs, benchmarks, expected_files(runs, benchmarks))
        base_commit = self.hub.base_commit()
        base = self.hub.snapshot(base_commit)
        added, replaced, unchanged = classify(base, wanted)
        gone = departures(base, run_dirs, removal_date) if removal_date is not None else []
        changed = [f for f in wanted + [r.file() for r in gone] if not same_bytes(base, f)]
        drop = leaving_paths(base, [r.run for r in gone], added)
        record = Pending(self.hub.repo_id, self.hub.endpoint, base_commit, _revision(base_commit, changed, drop))
        if self._record() != record:
            self._replace(base, changed, drop, record)
        return IngestResult(
            record.revision, tuple(added), tuple(replaced), tuple(unchanged), tuple(r.run for r in gone)
        )

    def remove(self, removal: Removal) -> str:
        """Refused: a staged store changes only through a build's ingest (it holds no token)."""
        raise DualboardError(
            f"{self.hub.repo_id}: a staged build only reads the Hub — delete the run's folder from "
            "submissions/ and build with --stage (publish then removes it), or run `dualboard remove "
            f"{removal.run} --hub {self.hub.repo_id}` without --stage, with HF_TOKEN set"
        )

    def pending_deletions(self) -> list[str]:
        """Every file of the overlay's base that the overlay no longer holds: the files of runs that left."""
        pending = self.pending()
        if pending is None:
            return []
        tree, base = self.folder / TREE, self.hub.snapshot(pending.base)
        return sorted(
            p.relative_to(base).as_posix()
            for p in base.rglob("*")
            if p.is_file() and not (tree / p.relative_to(base)).is_file()
        )

    def pending_files(self) -> list[StagedFile]:
        """Every file of the overlay that its base lacks or holds with other bytes: staged runs, then new verdicts.

        A verdict part already in the base is left out, never replaced (parts are append-only).
        """
        pending = self.pending()
        base = self.hub.snapshot(pending.base if pending is not None else self.hub.base_commit())
        # read_regular: publish holds the token, so a link planted in the folder is refused, not followed
        verdicts = [
            StagedFile(p.relative_to(self.folder).as_posix(), read_regular(p, root=self.folder))
            for p in part_paths(self.folder)
            if not (base / p.relative_to(self.folder)).exists()
        ]
        if pending is None:
            return verdicts
        tree = self.folder / TREE
        files = []
        for path in sorted(p for p in tree.rglob("*") if p.is_file()):
            logical = path.relative_to(tree)
            if any(part.startswith(".") for part in logical.parts):
                continue  # a writer's temporary file, not part of the tree
            old = base / logical
            if old.is_file() and os.path.samefile(old, path):
                continue  # still the hard link to the base's file
            staged = StagedFile(logical.as_posix(), path.read_bytes())
            if not same_bytes(base, staged):
                files.append(staged)
        return files + verdicts

    def clear(self) -> None:
        """Drop the overlay (after its changes reached the Hub)."""
        with exclusive(self._lock, what="staged ingest"):
            (self.folder / PENDING_FILE).unlink(missing_ok=True)  # first: a tree without its record is no overlay
            shutil.rmtree(self.folder, ignore_errors=True)

    @property
    def _lock(self) -> Path:
        return self.folder.with_name(f"{self.folder.name}.lock")

    def _replace(self, base: Path, changed: list[StagedFile], drop: list[str], record: Pending) -> None:
        """Swap in a new overlay: built aside, then renamed into place (a kill leaves none, never half of one)."""
        with exclusive(self._lock, what="staged ingest"):
            for leftover in self.folder.parent.glob(f".{self.folder.name}.*"):
                shutil.rmtree(leftover, ignore_errors=True)
            staging = self.folder.with_name(f".{self.folder.name}{STAGING_PREFIX}{uuid.uuid4().hex}")
            try:
                build_tree(base, changed, staging / TREE, drop)
                if self._keeps_verdicts_for(record):  # hard links: the saved verdicts exist at every moment
                    shutil.copytree(
                        self.folder / VERDICTS,
                        staging / VERDICTS,
                        copy_function=os.link,
                        ignore=shutil.ignore_patterns(".*"),
                    )  # not a writer's temporary file
                write_record(staging / PENDING_FILE, record)
                if self.folder.exists():
                    os.replace(self.folder, self.folder.with_name(f".{self.folder.name}.old-{uuid.uuid4().hex}"))
                os.replace(staging, self.folder)
            except OSError as exc:
                raise write_failed(self.folder, exc) from exc
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            for old in self.folder.parent.glob(f".{self.folder.name}.old-*"):
                shutil.rmtree(old, ignore_errors=True)

    def _keeps_verdicts_for(self, record: Pending) -> bool:
        """Whether a new overlay keeps the saved verdicts: not when it replaces one staged for another dataset,
        whose verdicts (their details quote answers) must not be pushed to this one."""
        old = self._record()
        same = old is None or (old.repo_id, old.endpoint) == (record.repo_id, record.endpoint)
        return same and (self.folder / VERDICTS).is_dir()


def _revision(base: str, changed: list[StagedFile], drop: list[str]) -> str:
    """``base`` when nothing is staged, else ``base+<hash of the staged paths, bytes and deletions>`` (same changes,
    same name)."""
    if not changed and not drop:
        return base
    digest = hashlib.sha256()
    for path in sorted(drop):
        digest.update(f"-{path}\0".encode())
    for f in sorted(changed, key=lambda f: f.path):
        digest.update(f"{f.path}\0{len(f.data)}\0".encode())
        digest.update(f.data)
    return f"{base}+{digest.hexdigest()[:16]}"
