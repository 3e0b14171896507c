"""What a deleted or withdrawn run looks like in the changelog: before the next release ("Since the last
release") and in it, with the date of the commit that deleted it or the reason `dualboard remove` gave."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, TINY_BENCHMARK, TINY_QUESTIONS, write_run

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Dualboard tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "Dualboard tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}
REASON = "answers leaked into training data <img src=x onerror=alert(1)>"


def dualboard(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **GIT_ENV},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def git(root: Path, *args: str, date: str = "2026-11-01T12:00:00Z") -> None:
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr


def _raw(root: Path) -> str:
    return (root / "site" / "changelog" / "index.html").read_text("utf-8")


def _text(root: Path) -> str:
    """The changelog's visible text: tags removed, entities decoded, on one line."""
    return html.unescape(" ".join(re.sub(r"<[^>]+>", "", _raw(root)).split()))


@pytest.fixture(scope="module")
def leaderboard(tmp_path_factory) -> Path:
    """tiny with three runs, released as 0.1; then run-b deleted in a commit and run-c withdrawn with a reason."""
    root = tmp_path_factory.mktemp("tiny")  # the tiny_root fixture is function-scoped; this one is built once
    bench = root / "data" / "benchmarks" / "tiny"
    bench.mkdir(parents=True)
    (bench / "benchmark.yaml").write_text(json.dumps(TINY_BENCHMARK), "utf-8")
    (bench / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in TINY_QUESTIONS), "utf-8")
    for run in ("run-a", "run-b", "run-c"):
        write_run(root, run)
    (root / ".gitignore").write_text("build/\nsite/\n.dualboard/\nreleases/\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "three runs")
    dualboard("build", "--root", str(root), "--no-progress")
    dualboard("release", "0.1", "--root", str(root), "--date", "2026-11-01")
    git(root, "rm", "-rq", "submissions/tiny/run-b", "submissions/tiny/run-c")
    git(root, "commit", "-qm", "run-b and run-c leave", date="2026-11-20T23:30:00Z")
    dualboard("remove", "tiny/run-c", "--root", str(root), "--reason", REASON, "--date", "2026-11-21")
    return root


@pytest.mark.slow
def test_before_the_next_release_the_changelog_lists_the_removals(leaderboard):
    out = dualboard("build", "--root", str(leaderboard), "--no-progress")
    assert "1 removed" in out  # run-b; run-c already left through `dualboard remove`
    text = _text(leaderboard)
    assert "Since the last release" in text
    assert "Removed tiny/run-b: removed on 2026-11-20 (no reason given)." in text, "dated by the deleting commit (UTC)"
    assert f"Removed tiny/run-c: removed on 2026-11-21: {REASON}." in text
    assert "<img" not in _raw(leaderboard), "the reason is escaped"


@pytest.mark.slow
def test_the_next_release_says_removed_and_why(leaderboard):
    dualboard("build", "--root", str(leaderboard), "--no-progress")
    dualboard("release", "0.2", "--root", str(leaderboard), "--date", "2026-11-22")
    manifest = json.loads((leaderboard / "releases" / "0.2" / "manifest.json").read_text("utf-8"))
    assert manifest["removed"] == {
        "tiny/run-b": {"date": "2026-11-20", "reason": ""},
        "tiny/run-c": {"date": "2026-11-21", "reason": REASON},
    }
    text = _text(leaderboard)
    assert "Since the last release" not in text
    section = text[text.index("Released 2026-11-22") : text.index("Released 2026-11-01")]
    assert "Removed tiny/run-b: removed on 2026-11-20 (no reason given)." in section
    assert f"Removed tiny/run-c: removed on 2026-11-21: {REASON}." in section
    assert "<img" not in _raw(leaderboard)
