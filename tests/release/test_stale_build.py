"""A release (and a render) refuses scored data or statistics made from another store revision.

The bug this guards: after `ingest` of run b without a `grade`, `release` wrote a manifest claiming
store revision 000002 with runs a and b over scored data that held only run a.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import tree_bytes, write_run

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def dualboard(root: Path, *args: str) -> subprocess.CompletedProcess:
    """Run the CLI as a user would, in its own process."""
    return subprocess.run(
        [sys.executable, "-m", "dualboard", *args, "--root", str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
        timeout=600,
    )


@pytest.mark.slow
def test_release_refuses_until_grade_and_stats_have_caught_up_with_the_store(tiny_root: Path) -> None:
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "board"]):
        subprocess.run(["git", "-C", str(tiny_root), *args], check=True, env={**os.environ, **GIT_ENV})
    assert dualboard(tiny_root, "build", "--no-progress").returncode == 0
    write_run(tiny_root, "run-b")
    assert dualboard(tiny_root, "ingest").returncode == 0  # the store moves on to 000002; build/ does not

    before = tree_bytes(tiny_root / "build")
    for command in (["release", "0.1", "--date", "2026-11-01"], ["render"]):
        refused = dualboard(tiny_root, *command)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "build/scored/tiny was graded from store revision 000001" in refused.stderr
        assert "the store, which is at revision 000002" in refused.stderr and "run `dualboard build`" in refused.stderr
    assert not (tiny_root / "releases" / "0.1").exists() and tree_bytes(tiny_root / "build") == before

    assert dualboard(tiny_root, "grade", "--no-progress").returncode == 0  # graded, but the stats are still old
    refused = dualboard(tiny_root, "release", "0.1", "--date", "2026-11-01")
    assert refused.returncode == 1 and "build/stats/tiny was computed from store revision 000001" in refused.stderr
    assert not (tiny_root / "releases" / "0.1").exists()

    assert dualboard(tiny_root, "stats").returncode == 0
    released = dualboard(tiny_root, "release", "0.1", "--date", "2026-11-01")
    assert released.returncode == 0, released.stdout + released.stderr
    folder = tiny_root / "releases" / "0.1"
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    assert manifest["store_revision"] == "000002" and set(manifest["benchmarks"]["tiny"]["runs"]) == {"run-a", "run-b"}
    assert set(pd.read_parquet(folder / "scored" / "tiny.parquet").run_id) == {"run-a", "run-b"}
