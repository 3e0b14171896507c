"""dualboard.scored_files: the three tables of build/scored/, their columns, metadata and readers."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dualboard.grading import grade_benchmark
from dualboard.release.dataset_card import dataset_card
from dualboard.scored_files import (
    ANSWERS,
    ARROW_TYPES,
    FORMAT_VERSION,
    SCORED,
    TABLES,
    VERDICTS,
    ScoredFileError,
    benchmark_names,
    read_scored,
    read_table,
    read_verdicts,
    table_revision,
    write_scored,
)
from dualboard.stats.scores import REQUIRED
from tests.grading.grading_fixtures import make_benchmark, make_run

HOSTILE = [
    '=HYPERLINK("https://x.example")',
    "<script>alert(1)</script>\nFinal answer: Paris",
    "Paris\u2028\u0000 é 🐎",
]


@pytest.fixture
def graded(mc_question, open_question):
    runs = [
        make_run(
            "alpha",
            [
                {"question_id": "horses", "response": HOSTILE[0]},
                {"question_id": "capital", "response": HOSTILE[1], "recorded": {"judge": 90}},
            ],
        ),
        make_run(
            "beta",
            [
                {"question_id": "horses", "response": ""},
                {"question_id": "capital", "response": HOSTILE[2], "recorded": {"judge": 10}},
            ],
        ),
    ]
    benchmark = make_benchmark([mc_question, open_question])
    return benchmark, runs, grade_benchmark(benchmark, runs)


def test_answers_table_is_the_scored_rows_with_the_text_as_submitted(graded, mc_question, open_question) -> None:
    _benchmark, runs, tables = graded
    assert tuple(tables.answers.columns) == ANSWERS.names
    pd.testing.assert_frame_equal(tables.answers[list(SCORED.names)], tables.scored)
    submitted = {(r.run_id, p["question_id"]): p["response"] for r in runs for p in r.predictions}
    assert {(a.run_id, a.question_id): a.response for a in tables.answers.itertuples()} == submitted
    prompts = {q["id"]: (q["prompt"], q["answer_key"]["answer"]) for q in (mc_question, open_question)}
    assert all((a.prompt, a.key_answer) == prompts[a.question_id] for a in tables.answers.itertuples())


def test_files_round_trip_with_their_revision_and_format_version(graded, tmp_path: Path) -> None:
    _benchmark, _runs, tables = graded
    paths = write_scored(tables, tmp_path, "demo", "000042")
    for table, path in zip(TABLES, paths, strict=True):
        about = json.loads(pq.read_schema(path).metadata[b"dualboard"])  # read with pyarrow, not our reader
        assert about == {
            "table": table.name,
            "format_version": FORMAT_VERSION,
            "benchmark": "demo",
            "store_revision": "000042",
        }
        assert table_revision(table, tmp_path, "demo") == "000042"
        assert pq.read_schema(path).names == list(table.names)
        assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"
    pd.testing.assert_frame_equal(read_scored(tmp_path, "demo"), tables.scored, check_dtype=False)
    pd.testing.assert_frame_equal(read_verdicts(tmp_path, "demo"), tables.verdicts, check_dtype=False)
    answers = read_table(ANSWERS, tmp_path, "demo")
    assert answers.response.tolist() == tables.answers.response.tolist()  # Parquet keeps the raw text
    assert read_table(ANSWERS, tmp_path, "demo", columns=["run_id", "response"]).columns.tolist() == [
        "run_id",
        "response",
    ]
    rows = duckdb.sql(f"SELECT value FROM parquet_kv_metadata('{paths[0]}') WHERE key = 'dualboard'").fetchall()
    assert json.loads(rows[0][0])["store_revision"] == "000042"


def test_an_empty_benchmark_keeps_every_column_type(mc_question, tmp_path: Path) -> None:
    tables = grade_benchmark(make_benchmark([mc_question]), [])
    write_scored(tables, tmp_path, "demo", "000001")
    for table in TABLES:
        schema = pq.read_schema(table.path(tmp_path, "demo"))
        assert [(f.name, f.type) for f in schema] == [(c.name, ARROW_TYPES[c.dtype]) for c in table.columns]


def test_readers_refuse_what_is_not_this_table_in_this_format(graded, tmp_path: Path) -> None:
    _benchmark, _runs, tables = graded
    with pytest.raises(ScoredFileError, match=r"no scored table there — run `dualboard grade`"):
        read_scored(tmp_path, "demo")
    tables.scored.to_parquet(tmp_path / "demo.parquet")  # as an older Dualboard wrote it: no metadata
    with pytest.raises(ScoredFileError, match="holds no dualboard table, not the scored table"):
        read_scored(tmp_path, "demo")
    write_scored(tables, tmp_path / "w", "demo", "000001")
    (tmp_path / "w" / "demo.verdicts.parquet").replace(tmp_path / "demo.parquet")
    with pytest.raises(ScoredFileError, match="holds the verdicts table, not the scored table"):
        read_scored(tmp_path, "demo")
    arrow = pa.Table.from_pandas(tables.scored, preserve_index=False).replace_schema_metadata(
        {b"dualboard": json.dumps({"table": "scored", "format_version": FORMAT_VERSION + 1}).encode()}
    )
    pq.write_table(arrow, tmp_path / "demo.parquet")
    with pytest.raises(ScoredFileError, match=f"format version {FORMAT_VERSION + 1}, this Dualboard reads"):
        read_scored(tmp_path, "demo")
    (tmp_path / "demo.parquet").unlink()
    (tmp_path / "demo.parquet").symlink_to(tmp_path / "w" / "demo.parquet")
    with pytest.raises(ScoredFileError, match="no scored table there"):
        read_scored(tmp_path, "demo")
    (tmp_path / "x.parquet").write_bytes(b"not parquet")
    with pytest.raises(ScoredFileError, match="not a readable Parquet file"):
        read_scored(tmp_path, "x")


@pytest.mark.parametrize("name", ["../evil", "demo.answers", "demo.verdicts", "Demo", ""])
def test_names_that_would_escape_or_collide_are_refused(graded, tmp_path: Path, name: str) -> None:
    with pytest.raises(ScoredFileError, match="cannot name files in build/scored"):
        write_scored(graded[2], tmp_path, name, "000001")
    assert list(tmp_path.iterdir()) == []


def test_benchmark_names_lists_scored_tables_only(graded, tmp_path: Path) -> None:
    for name in ("b", "a.v2"):
        write_scored(graded[2], tmp_path, name, "000001")
    (tmp_path / "Not A Name!.parquet").write_bytes(b"x")
    assert benchmark_names(tmp_path) == ["a.v2", "b"]
    assert benchmark_names(tmp_path / "absent") == []


def test_every_column_is_typed_and_documented_once() -> None:
    for table in TABLES:
        assert len(set(table.names)) == len(table.names), table.name
        assert all(c.dtype in ARROW_TYPES and len(c.meaning) > 10 for c in table.columns), table.name
    assert set(REQUIRED) <= set(SCORED.names), "the statistics read columns the scored table must have"
    assert set(SCORED.names) < set(ANSWERS.names) and "response" not in SCORED.names


def test_dataset_card_lists_every_column_of_every_table() -> None:
    card = dataset_card(
        {
            "version": "1.0",
            "released": "2026-01-01",
            "generator_version": "0",
            "store_revision": "1",
            "hub_dataset": "org/board",
            "benchmarks": {},
        },
        [],
    )
    for table in (SCORED, ANSWERS, VERDICTS):
        section = card.split(f"### `{table.name}/")[1].split("###")[0]
        assert [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")] == list(table.names)
    assert "hf://datasets/org/board@1.0/releases/1.0/answers/*.parquet" in card
