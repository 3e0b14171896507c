"""A run page's tables (its list of questions, its disagreements) are kept by a key over what they are made of: a
build remakes only the tables of runs whose rows, stored files or questions changed, keeps the others' data files as
they are, and writes the site a render from scratch writes.

The tiny board (runs run-a and run-b) is built with ``dualboard build`` (a subprocess); then a run is added, a run's
answers changed, a question edited, or a run removed; the tables' data files of each run whose inputs did not change
must be the very files the first build wrote (same inode, same bytes), and site/ must equal a site built from
nothing (``tests/render/test_dirty_site.py``'s comparison).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dualboard.render.run_pages import RUN_CACHE_DIR
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
