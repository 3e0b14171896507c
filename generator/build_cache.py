"""Content hashes that let a build skip the work it already did.

A piece of work (one run's validation, a whole stage) is redone unless a
*key* — a sha256 over everything its result depends on: file bytes, the
code, the options — equals the key recorded when it last succeeded, and its
outputs are still as it left them. Keys and file digests live in one JSON
file of the leaderboard's generated state (``.dualboard/build-cache.json``,
:attr:`dualboard.project.Project.build_cache_file`), written atomically.

The cache can only save work, never change a result: a missing, unreadable
or corrupt file, or one of another format, reads as empty, and everything is
redone. It is generated state like the store, so a pull request cannot bring
one (``dualboard validate`` refuses committed files under ``.dualboard/``).

Hashing is what a no-change build costs (sha256 reads about 350 MB/s on a
busy core), so a file's digest is remembered with its size, modification
and change times and inode, as git's index does: a file whose stat is the
same is not read again. A file modified less than :data:`RACY_S` ago is
never remembered, since a second write within the clock's tick could keep
its stat.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dualboard.atomic import atomic_write_text

FORMAT = 1
"""Layout of the cache file; a file of another format reads as empty."""
RACY_S = 2.0
"""A file modified this recently is hashed every time: its stat may not change on a second write yet."""
MAX_VALID_RUNS = 10_000
"""Validated runs remembered, the most recently used first (a run folder costs one key)."""


HashState = Any
"""A ``hashlib.sha256()`` object (hashlib names its type only privately)."""


def digest(*parts: str) -> str:
    """sha256 over ``parts``, each length-prefixed so that ``("ab", "c")`` and ``("a", "bc")`` differ.

    >>> digest("ab", "c") == digest("a", "bc")
    False
    """
    return digest_state(*parts).hexdigest()


def digest_state(*parts: str, start: HashState | None = None) -> HashState:
    """The sha256 state :func:`digest` reaches over ``parts``, carried on from a copy of ``start`` if given.

    ``digest_state(*b, start=digest_state(*a)).hexdigest() == digest(*a, *b)``: keys that share
    their first parts (thousands of run pairs under one code and options) hash those once.
    """
    h = start.copy() if start is not None else hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape")
        h.update(len(data).to_bytes(8, "big") + data)
    return h


@functools.cache
def code_digest() -> str:
    """The version of the code: a digest of every file of the installed ``dualboard`` package.

    Any change to the code (a grader, a statistic, a template, the default
    site) redoes every stage, whether or not ``__version__`` moved.
    """
    package = Path(__file__).resolve().parent
    files = sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return digest(*(f"{p.relative_to(package).as_posix()}\0{file_sha256(p)}" for p in files))


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex: the one way Dualboard hashes a file."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def stat_key(st: os.stat_result) -> list[int]:
    """What of a stat tells a file's content unchanged: size, mtime, ctime (a write sets it, nothing sets it back)
    and inode."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


class BuildCache:
    """The keys of work done and the remembered file digests of one leaderboard folder.

    ``path=None`` keeps everything in memory (nothing read or saved).
    """

    def __init__(self, path: Path | None, data: dict | None = None):
        self.path = path
        data = data if isinstance(data, dict) and data.get("format") == FORMAT else {}
        self._files: dict[str, list] = _dict(data.get("files"))
        self._runs: dict[str, int] = _dict(data.get("valid_runs"))
        self._stages: dict[str, dict] = _dict(data.get("stages"))
        self._seen: set[str] = set()

    @classmethod
    def load(cls, path: Path) -> BuildCache:
        """The cache saved at ``path``; an empty one when it is missing, unreadable or corrupt."""
        try:
            if path.is_symlink() or not path.is_file():
                return cls(path)
            return cls(path, json.loads(path.read_text("utf-8")))
        except (OSError, ValueError):
            return cls(path)

    @classmethod
    def empty(cls, path: Path | None) -> BuildCache:
        """A cache that remembers nothing yet (``--force``); it is saved at ``path`` as work is done."""
        return cls(path)

    # -- digests ---------------------------------------------------------------

    def file_digest(self, path: Path) -> str:
        """sha256 of a regular file's bytes; remembered by stat (see the module's docstring)."""
        name = os.path.abspath(path)
        st = os.stat(name, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{name} is not a regular file")
        known = self._files.get(name)
        self._seen.add(name)
        if isinstance(known, list) and known[:4] == stat_key(st) and len(known) == 5:
            return str(known[4])
        value = file_sha256(Path(name))
        if time.time() - st.st_mtime_ns / 1e9 > RACY_S:
            self._files[name] = [*stat_key(st), value]
        else:
            self._files.pop(name, None)
        return value

    def known_digest(self, path: Path) -> str | None:
        """The digest :meth:`file_digest` remembers for ``path`` under its present stat; None (nothing read)
        when it has none, or ``path`` is not a regular file."""
        name = os.path.abspath(path)
        try:
            st = os.stat(name, follow_symlinks=False)
        except OSError:
            return None
        known = self._files.get(name)
        if not stat.S_ISREG(st.st_mode) or not (isinstance(known, list) and len(known) == 5):
            return None
        if known[:4] != stat_key(st):
            return None
        self._seen.add(name)
        return str(known[4])

    def remember(self, path: Path, value: str, *, read: os.stat_result | None = None) -> None:
        """Record ``value`` as the digest of the regular file at ``path``, known without reading it (a hard
        link to a file hashed before), under the rules of :meth:`file_digest`: not while it is racy.

        ``read``: the stat of the file when ``value`` was taken from its bytes (the caller read them); the
        digest is remembered only while the file still has that stat (not rewritten since).
        """
        name = os.path.abspath(path)
        st = os.stat(name, follow_symlinks=False)
        if read is not None and stat_key(read) != stat_key(st):
            return
        if stat.S_ISREG(st.st_mode) and time.time() - st.st_mtime_ns / 1e9 > RACY_S:
            self._files[name] = [*stat_key(st), value]
            self._seen.add(name)

    def tree_digest(self, paths: Iterable[Path], root: Path) -> str:
        """Digest of every file under ``paths`` (folders walked, links not followed), named relative to ``root``.

        A missing path, a link (by its target's name) and any special file
        count by name, so adding, removing or retargeting one changes the digest.
        """
        parts = []
        for top in paths:
            for path in _walk(Path(top)):
                name = os.path.relpath(path, root)
                if path.is_symlink():
                    parts.append(f"{name}\0link\0{os.readlink(path)}")
                elif path.is_file():
                    parts.append(f"{name}\0{self.file_digest(path)}")
                else:
                    parts.append(f"{name}\0{'missing' if not os.path.lexists(path) else 'special'}")
        return digest(*parts)

    # -- validated runs --------------------------------------------------------

    def validated(self, key: str) -> int | None:
        """How many answers the run validated under ``key`` held, or None when it was never validated."""
        answers = self._runs.pop(key, None)
        if not isinstance(answers, int):
            return None
        self._runs[key] = answers  # moved to the end: used most recently
        return answers

    def validated_runs(self) -> dict[str, int]:
        """Answers by key of every run remembered as validated (:meth:`validated` for one, which marks it used)."""
        return {key: answers for key, answers in self._runs.items() if isinstance(answers, int)}

    def add_validated(self, key: str, answers: int) -> None:
        """Remember that the run under ``key`` passed validation with ``answers`` answers."""
        self._runs.pop(key, None)
        self._runs[key] = answers

    # -- stages ----------------------------------------------------------------

    def stage_done(self, stage: str, key: str, outputs: str) -> bool:
        """Whether ``stage`` last succeeded with ``key`` and left outputs whose digest is ``outputs``."""
        return self._stages.get(stage) == {"key": key, "outputs": outputs}

    def record_stage(self, stage: str, key: str, outputs: str) -> None:
        """Remember that ``stage`` succeeded with ``key``, leaving outputs with digest ``outputs``."""
        self._stages[stage] = {"key": key, "outputs": outputs}
        self.save()

    def save(self) -> None:
        """Write the cache atomically; failing to write it only costs work next time."""
        if self.path is None:
            return
        files = {n: v for n, v in self._files.items() if n in self._seen or _unchanged(n, v)}
        runs = dict(list(self._runs.items())[-MAX_VALID_RUNS:])
        data = {"format": FORMAT, "files": files, "valid_runs": runs, "stages": self._stages}
        try:
            atomic_write_text(self.path, json.dumps(data, sort_keys=True))
        except OSError:
            pass


def short(key: str) -> str:
    """The part of a key shown to users ("unchanged, skipped (hash 1a2b3c4d5e6f)")."""
    return key[:12]


def listing_digest(folder: Path) -> str:
    """Digest of the names, sizes and modification times under ``folder``, read without opening a file.

    For outputs too large to hash on every build (the site): any file
    written, added or removed since changes it. The walk uses strings and
    :func:`os.scandir`, not :class:`~pathlib.Path`: a site has tens of
    thousands of files, and a Path object per file is slow.
    """
    if not folder.is_dir():
        return digest("missing")
    return digest(*(f"{name}\0{mode}\0{size}\0{mtime}" for name, mode, size, mtime in sorted(listing(str(folder)))))


def listing(top: str, prefix: str = "") -> list[tuple[str, int, int, int]]:
    """(posix name relative to ``top``, mode, size, modification time) of every entry under the folder ``top``
    but folders (a link to a folder is an entry, not followed), in no particular order."""
    found = []
    with os.scandir(top) as entries:
        for entry in entries:
            name = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                found += listing(entry.path, name + "/")
            else:
                st = entry.stat(follow_symlinks=False)
                found.append((name, st.st_mode, st.st_size, st.st_mtime_ns))
    return found


def _walk(top: Path) -> list[Path]:
    """``top`` itself unless it is a folder; else every entry under it that is not a folder, sorted."""
    if top.is_symlink() or not top.is_dir():
        return [top]
    found = []
    for folder, dirs, files in os.walk(top):  # links to folders land in dirs and are not followed
        found += [Path(folder, d) for d in dirs if os.path.islink(os.path.join(folder, d))]
        found += [Path(folder, f) for f in files]
    return sorted(found)


def _unchanged(name: str, value: object) -> bool:
    """Whether a remembered digest still describes the file (kept for other commands of the same folder)."""
    try:
        return isinstance(value, list) and value[:4] == stat_key(os.stat(name, follow_symlinks=False))
    except OSError:
        return False


def _dict(value: object) -> dict:
    return dict(value) if isinstance(value, dict) else {}
