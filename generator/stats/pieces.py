"""Statistics of one run, kept by content so that adding a run computes only that run's.

Most of the statistics stage's time goes to what depends on one run alone: its
row of ``models.csv`` and its per-run rows of ``agreement.csv`` (each a κ
bootstrap over the questions), or on two runs alone: their comparison in
``pairwise.csv``. :class:`Pieces` remembers each such result under a key
hashing everything it is computed from: the code
(:func:`dualboard.build_cache.code_digest`), the options (seed, B, α…) and
the run's (or the two runs') own rows, values and order. A run whose rows are
unchanged is not computed again, and adding one run to m compares only its m
pairs; what depends on every run (Holm adjustments, ranks, the pooled
rows) is always recomputed from the pieces. A piece is the very value a fresh
computation returns (JSON keeps every float bit for bit), and each bootstrap
starts from the seed itself, not from a stream shared with other runs, so the
tables equal those of a stats run from scratch.

Pieces of one benchmark live in one JSON file (``build/stats-pieces/<benchmark>.json``),
written atomically; only the pieces the last analysis used are kept, so a run
that left takes its pieces with it. A missing, unreadable or corrupt file reads
as empty: the pieces are computed again.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from dualboard.atomic import atomic_write_text
from dualboard.build_cache import HashState, code_digest, digest_state

PIECES_DIR = "stats-pieces"
"""Folder of ``build/`` holding one pieces file per benchmark (beside build/stats/, not in it)."""
FORMAT = 1
"""Layout of a pieces file; a file of another format reads as empty."""


def columns_digest(columns: Mapping[str, np.ndarray]) -> str:
    """sha256 over named columns: each name, dtype, length and every value in order.

    A slice of a larger table is keyed by its arrays alone, without building a
    frame of it (:func:`run_digests`). Numbers are hashed as their bytes (0.0 and -0.0
    differ: a key may only be too strict, never too loose); strings as UTF-8
    with their lengths, so no two lists of strings share bytes.

    >>> ids = np.array(["a", "bc"], dtype=object)
    >>> columns_digest({"q": ids}) == columns_digest({"q": np.array(["ab", "c"], dtype=object)})
    False
    """
    h = hashlib.sha256()
    for name, values in columns.items():
        h.update(repr((name, str(values.dtype), len(values))).encode("utf-8", "surrogatepass"))
        h.update(_value_bytes(values))
    return h.hexdigest()


def _value_bytes(values: np.ndarray) -> bytes:
    """The bytes that stand for an array's values (strings: their lengths, then their UTF-8 text)."""
    if values.dtype != object:
        return np.ascontiguousarray(values).tobytes()
    if pd.api.types.infer_dtype(values, skipna=False) != "string":  # None, numbers…: pandas' hash of each value
        return pd.util.hash_array(values, categorize=False).tobytes()
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))  # in characters: unambiguous too
    return lengths.tobytes() + "".join(values).encode("utf-8", "surrogatepass")


def by_run(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, slice]]:
    """The frame with each run's rows together (in their order), and each run's rows as a slice of it.

    The same rows, in the same order, as ``frame.groupby("run_id")`` gives each
    run, but slicing a frame costs nothing where splitting it copies every
    row: a run whose piece is known is only hashed, never copied. Frames
    already grouped by run (the scored and verdicts tables are) are not sorted.

    >>> f = pd.DataFrame({"run_id": ["b", "a", "b"], "x": [1, 2, 3]})
    >>> grouped, rows = by_run(f)
    >>> rows, grouped.iloc[rows["b"]]["x"].tolist()
    ({'a': slice(0, 1, None), 'b': slice(1, 3, None)}, [1, 3])
    """
    codes, runs = pd.factorize(frame["run_id"], sort=True)
    if len(codes) and (np.diff(codes) < 0).any():
        order = np.argsort(codes, kind="stable")
        frame, codes = frame.iloc[order], codes[order]
    # A missing run id (code -1) belongs to no run, as groupby leaves it out.
    bounds = np.searchsorted(codes, np.arange(len(runs) + 1), side="left")
    return frame, {run: slice(int(bounds[i]), int(bounds[i + 1])) for i, run in enumerate(runs)}


def run_digests(frame: pd.DataFrame, rows: dict[str, slice], runs: Iterable[str], columns: Iterable[str]) -> list[str]:
    """The digest of ``columns`` of each run's rows (``rows`` from :func:`by_run`; none: no rows).

    Each column is taken out of the frame once and sliced per run: what a run's
    piece reads is hashed without building a frame of its rows. A column of
    strings is numbered once (:func:`_numbered_strings`), and a run's strings are hashed as
    their numbers within the run with the distinct strings in that order: the
    same strings give the same digest, other strings another, and the strings
    of a run are turned to bytes once each, not once a row.
    """
    arrays = {c: _numbered_strings(frame[c]) for c in columns}
    return [columns_digest(_run_columns(arrays, rows.get(run, slice(0, 0)))) for run in runs]


def _numbered_strings(column: pd.Series) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """A column's values, or for strings each one's number among the column's distinct values and those values."""
    strings = isinstance(column.dtype, pd.StringDtype) or (
        column.dtype == object and pd.api.types.infer_dtype(column, skipna=False) == "string"
    )
    if not strings:  # numbers, or objects of other kinds (hashed one by one, as before)
        return column.to_numpy()
    codes, distinct = pd.factorize(column, use_na_sentinel=False)  # a missing value is one more distinct value
    return codes, np.asarray(distinct, dtype=object)


def _run_columns(arrays: Mapping[str, np.ndarray | tuple], rows: slice) -> dict[str, np.ndarray]:
    """The columns :func:`columns_digest` hashes for one run's ``rows`` (strings: numbered in order of appearance)."""
    out = {}
    for name, values in arrays.items():
        if isinstance(values, tuple):
            codes, distinct = values
            within, used = pd.factorize(codes[rows])
            out[f"{name} numbers"], out[f"{name} values"] = within.astype(np.int64), distinct[used]
        else:
            out[name] = values[rows]
    return out


class Pieces:
    """Per-run results of one benchmark's statistics, by content key; ``path=None``: in memory only."""

    def __init__(self, path: Path | None, data: object = None):
        self.path = path
        found = data.get("pieces") if isinstance(data, dict) and data.get("format") == FORMAT else None
        self._known: dict[str, dict] = dict(found) if isinstance(found, dict) else {}
        self._used: dict[str, dict] = {}
        self.asked = 0
        """Pieces this analysis asked for."""
        self.computed = 0
        """Pieces this analysis had to compute (the others were known)."""
        self.tally: dict[str, list[int]] = {}
        """Per kind of :meth:`get_many`: [asked, computed] (kept apart from the per-run counts above)."""

    @classmethod
    def load(cls, path: Path) -> Pieces:
        """The pieces saved at ``path``; none when the file is missing, unreadable or corrupt."""
        try:
            return cls(path, json.loads(path.read_text("utf-8")) if path.is_file() and not path.is_symlink() else None)
        except (OSError, ValueError):
            return cls(path)

    @staticmethod
    def key_of(kind: str, options: tuple, *digests: str) -> str:
        """The key of a ``kind`` piece computed with ``options`` from inputs of these digests (and the code)."""
        return digest_state(*digests, start=_key_start(kind, repr(options))).hexdigest()

    def get(self, key: str, compute: Callable[[], dict]) -> dict:
        """The piece under ``key``: the remembered one, else ``compute()`` (then remembered)."""
        self.asked += 1
        known = self._used.get(key, self._known.get(key))
        if not isinstance(known, dict):
            known = compute()
            self.computed += 1
        self._used[key] = known
        return known

    def get_many(self, kind: str, keys: list[str], compute: Callable[[list[int]], list[dict]]) -> list[dict]:
        """The pieces under ``keys``: the remembered ones, and ``compute(positions)`` for the others, in one call.

        ``compute`` receives the positions in ``keys`` of the unknown pieces and
        returns their pieces in that order, so that they are computed together
        (vectorised); the answer follows ``keys``. Counted in ``tally[kind]``.
        """
        found = [self._used.get(key, self._known.get(key)) for key in keys]
        missing = [i for i, piece in enumerate(found) if not isinstance(piece, dict)]
        for i, piece in zip(missing, compute(missing) if missing else []):
            found[i] = piece
        for key, piece in zip(keys, found):
            self._used[key] = piece
        asked, computed = self.tally.setdefault(kind, [0, 0])
        self.tally[kind] = [asked + len(keys), computed + len(missing)]
        return found

    @property
    def reused(self) -> int:
        """Pieces this analysis found known (two runs with the same rows share theirs)."""
        return self.asked - self.computed

    def save(self) -> None:
        """Keep exactly the pieces this analysis used, atomically; failing to write only costs work next time."""
        if self.path is None:
            return
        text = json.dumps({"format": FORMAT, "pieces": self._used}, sort_keys=True, default=_plain)
        try:
            atomic_write_text(self.path, text)
        except OSError:
            pass


@functools.lru_cache(maxsize=64)
def _key_start(kind: str, options: str) -> HashState:
    """The hash state of a key's shared parts (kind, code, options): each key copies it (never fed itself)."""
    return digest_state(kind, code_digest(), options)


def _plain(value: object) -> object:
    """NumPy scalars as the Python numbers they hold (JSON knows no others)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not a statistic")
