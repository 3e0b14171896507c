"""The data files an earlier render made for each item of a page (a shard of answers, a run's tables), by key.

A render makes thousands of data files (:mod:`dualboard.render.lazy_tables`); most are the same as in the last
render. Each item that makes some has a *key*: the digest of everything its files are made from (the caller
works it out). :class:`KeptFiles` remembers, in ``build/``, the files each item's key gave and anything else
the item's page said about them; an item whose key is unchanged and whose files are still in the docs folder is
kept as it is, without reading any of its inputs. A lost or unreadable manifest costs one full render, never a
wrong page.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dualboard.atomic import atomic_write_text
from dualboard.build_cache import stat_key
from dualboard.errors import DualboardError
from dualboard.render.shared_files import SharedFiles

_MANIFEST_FORMAT = 2
"""2: entries under ``items`` (1 named them ``shards``)."""


class KeptFiles:
    """The data files each item's key gave in an earlier render, in one manifest (``build/<folder>/<benchmark>.json``).

    The manifest is rewritten whole after each render: ``{"format": 2, "items": {"<item>": {"key": ..., "files":
    {name: [docs path, bytes]}, "notes": {...}}}}``. Items the render did not use are forgotten.
    """

    def __init__(self, path: Path) -> None:
        """``path``: the manifest."""
        self.path = path
        self._items: dict[str, dict] = {}
        try:
            document = json.loads(path.read_text("utf-8"))
            if document.get("format") == _MANIFEST_FORMAT and isinstance(document.get("items"), dict):
                self._items = document["items"]
        except (OSError, ValueError, AttributeError):
            pass  # made anew: a lost manifest costs one full render, never a wrong page
        self._used: dict[str, dict] = {}

    def reuse(self, item: str, key: str, shared: SharedFiles) -> dict[str, Any] | None:
        """What ``item`` made under ``key`` (``files``: name → docs path; ``notes``), its files kept in ``shared``;
        None (nothing kept) when another key made them or a file is gone."""
        entry = self._items.get(item)
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        files = entry.get("files", {})
        if not all(shared.keep(path, size) for path, size in files.values()):
            return None
        self._used[item] = entry
        return {"files": {name: path for name, (path, _size) in files.items()}, "notes": entry.get("notes", {})}

    def record(
        self, item: str, key: str, files: Mapping[str, tuple[str, int]], notes: Mapping[str, Any] | None = None
    ) -> None:
        """Remember that ``key`` gave ``files`` (name → (docs path, bytes)) and ``notes`` (JSON) for ``item``."""
        entry = {"key": key, "files": {name: list(value) for name, value in files.items()}}
        self._used[item] = {**entry, "notes": dict(notes)} if notes else entry

    def save(self) -> None:
        """Write the manifest of the items this render used (the others are forgotten)."""
        document = {"format": _MANIFEST_FORMAT, "items": dict(sorted(self._used.items()))}
        atomic_write_text(self.path, json.dumps(document, separators=(",", ":")))


def check_unreplaced(path: Path, status: list[int]) -> None:
    """Stop the render when the file ``path`` no longer has the ``status`` (:func:`dualboard.build_cache.stat_key`)
    it had when the render read it: keys read from its bytes would be remembered for pages made from other rows."""
    if stat_key(path.stat()) != status:
        raise DualboardError(
            f"{path} was replaced while the render read it (did a grade run meanwhile?): render again once it is done"
        )
