"""A run page's tables (its list of questions, its disagreements) are kept by a key over what they are made of: a
build remakes only the tables of runs whose rows, stored files or questions changed, keeps the others' data files as
they are, and writes the site a render from scratch writes.

The tiny board (runs run-a and run-b) is built with ``dualboard build`` (a subprocess); then a run is added, a run's
answers changed, a question edited, or a run removed; the tables' data files of each run whose inputs did not change
must be the very files the first build wrote (same inode, same bytes), and site/ must equal a site built from
nothing (``tests/render/test_dirty_site.py``'s comparison).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from dualboard import pipeline
from dualboard.build_cache import BuildCache, stat_key
from dualboard.errors import DualboardError
from dualboard.project import Project
from dualboard.render.kept_files import KeptFiles
from dualboard.render.pages import BenchmarkResults, question_slugs
from dualboard.render.run_pages import RUN_CACHE_DIR, run_pages, run_table_keys
from dualboard.render.shared_files import SharedFiles
from dualboard.scored_files import SCORED
from dualboard.store import LocalStore
from tests.conftest import tiny_metadata, write_run
from tests.render import test_dirty_site
from tests.render.test_dirty_site import assert_same_as_from_scratch, build, other_answers

# the incremental-site tests' two-run board, built once per module, and its copy per test
built = test_dirty_site.built
board = test_dirty_site.board


def manifest(root: Path) -> dict[str, dict]:
    return json.loads((root / "build" / RUN_CACHE_DIR / "tiny.json").read_text("utf-8"))["items"]


def run_files(root: Path, run_id: str) -> dict[str, tuple[int, bytes]]:
    """The docs' data files of one run's tables: (inode, bytes) by docs path."""
    docs = root / "build" / "docs"
    paths = [path for path, _size in manifest(root)[run_id]["files"].values()]
    return {p: ((docs / p).stat().st_ino, (docs / p).read_bytes()) for p in paths}


def test_adding_a_run_keeps_the_other_runs_tables_and_equals_a_full_build(board, tmp_path):
    before = {run: run_files(board, run) for run in ("run-a", "run-b")}
    keys = {run: entry["key"] for run, entry in manifest(board).items()}
    assert set(keys) == {"run-a", "run-b"} and all(before.values())
    write_run(board, "run-c", other_answers(), tiny_metadata(model="model-c"))
    build(board)
    assert {run: run_files(board, run) for run in ("run-a", "run-b")} == before, "kept, not written again"
    assert {r: e["key"] for r, e in manifest(board).items() if r != "run-c"} == keys
    assert manifest(board)["run-c"]["files"], "run-c's tables were made"
    assert all("<table" in entry["notes"]["categories"] for entry in manifest(board).values()), "kept with them"
    assert_same_as_from_scratch(board, tmp_path / "scratch")


def test_changing_a_runs_answers_remakes_its_tables_only_and_equals_a_full_build(board, tmp_path):
    kept, old_key = run_files(board, "run-a"), manifest(board)["run-b"]["key"]
    write_run(board, "run-b", other_answers(), tiny_metadata(model="model-b"))
    build(board)
    assert run_files(board, "run-a") == kept
    assert manifest(board)["run-b"]["key"] != old_key
    assert_same_as_from_scratch(board, tmp_path / "scratch")


def test_editing_a_question_remakes_every_runs_tables(board, tmp_path):
    """A question's prompt is in every run's list of questions (its preview)."""
    keys = {run: entry["key"] for run, entry in manifest(board).items()}
    questions = board / "data" / "benchmarks" / "tiny" / "questions.jsonl"
    questions.write_text(questions.read_text("utf-8").replace("Largest ocean?", "Which ocean is largest?"), "utf-8")
    build(board)
    assert all(manifest(board)[run]["key"] != key for run, key in keys.items())
    assert_same_as_from_scratch(board, tmp_path / "scratch")


def test_removing_a_run_forgets_its_tables_and_a_lost_file_is_made_again(board, tmp_path):
    kept = run_files(board, "run-a")
    shutil.rmtree(board / "submissions" / "tiny" / "run-b")
    lost = next(iter(kept))
    (board / "build" / "docs" / lost).unlink()
    build(board)
    assert set(manifest(board)) == {"run-a"}
    assert (board / "build" / "docs" / lost).read_bytes() == kept[lost][1], "made again, the same bytes"
    assert_same_as_from_scratch(board, tmp_path / "scratch")


# Keys from the scored file's bytes: any change of a run's rows changes its key, and no other run's.


@pytest.fixture(scope="module")
def analysed(built) -> tuple[BenchmarkResults, KeptFiles]:
    """The tiny board's results as the render reads them, and run folders to key them with (no manifest)."""
    project = Project(built)
    store = LocalStore(project.store_dir)
    (result,) = pipeline.analysed_results(project, store)
    folders = {d.name: d for d in store.run_dirs(result.name)}
    return result, KeptFiles(built / "no-manifest.json", BuildCache.empty(None), folders)


def keys_of(analysed, path: Path) -> dict[str, str]:
    """The run tables' keys of the tiny board's results with its scored table read from ``path``."""
    result, kept = analysed
    result = dataclasses.replace(result, scored=pq.read_table(path).to_pandas(), scored_file=path)
    return run_table_keys(result, question_slugs(result.benchmark), kept)


def write_by_run(path: Path, table: pa.Table, together: tuple[str, ...] = ()) -> Path:
    """Write ``table`` a row group per run, as the grade stage joins them (the runs ``together`` in one)."""
    runs = sorted(set(table["run_id"].to_pylist()))
    groups = [[r] for r in runs if r not in together] + ([list(together)] if together else [])
    with pq.ParquetWriter(path, table.schema, compression="zstd") as writer:
        for group in groups:
            writer.write_table(table.filter(pc.is_in(table["run_id"], pa.array(group))))
    return path


def changed(table: pa.Table, column: str, row: int) -> pa.Table:
    """``table`` with one value of ``column`` changed, at ``row``: another text, number or flag."""
    values = table[column].to_pylist()
    old = values[row]
    values[row] = (not old) if isinstance(old, bool) else (old + 1) if isinstance(old, int | float) else f"{old}x"
    return table.set_column(table.schema.get_field_index(column), column, pa.array(values, table[column].type))


def run_b_row(table: pa.Table) -> int:
    return table["run_id"].to_pylist().index("run-b")


@pytest.fixture
def scored_table(analysed) -> pa.Table:
    return pa.Table.from_pandas(analysed[0].scored, schema=SCORED.schema, preserve_index=False)


@pytest.mark.parametrize("column", [c for c in SCORED.names if c != "run_id"])
def test_any_scored_value_of_a_run_that_changes_changes_its_key_only(analysed, scored_table, tmp_path, column):
    before = keys_of(analysed, write_by_run(tmp_path / "before.parquet", scored_table))
    assert set(before) == {"run-a", "run-b"}
    edited = changed(scored_table, column, run_b_row(scored_table))
    after = keys_of(analysed, write_by_run(tmp_path / "after.parquet", edited))
    assert [run for run in before if before[run] != after[run]] == ["run-b"]


def test_a_runs_rows_in_another_order_change_its_key(analysed, scored_table, tmp_path):
    """Its tables list its rows in order (its first disagreements)."""
    before = keys_of(analysed, write_by_run(tmp_path / "before.parquet", scored_table))
    rows = list(range(scored_table.num_rows))
    first = run_b_row(scored_table)
    rows[first], rows[first + 1] = rows[first + 1], rows[first]
    after = keys_of(analysed, write_by_run(tmp_path / "after.parquet", scored_table.take(rows)))
    assert [run for run in before if before[run] != after[run]] == ["run-b"]


def test_a_row_group_of_several_runs_counts_for_each_of_them(analysed, scored_table, tmp_path):
    """Its statistics do not say which runs it holds: a change to it changes the key of every run."""
    together = ("run-a", "run-b")
    before = keys_of(analysed, write_by_run(tmp_path / "before.parquet", scored_table, together))
    after = keys_of(
        analysed, write_by_run(tmp_path / "after.parquet", changed(scored_table, "traditional", 0), together)
    )
    assert all(before[run] != after[run] for run in before)


def test_a_new_store_revision_in_the_files_metadata_changes_no_key(analysed, scored_table, tmp_path):
    """The scored file's metadata names the store revision graded; only the rows count."""
    keys = []
    for revision in ("000001", "000002"):
        table = scored_table.replace_schema_metadata({b"dualboard": json.dumps({"revision": revision}).encode()})
        keys.append(keys_of(analysed, write_by_run(tmp_path / f"{revision}.parquet", table)))
    assert keys[0] == keys[1]


def test_a_scored_table_not_read_from_a_file_keys_no_run(analysed):
    result, kept = analysed
    result = dataclasses.replace(result, scored_file=None)
    assert run_table_keys(result, question_slugs(result.benchmark), kept) == {}


def test_a_scored_file_replaced_while_the_render_reads_it_fails_the_render(analysed, tmp_path):
    """The run tables' keys are read from the scored file after its rows: another file in between (a grade
    running meanwhile) would have its keys remembered for tables of the first one's rows, so the render stops
    and keeps nothing."""
    result, kept = analysed
    scored = tmp_path / "scored.parquet"
    shutil.copy2(result.scored_file, scored)
    result = dataclasses.replace(result, scored_file=scored, scored_status=stat_key(scored.stat()))
    kept = KeptFiles(tmp_path / "kept.json", BuildCache.empty(None), kept.folders)
    shutil.copy2(scored, tmp_path / "regraded.parquet")
    (tmp_path / "regraded.parquet").replace(scored)  # as a grade replaces it: a new file under the same name
    with pytest.raises(DualboardError, match="replaced while the render read it"):
        run_pages(result, SharedFiles(tmp_path / "docs"), kept)
    assert not (tmp_path / "kept.json").exists()
