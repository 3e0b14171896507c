"""The verdict cache's files: append-only, content-addressed Parquet parts (the one home of their layout).

Every store keeps verdicts in the same layout under some folder (a snapshot,
the local store's root, a pending overlay)::

    verdicts/<grader>/<config_hash>/part-<hash of its keys>.parquet

A part is written once, atomically: a killed writer leaves only a dot-named
temporary file that no read matches. A part is never replaced: the same keys
give the same name, and a name that exists is left as it is. A store reads
the union of the parts of one grader configuration over the folders it names
(see :meth:`dualboard.store.Store.load_verdicts`); the grading stage's
:class:`dualboard.grading.VerdictCache` decides what goes into them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pyarrow

from dualboard.atomic import atomic_write_parquet
from dualboard.errors import DualboardError

VERDICTS = "verdicts"
"""The folder of the logical tree (and of every store folder that saves verdicts) holding the parts."""
PART_COLUMNS = {
    "key": "object",
    "score": "float64",
    "verdict_parse": "object",
    "detail": "object",
    "grader": "object",
    "grader_version": "object",
    "config_hash": "object",
}
"""Columns of a part and their dtypes: the verdict's content address, the verdict, and who gave it."""
PART_GLOB = "part-*.parquet"


class VerdictPartError(DualboardError):
    """A verdict part that cannot be read (truncated, or not written by Dualboard)."""


class VerdictWriteError(DualboardError):
    """The disk refused a new verdict part (full, read-only); no partial part is left."""


def part_folder(root: Path, grader: str, config_hash: str) -> Path:
    """The folder under ``root`` holding the parts of one grader configuration."""
    return Path(root) / VERDICTS / grader / config_hash


def read_parts(roots: Iterable[Path], grader: str, config_hash: str) -> pd.DataFrame:
    """Every verdict of one grader configuration under ``roots``, one row per key (columns: PART_COLUMNS).

    Parts are read root by root, each root's in name order; when two parts
    hold the same key (two machines judged the same answer), the first read
    wins, so the result does not depend on which machine saved last.

    Raises
    ------
    VerdictPartError
        Naming a part that is not a readable verdict part.
    """
    frames = [read_part(path) for path in part_files(roots, grader, config_hash)]
    if not frames:
        return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in PART_COLUMNS.items()})
    return pd.concat(frames, ignore_index=True).drop_duplicates("key", keep="first").reset_index(drop=True)


def part_files(roots: Iterable[Path], grader: str, config_hash: str) -> list[Path]:
    """The parts of one grader configuration under ``roots``, in the order they are read (root by root, each
    root's in name order): where a key is in two parts, the first one's verdict counts."""
    return [path for root in roots for path in sorted(part_folder(root, grader, config_hash).glob(PART_GLOB))]


def read_part(path: Path, columns: list[str] | None = None) -> pd.DataFrame:
    """One part's rows (its ``columns``, default all of PART_COLUMNS), typed; VerdictPartError if unreadable."""
    columns = list(PART_COLUMNS) if columns is None else columns
    try:
        frame = pd.read_parquet(path, columns=columns)
    except (OSError, ValueError, KeyError, pyarrow.ArrowException) as exc:
        raise VerdictPartError(
            f"{path}: not a readable verdict part ({str(exc).splitlines()[0][:200]}) — delete it "
            "(from the Hub dataset too if it came from there); its verdicts are graded again"
        ) from exc
    return frame.astype({name: PART_COLUMNS[name] for name in columns})


def write_part(root: Path, grader: str, config_hash: str, frame: pd.DataFrame) -> Path | None:
    """Add ``frame`` (columns: PART_COLUMNS) as one part under ``root``; return its path.

    The name is the hash of the part's keys, so saving the same verdicts
    twice names the same file, which is then left as it is (None is
    returned): parts are append-only.
    """
    if list(frame.columns) != list(PART_COLUMNS):
        raise ValueError(f"a verdict part has the columns {list(PART_COLUMNS)}, not {list(frame.columns)}")
    name = hashlib.sha256("".join(frame["key"]).encode("utf-8")).hexdigest()[:32]
    path = part_folder(root, grader, config_hash) / f"part-{name}.parquet"
    if path.exists():
        return None
    try:
        return atomic_write_parquet(path, frame.astype(PART_COLUMNS), replace=False)
    except OSError as exc:
        if isinstance(exc, FileExistsError) and path.is_file():
            return None  # a concurrent grade saved the same keys first
        raise VerdictWriteError(
            f"{path.parent}: saving verdicts failed ({exc.strerror or exc}); the parts saved "
            "before are kept — free disk space (or fix the folder's permissions) and grade "
            "again"
        ) from exc


def part_paths(root: Path) -> list[Path]:
    """Every part under ``root``, of every grader configuration, in name order."""
    return sorted((Path(root) / VERDICTS).glob(f"*/*/{PART_GLOB}"))
