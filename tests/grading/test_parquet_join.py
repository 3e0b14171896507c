"""Joining Parquet files by copying their column chunks writes the file pyarrow's writer writes, byte for byte.

``scored_files.join_scored_parts`` builds build/scored/ from each run's kept
files (:mod:`dualboard.parquet_join`); the reference is ``pq.ParquetWriter``
given the same rows, one ``write_table`` per part. Tables are drawn by
hypothesis (nulls, NaN, empty parts, long and non-ASCII text, several row
groups per part) and, through ``dualboard grade``, a real release's runs. The
footer codec (:mod:`dualboard.thrift_compact`) must give back the bytes it
read. Files a join cannot move are refused by name.
"""

from __future__ import annotations

import io
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualboard import pipeline
from dualboard.grading.by_run import grade_stored
from dualboard.grading.cache import VerdictCache, VerdictFolders
from dualboard.grading.run_cache import GRADED_DIR, RunCache
from dualboard.importers import import_autogenai
from dualboard.parquet_join import JoinedParquet, ParquetJoinError, open_sources
from dualboard.project import Project
from dualboard.scored_files import ANSWERS, COMPRESSION, SCORED, TABLES, write_scored_parts
from dualboard.store import LocalStore
from dualboard.thrift_compact import Items, Struct, ThriftError, decode, encode
from tests.importers.import_fixtures import MC_RELEASE, real_data

SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string()),
        pa.field("round", pa.int64()),
        pa.field("score", pa.float64()),
        pa.field("missing", pa.bool_()),
        pa.field("response", pa.string()),
    ]
).with_metadata({b"dualboard": b'{"table": "test"}'})
LEFT, RIGHT = ["run_id", "missing", "response"], ["round", "score"]
"""How each part's columns are split over two files (the answers and the answer-key columns, in the stage)."""

_TEXT = st.text(st.characters(codec="utf-8"), max_size=300) | st.sampled_from(["", "é\n", "x" * 5000])
_ROW = st.tuples(
    st.sampled_from(["r1", "r2", "<script>"]),
    st.integers(-(2**40), 2**40),
    st.none() | st.floats(allow_nan=True) | st.sampled_from([0.0, 100.0]),
    st.booleans(),
    st.none() | _TEXT,
)


def _table(rows: list[tuple]) -> pa.Table:
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in SCHEMA]
    return pa.table([pa.array(list(c), f.type) for c, f in zip(columns, SCHEMA, strict=True)], schema=SCHEMA)


def _direct(parts: list[pa.Table], row_group_size: int | None = None, **options) -> bytes:
    sink = io.BytesIO()
    with pq.ParquetWriter(sink, SCHEMA, compression=COMPRESSION, **options) as writer:
        for part in parts:
            writer.write_table(part, row_group_size=row_group_size)
    return sink.getvalue()


def _empty() -> bytes:
    return _direct([])


def _joined(tmp: Path, parts: list[pa.Table], **options) -> bytes:
    files = []
    for i, part in enumerate(parts):
        left, right = tmp / f"{i}.left.parquet", tmp / f"{i}.right.parquet"
        pq.write_table(part.select(LEFT), left, compression=COMPRESSION, **options)
        pq.write_table(part.select(RIGHT), right, compression=COMPRESSION, **options)
        files.append((left, right))
    with JoinedParquet(tmp / "joined.parquet", _empty()) as joined:
        for part_files in files:
            with open_sources(part_files) as sources:
                joined.add(list(sources.values()))
    return (tmp / "joined.parquet").read_bytes()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.lists(_ROW, max_size=40), max_size=4), group=st.sampled_from([None, 7]))
def test_a_join_writes_the_bytes_the_writer_writes(tmp_path_factory, parts, group) -> None:
    tmp = tmp_path_factory.mktemp("join")
    tables = [_table(rows) for rows in parts]
    options = {} if group is None else {"row_group_size": group}
    assert _joined(tmp, tables, **options) == _direct(tables, **options)
    back = pq.read_table(tmp / "joined.parquet")
    assert back.schema.equals(SCHEMA, check_metadata=True)
    expected = pa.concat_tables([_table([]), *tables]).to_pandas()
    pd.testing.assert_frame_equal(back.to_pandas(), expected)  # NaN equals NaN here, and stays apart from null


def test_large_parts_with_dictionaries_and_plain_pages_join_as_written(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    parts = [
        _table(
            [
                (
                    f"r{i}",
                    int(rng.integers(5)),
                    float(rng.random()),
                    bool(rng.random() < 0.1),
                    "z" * int(rng.integers(3000)),
                )
                for _ in range(n)
            ]
        )
        for i, n in enumerate([20_000, 0, 1, 5_000])
    ]
    assert _joined(tmp_path, parts) == _direct(parts)


def _footer(data: bytes) -> bytes:
    (length,) = struct.unpack("<I", data[-8:-4])
    return data[-8 - length : -8]


@pytest.mark.parametrize(
    "options",
    [{"compression": COMPRESSION}, {"write_page_index": True}, {"row_group_size": 3}, {"compression": "snappy"}],
)
def test_footers_decode_and_encode_to_their_own_bytes(options: dict) -> None:
    table = _table([("r1", 1, None, True, "a"), ("r2", -5, float("nan"), False, None)] * 4)
    footer = _footer(_written(table, options))
    assert encode(decode(footer)) == footer
    assert encode(_unread(decode(footer))) == footer, "every field encoded again, none copied as read"


def _unread(value: Any) -> Any:
    """``value`` with no struct's bytes kept from the decoding: encoding it writes every field."""
    if isinstance(value, Struct):
        return Struct({fid: (kind, _unread(item)) for fid, (kind, item) in value.fields.items()})
    if isinstance(value, Items):
        return Items(value.kind, [_unread(item) for item in value.values])
    return value


def _written(table: pa.Table, options: dict) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **options)
    return sink.getvalue()


def test_a_truncated_footer_is_refused() -> None:
    footer = _footer(_empty())
    with pytest.raises(ThriftError):
        decode(footer[:-3])
    with pytest.raises(ThriftError, match="after the struct"):
        decode(footer + b"\0")


def _part(tmp: Path, table: pa.Table, name: str, **options) -> Path:
    path = tmp / name
    pq.write_table(table, path, compression=COMPRESSION, **options)
    return path


def test_what_a_join_cannot_move_is_refused_by_file(tmp_path: Path) -> None:
    table = _table([("r1", 1, 2.0, True, "a")])
    right = _part(tmp_path, table.select(RIGHT), "right.parquet")
    cases = {
        "page index": (_part(tmp_path, table.select(LEFT), "indexed.parquet", write_page_index=True), "offset index"),
        "bloom filter": (
            _part(tmp_path, table.select(LEFT), "bloom.parquet", bloom_filter_options={"run_id": {}}),
            "bloom filter",
        ),
        "other type": (
            _part(tmp_path, table.select(LEFT).cast(pa.schema(LEFT_AS_BYTES)), "bytes.parquet"),
            "not of the type",
        ),
        "no such column": (_part(tmp_path, table.select(["run_id", "missing"]), "short.parquet"), "no source file has"),
    }
    (tmp_path / "not.parquet").write_bytes(b"PAR1 this is not parquet at all")
    cases["not parquet"] = (tmp_path / "not.parquet", "no footer")
    for case, (path, message) in cases.items():
        out = tmp_path / f"out-{case}.parquet"
        with pytest.raises(ParquetJoinError, match=message) as raised, JoinedParquet(out, _empty()) as joined:
            with open_sources([path, right]) as sources:
                joined.add(list(sources.values()))
        assert str(path) in str(raised.value) or message == "no source file has", case


LEFT_AS_BYTES = [("run_id", pa.string()), ("missing", pa.bool_()), ("response", pa.binary())]
"""The columns of ``LEFT`` with the response as bytes, not text: another Parquet type."""


def test_parts_of_unequal_rows_are_refused(tmp_path: Path) -> None:
    one, two = _table([("r1", 1, 2.0, True, "a")]), _table([("r1", 1, 2.0, True, "a")] * 2)
    left, right = _part(tmp_path, one.select(LEFT), "l.parquet"), _part(tmp_path, two.select(RIGHT), "r.parquet")
    with pytest.raises(ParquetJoinError, match="rows"), JoinedParquet(tmp_path / "out.parquet", _empty()) as joined:
        with open_sources([left, right]) as sources:
            joined.add(list(sources.values()))


def _written_again(graded) -> Iterator[SimpleNamespace]:
    """Each run's rows read back from its kept files, as the grade stage wrote them before it joined files."""
    for part in graded.parts():
        answers, key = (pq.read_table(path) for path in part.answers)
        full = pa.table({c: key[c] if c in key.column_names else answers[c] for c in ANSWERS.names})
        yield SimpleNamespace(
            scored=full.select(list(SCORED.names)), answers=full, verdicts=pq.read_table(*part.verdicts)
        )


def test_the_stage_joins_the_files_the_writer_writes_from_every_runs_rows(tmp_path: Path) -> None:
    root = tmp_path / "board"
    import_autogenai(real_data() / MC_RELEASE, benchmark="easy-problems-mc", dest=root)
    for command in (["ingest"], ["grade", "--no-progress", "--jobs", "2"]):
        result = subprocess.run(
            [sys.executable, "-m", "dualboard", *command, "--root", str(root)], capture_output=True, text=True
        )
        assert result.returncode == 0, result.stdout + result.stderr
    project = Project(root)
    store = LocalStore(project.store_dir)
    benchmark, run_dirs = pipeline.stored_run_dirs(store)["easy-problems-mc"]
    cache = RunCache(project.build_dir / GRADED_DIR / benchmark.name)
    graded = grade_stored(benchmark, run_dirs, cache, VerdictCache(VerdictFolders.of(store)))
    assert graded.graded == 0 and len(graded.fragments) > 1
    written = write_scored_parts(_written_again(graded), tmp_path / "again", benchmark.name, store.revision())
    for table, path in zip(TABLES, written, strict=True):
        assert table.path(project.scored_dir(), benchmark.name).read_bytes() == path.read_bytes(), table.name
