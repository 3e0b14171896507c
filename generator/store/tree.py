"""Build a store tree next to an old one: hard links for what is unchanged, new bytes for the rest.

Both the local store (a new snapshot) and the staged Hub store (a pending
overlay) write trees this way. A tree that cannot be completed (a full disk, a
read-only folder) is removed again and the caller gets a
:class:`StoreWriteError` that says what happened, never a half-written tree.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from dualboard.errors import DualboardError
from dualboard.store.base import StagedFile


class StoreWriteError(DualboardError):
    """Writing to the store failed (e.g. a full disk); the store is as it was."""


def build_tree(base: Path | None, files: Iterable[StagedFile], target: Path, drop: Iterable[str] = ()) -> None:
    """Write ``target``: a copy of ``base`` (hard links; None: empty) less the logical paths ``drop``
    (files or folders: runs that left), with ``files`` written over it.

    Raises
    ------
    StoreWriteError
        When the disk refuses a write; ``target`` is removed first.
    """
    try:
        if base is not None:
            shutil.copytree(base, target, copy_function=os.link, symlinks=False)
        target.mkdir(parents=True, exist_ok=True)
        for logical in drop:
            path = target / logical
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        for f in files:
            path = target / f.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.unlink(missing_ok=True)  # break the hard link before writing new bytes
            path.write_bytes(f.data)
        _fsync_tree(target)
    except OSError as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise write_failed(target, exc) from exc


def write_failed(where: Path, exc: OSError) -> StoreWriteError:
    """The error for a store write the disk refused, naming the cause and the fix."""
    return StoreWriteError(
        f"{where}: writing the store failed ({exc.strerror or exc}); nothing was changed and the "
        "partial copy was removed — free disk space (or fix the folder's permissions) and run "
        "the command again"
    )


def _fsync_tree(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            with path.open("rb") as handle:
                os.fsync(handle.fileno())
