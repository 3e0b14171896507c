"""An incremental site build (``mkdocs build --dirty``, repaired by ``mkdocs_hooks``) writes the site a full build
writes, and rebuilds only the pages whose text changed.

The tiny board is built with ``dualboard build`` (a subprocess); then a run is added, a run removed, a question
edited. Each time the build must say it was incremental, leave the pages whose text did not change as they were in
MkDocs' kept output, and leave site/ equal, file by file, to a site built from scratch from the same build (docs,
MkDocs' output and site/ deleted first): every file byte for byte (gzip files decompressed), with the search index
also compared parsed, so a difference reads as entries. Dates are pinned (``SOURCE_DATE_EPOCH``): the sitemap
carries the build date.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dualboard.render import site
from dualboard.render.answer_shards import CACHE_DIR
from dualboard.render.run_pages import RUN_CACHE_DIR
from dualboard.render.site import KEPT_SITE
from tests.conftest import tiny_metadata, tiny_predictions, write_run, write_tiny_board

ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1767225600"}  # 2026-01-01: the sitemap's dates do not depend on the day
SEARCH_INDEX = "search/search_index.json"
QUESTION_PAGES = [f"benchmarks/tiny/questions/{q}/index.html" for q in ("q1", "q2", "q3")]


def dualboard(root: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", *args, "--root", str(root)], capture_output=True, text=True, env=ENV
    )
    assert (proc.returncode == 0) == ok, proc.stdout + proc.stderr
    return proc


def build(root: Path, *, ok: bool = True) -> str:
    proc = dualboard(root, "build", "--no-progress", ok=ok)
    return proc.stdout + proc.stderr


def site_files(site: Path) -> dict[str, bytes]:
    """Every file of a site, gzip files decompressed (their header holds the time they were written)."""
    files = {}
    for path in sorted(site.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            files[path.relative_to(site).as_posix()] = gzip.decompress(data) if path.suffix == ".gz" else data
    return files


def assert_same_as_from_scratch(root: Path, scratch: Path) -> None:
    """site/ of ``root`` equals the site that ``dualboard render`` builds from nothing on a copy of its build."""
    shutil.copytree(root, scratch, symlinks=True)
    for generated in ("build/docs", f"build/{KEPT_SITE}", f"build/{CACHE_DIR}", f"build/{RUN_CACHE_DIR}", "site"):
        shutil.rmtree(scratch / generated)
    assert "(full site build)" in dualboard(scratch, "render").stdout
    incremental, full = site_files(root / "site"), site_files(scratch / "site")
    assert sorted(incremental) == sorted(full)
    assert json.loads(incremental[SEARCH_INDEX]) == json.loads(full[SEARCH_INDEX])
    different = [name for name in full if incremental[name] != full[name]]
    assert different == []


def witnesses(root: Path, folder: Path) -> dict[Path, bytes]:
    """A hard link in ``folder`` to every file of MkDocs' output, with its bytes: the files the site is made of.

    Holding them keeps each file alive (its inode cannot be reused by a new file), so a later look shows
    whether anything wrote into them.
    """
    folder.mkdir()
    kept, found = root / "build" / KEPT_SITE, {}
    for i, path in enumerate(sorted(p for p in kept.rglob("*") if p.is_file())):
        os.link(path, folder / str(i))
        found[folder / str(i)] = path.read_bytes()
    return found


def assert_no_file_changed_in_place(witnessed: dict[Path, bytes]) -> None:
    """The build unlinks what it writes again, so the files the published site is made of never change."""
    assert [link for link, data in witnessed.items() if link.read_bytes() != data] == []


def kept_times(root: Path) -> dict[str, int]:
    """Modification time of every file of MkDocs' kept output."""
    kept = root / "build" / KEPT_SITE
    return {p.relative_to(kept).as_posix(): p.stat().st_mtime_ns for p in kept.rglob("*") if p.is_file()}


def other_answers() -> list[dict]:
    """run-c: wrong on q1 under both gradings, so every question page's data and the leaderboard change."""
    rows = tiny_predictions()
    rows[0] = {"question_id": "q1", "round": 0, "response": "Final answer: 5", "recorded": {"judge": 0}}
    return rows


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The tiny board with two runs, built once (a full site build)."""
    root = write_tiny_board(tmp_path_factory.mktemp("dirty") / "board")
    write_run(root, "run-b", metadata=tiny_metadata(model="model-b"))
    assert "(full site build)" in build(root)
    return root


@pytest.fixture
def board(built, tmp_path) -> Path:
    """A copy of the built board (modification times kept, as an incremental build relies on them)."""
    root = tmp_path / "board"
    shutil.copytree(built, root, symlinks=True)
    return root


@pytest.mark.slow
def test_adding_a_run_rebuilds_few_pages_and_equals_a_full_build(board, tmp_path):
    before, published = kept_times(board), witnesses(board, tmp_path / "witnesses")
    write_run(board, "run-c", other_answers(), tiny_metadata(model="model-c"))
    assert "(incremental site build: " in build(board)
    after = kept_times(board)
    assert_no_file_changed_in_place(published)
    assert all(after[page] == before[page] for page in QUESTION_PAGES), "their text does not name the answers"
    assert after["benchmarks/tiny/index.html"] != before["benchmarks/tiny/index.html"]
    assert "benchmarks/tiny/runs/run-c/index.html" in after
    assert_same_as_from_scratch(board, tmp_path / "scratch")


@pytest.mark.slow
def test_removing_a_run_removes_its_pages_and_equals_a_full_build(board, tmp_path):
    shutil.rmtree(board / "submissions" / "tiny" / "run-b")
    assert "(incremental site build: " in build(board)
    assert not (board / "site" / "benchmarks" / "tiny" / "runs" / "run-b").exists()
    assert not (board / "build" / KEPT_SITE / "benchmarks" / "tiny" / "runs" / "run-b").exists()
    assert_same_as_from_scratch(board, tmp_path / "scratch")


@pytest.mark.slow
def test_editing_a_question_equals_a_full_build(board, tmp_path):
    questions = board / "data" / "benchmarks" / "tiny" / "questions.jsonl"
    questions.write_text(questions.read_text("utf-8").replace("Largest ocean?", "Which ocean is largest?"), "utf-8")
    before = kept_times(board)
    assert "(incremental site build: " in build(board)
    after = kept_times(board)
    assert (
        after[QUESTION_PAGES[2]] != before[QUESTION_PAGES[2]] and after[QUESTION_PAGES[0]] == before[QUESTION_PAGES[0]]
    )
    assert "Which ocean is largest&#63;" in (board / "site" / QUESTION_PAGES[2]).read_text("utf-8")  # escaped
    assert_same_as_from_scratch(board, tmp_path / "scratch")


@pytest.mark.slow
def test_a_failed_incremental_build_keeps_the_site_and_the_next_build_is_full(board, tmp_path):
    """A broken link fails --strict after MkDocs wrote part of its output: the next build starts from nothing."""
    before = site_files(board / "site")
    notes = board / "site_src" / "notes"
    notes.mkdir(parents=True)
    (notes / "extra.md").write_text("# Notes\n\nSee [the list](missing.md).\n", "utf-8")
    output = build(board, ok=False)
    assert "missing.md" in output and "the previous site/ was left unchanged" in output
    assert site_files(board / "site") == before
    (notes / "extra.md").write_text("# Notes\n\nSee [the home page](../index.md).\n", "utf-8")
    assert "(full site build)" in build(board)
    assert_same_as_from_scratch(board, tmp_path / "scratch")


@pytest.mark.slow
def test_a_changed_kept_output_or_layout_means_a_full_build(board):
    (board / "build" / KEPT_SITE / "about" / "index.html").unlink()
    write_run(board, "run-c", other_answers(), tiny_metadata(model="model-c"))  # so that the render runs
    assert "(full site build)" in build(board)
    assert (board / "site" / "about" / "index.html").is_file()
    (board / "mkdocs.yml").write_text("site_name: Another name\n", "utf-8")  # every page shows it
    assert "(full site build)" in build(board)
    assert "Another name" in (board / "site" / QUESTION_PAGES[0]).read_text("utf-8")


def inodes(folder: Path) -> dict[str, int]:
    """The inode of every file under ``folder``, by its posix path relative to it."""
    return {p.relative_to(folder).as_posix(): p.stat().st_ino for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_an_incremental_build_publishes_only_the_files_that_changed(board):
    """site/ is updated in place: the files MkDocs did not rewrite stay the very files readers had."""
    write_run(board, "run-c", other_answers(), tiny_metadata(model="model-c"))
    assert "(incremental site build: " in build(board)  # site/ is now links to MkDocs' output (the copy was not)
    before = inodes(board / "site")
    write_run(board, "run-d", tiny_predictions(), tiny_metadata(model="model-d"))
    assert "(incremental site build: " in build(board)
    after = inodes(board / "site")
    assert after == inodes(board / "build" / KEPT_SITE)  # every published file is a link to MkDocs' output
    assert all(after[page] == before[page] for page in QUESTION_PAGES)
    assert after["benchmarks/tiny/index.html"] != before["benchmarks/tiny/index.html"]
    assert not list((board / "site").rglob("*.tmp"))


def test_publishing_in_place_that_fails_midway_publishes_the_whole_tree_instead(tmp_path, monkeypatch):
    """One link refused (a full disk, a file of site/ not writable) must not leave site/ half old, half new."""
    kept, published = tmp_path / "kept", tmp_path / "site"
    for folder, text in ((kept, "new"), (published, "old")):
        for name in ("index.html", "a/index.html", "b/index.html"):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text, "utf-8")
    calls = []

    def refuse_second(source: str, target: str) -> None:
        calls.append(target)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        os.link(source, target)

    monkeypatch.setattr(site, "_link", refuse_second)
    monkeypatch.setattr(site, "_mkdocs", lambda *args, **kwargs: None)
    site.build_site(tmp_path / "mkdocs.yml", published, kept=kept, dirty=True)
    assert len(calls) > 2  # the in-place update failed at its second file and the tree was published anew
    assert site_files(published) == site_files(kept)
    assert not list(published.rglob("*.tmp"))
