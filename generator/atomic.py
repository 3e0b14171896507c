"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Every stage writes its outputs through these helpers (temp file in the same
folder, fsync, ``os.replace``), so a crash or Ctrl-C never leaves a truncated
Parquet, CSV or page behind.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(target: Path, *, replace: bool = True) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; move it into place on success.

    With ``replace=False`` an existing ``target`` is never replaced, not even
    by a concurrent writer: FileExistsError is raised instead.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> with atomic_path(out) as tmp:
    ...     _ = tmp.write_text("hello")
    >>> out.read_text()
    'hello'
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        yield tmp
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        if replace:
            os.replace(tmp, target)
        else:
            os.link(tmp, target)  # unlike a rename, fails when target exists
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_bytes(target: Path, data: bytes) -> Path:
    """Write ``data`` to ``target`` atomically and return ``target``."""
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)
    return Path(target)


def atomic_write_text(target: Path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``target`` atomically and return ``target``."""
    return atomic_write_bytes(target, text.encode("utf-8"))


def atomic_write_parquet(target: Path, frame, *, replace: bool = True) -> Path:
    """Write a pandas DataFrame as Parquet (no index) to ``target`` atomically (see :func:`atomic_path`)."""
    with atomic_path(target, replace=replace) as tmp:
        frame.to_parquet(tmp, index=False)
    return Path(target)
