"""Question answers are split into shards by run: a build remakes only the shards whose runs changed, keeps the
others' data files as they are, and writes the site a render from scratch writes.

The tiny board (runs run-a and run-b, in shards 4 and 2) is built with ``dualboard build`` (a subprocess), then a
run is added (run-c, shard 0), a run's answers changed, or a run removed; each time the data files of the other
shards must be the very files the first build wrote (same inode, same bytes), and site/ must equal a site built
from nothing (``tests/render/rebuilds.py``'s comparison).
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from dualboard.render.answer_shards import (
    CACHE_DIR,
    SHARD_VERDICT_COLUMNS,
    SHARDS,
    shard_groups,
    shard_keys,
    shard_of,
)
from dualboard.render.pages import SHOWN_VERDICT_COLUMNS
from dualboard.scored_files import About, ScoredFolder
from tests.conftest import tiny_metadata, tiny_predictions, write_run
from tests.render import rebuilds
from tests.render.rebuilds import assert_same_as_from_scratch, build, other_answers


def manifest(root: Path) -> dict[str, dict]:
    return json.loads((root / "build" / CACHE_DIR / "tiny.json").read_text("utf-8"))["items"]


def shard_files(root: Path, shard: int) -> dict[str, tuple[int, bytes]]:
    """The docs' data files of one shard: (inode, bytes) by docs path."""
    docs = root / "build" / "docs"
    paths = [path for path, _size in manifest(root)[str(shard)]["files"].values()]
    return {p: ((docs / p).stat().st_ino, (docs / p).read_bytes()) for p in paths}


# the two-run board, built once per module, and its copy per test
built = rebuilds.built
board = rebuilds.board


def test_the_tiny_runs_fall_in_different_shards():
    assert (shard_of("run-a"), shard_of("run-b"), shard_of("run-c")) == (4, 2, 0)


@pytest.mark.slow
def test_adding_a_run_keeps_the_other_shards_files_and_equals_a_full_build(board, tmp_path):
    before = {shard: shard_files(board, shard) for shard in (2, 4)}
    keys = {shard: entry["key"] for shard, entry in manifest(board).items()}
    write_run(board, "run-c", other_answers(), tiny_metadata(model="model-c"))
    build(board)
    assert {shard: shard_files(board, shard) for shard in (2, 4)} == before, "kept, not written again"
    assert {s: e["key"] for s, e in manifest(board).items() if s != "0"} == keys
    assert len(manifest(board)["0"]["files"]) == 3, "run-c answered the three questions"
    assert_same_as_from_scratch(board, tmp_path / "scratch")


@pytest.mark.slow
def test_changing_a_runs_answers_remakes_its_shard_only_and_equals_a_full_build(board, tmp_path):
    kept = shard_files(board, 4)
    old = shard_files(board, 2)
    write_run(board, "run-b", other_answers(), tiny_metadata(model="model-b"))
    build(board)
    assert shard_files(board, 4) == kept
    new = shard_files(board, 2)
    (_made,), (gone,) = set(new) - set(old), set(old) - set(new)  # run-b's answer to q1 changed, no other
    assert {p: new[p] for p in set(new) & set(old)} == {p: old[p] for p in set(new) & set(old)}
    assert not (board / "build" / "docs" / gone).exists(), "the old file left the docs"
    assert_same_as_from_scratch(board, tmp_path / "scratch")


@pytest.mark.slow
def test_renaming_a_model_remakes_its_shard(board, tmp_path):
    """The run's link text (the model's name) is in its shard's files: a new name is a new key."""
    kept = shard_files(board, 4)
    metadata = board / "submissions" / "tiny" / "run-b" / "metadata.yaml"
    metadata.write_text(metadata.read_text("utf-8").replace("model-b", "model-b2"), "utf-8")
    build(board)
    assert shard_files(board, 4) == kept and "model-b2" in json.dumps(_documents(board, 2))
    assert_same_as_from_scratch(board, tmp_path / "scratch")


@pytest.mark.slow
def test_removing_a_run_forgets_its_shard_and_equals_a_full_build(board, tmp_path):
    kept = shard_files(board, 4)
    shutil.rmtree(board / "submissions" / "tiny" / "run-b")
    build(board)
    assert set(manifest(board)) == {"4"} and shard_files(board, 4) == kept
    assert_same_as_from_scratch(board, tmp_path / "scratch")


@pytest.mark.slow
def test_a_lost_data_file_is_made_again(board, tmp_path):
    """A shard whose file left the docs folder is remade, not named by the index while missing."""
    path = next(iter(shard_files(board, 4)))
    (board / "build" / "docs" / path).unlink()
    write_run(board, "run-c", tiny_predictions(), tiny_metadata(model="model-c"))  # so that the render runs
    build(board)
    assert (board / "build" / "docs" / path).is_file() and (board / "site" / path).is_file()
    assert_same_as_from_scratch(board, tmp_path / "scratch")


def _documents(root: Path, shard: int) -> list[dict]:
    return [json.loads(gzip.decompress(data)) for _inode, data in shard_files(root, shard).values()]


def test_shard_groups_do_not_depend_on_order():
    runs = [f"run-{i}" for i in range(40)]
    groups = shard_groups(reversed(runs))
    assert sorted(r for ids in groups.values() for r in ids) == sorted(runs)
    assert all(shard_of(r) == shard for shard, ids in groups.items() for r in ids) and set(groups) <= set(range(SHARDS))


def _keys(folder: Path, graded: dict[str, str], models: dict[str, str] | None = None) -> dict[int, str]:
    """The shard keys of runs graded under the keys ``graded`` (run id → key, as ``about.json`` records them)."""
    files = ScoredFolder(folder)
    files.write_about(About(folder.name, "000001", graded))
    return shard_keys(shard_groups(graded), models or {}, [], {}, files)


def test_a_run_graded_again_or_renamed_changes_its_shards_key_only(tmp_path):
    graded = {f"run-{i}": f"key-{i}" for i in range(40)}
    keys = _keys(tmp_path / "before", graded)
    assert set(keys) == set(shard_groups(graded))
    regraded = _keys(tmp_path / "regraded", graded | {"run-5": "another key"})
    assert [s for s in keys if keys[s] != regraded[s]] == [shard_of("run-5")]
    renamed = _keys(tmp_path / "renamed", graded, {"run-7": "another model"})
    assert [s for s in keys if keys[s] != renamed[s]] == [shard_of("run-7")]


def test_the_shard_verdict_columns_are_columns_the_render_reads():
    """A worker reads SHARD_VERDICT_COLUMNS from the file, the render's process the shown ones: the same data."""
    assert set(SHARD_VERDICT_COLUMNS) <= set(SHOWN_VERDICT_COLUMNS)
