"""Write a benchmark's scored tables into a release folder as Parquet and CSV, each file under the shard limit.

Where the files go and the limits that decide their size are in
:mod:`dualboard.release_files`, which the render stage reads too.
"""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from dualboard import scored_files
from dualboard.csv_download import download_csv
from dualboard.release_files import SHARD_LIMIT

CSV_BATCH_ROWS = 20_000
"""Rows encoded as CSV at a time when a table's CSV size is measured (:func:`first_split`)."""


def write_table(table: pa.Table, folder: Path, benchmark: str, *, limit: int = SHARD_LIMIT) -> list[Path]:
    """Write one benchmark's ``table`` (as :meth:`~dualboard.scored_files.ScoredFolder.published` gives it) into
    ``folder`` as Parquet and CSV, each file under ``limit``.

    A table that fits is one ``<benchmark>.parquet`` and one ``<benchmark>.csv``; a larger one is split by rows
    into equal parts whose Parquet and CSV both fit, named as the Hub names shards
    (``<benchmark>-00000-of-00003.parquet``). The first split tried is sized from both encodings
    (:func:`first_split`); parts are encoded one at a time, so memory holds the table and one part's CSV.
    Every Parquet file keeps the table's key-value metadata. Returns the files.
    """
    folder.mkdir(parents=True, exist_ok=True)
    whole = _parquet_bytes(table)
    parts = first_split(table, len(whole), limit)
    while True:
        written = _write_parts(table, whole, folder, benchmark, parts, limit)
        if written is not None:
            return written
        if parts >= table.num_rows:
            raise ValueError(f"{benchmark}: a single row is {limit} bytes or more; it cannot be split under the limit")
        parts = min(parts * 2, table.num_rows)


def first_split(table: pa.Table, parquet_size: int, limit: int) -> int:
    """How many parts to try first: enough for the larger of the Parquet file and the table's CSV to fit.

    The CSV is measured, batch by batch, without being kept: answers compress
    well, so a Parquet file far under the limit can hold a CSV many times over
    it, and trying one part, then two, four… would encode the whole table as
    CSV at each try (and hold the largest attempt in memory).
    """
    if not table.num_rows:
        return 1
    csv_size = sum(len(download_csv(batch.to_pandas()).encode("utf-8")) for batch in table.to_batches(CSV_BATCH_ROWS))
    largest = max(parquet_size, csv_size)
    return 1 if largest < limit else min(math.ceil(largest / (0.8 * limit)), table.num_rows)


def _write_parts(
    table: pa.Table, whole: bytes, folder: Path, benchmark: str, parts: int, limit: int
) -> list[Path] | None:
    """The table as ``parts`` consecutive row ranges of near-equal length.

    Returns None, with nothing left written, when a file would reach ``limit``.
    """
    bounds = [i * table.num_rows // parts for i in range(parts + 1)]
    written: list[Path] = []
    for i, (start, stop) in enumerate(zip(bounds, bounds[1:])):
        piece = table.slice(start, stop - start)
        stem = benchmark if parts == 1 else f"{benchmark}-{i:05d}-of-{parts:05d}"
        parquet = whole if parts == 1 else _parquet_bytes(piece)
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
