"""The files of ``build/scored/``: three Parquet tables per benchmark, their columns, paths and readers.

=========================================  ==========================================================
``<benchmark>.parquet`` (:data:`SCORED`)     one row per run × question × round: both scores, no text
``<benchmark>.answers.parquet`` (ANSWERS)    the scored columns plus prompt, key answer and response
``<benchmark>.verdicts.parquet`` (VERDICTS)  one row per answer × grader: every verdict, for audits
=========================================  ==========================================================

This module is the only place that names these files or lists their columns
(names, Arrow types and meanings come from ``scored_columns.yaml`` beside it);
every other stage reads and writes them through it. It imports no stage, so
grading, statistics, rendering and releases can all depend on it. The response
text lives in the answers table alone, so the statistics and the site, which
read the scored table, never load it (at 10⁶ answers the text is most of the bytes).

Every file carries, in its Parquet key-value metadata under :data:`METADATA_KEY`,
the table it is, the :data:`FORMAT_VERSION` of its layout and the store
revision it was graded from (that of the
:class:`~dualboard.store.records.BuildSource` which ``build/store-source.json``
records). A command can thus check that the data belongs to the store
revision it is about to name (:func:`table_revision`); DuckDB shows it with
``SELECT decode(value) FROM parquet_kv_metadata('demo.parquet')``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from dualboard.atomic import atomic_path
from dualboard.build_cache import CHUNK
from dualboard.errors import DualboardError
from dualboard.names import RUN_ID_RULE, is_name

FORMAT_VERSION = 2
"""Layout of the three tables; a file of another version is refused with the command that rewrites it."""
METADATA_KEY = b"dualboard"
"""Parquet key-value metadata key of the JSON that says what a file is and where it came from."""
ARROW_TYPES = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
"""The ``dtype`` names of scored_columns.yaml and the Arrow types they stand for."""
COMPRESSION = "zstd"
"""Half the size of pyarrow's default (snappy) on model text (1M answers of ~900 characters: 449 vs 927 MB)
and read faster; pandas, DuckDB, datasets and the Hub's viewer all read it."""
REGRADE = "run `dualboard grade` (or `dualboard build`) to write build/scored again"


class ScoredFileError(DualboardError):
    """A file of build/scored/ cannot be named, is missing, is not what its name says, or has another format."""


@dataclass(frozen=True)
class Column:
    """One column of a scored table."""

    name: str
    dtype: str
    """A key of :data:`ARROW_TYPES`."""
    meaning: str
    """One or two sentences for readers of the data (the dataset card prints them)."""


@dataclass(frozen=True)
class Table:
    """One of the three tables: its name, file name and columns in order."""

    name: str
    """``scored``, ``answers`` or ``verdicts`` (also the release folder and dataset config of its files)."""
    suffix: str
    """What follows the benchmark name in the file name."""
    rows: str
    """What one row is, in words."""
    columns: tuple[Column, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The column names, in order."""
        return tuple(c.name for c in self.columns)

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema every file of this table is written with (fixed even for an empty table)."""
        return pa.schema([pa.field(c.name, ARROW_TYPES[c.dtype]) for c in self.columns])

    def path(self, scored_dir: Path, benchmark: str) -> Path:
        """``<scored_dir>/<benchmark><suffix>``, refusing a name that is not a safe file name.

        Examples
        --------
        >>> [t.path(Path("build/scored"), "demo").as_posix() for t in TABLES]
        ['build/scored/demo.parquet', 'build/scored/demo.answers.parquet', 'build/scored/demo.verdicts.parquet']
        """
        return Path(scored_dir) / f"{checked_name(benchmark)}{self.suffix}"


def _load_columns() -> dict[str, tuple[Column, ...]]:
    spec = yaml.safe_load(Path(__file__).with_name("scored_columns.yaml").read_text("utf-8"))
    return {
        table: tuple(Column(name, c["dtype"], c["meaning"]) for name, c in columns.items())
        for table, columns in spec.items()
    }


_COLUMNS = _load_columns()
SCORED = Table("scored", ".parquet", "one row per run × question × round", _COLUMNS["scored"])
ANSWERS = Table(
    "answers",
    ".answers.parquet",
    "one row per run × question × round, with the text",
    _COLUMNS["scored"] + _COLUMNS["answers"],
)
VERDICTS = Table("verdicts", ".verdicts.parquet", "one row per answer × grader", _COLUMNS["verdicts"])
TABLES = (SCORED, ANSWERS, VERDICTS)
"""Every table, in the order they are written and documented."""

_OTHER_STEMS = tuple(t.suffix.removesuffix(SCORED.suffix) for t in TABLES if t is not SCORED)
"""``.answers`` and ``.verdicts``: a benchmark name ending so would name another benchmark's file."""

SCORED_COLUMNS = SCORED.names
ANSWER_COLUMNS = ANSWERS.names
VERDICT_COLUMNS = VERDICTS.names
GRADINGS = ("traditional", "answer_key")
"""The two gradings: the score columns of :data:`SCORED` (and grader roles), in the order every stage lists them."""
ANSWER_SLOT = ("run_id", "question_id", "round")
"""The columns that name one answer: a row of the scored table, a human label, a key of the verdicts."""
MIN_COVERAGE = 0.8
"""Least share of answers with a verdict: a grading under it does not rank the run (stats), and an automatic
answer-key grader under it (over the benchmark) cannot be chosen as the answer-key column (grading)."""


def typed(table: Table, rows: list[dict] | Mapping[str, list], names: Sequence[str] | None = None) -> pd.DataFrame:
    """A DataFrame of ``rows`` (row dicts, or lists by column name) with the table's columns (or those of
    ``names``) in order, numbers and flags in their dtypes.

    Text columns keep pandas' default dtype; the Arrow schema fixes them on write.
    """
    names = table.names if names is None else tuple(names)
    frame = pd.DataFrame(rows, columns=list(names))
    return frame.astype({c.name: c.dtype for c in table.columns if c.name in names and c.dtype != "string"})


def run_id_bounds(run_ids: pq.ColumnChunkMetaData) -> tuple[str, str] | None:
    """The least and greatest run id in a row group, from the statistics of its ``run_id`` chunk; None when they
    do not say. The grade stage writes one row group per run, so readers of one run's rows skip the others'."""
    stats = run_ids.statistics
    if stats is None or not stats.has_min_max or not isinstance(stats.min, str) or not isinstance(stats.max, str):
        return None
    return stats.min, stats.max


@dataclass(frozen=True)
class StoredRowGroup:
    """A row group of a file of the grade stage, as its stored bytes and statistics say."""

    run_id: str | None
    """The one run it holds, when its run id statistics say so (least = greatest, no null); None when they do not."""
    digest: str
    """Its row count and the SHA-256 of each of its column chunks hashed (:func:`stored_row_groups`), as stored."""


def stored_row_groups(path: Path, columns: Sequence[str] | None = None) -> tuple[str, list[StoredRowGroup]]:
    """The schema of a Parquet file of the grade stage (its names and types), and each of its row groups: the run
    it holds and a digest of its ``columns`` (every column when None), read from the file's bytes.

    The chunks are hashed as stored, compressed, never decoded: equal bytes (under the same codec and type) hold
    equal values, so a value that changes changes its chunk. The grade stage writes a row group per run, copied
    byte for byte when the run is not graded again (adding a run leaves the others' bytes as they were), so what
    was made from one run's rows can be keyed by the digests of its row groups, reading a few MB; hashing the
    decoded rows took up to a second per render at a million answers.
    """
    reader = pq.ParquetFile(path)
    meta = reader.metadata
    names = [meta.schema.column(i).path for i in range(meta.num_columns)]
    hashed = range(meta.num_columns) if columns is None else [names.index(c) for c in columns]
    groups = []
    with open(path, "rb") as handle:
        for group in range(meta.num_row_groups):
            row_group = meta.row_group(group)
            digests = [_chunk_digest(handle, row_group.column(c)) for c in hashed]
            run_id = _single_run(row_group.column(names.index("run_id")))
            groups.append(StoredRowGroup(run_id, f"{row_group.num_rows}:{':'.join(digests)}"))
    # the schema's types and names, not pyarrow's text of it, which shows the start of the file's metadata
    # (the store revision: a new one would change every digest)
    return str(reader.schema_arrow.remove_metadata()), groups


def _chunk_digest(handle: BinaryIO, chunk: pq.ColumnChunkMetaData) -> str:
    """SHA-256 of a column chunk's stored bytes (its pages, dictionary included) with its codec and type."""
    start = chunk.dictionary_page_offset if chunk.has_dictionary_page and chunk.dictionary_page_offset else None
    handle.seek(start or chunk.data_page_offset)
    sha = hashlib.sha256(f"{chunk.compression}\0{chunk.physical_type}\0{chunk.num_values}\0".encode())
    left = chunk.total_compressed_size
    while left > 0:  # a block at a time: a large run's chunk of text need not be in memory whole
        block = handle.read(min(left, CHUNK))
        if not block:
            raise ValueError(f"{handle.name}: a column chunk runs past the end of the file")
        sha.update(block)
        left -= len(block)
    return sha.hexdigest()


def _single_run(run_ids: pq.ColumnChunkMetaData) -> str | None:
    """The run of a row group whose run id statistics say it holds one run and no null; else None."""
    bounds, stats = run_id_bounds(run_ids), run_ids.statistics
    if bounds is not None and bounds[0] == bounds[1] and stats.has_null_count and stats.null_count == 0:
        return bounds[0]
    return None


def checked_name(benchmark: str) -> str:
    """Return ``benchmark`` if its files cannot escape the folder or collide with another's; else raise.

    ``x.answers`` is a valid name, but its scored table would be the answers
    table of benchmark ``x``, so names ending like a table suffix are refused.

    Examples
    --------
    >>> checked_name("easy-problems.v2")
    'easy-problems.v2'
    >>> checked_name("demo.answers")
    Traceback (most recent call last):
    ...
    dualboard.scored_files.ScoredFileError: benchmark name 'demo.answers' cannot name files in build/scored — ...
    """
    if not is_name(benchmark) or benchmark.endswith(_OTHER_STEMS):
        raise ScoredFileError(
            f"benchmark name {benchmark!r} cannot name files in build/scored — use {RUN_ID_RULE}, "
            f"not ending in {' or '.join(_OTHER_STEMS)} (rename the folder data/benchmarks/{benchmark})"
        )
    return benchmark


def benchmark_names(scored_dir: Path) -> list[str]:
    """The benchmarks that have a scored table in ``scored_dir``, sorted (other files are ignored)."""
    scored_dir = Path(scored_dir)
    if not scored_dir.is_dir():
        return []
    stems = (p.name.removesuffix(SCORED.suffix) for p in scored_dir.glob(f"*{SCORED.suffix}"))
    return sorted(s for s in stems if is_name(s) and not s.endswith(_OTHER_STEMS))


def write_scored(tables: object, scored_dir: Path, benchmark: str, revision: str) -> list[Path]:
    """Write the three tables of ``benchmark`` into ``scored_dir`` atomically; return their paths.

    ``tables`` has one DataFrame attribute per table, named like it (``scored``,
    ``answers``, ``verdicts``), as the grading stage's ``GradedTables`` has:
    this module comes before grading in the flow, so it names no grading type.
    ``revision`` is the store revision graded, recorded in each file's metadata.
    """
    return write_scored_parts([tables], scored_dir, benchmark, revision)


def write_scored_parts(parts: Iterable[object], scored_dir: Path, benchmark: str, revision: str) -> list[Path]:
    """Write the three tables of ``benchmark`` from ``parts``, one after the other; return their paths.

    Each part is like :func:`write_scored`'s ``tables``, its tables pandas
    DataFrames or Arrow tables (the grading stage yields one per run); the
    files hold the parts' rows in order, and only one part is in memory at a
    time. Each file is written to a temporary name and moved into place once complete.
    """
    paths = [table.path(scored_dir, benchmark) for table in TABLES]
    with ExitStack() as stack:
        writers = [
            stack.enter_context(_table_writer(table, stack.enter_context(atomic_path(path)), benchmark, revision))
            for table, path in zip(TABLES, paths, strict=True)
        ]
        for part in parts:
            for table, writer in zip(TABLES, writers, strict=True):
                writer.write_table(_arrow(getattr(part, table.name), table, writer.schema))
    return paths


def join_scored_parts(parts: Iterable[object], scored_dir: Path, benchmark: str, revision: str) -> list[Path]:
    """Write the three tables of ``benchmark`` from ``parts`` kept as Parquet files; return their paths.

    Each part has, for each table, an attribute named like it (``scored``,
    ``answers``, ``verdicts``): the Parquet files holding the part's rows of
    that table's columns, side by side (each column taken from the first file
    that has it). Their column chunks are copied, not read
    (:mod:`dualboard.parquet_join`), so a part costs its bytes, not its
    decoding. Files written with ``pq.write_table(..., compression=COMPRESSION)`` of the table's column types
    make the files :func:`write_scored_parts` writes from the same rows, byte for byte.
    """
    from dualboard.parquet_join import JoinedParquet, ParquetJoinError, open_sources

    paths = [table.path(scored_dir, benchmark) for table in TABLES]
    try:
        with ExitStack() as stack:
            tmps = [stack.enter_context(atomic_path(path)) for path in paths]
            joined = [
                stack.enter_context(JoinedParquet(tmp, _empty(table, benchmark, revision)))
                for table, tmp in zip(TABLES, tmps, strict=True)
            ]
            for part in parts:
                files = [[Path(file) for file in getattr(part, table.name)] for table in TABLES]
                with open_sources({file for table_files in files for file in table_files}) as sources:
                    for table_files, out in zip(files, joined, strict=True):
                        out.add([sources[file] for file in table_files])
    except ParquetJoinError as exc:  # a part's file damaged, or written by other code
        raise ScoredFileError(f"{exc} — delete that file and grade again: what it held is made anew") from exc
    return paths


def _empty(table: Table, benchmark: str, revision: str) -> bytes:
    """The bytes of a file of ``table`` with no rows, as :func:`write_scored_parts` writes it (the joined
    files' footers start from its)."""
    sink = pa.BufferOutputStream()
    _table_writer(table, sink, benchmark, revision).close()
    return sink.getvalue().to_pybytes()


def _arrow(frame: pd.DataFrame | pa.Table, table: Table, schema: pa.Schema) -> pa.Table:
    """``frame``'s columns of ``table`` as an Arrow table of ``schema`` (a part may come in Arrow already)."""
    if isinstance(frame, pa.Table):
        return frame.select(list(table.names)).cast(schema)
    return pa.Table.from_pandas(frame[list(table.names)], schema=schema, preserve_index=False)


def _table_writer(table: Table, tmp: Path | pa.NativeFile, benchmark: str, revision: str) -> pq.ParquetWriter:
    """A Parquet writer of ``table``'s schema and metadata into ``tmp`` (closed, and so complete, on exit)."""
    # The revision only: a local store's description holds a path of the build machine, which
    # must neither reach published files nor make two builds of the same store differ.
    about = {"table": table.name, "format_version": FORMAT_VERSION, "benchmark": benchmark, "store_revision": revision}
    schema = table.schema.with_metadata({METADATA_KEY: json.dumps(about, sort_keys=True).encode()})
    return pq.ParquetWriter(tmp, schema, compression=COMPRESSION)


def _about(path: Path, table: Table) -> dict:
    """The metadata of a file of ``table``, checked: it exists, is that table, in this format version."""
    if path.is_symlink() or not path.is_file():
        raise ScoredFileError(f"{path}: no {table.name} table there — {REGRADE}")
    try:
        about = json.loads((pq.read_schema(path).metadata or {}).get(METADATA_KEY, b"null"))
    except (pa.ArrowException, ValueError) as exc:
        raise ScoredFileError(f"{path}: not a readable Parquet file ({exc}) — {REGRADE}") from exc
    if not isinstance(about, dict) or about.get("table") != table.name:
        found = about.get("table") if isinstance(about, dict) else None
        raise ScoredFileError(
            f"{path}: holds {f'the {found}' if found else 'no dualboard'} table, not the {table.name} table — {REGRADE}"
        )
    if about.get("format_version") != FORMAT_VERSION:
        raise ScoredFileError(
            f"{path}: format version {about.get('format_version')!r}, this Dualboard reads {FORMAT_VERSION} — {REGRADE}"
        )
    return about


def table_revision(table: Table, scored_dir: Path, benchmark: str) -> str:
    """The store revision the file of ``table`` for ``benchmark`` was graded from (reads the metadata only)."""
    return str(_about(table.path(scored_dir, benchmark), table).get("store_revision"))


def checked_path(table: Table, scored_dir: Path, benchmark: str) -> Path:
    """The path of ``benchmark``'s file of ``table``, checked to hold that table in this format (to stream it)."""
    path = table.path(scored_dir, benchmark)
    _about(path, table)
    return path


def read_table(
    table: Table,
    scored_dir: Path,
    benchmark: str,
    *,
    columns: list[str] | None = None,
    categories: Sequence[str] = (),
) -> pd.DataFrame:
    """Read ``benchmark``'s file of ``table`` (only ``columns``, if given), after checking what it is.

    ``categories``: columns read as pandas categoricals, straight from the file's
    dictionary pages: a string repeated on many rows (a run or question id) is then
    decoded once, not once a row, and numbered by its code.
    """
    path = checked_path(table, scored_dir, benchmark)
    unknown = sorted(set(columns or ()).union(categories) - set(table.names))
    if unknown:
        raise ValueError(f"the {table.name} table has no column {unknown[0]!r}; it has {', '.join(table.names)}")
    return pq.read_table(path, columns=columns, read_dictionary=list(categories) or None).to_pandas()


def read_scored(scored_dir: Path, benchmark: str) -> pd.DataFrame:
    """The scored table of ``benchmark``: one row per run × question × round, columns :data:`SCORED_COLUMNS`."""
    return read_table(SCORED, scored_dir, benchmark)


def read_verdicts(scored_dir: Path, benchmark: str) -> pd.DataFrame:
    """The verdicts table of ``benchmark``: one row per answer × grader, columns :data:`VERDICT_COLUMNS`."""
    return read_table(VERDICTS, scored_dir, benchmark)
