"""dualboard.scored_files: the three tables of build/scored/, a Parquet file per run each; columns and readers."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd
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
    store_revision,
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


def test_files_round_trip_a_file_per_run_and_publish_with_their_revision(graded, tmp_path: Path) -> None:
    _benchmark, _runs, tables = graded
    folder = write_scored(tables, tmp_path, "demo", "000042")
    assert store_revision(tmp_path, "demo") == "000042"
    for table in TABLES:
        files = sorted(p.name for p in (tmp_path / "demo" / table.name).iterdir())
        assert files == ["alpha.parquet", "beta.parquet"], table.name
        path = tmp_path / "demo" / table.name / "alpha.parquet"
        assert pq.read_schema(path).names == list(table.stored_names)  # read with pyarrow, not our reader
        assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"
        published = folder.published(table)
        assert published.column_names == list(table.names)
        about = json.loads(published.schema.metadata[b"dualboard"])
        assert about == {
            "table": table.name,
            "format_version": FORMAT_VERSION,
            "benchmark": "demo",
            "store_revision": "000042",
        }
    pd.testing.assert_frame_equal(read_scored(tmp_path, "demo"), tables.scored, check_dtype=False)
    pd.testing.assert_frame_equal(read_verdicts(tmp_path, "demo"), tables.verdicts, check_dtype=False)
    pd.testing.assert_frame_equal(folder.published(ANSWERS).to_pandas(), tables.answers, check_dtype=False)
    answers = read_table(ANSWERS, tmp_path, "demo")
    assert answers.response.tolist() == tables.answers.response.tolist()  # Parquet keeps the raw text
    assert read_table(ANSWERS, tmp_path, "demo", columns=["run_id", "response"]).columns.tolist() == [
        "run_id",
        "response",
    ]
    with pytest.raises(ValueError, match="no column 'answer_key'"):  # the scored files hold it
        read_table(ANSWERS, tmp_path, "demo", columns=["answer_key"])
    glob = (tmp_path / "demo" / "scored" / "*.parquet").as_posix()
    assert duckdb.sql(f"SELECT count(*) FROM '{glob}'").fetchall() == [(len(tables.scored),)]


def test_a_folder_with_no_runs_reads_as_empty_tables_of_every_column_type(mc_question, tmp_path: Path) -> None:
    tables = grade_benchmark(make_benchmark([mc_question]), [])
    folder = write_scored(tables, tmp_path, "demo", "000001")
    for table in TABLES:
        published = folder.published(table)
        assert published.num_rows == 0
        assert [(f.name, f.type) for f in published.schema] == [(c.name, ARROW_TYPES[c.dtype]) for c in table.columns]


def test_readers_refuse_a_folder_that_is_missing_half_written_or_of_another_format(graded, tmp_path: Path) -> None:
    _benchmark, _runs, tables = graded
    with pytest.raises(ScoredFileError, match=r"no graded benchmark there — run `dualboard grade`"):
        read_scored(tmp_path, "demo")
    folder = write_scored(tables, tmp_path, "demo", "000001")
    about = json.loads((folder.path / "about.json").read_text("utf-8"))
    (folder.path / "about.json").write_text(json.dumps(about | {"complete": False}), "utf-8")
    with pytest.raises(ScoredFileError, match="a grade stopped while writing it"):
        read_scored(tmp_path, "demo")
    (folder.path / "about.json").write_text(json.dumps(about | {"format_version": FORMAT_VERSION + 1}), "utf-8")
    with pytest.raises(ScoredFileError, match=f"format version {FORMAT_VERSION + 1}, this Dualboard reads"):
        read_scored(tmp_path, "demo")
    (folder.path / "about.json").write_text(json.dumps(about), "utf-8")
    (folder.path / "scored" / "beta.parquet").unlink()
    (folder.path / "scored" / "beta.parquet").symlink_to(folder.path / "scored" / "alpha.parquet")
    with pytest.raises(ScoredFileError, match=r"beta.parquet: missing"):
        read_scored(tmp_path, "demo")
    (folder.path / "about.json").unlink()
    (folder.path / "about.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(ScoredFileError, match="no graded benchmark there"):
        read_scored(tmp_path, "demo")


@pytest.mark.parametrize("name", ["../evil", "Demo", "", "a/b"])
def test_names_that_would_escape_are_refused(graded, tmp_path: Path, name: str) -> None:
    with pytest.raises(ScoredFileError, match="cannot name a folder in build/scored"):
        write_scored(graded[2], tmp_path, name, "000001")
    assert list(tmp_path.iterdir()) == []


def test_benchmark_names_lists_scored_tables_only(graded, tmp_path: Path) -> None:
    for name in ("b", "a.v2", "c.answers"):
        write_scored(graded[2], tmp_path, name, "000001")
    (tmp_path / "Not A Name!").mkdir()
    (tmp_path / "Not A Name!" / "about.json").write_text("{}", "utf-8")
    (tmp_path / "old.parquet").write_bytes(b"x")  # a file of an earlier layout
    assert benchmark_names(tmp_path) == ["a.v2", "b", "c.answers"]
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


def test_a_file_damaged_inside_says_how_to_grade_it_anew(graded, tmp_path: Path) -> None:
    folder = write_scored(graded[2], tmp_path, "demo", "000001")
    path = folder.run_file(SCORED, "alpha")
    data = bytearray(path.read_bytes())
    data[4:200] = bytes(196)  # the first pages zeroed; the footer intact
    path.write_bytes(bytes(data))
    with pytest.raises(ScoredFileError, match=r"scored: a file cannot be read .* `dualboard build --force`"):
        read_scored(tmp_path, "demo")
