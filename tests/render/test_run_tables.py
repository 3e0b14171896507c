"""A run page's tables (its list of questions, its disagreements) are kept by a key over what they are made of: a
build remakes only the tables of runs whose rows, stored files or questions changed, keeps the others' data files as
they are, and writes the site a render from scratch writes.

The tiny board (runs run-a and run-b) is built with ``dualboard build`` (a subprocess); then a run is added, a run's
answers changed, a question edited, or a run removed; the tables' data files of each run whose inputs did not change
must be the very files the first build wrote (same inode, same bytes), and site/ must equal a site built from
nothing (``tests/render/rebuilds.py``'s comparison).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from dualboard import pipeline
from dualboard.build_cache import stat_key
from dualboard.errors import DualboardError
from dualboard.project import Project
from dualboard.render.kept_files import KeptFiles
from dualboard.render.pages import BenchmarkResults, question_slugs
from dualboard.render.run_pages import RUN_CACHE_DIR, run_pages, run_table_keys
from dualboard.render.shared_files import SharedFiles
from dualboard.scored_files import About, ScoredFolder
from dualboard.store import LocalStore
from tests.conftest import tiny_metadata, write_run
from tests.render import rebuilds
from tests.render.rebuilds import assert_same_as_from_scratch, build, other_answers

pytestmark = pytest.mark.slow  # builds a board for the module: only make test-all runs it

# the two-run board, built once per module, and its copy per test
built = rebuilds.built
board = rebuilds.board


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
    assert all("table" in entry["notes"]["categories"] for entry in manifest(board).values()), "kept with them"
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


# Keys from the scored files: any change of a run's rows changes its key, and no other run's.


@pytest.fixture(scope="module")
def analysed(built) -> tuple[BenchmarkResults, KeptFiles]:
    """The tiny board's results as the render reads them, and a manifest of kept files (none yet)."""
    project = Project(built)
    store = LocalStore(project.store_dir)
    (result,) = pipeline.analysed_results(project, store)
    return result, KeptFiles(built / "no-manifest.json")


def keys_of(analysed, folder: Path, graded: dict[str, str], choice: str = "none") -> dict[str, str]:
    """The run tables' keys of the tiny board's results, its runs graded under the keys ``graded`` and the
    answer-key columns filled under ``choice`` (as ``about.json`` records them)."""
    result, kept = analysed
    files = ScoredFolder(folder / "tiny")
    files.write_about(About("tiny", "000001", graded, choice))
    return run_table_keys(dataclasses.replace(result, files=files), question_slugs(result.benchmark))


def test_a_run_graded_again_changes_its_tables_key_only(analysed, tmp_path):
    graded = {"run-a": "key-a", "run-b": "key-b"}
    before = keys_of(analysed, tmp_path / "before", graded)
    assert set(before) == {"run-a", "run-b"}
    after = keys_of(analysed, tmp_path / "after", graded | {"run-b": "another key"})
    assert [run for run in before if before[run] != after[run]] == ["run-b"]
    chosen = keys_of(analysed, tmp_path / "chosen", graded, choice="another grader")
    assert all(before[run] != chosen[run] for run in before), "the answer-key columns of every run changed"


def test_a_scored_table_not_read_from_files_keys_no_run(analysed):
    result, kept = analysed
    result = dataclasses.replace(result, files=None)
    assert run_table_keys(result, question_slugs(result.benchmark)) == {}


def test_a_grade_while_the_render_reads_fails_the_render(analysed, tmp_path):
    """The run tables' keys are read from the scored files after their rows: a grade in between would have its
    keys remembered for tables of the first one's rows, so the render stops and keeps nothing."""
    result, kept = analysed
    folder = tmp_path / "scored" / result.name
    shutil.copytree(result.files.path, folder)
    files = ScoredFolder(folder)
    result = dataclasses.replace(result, files=files, files_status=stat_key((folder / "about.json").stat()))
    kept = KeptFiles(tmp_path / "kept.json")
    files.write_about(files.about())  # as a grade rewrites it
    with pytest.raises(DualboardError, match="replaced while the render read it"):
        run_pages(result, SharedFiles(tmp_path / "docs"), kept)
    assert not (tmp_path / "kept.json").exists()
