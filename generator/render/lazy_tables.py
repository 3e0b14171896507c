"""Tables whose rows a page loads from a data file: a question's answers, a run's list of questions and its
disagreements.

The rows are a compact, column-typed JSON document, gzip-compressed, written once
under ``shared/`` and named by its content (:mod:`dualboard.render.shared_files`);
the item's page document (:mod:`dualboard.render.item_pages`) carries the table's
header and its key. ``javascripts/lazy-tables.js`` fetches the rows, builds them
with ``textContent`` (never ``innerHTML``, so submitted text stays text) and marks
the answers whose verdicts disagree on pass/fail. With the file missing, the
status line says so and links the Downloads page.

The folder of the items (``benchmarks/B/questions/``) has an *index*
(:data:`INDEX`) that names the data files of every table and page document by key,
so a page document depends on neither the answers nor where ``shared/`` is: adding
a run changes the answers' data files and the index, not a question's document.

A table's rows may be split over several data files, *shards*, each a whole
data document with its own links: a question's answers are split by a hash of
the run id (:mod:`dualboard.render.answer_shards`), so adding a run makes one
shard of each question anew and leaves the others, which releases then share.
The page shows the shards' rows one after the other, in the index's order.

The index of a folder of items (``INDEX_FORMAT`` 2)::

    {"format": 2, "shared": "../../../shared/", "files": {"q1#answers": ["<sha256>.json.gz", ...], ...}}

``shared`` is the ``shared/`` folder relative to the index (one level higher in
a release, whose versions share it); a key is the item's slug, ``#`` and the
table's noun (``page`` for the page document); its value lists the data files.

The data document (``FORMAT`` 1)::

    {"format": 1, "pass_mark": 50, "kinds": ["link", "number", ...],
     "links": [[text, href], ...], "rows": [[cell, ...], ...]}

One cell per column, by its kind (:data:`KINDS`).
"""

from __future__ import annotations

import gzip
import json
import math
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from numbers import Integral
from pathlib import PurePosixPath
from typing import Any

import msgspec

from dualboard.kappa import PASS_MARK
from dualboard.render.html import Header
from dualboard.render.shared_files import SHARED_DIR, SharedFiles, shared_href, shared_name

FORMAT = 1
"""Version of the data document; ``lazy-tables.js`` refuses any other."""
INDEX_FORMAT = 2
"""Version of the index (2: each table names a list of data files); ``lazy-tables.js`` refuses any other."""
INDEX = "data-files.json"
"""File name of the index in each folder of pages with lazy tables: which data file each table loads."""
KINDS = {
    "link": "index into ``links``: a [text, href] pair, shown as a link to a page of the site",
    "number": "a number, shown as written and sorted numerically",
    "text": "a string",
    "wrap": "a string that wraps (a prompt)",
    "value": "[number or null, text]: the text, sorted by the number",
    "options": "[options as shown, note] or null (a multiple-choice answer's option order)",
    "response": "a model's response, shown whole in a scrolling cell",
    "verdict": "[score or null, text, note?]: a score and how it came about; a row whose scores fall on both "
    "sides of ``pass_mark`` is highlighted",
}
"""What a cell of each column kind holds."""
SUFFIX = ".json.gz"
"""Data files are gzip-compressed at rest: answers to one question repeat each other and compress 5–10×."""
GZIP_LEVEL = 1
"""Fastest: a render compresses every answer's text, and higher levels cost more CPU than the bytes they save."""
_ENCODER = msgspec.json.Encoder()
"""Writes the JSON of ``json.dumps(ensure_ascii=False, separators=(",", ":"))`` faster, the same bytes
but for floats Python writes with an exponent (below 1e-4, from 1e16: ``1e-05`` is ``0.00001``, the same number to
every JSON reader). Its cells' numbers are finite (:func:`number`): msgspec would write NaN as null."""
DOWNLOADS = "../../../../downloads/"
"""The Downloads page from a run or question page (``benchmarks/B/runs/R/`` is four folders deep)."""


@dataclass(frozen=True)
class Column:
    """One column of a lazy table: its header in the page and the kind of its cells in the data."""

    header: str | Header
    """The header (our own words)."""
    kind: str
    """One of :data:`KINDS`."""


@dataclass(frozen=True)
class IndexedFiles:
    """Data files that a folder's index names under one key: a lazy table's rows, or an item's page document
    (:mod:`dualboard.render.item_pages`)."""

    index: str
    """Docs-relative path of the index (:data:`INDEX` in the folder of the page that loads them)."""
    key: str
    """The key in the index: the item's slug, ``#``, a noun (``answers``, ``page``)."""
    paths: tuple[str, ...]
    """Docs-relative paths of the data files (``shared/<sha256>.json.gz``), in the order the page shows them."""
    data: tuple[bytes, ...] = ()
    """The gzip-compressed documents of ``paths``, where they are carried; empty where they were handed to a
    :class:`~dualboard.render.shared_files.SharedFiles` already."""


@dataclass(frozen=True)
class LazyTable(IndexedFiles):
    """A table whose rows a page loads: its data files, and the columns and words the page shows around them."""

    columns: tuple[Column, ...] = ()
    noun: str = "rows"
    """What a row is, for the status line ("answers"); also the table's noun in its key."""
    filterable: bool = False
    """Put the filters of ``tables.js`` above it once its rows are in."""

    def block(self) -> dict[str, Any]:
        """The table as a block of a page document (:mod:`dualboard.render.item_pages`), which
        ``javascripts/item-pages.js`` builds: its key in the index, its headers and the words around it."""
        return {
            "lazy": {
                "key": self.key,
                "noun": self.noun,
                "headers": [header_json(c.header) for c in self.columns],
                "filterable": self.filterable,
                "downloads": DOWNLOADS,
            }
        }


def header_json(header: str | Header) -> dict[str, Any]:
    """A column header as a page document carries it (the attributes :func:`dualboard.render.html.table` writes)."""
    header = header if isinstance(header, Header) else Header(header)
    found = {"text": header.text, "title": header.title, "key": header.key, "filter": header.filter or None}
    return {name: value for name, value in found.items() if value is not None}


def lazy_table(
    page: str,
    columns: Sequence[Column],
    rows: list[list[Any]],
    links: list[tuple[str, str]],
    *,
    noun: str,
    filterable: bool = False,
) -> LazyTable:
    """A lazy table of the item whose page would be at docs path ``page`` (``benchmarks/B/runs/<slug>.md``),
    holding ``rows`` (cells by column kind) in one data file.

    ``noun`` names what a row is, for the status line ("answers"), and the table among those of its item;
    ``filterable`` puts the filters of ``tables.js`` above it once its rows are in.
    """
    path, data = data_document(columns, rows, links)
    return sharded_table(page, columns, [path], noun=noun, filterable=filterable, data=[data])


def sharded_table(
    page: str,
    columns: Sequence[Column],
    paths: Sequence[str],
    *,
    noun: str,
    filterable: bool = False,
    data: Sequence[bytes] = (),
) -> LazyTable:
    """A lazy table of the item at docs path ``page`` whose rows are in the data files ``paths``
    (:func:`data_document`, made with the same ``columns``), shown in that order; ``data``: their bytes,
    unless they are written already. ``noun`` and ``filterable`` as for :func:`lazy_table`.
    """
    _check_kinds(columns)
    index, key = index_key(page, noun)
    return LazyTable(index, key, tuple(paths), tuple(data), tuple(columns), noun, filterable)


def index_key(page: str, noun: str) -> tuple[str, str]:
    """The index and the key in it of the data files named ``noun`` of the item at docs path ``page``.

    Examples
    --------
    >>> index_key("benchmarks/demo/runs/r1.md", "answers")
    ('benchmarks/demo/runs/data-files.json', 'r1#answers')
    """
    source = PurePosixPath(page)
    return str(source.parent / INDEX), f"{source.stem}#{noun}"


def data_document(columns: Sequence[Column], rows: list[list[Any]], links: list[tuple[str, str]]) -> tuple[str, bytes]:
    """The data file of ``rows`` (cells by the kinds of ``columns``; a link cell indexes ``links``): its docs path
    under ``shared/``, named by its JSON, and its gzip-compressed bytes."""
    _check_kinds(columns)
    document = {
        "format": FORMAT,
        "pass_mark": PASS_MARK,
        "kinds": [c.kind for c in columns],
        "links": [list(pair) for pair in links],
        "rows": rows,
    }
    raw = _ENCODER.encode(document)
    # Named by the JSON, not by the gzip bytes, which differ between zlib builds (and levels) for the same JSON.
    return shared_name(raw, SUFFIX), gzip.compress(raw, compresslevel=GZIP_LEVEL, mtime=0)


def _check_kinds(columns: Sequence[Column]) -> None:
    unknown = {c.kind for c in columns} - set(KINDS)
    if unknown:
        raise ValueError(f"unknown column kinds {sorted(unknown)}; use one of {sorted(KINDS)}")


def data_files(tables: Iterable[IndexedFiles], shared: SharedFiles, *, versioned: bool) -> dict[str, bytes]:
    """The indexes of ``tables`` (lazy tables and page documents) by docs path; the data files they carry go to
    ``shared``.

    ``versioned``: the site is a release, whose indexes find ``shared/`` beside its version folder.
    Raises ValueError when two tables of one folder share a key (one page with two tables of one noun).
    """
    files: dict[str, bytes] = {}
    indexes: dict[str, dict[str, list[str]]] = {}
    for t in tables:
        entries = indexes.setdefault(t.index, {})
        if t.key in entries:
            raise ValueError(f"two lazy tables of {t.index} have the key {t.key!r}; give each table its own noun")
        entries[t.key] = [posixpath.basename(p) for p in t.paths]  # a third of PurePosixPath(p).name's time
        for path, data in zip(t.paths, t.data):
            shared.add(path, data)
    for path, entries in sorted(indexes.items()):
        document = {
            "format": INDEX_FORMAT,
            "shared": shared_href(path, f"{SHARED_DIR}/", versioned=versioned),
            "files": dict(sorted(entries.items())),
        }
        files[path] = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return files


def read_data(data: bytes) -> dict[str, Any]:
    """The data document of a lazy table's file (what the browser reads), for tests and tools."""
    return json.loads(gzip.decompress(data))


def number(value: Any) -> float | int | None:
    """A JSON number, or None for a missing one (NaN and infinities are not JSON).

    Examples
    --------
    >>> number(float("nan")), number(float("inf")), number(2), number(61.5)
    (None, None, 2, 61.5)
    """
    if value is None or value != value:
        return None
    if isinstance(value, Integral):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None
