"""What a release folder holds, where each of its files is served, and the size limits that decide it.

``releases/VERSION/`` (written by :mod:`dualboard.release.freeze`)::

    README.md                      the dataset card: configs for ``datasets`` and the Hub viewer
    manifest.json, SHA256SUMS      what was frozen, and the checksum of every other file
    <table>/<benchmark>.parquet    one per table of TABLES (scored, answers, verdicts), and the same
    <table>/<benchmark>.csv        rows as CSV safe to open in a spreadsheet
    stats/<benchmark>/*.csv        the statistics tables (and notes.json)

A table too large for one file under :data:`SHARD_LIMIT` is written as parts,
``<benchmark>-00000-of-00003.parquet`` and ``.csv``, holding the same rows.

The same folder is served in three places:

* each file up to :data:`SITE_FILE_LIMIT` is copied into the site version
  that mike deploys for the release (``/VERSION/downloads/files/``);
* ``dualboard publish`` uploads the folder unchanged to ``releases/VERSION/``
  of the Hub dataset (the verdict cache of the store keeps its own
  ``verdicts/`` at the dataset's root) and tags the commit VERSION;
* without a Hub dataset, the larger files stay in the release folder, to be
  attached to the repository's GitHub release.
"""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from dualboard import scored_files
from dualboard.release.csv_download import download_csv

CARD = "README.md"
TABLES = tuple(t.name for t in scored_files.TABLES)
"""Tables of a release (scored, answers, verdicts): each is a ``datasets`` config and a folder of the release."""
STATS = "stats"
SITE_FILE_LIMIT = 50 * 1000**2
"""Largest release file (bytes) copied into a site version; GitHub Pages sites should stay small."""
SHARD_LIMIT = 100 * 1000**2
"""Every release file stays below this many bytes: GitHub refuses files of 100 MiB in a repository or on Pages."""
SITE_FOLDER = "files"
"""Where a site version carries its release's files: this folder next to the Downloads page (``downloads/files/``)."""
MARKDOWN_SUFFIX = ".md"
"""MkDocs turns every Markdown file of the docs into a page, so the site carries the card as ``README.md.txt``."""


def hub_folder(version: str) -> str:
    """The folder of release ``version`` inside the Hub dataset."""
    return f"releases/{version}/"


def hub_file_url(endpoint: str, repo_id: str, version: str, name: str) -> str:
    """Download address of release file ``name`` at the dataset's tag ``version``."""
    return f"{endpoint.rstrip('/')}/datasets/{repo_id}/resolve/{version}/{hub_folder(version)}{name}"


def site_file(name: str) -> str:
    """Path (under :data:`SITE_FOLDER`) of release file ``name`` in the site: Markdown gets ``.txt``.

    Examples
    --------
    >>> site_file("README.md"), site_file("scored/demo.parquet")
    ('README.md.txt', 'scored/demo.parquet')
    """
    return name + ".txt" if name.endswith(MARKDOWN_SUFFIX) else name


def carried_in_site(size: int) -> bool:
    """Whether a release file of ``size`` bytes is copied into its site version."""
    return size <= SITE_FILE_LIMIT


def table_of(name: str) -> str | None:
    """The table (config) a release file belongs to, for its Parquet files; else None.

    Examples
    --------
    >>> table_of("scored/demo-00000-of-00002.parquet"), table_of("scored/demo.csv"), table_of("stats/demo/models.csv")
    ('scored', None, None)
    """
    head, _, rest = name.partition("/")
    return head if head in TABLES and rest.endswith(".parquet") and "/" not in rest else None


def write_table(source: Path, folder: Path, benchmark: str, *, limit: int = SHARD_LIMIT) -> list[Path]:
    """Write one benchmark's table from build/scored into ``folder`` as Parquet and CSV, each file under ``limit``.

    A table that fits is one ``<benchmark>.parquet`` (a byte copy, so its
    metadata stays) and one ``<benchmark>.csv``; a larger one is split by rows
    into equal parts whose Parquet and CSV both fit, named as the Hub names
    shards (``<benchmark>-00000-of-00003.parquet``). Parts are encoded one at
    a time, so memory holds the table and one part's CSV. Returns the files.
    """
    folder.mkdir(parents=True, exist_ok=True)
    table = pq.read_table(source)
    size = source.stat().st_size
    parts = 1 if size < limit else min(math.ceil(size / (0.8 * limit)), max(table.num_rows, 1))
    while True:
        written = _write_parts(source, table, folder, benchmark, parts, limit)
        if written is not None:
            return written
        if parts >= table.num_rows:
            raise ValueError(f"{source}: a single row is {limit} bytes or more; it cannot be split under the limit")
        parts = min(parts * 2, table.num_rows)


def _write_parts(
    source: Path, table: pa.Table, folder: Path, benchmark: str, parts: int, limit: int
) -> list[Path] | None:
    """The table as ``parts`` consecutive row ranges of near-equal length; None (nothing left) if a file reaches ``limit``."""
    bounds = [i * table.num_rows // parts for i in range(parts + 1)]
    written: list[Path] = []
    for i, (start, stop) in enumerate(zip(bounds, bounds[1:])):
        piece = table.slice(start, stop - start)
        stem = benchmark if parts == 1 else f"{benchmark}-{i:05d}-of-{parts:05d}"
        parquet = source.read_bytes() if parts == 1 else _parquet_bytes(piece)
        csv_text = download_csv(piece.to_pandas()).encode("utf-8")
        if len(parquet) >= limit or len(csv_text) >= limit:
            for path in written:
                path.unlink()
            return None
        (folder / f"{stem}.parquet").write_bytes(parquet)
        (folder / f"{stem}.csv").write_bytes(csv_text)
        written += [folder / f"{stem}.parquet", folder / f"{stem}.csv"]
    return written


def _parquet_bytes(piece: pa.Table) -> bytes:
    """One part as Parquet; the schema, with its key-value metadata, goes with every slice."""
    sink = pa.BufferOutputStream()
    pq.write_table(piece, sink, compression=scored_files.COMPRESSION)
    return sink.getvalue().to_pybytes()
