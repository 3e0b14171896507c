"""Build a store tree next to an old one: hard links for what is unchanged, new bytes for the rest.

Both the local store (a new snapshot) and the staged Hub store (a pending
overlay) write trees this way. A tree that cannot be completed (a full disk, a
read-only folder, a file that changed since it was validated) is removed again
and the caller gets an error that says what happened, never a half-written tree.

New bytes come either in memory (:class:`StagedFile`) or as a file to copy
(:class:`CopiedFile`): a copy reads its source once, in chunks, hashing what it
writes, so a gigabyte of predictions never sits in memory and the stored copy
is proven to hold the bytes that were validated. Only what was written is
flushed to disk: a hard link shares a file flushed when it was first stored.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dualboard.errors import DualboardError
from dualboard.safe_read import open_regular
from dualboard.store.base import CopiedFile, StagedFile, changed_since_validated, source_root
from dualboard.workers import default_jobs

CHUNK = 1 << 20
"""Bytes copied at a time: large enough that hashing and writing let go of the GIL for most of the copy."""


class StoreWriteError(DualboardError):
    """Writing to the store failed (e.g. a full disk); the store is as it was."""


def build_tree(
    base: Path | None,
    files: Iterable[StagedFile],
    target: Path,
    drop: Iterable[str] = (),
    copies: Iterable[CopiedFile] = (),
) -> None:
    """Write ``target``: a copy of ``base`` (hard links; None: empty) less the logical paths ``drop``
    (files or folders: runs that left), with ``files`` written and ``copies`` copied over it.

    Copies run on one thread per core (reading, hashing and writing let go of
    the GIL); each keeps its source's modification time, as ``cp -p`` does.

    Raises
    ------
    StoreWriteError
        When the disk refuses a write; ``target`` is removed first.
    SourceChangedError, UnsafeFileError
        When a copy's source changed since it was validated, or is a link; ``target`` is removed first.
    """
    copies = list(copies)
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
            _write_synced(target / f.path, f.data)
        with ThreadPoolExecutor(min(default_jobs(), max(len(copies), 1))) as pool:
            list(pool.map(_copy_verified, copies, [target] * len(copies)))
    except OSError as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise write_failed(target, exc) from exc
    except DualboardError:
        shutil.rmtree(target, ignore_errors=True)
        raise


def write_failed(where: Path, exc: OSError) -> StoreWriteError:
    """The error for a store write the disk refused, naming the cause and the fix."""
    return StoreWriteError(
        f"{where}: writing the store failed ({exc.strerror or exc}); nothing was changed and the "
        "partial copy was removed — free disk space (or fix the folder's permissions) and run "
        "the command again"
    )


def _fresh(path: Path) -> Path:
    """``path`` ready to be written: its folder made, a hard link that sat there removed (never written through)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    return path


def _write_synced(path: Path, data: bytes) -> None:
    with _fresh(path).open("wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def _copy_verified(copy: CopiedFile, target: Path) -> None:
    """Copy ``copy.source`` to its place under ``target``, flushed, with the source's modification time;
    raise SourceChangedError unless the bytes written are those validated (``copy.expected``): a file grown
    past the limit validation applies is refused as soon as it passes it."""
    path, digest, size = _fresh(target / copy.path), hashlib.sha256(), 0
    with open_regular(copy.source, root=source_root(copy.source)) as source, path.open("wb") as out:
        while chunk := source.read(CHUNK):
            size += len(chunk)
            if size > copy.expected.limit:  # validated within it: a file grown past it changed since
                raise changed_since_validated(copy.source)
            digest.update(chunk)
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
        info = os.fstat(source.fileno())
    if digest.hexdigest() != copy.expected.digest:
        raise changed_since_validated(copy.source)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
