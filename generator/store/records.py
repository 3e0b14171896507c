"""The two small JSON files the store stage leaves for later commands, and their one strict loader.

- ``build/store-source.json`` (:class:`BuildSource`): which store and revision
  the build graded, so that ``dualboard publish`` commits on exactly that
  revision (``parent_commit``) instead of whatever the Hub holds by then.
- ``.dualboard/hub-pending/pending.json`` (:class:`Pending`): what a staged
  ingest put in the pending overlay (see dualboard.store.staged).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, get_type_hints

from dualboard.atomic import atomic_path
from dualboard.errors import DualboardError

RECORD_FORMAT = 1
SOURCE_FILE = "store-source.json"

R = TypeVar("R", "BuildSource", "Pending")


@dataclass(frozen=True)
class BuildSource:
    """The store revision a build read (written by the grading stage into ``build/``)."""

    store: str
    """The store, in words (:meth:`dualboard.store.Store.describe`)."""
    revision: str
    """The revision the build read (a snapshot name, a commit id, or a staged ``<commit>+<hash>``)."""
    format: int = RECORD_FORMAT
    """Version of this file's layout."""


@dataclass(frozen=True)
class Pending:
    """What a staged ingest wrote into the pending overlay, and on which Hub commit."""

    repo_id: str
    """Hub dataset the changes are for."""
    endpoint: str
    """Hub address."""
    base: str
    """Commit the overlay was staged on; ``parent_commit`` of the publish (NO_COMMIT: no dataset yet)."""
    revision: str
    """The revision the overlay presents: ``base``, or ``base+<hash of the staged files>``."""
    format: int = RECORD_FORMAT
    """Version of this file's layout."""


def write_record(path: Path, record: BuildSource | Pending) -> None:
    """Write ``record`` as JSON, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(dataclasses.asdict(record), indent=2, sort_keys=True) + "\n", "utf-8")


def read_record(path: Path, kind: type[R], *, fix: str) -> R | None:
    """Read a record of type ``kind`` from ``path``; None when there is none.

    Raises
    ------
    DualboardError
        When the file is not such a record (or of another format version),
        with ``fix`` as the way out.
    """
    if not path.is_file():
        return None
    try:
        record = kind(**json.loads(path.read_text("utf-8")))
        wrong = [name for name, hint in get_type_hints(kind).items() if not isinstance(getattr(record, name), hint)]
        if wrong:
            raise TypeError(f"{wrong[0]} has the wrong type")
    except (ValueError, TypeError) as exc:
        raise DualboardError(f"{path}: not a readable {kind.__name__} record ({exc}) — {fix}") from exc
    if record.format != RECORD_FORMAT:
        raise DualboardError(f"{path}: format {record.format!r}, this Dualboard reads {RECORD_FORMAT} — {fix}")
    return record


def record_source(build_dir: Path, store_name: str, revision: str) -> None:
    """Note in ``build_dir`` that the build read ``revision`` of the store ``store_name``."""
    write_record(build_dir / SOURCE_FILE, BuildSource(store_name, revision))


def read_source(build_dir: Path) -> BuildSource | None:
    """The store revision the last build read, if one was recorded."""
    return read_record(build_dir / SOURCE_FILE, BuildSource, fix="run `dualboard build` again")
