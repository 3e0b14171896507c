"""One writer at a time: an advisory lock file (``fcntl.flock``) held while a store is changed.

The kernel releases a flock when its process ends, however it ends, so a
killed ingest never leaves a stale lock behind. A second writer waits up to a
bounded time, then gives up with a message naming the process that holds it.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dualboard.errors import DualboardError

LOCK_TIMEOUT_S = 300.0
"""How long a writer waits for another one by default (an ingest of a large store takes minutes)."""
POLL_S = 0.05


class StoreBusyError(DualboardError):
    """Another process kept the store's lock for longer than the wait allowed; nothing was changed."""


@contextmanager
def exclusive(lock_path: Path, *, what: str, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the lock at ``lock_path`` for the ``with`` body, waiting up to ``timeout_s`` for it.

    Raises
    ------
    StoreBusyError
        When another process still holds the lock after ``timeout_s`` seconds.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        _acquire(fd, lock_path, what, timeout_s)
        _note_holder(fd)
        yield
    finally:
        os.close(fd)  # releases the lock


def _note_holder(fd: int) -> None:
    """Write our process id into the lock file, for the message a waiting writer gives."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:
        pass  # a full disk must not stop the ingest here: the id is only informative


def _acquire(fd: int, lock_path: Path, what: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
                raise StoreBusyError(
                    f"{lock_path}: another {what} (process {holder}) has held the store for over {timeout_s:g} s; "
                    f"nothing was changed — wait for it to finish and run the command again (the lock goes "
                    "away by itself when that process ends)"
                ) from None
            time.sleep(POLL_S)
