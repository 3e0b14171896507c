"""Runs can leave: deleting a run's folder removes it on the next ingest; `dualboard remove` withdraws a run
from a store fed without a checkout. Every command runs as a subprocess, as a user runs it."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dualboard.intake.benchmark import load_benchmarks
from dualboard.scored_files import read_scored
from dualboard.store import LocalStore
from dualboard.store.base import Removal, RunNotStoredError, read_removals
from dualboard.store.hub import HubStore
from tests.conftest import GIT_ENV, LABELS_HEADER, REPO, git_repository, tiny_label, tree_bytes, write_run
from tests.store.conftest import TOKEN, make_hub_store

HUB_REPO = "dualboard/tiny-store"


def dualboard(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the CLI in a fresh process (it inherits PYTHONPATH, so it runs this checkout)."""
    clean = {k: v for k, v in os.environ.items() if k != "HF_TOKEN"}
    return subprocess.run(
        [sys.executable, "-m", "dualboard", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**clean, **(env or {})},
        timeout=600,
    )


def _ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _today() -> str:
    return dt.datetime.now(dt.UTC).date().isoformat()


def _with_labels(root: Path) -> None:
    """Human labels for run-a and run-b (the labels stay in the file after run-b leaves)."""
    rows = [tiny_label(r, q, label) for r in ("run-a", "run-b") for q, label in (("q1", "pass"), ("q3", "fail"))]
    (root / "data" / "benchmarks" / "tiny" / "human_labels.csv").write_text(LABELS_HEADER + "".join(rows), "utf-8")


@pytest.mark.slow
def test_a_deleted_run_leaves_on_the_next_build_and_the_changelog_says_so(tiny_root):
    write_run(tiny_root, "run-b")
    _with_labels(tiny_root)
    first = _ok(dualboard("build", "--root", str(tiny_root), "--no-progress"))
    assert "2 added" in first
    shutil.rmtree(tiny_root / "submissions" / "tiny" / "run-b")

    second = _ok(dualboard("build", "--root", str(tiny_root), "--no-progress"))

    assert "0 added, 0 replaced, 1 unchanged, 1 removed" in second
    assert "warning: tiny: human_labels.csv: 2 label(s) of 1 run(s) not graded ('run-b') set aside" in second
    store = LocalStore(tiny_root / ".dualboard" / "store")
    assert store.revision() == "000002" and [p.name for p in store.run_dirs("tiny")] == ["run-a"]
    record = json.loads((store.snapshot() / "removed" / "tiny" / "run-b.json").read_text("utf-8"))
    assert record == {"run": "tiny/run-b", "date": _today(), "reason": "", "format": 1}
    assert "run-b" in (tiny_root / "data" / "benchmarks" / "tiny" / "human_labels.csv").read_text("utf-8")
    scored = read_scored(tiny_root / "build" / "scored", "tiny")
    assert set(scored["run_id"]) == {"run-a"}
    changelog = (tiny_root / "site" / "changelog" / "index.html").read_text("utf-8")
    assert "Since the last release" in changelog
    assert "<code>tiny/run-b</code>: removed on" in changelog and "(no reason given)" in changelog
    assert not (tiny_root / "site" / "benchmarks" / "tiny" / "runs" / "run-b" / "index.html").exists()

    again = _ok(dualboard("ingest", "--root", str(tiny_root)))
    assert "store revision 000002: 0 added, 0 replaced, 1 unchanged, 0 removed" in again


@pytest.mark.slow
def test_remove_refuses_while_the_folder_exists_then_records_the_reason(tiny_root):
    write_run(tiny_root, "run-b")
    _ok(dualboard("ingest", "--root", str(tiny_root)))
    store_dir = tiny_root / ".dualboard" / "store"

    def snapshots() -> dict[str, bytes]:  # the lock file keeps the id of the last process that held it
        return {k: v for k, v in tree_bytes(store_dir).items() if k != "ingest.lock"}

    before = snapshots()

    refused = dualboard("remove", "tiny/run-b", "--root", str(tiny_root), "--reason", "leaked")
    assert refused.returncode == 1
    assert (
        "submissions/tiny/run-b still exists" in refused.stderr and "git rm -r submissions/tiny/run-b" in refused.stderr
    )
    assert snapshots() == before, "a refused remove must leave the store as it was"

    unknown = dualboard("remove", "tiny/run-z", "--root", str(tiny_root), "--reason", "x")
    assert (
        unknown.returncode == 1
        and "holds no run 'tiny/run-z' (runs of 'tiny': tiny/run-a, tiny/run-b)" in unknown.stderr
    )
    for bad in ("../run-b", "tiny/../../etc", "tiny/Run-B", "tiny"):
        usage = dualboard("remove", bad, "--root", str(tiny_root), "--reason", "x")
        assert usage.returncode == 2 and "is not BENCHMARK/RUN_ID" in usage.stderr, bad
    bad_date = dualboard("remove", "tiny/run-b", "--root", str(tiny_root), "--reason", "x", "--date", "2026-02-30")
    assert bad_date.returncode == 2 and "YYYY-MM-DD" in bad_date.stderr
    for reason, problem in (
        ("", "0 characters"),
        (" ", "1 characters"),
        ("x" * 501, "501 characters"),
        ("two\nlines", "9 characters with control characters"),
    ):
        refused = dualboard("remove", "tiny/run-b", "--root", str(tiny_root), "--reason", reason)
        assert refused.returncode == 1 and f"--reason: {problem}" in refused.stderr, reason
    assert snapshots() == before

    shutil.rmtree(tiny_root / "submissions" / "tiny" / "run-b")
    reason = 'answers leaked into training data <script>alert("x")</script>'
    out = _ok(dualboard("remove", "tiny/run-b", "--root", str(tiny_root), "--reason", reason, "--date", "2026-11-30"))
    assert "store revision 000002: tiny/run-b removed" in out
    store = LocalStore(store_dir)
    assert [p.name for p in store.run_dirs("tiny")] == ["run-a"]
    record = json.loads((store.snapshot() / "removed" / "tiny" / "run-b.json").read_text("utf-8"))
    assert record == {"run": "tiny/run-b", "date": "2026-11-30", "reason": reason, "format": 1}
    assert "0 removed" in _ok(dualboard("ingest", "--root", str(tiny_root))), "already gone: nothing more to remove"


def test_a_run_that_comes_back_drops_its_removal_record(tiny_root):
    store = LocalStore(tiny_root / ".dualboard" / "store")
    _ok(dualboard("ingest", "--root", str(tiny_root)))
    moved = tiny_root / "elsewhere"
    shutil.move(tiny_root / "submissions" / "tiny" / "run-a", moved)
    assert "1 removed" in _ok(dualboard("ingest", "--root", str(tiny_root)))
    assert store.run_dirs() == [] and not (store.snapshot() / "benchmarks" / "tiny").exists(), (
        "a benchmark none of whose runs stay leaves with its last run"
    )
    shutil.move(moved, tiny_root / "submissions" / "tiny" / "run-a")
    assert "1 added" in _ok(dualboard("ingest", "--root", str(tiny_root)))
    assert [p.name for p in store.run_dirs()] == ["run-a"]
    assert not list((store.snapshot() / "removed").rglob("*.json"))


def _hub_files(hub_server) -> dict[str, bytes]:
    return hub_server.repos[HUB_REPO].resolve("main").files


@pytest.mark.slow
def test_remove_on_a_hub_store_without_a_checkout(tiny_root, hub_server, tmp_path):
    write_run(tiny_root, "run-b")
    hub = make_hub_store(hub_server, tmp_path / "feeder")
    hub.ingest(
        [tiny_root / "submissions" / "tiny" / r for r in ("run-a", "run-b")], load_benchmarks(tiny_root / "data")
    )
    elsewhere = tmp_path / "no-checkout"
    elsewhere.mkdir()
    args = [
        "remove",
        "tiny/run-b",
        "--root",
        str(elsewhere),
        "--hub",
        HUB_REPO,
        "--hub-endpoint",
        hub_server.endpoint,
        "--reason",
        "withdrawn by the submitter",
        "--date",
        "2026-11-30",
    ]
    before = dict(_hub_files(hub_server))

    no_token = dualboard(*args)
    assert no_token.returncode == 1 and "HF_TOKEN" in no_token.stderr
    assert _hub_files(hub_server) == before

    _ok(dualboard(*args, env={"HF_TOKEN": TOKEN}))
    files = _hub_files(hub_server)
    assert not any(p.startswith("runs/tiny/run-b/") for p in files)
    assert "runs/tiny/run-a/predictions.jsonl" in files
    assert json.loads(files["removed/tiny/run-b.json"]) == {
        "run": "tiny/run-b",
        "date": "2026-11-30",
        "reason": "withdrawn by the submitter",
        "format": 1,
    }
    assert hub_server.repos[HUB_REPO].history("main")[0].title == "Remove tiny/run-b"
    assert [
        p.name for p in HubStore(HUB_REPO, endpoint=hub_server.endpoint, cache_dir=tmp_path / "reader").run_dirs()
    ] == ["run-a"]


@pytest.mark.slow
def test_a_run_deleted_from_submissions_leaves_the_hub_store_directly_and_staged(tiny_root, hub_server):
    write_run(tiny_root, "run-b")
    hub = ["--hub", HUB_REPO, "--hub-endpoint", hub_server.endpoint]
    token = {"HF_TOKEN": TOKEN}
    _ok(dualboard("ingest", "--root", str(tiny_root), *hub, env=token))
    shutil.rmtree(tiny_root / "submissions" / "tiny" / "run-b")

    out = _ok(dualboard("ingest", "--root", str(tiny_root), *hub, env=token))
    assert "1 removed" in out
    assert not any(p.startswith("runs/tiny/run-b/") for p in _hub_files(hub_server))
    assert json.loads(_hub_files(hub_server)["removed/tiny/run-b.json"])["date"] == _today()

    # staged: the build reads without a token and keeps the removal for publish
    write_run(tiny_root, "run-c")
    _ok(dualboard("ingest", "--root", str(tiny_root), *hub, env=token))
    shutil.rmtree(tiny_root / "submissions" / "tiny" / "run-c")
    staged = _ok(dualboard("ingest", "--root", str(tiny_root), *hub, "--stage"))
    assert "1 removed" in staged
    assert "runs/tiny/run-c/predictions.jsonl" in _hub_files(hub_server), "a staged ingest only reads the Hub"
    _ok(dualboard("build", "--root", str(tiny_root), *hub, "--stage", "--no-progress"))
    _ok(dualboard("release", "r1", "--root", str(git_repository(tiny_root)), *hub, "--stage", env=GIT_ENV))
    _ok(dualboard("publish", "--root", str(tiny_root), *hub, "--release", "r1", env=token))
    files = _hub_files(hub_server)
    assert not any(p.startswith("runs/tiny/run-c/") for p in files) and "removed/tiny/run-c.json" in files
    assert "runs/tiny/run-a/predictions.jsonl" in files


@pytest.mark.slow
def test_every_store_removes_departed_runs_and_withdrawn_ones_the_same_way(tiny_root, store):
    """The contract, in process, for the local and the Hub store alike."""
    write_run(tiny_root, "run-b")
    runs = {r: tiny_root / "submissions" / "tiny" / r for r in ("run-a", "run-b")}
    benchmarks = load_benchmarks(tiny_root / "data")
    store.ingest(list(runs.values()), benchmarks)

    result = store.ingest([runs["run-a"]], benchmarks, removal_date=lambda run: "2026-11-30")
    assert (result.added, result.replaced, result.unchanged, result.removed) == (
        (),
        (),
        ("tiny/run-a",),
        ("tiny/run-b",),
    )
    assert [p.name for p in store.run_dirs()] == ["run-a"]
    assert read_removals(store.snapshot()) == [Removal("tiny/run-b", "2026-11-30")]

    revision = store.remove(Removal("tiny/run-a", "2026-12-01", "withdrawn"))
    assert store.revision() == revision and store.run_dirs() == []
    assert not (store.snapshot() / "benchmarks" / "tiny").exists()
    assert read_removals(store.snapshot()) == [
        Removal("tiny/run-a", "2026-12-01", "withdrawn"),
        Removal("tiny/run-b", "2026-11-30"),
    ]
    with pytest.raises(RunNotStoredError, match="holds no run 'tiny/run-a' \\(runs of 'tiny': none\\)"):
        store.remove(Removal("tiny/run-a", "2026-12-02", "again"))
    assert store.revision() == revision

    back = store.ingest([runs["run-b"]], benchmarks, removal_date=lambda run: "2026-12-03")
    assert back.added == ("tiny/run-b",) and back.removed == ()
    assert read_removals(store.snapshot()) == [Removal("tiny/run-a", "2026-12-01", "withdrawn")]
