"""HubStore against the test Hub: conflicts, retries, lost answers, tokens, tags, pinned reads."""

from __future__ import annotations

import pytest

from dualboard.errors import DualboardError, StoreConflictError
from dualboard.intake.benchmark import load_benchmarks
from dualboard.store.base import StagedFile
from dualboard.store.hub import HubUnavailableError
from tests.conftest import tiny_predictions, write_run
from tests.store.conftest import make_hub_store

REPO = "dualboard/tiny-store"


def _ingest(root, store, *run_ids):
    return store.ingest([root / "submissions" / "tiny" / r for r in run_ids], load_benchmarks(root / "data"))


def _head(server):
    return server.repos[REPO].branches["main"]


@pytest.mark.slow
def test_one_commit_per_ingest_with_parent_commit(tiny_root, hub_server, tmp_path):
    store = make_hub_store(hub_server, tmp_path)
    _ingest(tiny_root, store, "run-a")
    write_run(tiny_root, "run-b")
    write_run(tiny_root, "run-c")
    commits_before = hub_server.calls_to("commit")
    result = _ingest(tiny_root, store, "run-a", "run-b", "run-c")
    assert hub_server.calls_to("commit") == commits_before + 1
    assert result.added == ("tiny/run-b", "tiny/run-c") and result.unchanged == ("tiny/run-a",)
    history = hub_server.repos[REPO].history("main")
    assert [c.title for c in history] == [
        "Ingest 2 new, 0 replaced run(s)",
        "Ingest 1 new, 0 replaced run(s)",
        "initial commit",
    ]
    assert set(history[0].files) - set(history[1].files) == {
        f"runs/tiny/run-{x}/{f}" for x in "bc" for f in ("metadata.yaml", "predictions.jsonl")
    }


def test_concurrent_change_is_detected_not_overwritten(tiny_root, hub_server, tmp_path):
    store = make_hub_store(hub_server, tmp_path)
    first = _ingest(tiny_root, store, "run-a")
    repo = hub_server.repos[REPO]
    someone_else = repo.add_commit(
        "main", {**repo.resolve("main").files, "runs/tiny/other/metadata.yaml": b"x"}, "other ingest"
    )
    with pytest.raises(StoreConflictError, match="main moved past .* run the ingest again"):
        store.commit([StagedFile("runs/tiny/run-a/notes.txt", b"late")], "late ingest", parent=first.revision)
    assert _head(hub_server) == someone_else.oid
    assert "runs/tiny/run-a/notes.txt" not in repo.resolve("main").files


@pytest.mark.slow
def test_ingest_racing_another_commit_raises_conflict(tiny_root, hub_server, tmp_path, monkeypatch):
    store = make_hub_store(hub_server, tmp_path)
    _ingest(tiny_root, store, "run-a")
    write_run(tiny_root, "run-b")
    repo = hub_server.repos[REPO]
    real_snapshot = store.snapshot

    def snapshot_then_someone_commits(revision=None):
        path = real_snapshot(revision)
        repo.add_commit("main", {**repo.resolve("main").files, "runs/tiny/zz/metadata.yaml": b"z"}, "racing ingest")
        return path

    monkeypatch.setattr(store, "snapshot", snapshot_then_someone_commits)
    with pytest.raises(StoreConflictError):
        _ingest(tiny_root, store, "run-b")
    assert "runs/tiny/run-b/metadata.yaml" not in repo.resolve("main").files


def test_commit_failing_twice_is_retried_with_backoff(tiny_root, hub_server, tmp_path):
    waits = []
    store = make_hub_store(hub_server, tmp_path, sleep=waits.append)
    hub_server.fail("commit", 500, times=2)
    result = _ingest(tiny_root, store, "run-a")
    assert hub_server.calls_to("commit") == 3
    assert waits == [0.01, 0.02], "exponential backoff"
    assert store.retried_calls() == ["commit: HTTP 500, retrying in 0.01 s", "commit: HTTP 500, retrying in 0.02 s"]
    assert result.revision == _head(hub_server)
    assert len(hub_server.repos[REPO].history("main")) == 2, "applied exactly once"


@pytest.mark.slow
def test_commit_always_failing_is_reported_and_changes_nothing(tiny_root, hub_server, tmp_path):
    store = make_hub_store(hub_server, tmp_path, sleep=lambda s: None)
    first = _ingest(tiny_root, store, "run-a")
    files_before = dict(hub_server.repos[REPO].resolve("main").files)
    write_run(tiny_root, "run-b")
    hub_server.fail("commit", 503, times=-1)
    with pytest.raises(
        HubUnavailableError,
        match=r"commit failed 4 times \(HTTP 503, HTTP 503, HTTP 503, HTTP 503\); nothing was changed",
    ):
        _ingest(tiny_root, store, "run-b")
    assert _head(hub_server) == first.revision
    assert hub_server.repos[REPO].resolve("main").files == files_before


def test_rate_limit_429_is_retried(tiny_root, hub_server, tmp_path):
    store = make_hub_store(hub_server, tmp_path, sleep=lambda s: None)
    hub_server.fail("commit", 429, times=1)
    _ingest(tiny_root, store, "run-a")
    assert store.retried_calls() == ["commit: HTTP 429, retrying in 0.01 s"]


def test_lost_answer_is_recognised_not_applied_twice(tiny_root, hub_server, tmp_path):
    store = make_hub_store(hub_server, tmp_path, sleep=lambda s: None)
    hub_server.fail("commit", 502, times=1, after_apply=True)
    result = _ingest(tiny_root, store, "run-a")
    history = hub_server.repos[REPO].history("main")
    assert len(history) == 2, "the retry must not add a second commit"
    assert result.revision == history[0].oid


@pytest.mark.slow
def test_failing_reads_are_retried_and_snapshots_complete(tiny_root, hub_server, tmp_path):
    store = make_hub_store(hub_server, tmp_path, sleep=lambda s: None)
    _ingest(tiny_root, store, "run-a")
    fresh = make_hub_store(hub_server, tmp_path / "other", sleep=lambda s: None)
    hub_server.fail("repo_info", 503, times=2)
    hub_server.fail("resolve", 500, times=1)  # huggingface_hub retries file requests itself
    snapshot = fresh.snapshot()
    assert fresh.retried_calls() == [
        "resolve main: HTTP 503, retrying in 0.01 s",
        "resolve main: HTTP 503, retrying in 0.02 s",
    ]
    assert sorted(str(p.relative_to(snapshot)) for p in snapshot.rglob("*") if p.is_file()) == [
        "benchmarks/tiny/benchmark.yaml",
        "benchmarks/tiny/questions.jsonl",
        "runs/tiny/run-a/metadata.yaml",
        "runs/tiny/run-a/predictions.jsonl",
    ]
    assert not list(snapshot.parent.glob(".staging-*"))


@pytest.mark.slow
def test_token_comes_from_hf_token_env(tiny_root, hub_server, tmp_path, monkeypatch):
    from dualboard.store.hub import HubStore

    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    store = HubStore(REPO, endpoint=hub_server.endpoint, cache_dir=tmp_path / "c")
    assert _ingest(tiny_root, store, "run-a").added == ("tiny/run-a",)
    monkeypatch.setenv("HF_TOKEN", "wrong")
    write_run(tiny_root, "run-b")
    with pytest.raises(DualboardError, match="set HF_TOKEN to a token with write access"):
        _ingest(tiny_root, HubStore(REPO, endpoint=hub_server.endpoint, cache_dir=tmp_path / "d"), "run-b")


@pytest.mark.slow
def test_tag_and_pinned_revision(tiny_root, hub_server, tmp_path):
    store = make_hub_store(hub_server, tmp_path)
    first = _ingest(tiny_root, store, "run-a")
    assert store.tag("v1") == first.revision
    assert hub_server.repos[REPO].tags == {"v1": first.revision}
    with pytest.raises(DualboardError, match="tag 'v1' already exists"):
        store.tag("v1")
    preds = tiny_predictions()
    preds[0]["response"] = "changed"
    write_run(tiny_root, "run-a", preds)
    _ingest(tiny_root, store, "run-a")
    pinned = make_hub_store(hub_server, tmp_path / "pinned", revision="v1")
    assert pinned.revision() == first.revision
    assert b"changed" not in (pinned.snapshot() / "runs/tiny/run-a/predictions.jsonl").read_bytes()


def test_missing_dataset_says_how_to_create_it(hub_server, tmp_path):
    store = make_hub_store(hub_server, tmp_path)
    with pytest.raises(DualboardError, match="no dataset 'dualboard/tiny-store'.*dualboard ingest --hub"):
        store.snapshot()


def test_cli_ingest_to_the_hub_reports_retries(tiny_root, hub_server, monkeypatch):
    from click.testing import CliRunner

    from dualboard.cli import main
    from dualboard.store import hub

    waits = []
    monkeypatch.setattr(hub.time, "sleep", waits.append)
    env = {"HF_TOKEN": "hf_test_token", "DUALBOARD_HUB_ENDPOINT": hub_server.endpoint}
    hub_server.fail("commit", 500, times=1)
    result = CliRunner(env=env).invoke(main, ["ingest", "--root", str(tiny_root), "--hub", REPO])
    assert result.exit_code == 0, result.output
    assert "1 added" in result.stdout and "retried: commit: HTTP 500" in result.stderr
    assert "Fetching" not in result.output, "no progress bars"
    assert waits == [2.0], "the default backoff starts at 2 s"
    assert CliRunner(env=env).invoke(main, ["ingest", "--root", str(tiny_root), "--hub", "not a repo"]).exit_code == 2


@pytest.mark.slow
def test_cli_staged_ingest_reports_the_retries_of_its_hub_reads(tiny_root, hub_server, monkeypatch):
    """A staged store reads through its HubStore: the retries of those reads reach the report too."""
    from click.testing import CliRunner

    from dualboard.cli import main
    from dualboard.store import hub

    monkeypatch.setattr(hub.time, "sleep", lambda seconds: None)
    env = {"HF_TOKEN": "hf_test_token", "DUALBOARD_HUB_ENDPOINT": hub_server.endpoint}
    assert CliRunner(env=env).invoke(main, ["ingest", "--root", str(tiny_root), "--hub", REPO]).exit_code == 0
    write_run(tiny_root, "run-b")
    hub_server.fail("repo_info", 503, times=1)
    staged = CliRunner(env={**env, "HF_TOKEN": None}).invoke(
        main, ["ingest", "--root", str(tiny_root), "--hub", REPO, "--stage"]
    )
    assert staged.exit_code == 0, staged.output
    assert "1 added" in staged.stdout and "retried: resolve main: HTTP 503" in staged.stderr


def test_cli_reads_a_pinned_hub_revision(tiny_root, hub_server, tmp_path):
    from click.testing import CliRunner

    from dualboard.cli import _choose_store, main
    from dualboard.project import Project

    env = {"HF_TOKEN": "hf_test_token", "DUALBOARD_HUB_ENDPOINT": hub_server.endpoint}
    assert CliRunner(env=env).invoke(main, ["ingest", "--root", str(tiny_root), "--hub", REPO]).exit_code == 0
    first = _head(hub_server)
    store = _choose_store(Project(tiny_root), REPO, hub_server.endpoint, first[:12])
    assert store.revision() == first
    usage = CliRunner().invoke(main, ["ingest", "--root", str(tiny_root), "--hub-revision", "v1"])
    assert usage.exit_code == 2 and "--hub-revision needs --hub" in usage.output
