"""Rebuilds redo only what changed: `dualboard build` as a subprocess, each cache proven both ways.

An unchanged input skips the stage (its line says so, and its outputs keep
their modification times); a one-byte change to a prediction, benchmark.yaml,
a site_src page or the seed redoes exactly the stages that read it, and the
result equals a build from scratch of the same inputs, read back.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dualboard.build_cache import BuildCache
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.validate import DeferredPredictions, check_runs, find_run_dirs
from dualboard.project import Project
from dualboard.scored_files import TABLES, benchmark_names, read_table
from tests.conftest import git_repository, tree_bytes, write_run

STAGES = ("ingest", "grade", "stats", "render")
INPUTS = ("data", "submissions", "site_src", "mkdocs.yml")


def build(root: Path, *args: str) -> str:
    """Run `dualboard build` on ``root``; return its output (it must succeed)."""
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", "build", "--root", str(root), "--no-progress", *args],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def skipped(output: str) -> set[str]:
    """The stages whose line says they were skipped."""
    return {
        s
        for s in STAGES
        if any(line.strip().startswith(f"{s}: unchanged, skipped (hash ") for line in output.splitlines())
    }


def outputs_mtimes(root: Path) -> dict[str, int]:
    """Modification times of everything the stages write (store snapshots, build/, site/)."""
    folders = [
        root / ".dualboard" / "store" / "snapshots",
        root / "build" / "scored",
        root / "build" / "stats",
        root / "site",
    ]
    return {str(p): p.stat().st_mtime_ns for folder in folders for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_same_build(root: Path, scratch: Path) -> None:
    """build/scored (read back), build/stats and site/ of ``root`` equal those of ``scratch``."""
    for name in benchmark_names(scratch / "build" / "scored"):
        for table in TABLES:
            built, fresh = (read_table(table, r / "build" / "scored", name) for r in (root, scratch))
            pd.testing.assert_frame_equal(built, fresh, obj=f"{name} {table.name}")
    stats, fresh_stats = tree_bytes(root / "build" / "stats"), tree_bytes(scratch / "build" / "stats")
    for tables in (stats, fresh_stats):  # it names the store by its folder, which differs
        del tables["tiny/store-source.json"]
    assert stats == fresh_stats
    site, fresh = tree_bytes(root / "site"), tree_bytes(scratch / "site")
    site = {k: v for k, v in site.items() if not k.endswith(".gz")}  # gzip headers carry the time written
    assert site == {k: v for k, v in fresh.items() if not k.endswith(".gz")}


def from_scratch(root: Path, dest: Path, *args: str) -> Path:
    """A fresh folder with the inputs of ``root``, built from nothing."""
    dest.mkdir()
    for name in INPUTS:
        if (root / name).is_dir():
            shutil.copytree(root / name, dest / name)
        elif (root / name).is_file():
            shutil.copyfile(root / name, dest / name)
    build(dest, *args)
    return dest


@pytest.fixture
def board(tiny_root: Path) -> Path:
    """The tiny board with a site_src page of its own, built once."""
    (tiny_root / "site_src").mkdir()
    (tiny_root / "site_src" / "about.md").write_text("# About\n\nA board for the rebuild tests.\n", "utf-8")
    write_run(tiny_root, "run-b")
    build(tiny_root)
    return tiny_root


@pytest.mark.slow
def test_no_change_build_skips_every_stage_and_writes_nothing(board):
    before = outputs_mtimes(board)
    output = build(board)
    assert skipped(output) == set(STAGES), output
    assert "2 of them unchanged, skipped (hash " in output
    assert outputs_mtimes(board) == before


@pytest.mark.slow
def test_force_redoes_every_stage(board):
    output = build(board, "--force")
    assert skipped(output) == {"ingest"}, output  # a store that holds every file is never rewritten, forced or not
    assert "unchanged" not in output.splitlines()[0]


@pytest.mark.slow
def test_a_deleted_page_or_table_redoes_its_stage(board, tmp_path):
    (board / "site" / "about" / "index.html").unlink()
    (board / "build" / "stats" / "tiny" / "models.csv").unlink()
    output = build(board)
    assert skipped(output) == {"ingest", "grade"}, output
    assert_same_build(board, from_scratch(board, tmp_path / "scratch"))


@pytest.mark.slow
def test_a_page_edited_by_hand_in_site_is_noticed_and_rebuilt(board, tmp_path):
    """The render's outputs are checked by listing (names, sizes, times), never read: an edit in place that
    keeps the size still changes the listing, and the render puts the page right."""
    page = board / "site" / "about" / "index.html"
    data = page.read_bytes()
    with page.open("r+b") as handle:  # in place: the same file, the same size
        handle.write(data.replace(b"rebuild tests", b"REBUILD TESTS"))
    output = build(board)
    assert "render" not in skipped(output), output
    assert page.read_bytes() == data
    assert_same_build(board, from_scratch(board, tmp_path / "scratch"))


@pytest.mark.slow
@pytest.mark.parametrize("garbage", [b"{not json", b'{"format": 1, "stages": [1], "files": {"x": 3}}'])
def test_a_corrupt_cache_means_full_work_and_the_same_result(board, tmp_path, garbage):
    Project(board).build_cache_file.write_bytes(garbage)
    output = build(board)
    assert skipped(output) == {"ingest"}, output  # the store compares by content: holding the runs is no cache
    assert_same_build(board, from_scratch(board, tmp_path / "scratch"))


def _edit(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert data.count(old) == 1, (path, old)
    path.write_bytes(data.replace(old, new))


CHANGES = {
    # what changes: (edit of the board, extra build arguments, stages that must be skipped)
    "prediction": (
        lambda r: _edit(r / "submissions/tiny/run-b/predictions.jsonl", b'"judge": 40', b'"judge": 41'),
        (),
        set(),
    ),
    "benchmark.yaml": (
        lambda r: _edit(r / "data/benchmarks/tiny/benchmark.yaml", b"Three questions.", b"Three questions!"),
        (),
        set(),
    ),
    "site_src page": (
        lambda r: _edit(r / "site_src/about.md", b"rebuild tests.", b"rebuild tests!"),
        (),
        {"ingest", "grade", "stats"},
    ),
    "seed": (lambda r: None, ("--seed", "8"), {"ingest", "grade"}),
}


@pytest.mark.slow
@pytest.mark.parametrize("change", CHANGES)
def test_a_one_byte_change_redoes_what_reads_it_and_equals_a_fresh_build(board, tmp_path, change):
    edit, args, still_skipped = CHANGES[change]
    edit(board)
    output = build(board, *args)
    assert skipped(output) == still_skipped, output
    assert_same_build(board, from_scratch(board, tmp_path / "scratch", *args))
    assert skipped(build(board, *args)) == set(STAGES)  # and the new state is remembered


def dualboard(root: Path, *args: str) -> str:
    """Run ``dualboard ARGS --root ROOT``; return its output (it must succeed)."""
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", *args, "--root", str(root)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_answers_begun_before_the_statistics_are_those_the_render_makes_itself(board, tmp_path):
    """`build` begins the answers' data files while it computes the statistics (pipeline.answers_ahead): after a
    run is added, its site is byte for byte that of the same stages run one by one, where the render makes them."""
    write_run(board, "run-c")
    twin = tmp_path / "twin"
    shutil.copytree(board, twin, symlinks=True)
    build(board)
    for stage in ("ingest", "grade", "stats", "render"):
        dualboard(twin, stage)
    assert_same_build(board, twin)


@pytest.mark.slow
def test_a_build_that_fails_after_beginning_the_answers_leaves_the_next_one_right(board, tmp_path, monkeypatch):
    """The statistics fail while the answers' data files are being made ahead: the build fails, and the next
    build's docs folder and site hold exactly those of a build from scratch (no file made ahead is left over)."""
    from dualboard import pipeline
    from dualboard.store import LocalStore

    write_run(board, "run-c")
    for stage in ("ingest", "grade"):
        dualboard(board, stage)
    project = Project(board)
    store = LocalStore(project.store_dir)
    cache = pipeline.open_cache(project)
    with pytest.raises(RuntimeError, match="the statistics failed"):
        with pipeline.answers_ahead(project, store, cache) as ahead:
            assert ahead.answers["tiny"].graders, "the answers are begun"
            raise RuntimeError("the statistics failed")
    build(board)
    scratch = from_scratch(board, tmp_path / "scratch")
    assert_same_build(board, scratch)
    assert tree_bytes(board / "build" / "docs") == tree_bytes(scratch / "build" / "docs")


@pytest.mark.slow
def test_a_committed_cache_file_is_refused_by_validate(board):
    git_repository(board)
    subprocess.run(["git", "-C", str(board), "add", "-f", ".dualboard/build-cache.json"], check=True)
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", "validate", "--root", str(board)], capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert ".dualboard/build-cache.json: path: is a generated file committed to the repository" in proc.stdout


# -- the validation cache, through the library ------------------------------------------------------------------


def _check(root: Path, cache: BuildCache):
    benchmarks = load_benchmarks(root / "data")
    return check_runs(find_run_dirs([root / "submissions"]), benchmarks, cache=cache)


def test_a_run_validated_before_is_not_read_again_and_gives_the_same_rows(tiny_root):
    cache = BuildCache(None)
    first = _check(tiny_root, cache)
    again = _check(tiny_root, cache)
    assert not isinstance(first.runs[0].predictions, DeferredPredictions)
    assert isinstance(again.runs[0].predictions, DeferredPredictions)
    assert again.runs == first.runs
    assert again.runs[0].predictions == first.runs[0].predictions


def test_an_invalid_run_is_never_remembered(tiny_root):
    bad = write_run(tiny_root, "run-bad", raw_lines=[b"{not json"])
    cache = BuildCache(None)
    for _ in range(2):
        report = _check(tiny_root, cache)
        assert any(f.file == str(bad / "predictions.jsonl") for f in report.errors)


def test_a_file_changed_after_validation_is_checked_when_read(tiny_root):
    cache = BuildCache(None)
    _check(tiny_root, cache)
    run = _check(tiny_root, cache).runs[0]
    path = tiny_root / "submissions" / "tiny" / "run-a" / "predictions.jsonl"
    path.write_bytes(path.read_bytes() + b"{not json\n")
    with pytest.raises(Exception, match="invalid JSON"):
        list(run.predictions)


def test_a_file_rewritten_with_the_same_size_and_mtime_is_hashed_again(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"one")
    cache = BuildCache(None)
    first = cache.file_digest(path)
    stamp = path.stat()
    path.write_bytes(b"two")  # same size, possibly the same mtime tick
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert cache.file_digest(path) != first
