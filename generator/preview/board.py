"""The current board a preview places runs on, opened read-only.

Two sources, neither needing a secret: a store (the local one, or the
published Hub dataset read anonymously), or for a leaderboard whose store is
local, the ``submissions/`` of a git revision (the pull request's base).
Nothing here writes into a store: the preview reads the store's verdict cache
and keeps the verdicts it adds in memory (see :mod:`dualboard.preview.placement`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dualboard.preview.git_base import extract_submissions
from dualboard.project import Project
from dualboard.store import LocalStore, Store
from dualboard.store.base import RUNS


@dataclass(frozen=True)
class Board:
    """The stored runs of the current board, and the verdicts already graded for them."""

    description: str
    """Where the runs came from, in words a reader of the comment understands (no absolute paths)."""
    runs_dir: Path
    """Folder holding ``<benchmark>/<run_id>/`` run folders."""
    store: Store | None
    """The store whose verdict cache they were graded with (only read), or None: everything is graded afresh."""

    def run_dirs(self, benchmark: str) -> list[Path]:
        """The stored run folders of ``benchmark``, sorted."""
        return sorted(p for p in (self.runs_dir / benchmark).glob("*") if p.is_dir() and not p.is_symlink())


def store_board(project: Project, store: Store) -> Board:
    """The board a store holds at its current revision (read once, pinned)."""
    if isinstance(store, LocalStore) and not store.root.exists():
        # Never built here: an empty board, and no store folder created by reading it.
        return Board(
            "an empty local store (run `dualboard build` first, or pass --base REV or --hub ORG/NAME)",
            store.root / RUNS,
            None,
        )
    revision = store.revision()
    where = store.describe().replace(f"{project.root}/", "")
    return Board(f"{where}, revision {revision}", store.snapshot(revision) / RUNS, store)


def git_board(project: Project, commit: str, workdir: Path) -> Board:
    """The board of git commit ``commit``: its ``submissions/``, extracted under ``workdir`` and graded afresh."""
    runs = extract_submissions(project.root, commit, project.submissions_dir, workdir / "base")
    return Board(f"submissions/ of git commit {commit[:12]} (the base; graded afresh, no verdict cache)", runs, None)
