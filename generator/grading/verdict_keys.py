"""Which verdict parts may hold a key: a compact index of each part's keys, so a lookup reads only those parts.

A grade after one run was added asks for the verdicts of that run's answers,
almost all new; reading every part of a grader (10⁶ verdicts at 10⁶ answers)
to learn that was most of the cost. Each part's keys are kept here as a
sorted array of 64-bit numbers (:func:`key_numbers`, 8 bytes a key): a lookup
compares the keys asked with every part's array and reads only the parts
where a number matches, then matches whole keys in them, so a number shared
by two keys costs a read, never a wrong verdict.

A part's array depends only on its keys; it is kept on disk, when a folder is
given, under the part's name, size and modification time (any rewrite of the
part makes a new entry; the old one is deleted when the part is next
listed), and made by reading the part's key column when there is none (parts
of old stores, of the Hub, or saved by another machine).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from dualboard.atomic import atomic_path

VERDICT_KEYS_DIR = "verdict-keys"
"""The folder of the build keeping the parts' indexes (build/verdict-keys/<grader>/<config hash>/)."""
HEX_DIGITS = frozenset("0123456789abcdef")
"""The digits of a key as :func:`dualboard.grading.cache.keyed` writes it: a sha256 in lower-case hexadecimal (64)."""
_SUFFIX = ".npy"


def key_numbers(keys: Iterable[str]) -> np.ndarray:
    """A 64-bit number per key (uint64): its first 16 hex digits, or for a key of another form (a part written
    by other code) the start of its blake2b digest. Equal keys give equal numbers."""
    return np.fromiter((_number(key) for key in keys), dtype=np.uint64)


def _number(key: str) -> int:
    if len(key) == 64 and HEX_DIGITS.issuperset(key):
        return int(key[:16], 16)
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def part_index(keys: Iterable[str]) -> np.ndarray:
    """The index of a part holding ``keys``: their numbers, sorted, without repeats."""
    return np.unique(key_numbers(keys))


def may_hold(index: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """Per number of ``numbers`` (keys asked), whether the part of ``index`` may hold its key."""
    if not len(index):
        return np.zeros(len(numbers), dtype=bool)
    at = np.searchsorted(index, numbers).clip(max=len(index) - 1)
    return index[at] == numbers


class KeyIndexes:
    """The part indexes of one grade, kept in ``folder`` (None: in memory only) and in memory once read."""

    def __init__(self, folder: Path | None):
        self.folder = None if folder is None else Path(folder)
        self._read: dict[tuple[str, int, int], np.ndarray] = {}

    def of(self, part: Path, read_keys) -> np.ndarray:
        """The index of ``part``; ``read_keys(part)`` gives its keys when it has none kept."""
        stat = part.stat()
        signature = (str(part), stat.st_size, stat.st_mtime_ns)
        if signature in self._read:
            return self._read[signature]
        kept = self._path(part, stat.st_size, stat.st_mtime_ns)
        index = _load(kept) if kept is not None else None
        if index is None:
            index = part_index(read_keys(part))
            if kept is not None:
                self._keep(kept, index)
        self._read[signature] = index
        return index

    def add(self, part: Path, keys: Sequence[str]) -> None:
        """Keep the index of ``part``, just saved with ``keys`` (so no later grade reads it to learn them)."""
        stat = part.stat()
        index = part_index(keys)
        self._read[(str(part), stat.st_size, stat.st_mtime_ns)] = index
        kept = self._path(part, stat.st_size, stat.st_mtime_ns)
        if kept is not None:
            self._keep(kept, index)

    def _path(self, part: Path, size: int, mtime_ns: int) -> Path | None:
        """Where the index of this version of ``part`` is kept: by grader, configuration and part name."""
        if self.folder is None:
            return None
        grader, config = part.parent.parent.name, part.parent.name
        return self.folder / grader / config / f"{part.stem}.{size}.{mtime_ns}{_SUFFIX}"

    def _keep(self, path: Path, index: np.ndarray) -> None:
        """Write ``index`` atomically; drop the entries kept for other versions of the same part."""
        for old in path.parent.glob(f"{path.name.split('.')[0]}.*{_SUFFIX}") if path.parent.is_dir() else ():
            if old.name != path.name:
                old.unlink(missing_ok=True)
        with atomic_path(path) as tmp, open(tmp, "wb") as handle:
            np.save(handle, index, allow_pickle=False)


def _load(path: Path) -> np.ndarray | None:
    """A kept index, or None when there is none or it is not one (it is then made again)."""
    try:
        index = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    ordered = index.dtype == np.uint64 and index.ndim == 1 and bool(np.all(index[1:] > index[:-1]))
    return index if ordered else None
