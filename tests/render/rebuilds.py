"""The tiny board built with ``dualboard build`` (a subprocess), and the check that a site rebuilt after a change
equals one rendered from nothing.

Dates are pinned (``SOURCE_DATE_EPOCH``): the sitemap carries the build date.
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

from dualboard.render.answer_shards import CACHE_DIR
from dualboard.render.run_pages import RUN_CACHE_DIR
from tests.conftest import tiny_metadata, tiny_predictions, write_run, write_tiny_board

ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1767225600"}  # 2026-01-01: the sitemap's dates do not depend on the day
SEARCH_INDEX = "search/search_index.json"


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
    """site/ of ``root`` equals the site that ``dualboard render`` builds from nothing on a copy of its build:
    every file byte for byte (gzip files decompressed), the search index also compared parsed, so a difference
    reads as entries."""
    shutil.copytree(root, scratch, symlinks=True)
    for generated in ("build/docs", f"build/{CACHE_DIR}", f"build/{RUN_CACHE_DIR}", "site"):
        shutil.rmtree(scratch / generated)
    dualboard(scratch, "render")
    rebuilt, full = site_files(root / "site"), site_files(scratch / "site")
    assert sorted(rebuilt) == sorted(full)
    assert json.loads(rebuilt[SEARCH_INDEX]) == json.loads(full[SEARCH_INDEX])
    different = [name for name in full if rebuilt[name] != full[name]]
    assert different == []


def other_answers() -> list[dict]:
    """run-c: wrong on q1 under both gradings, so every question's data and the leaderboard change."""
    rows = tiny_predictions()
    rows[0] = {"question_id": "q1", "round": 0, "response": "Final answer: 5", "recorded": {"judge": 0}}
    return rows


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The tiny board with two runs, built once."""
    root = write_tiny_board(tmp_path_factory.mktemp("rebuilds") / "board")
    write_run(root, "run-b", metadata=tiny_metadata(model="model-b"))
    build(root)
    return root


@pytest.fixture
def board(built, tmp_path) -> Path:
    """A copy of the built board (modification times kept)."""
    root = tmp_path / "board"
    shutil.copytree(built, root, symlinks=True)
    return root
