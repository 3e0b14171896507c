"""Read files a pull request can touch without ever following a symbolic link.

A merged pull request controls ``data/``, ``submissions/``, ``site_src/`` and a
leaderboard folder's overrides. A symbolic link there (``human_labels.csv ->
/proc/self/environ``, ``x.txt -> ../../.git/config``) would make the build read
a secret and publish it. So every read of such a file goes through
:func:`read_regular`, which refuses links in any path component below the
trusted root and anything that is not a regular file (a FIFO would hang the
build, ``/dev/zero`` would never end), and :func:`untrusted_entries` lists what
to report before a tree is copied.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from dualboard.errors import DualboardError, Finding


class UnsafeFileError(DualboardError):
    """A file that must not be read: a link, a special file, or too large."""

    def __init__(self, path: Path, problem: str, fix: str):
        super().__init__(f"{path}: {problem} — {fix}")
        self.path, self.problem, self.fix = Path(path), problem, fix

    def finding(self) -> Finding:
        """The same problem as a validation finding."""
        return Finding(str(self.path), None, "path", self.problem, self.fix)


def untrusted_entries(root: Path) -> list[tuple[Path, str]]:
    """Every symbolic link or special file under ``root`` (links not followed), with what it is.

    ``root`` itself counts: a linked ``site_src`` is as dangerous as a linked
    file inside it. Returns ``(path, "symbolic link" | "special file")`` pairs in
    a stable order; an empty list means the tree may be read.
    """
    root = Path(root)
    if _kind(root) is not None:
        return [(root, _kind(root))]
    if not root.is_dir():
        return []
    found = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in sorted(dirs + files):
            path = Path(folder) / name
            kind = _kind(path)
            if kind is not None:
                found.append((path, kind))
        dirs.sort()
    return sorted(found)


UNSAFE_FIX = {"symbolic link": "commit the real file or folder, not a link", "special file": "commit a regular file"}
"""What to do about each kind of entry :func:`untrusted_entries` reports."""


def untrusted_findings(root: Path, *, relative_to: Path | None = None) -> list[Finding]:
    """:func:`untrusted_entries` as findings, paths shown relative to ``relative_to`` when given."""
    return [
        Finding(
            (path.relative_to(relative_to).as_posix() if relative_to else str(path)),
            None,
            "path",
            f"is a {kind}",
            UNSAFE_FIX[kind],
        )
        for path, kind in untrusted_entries(root)
    ]


def read_regular(path: Path, *, root: Path, limit: int | None = None) -> bytes:
    """Read ``path``, a regular file inside ``root``, refusing links and oversized files.

    Every component from ``root`` down to the file is checked with ``lstat``
    and the file itself is opened with ``O_NOFOLLOW``, so neither a linked file
    nor a linked folder on the way can redirect the read.

    Raises
    ------
    UnsafeFileError
        When a component is a link, the file is not a regular file, lies
        outside ``root``, or holds more than ``limit`` bytes.
    """
    with open_regular(path, root=root, limit=limit) as handle:
        data = handle.read() if limit is None else handle.read(limit + 1)
    if limit is not None and len(data) > limit:  # the file grew after the size check
        raise UnsafeFileError(path, f"over the {limit}-byte limit", "shorten the file")
    return data


def open_regular(path: Path, *, root: Path, limit: int | None = None) -> BinaryIO:
    """Open ``path`` for binary reading with the checks of :func:`read_regular`; the caller closes it.

    For files read line by line (a large predictions.jsonl), so that checking
    one never holds the whole file in memory.
    """
    path, root = Path(path), Path(root)
    _check_components(path, root)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise UnsafeFileError(
            path, f"cannot be read safely ({exc.strerror})", "commit a regular file, not a link"
        ) from exc
    handle = os.fdopen(fd, "rb")
    info = os.fstat(handle.fileno())
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = UnsafeFileError(path, "is not a regular file", "commit a regular file")
    elif limit is not None and info.st_size > limit:
        problem = UnsafeFileError(
            path, f"file is {info.st_size} bytes, over the {limit}-byte limit", "shorten the file"
        )
    if problem is not None:
        handle.close()
        raise problem
    return handle


def _check_components(path: Path, root: Path) -> None:
    try:
        relative = path.relative_to(root)
    except ValueError as exc:
        raise UnsafeFileError(path, f"lies outside {root}", "keep the file inside the leaderboard folder") from exc
    if ".." in relative.parts:
        # relative_to compares names only: root/a/../../secret passes it and still leaves root.
        raise UnsafeFileError(path, "climbs out with '..'", f"name the file by its path inside {root}")
    current = root
    for part in relative.parts:
        current = current / part
        kind = _kind(current)
        if kind is not None:
            raise UnsafeFileError(current, f"is a {kind}", UNSAFE_FIX[kind])


def _kind(path: Path) -> str | None:
    """``"symbolic link"`` or ``"special file"`` for what must never be read; None otherwise."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return "symbolic link"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return "special file"
