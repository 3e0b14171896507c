"""Hub datasets are untrusted too: a file name never escapes the local cache, and the cache stays bounded.

A dataset anyone can commit to may hold ``runs/../../x``: downloading it into
``cache/snapshots/<commit>/`` must not write outside that folder, and the
user gets a message naming the file and the fix, not huggingface_hub's
traceback. The cache keeps the KEEP_SNAPSHOTS snapshots used last.
"""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from dualboard.cli import main
from dualboard.intake.benchmark import load_benchmarks
from dualboard.store.base import StagedFile, UnsafeStorePathError
from dualboard.store.local import KEEP_SNAPSHOTS
from tests.store.conftest import TOKEN, hub_server, make_hub_store  # noqa: F401 — hub_server is a fixture

REPO = "dualboard/tiny-store"
HOSTILE_NAMES = [
    "runs/tiny/../../../../escape.txt",
    "runs/tiny/run-a/..",
    "/tmp/escape.txt",
    "runs\\..\\..\\escape.txt",
    "runs/tiny/C:escape.txt",
    "runs/tiny/a\nb.txt",
]


@pytest.fixture
def dataset(tiny_root, hub_server, tmp_path):  # noqa: F811 — the imported fixture
    """The Hub dataset with run-a, as an honest ingest wrote it."""
    store = make_hub_store(hub_server, tmp_path / "writer")
    store.ingest([tiny_root / "submissions" / "tiny" / "run-a"], load_benchmarks(tiny_root / "data"))
    return hub_server.repos[REPO]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_file_name_is_refused_before_download(dataset, hub_server, tmp_path, name):  # noqa: F811
    hostile = dataset.add_commit("main", {**dataset.resolve("main").files, name: b"pwned"}, "hostile commit")
    reader = make_hub_store(hub_server, tmp_path / "reader" / "cache")
    downloads = hub_server.calls_to("resolve")
    with pytest.raises(
        UnsafeStorePathError,
        match=rf"{REPO}@{hostile.oid[:12]}: file name .* could escape the store "
        r"folder.* rename or delete that file in the dataset",
    ):
        reader.snapshot()
    assert hub_server.calls_to("resolve") == downloads, "no file was downloaded"
    assert not [p for p in tmp_path.rglob("*escape*")], "nothing was written outside the cache"
    assert not (reader.cache_dir / "snapshots" / hostile.oid).exists()
    assert not list((reader.cache_dir / "snapshots").glob(".staging-*"))


def test_cli_reports_a_hostile_name_without_a_traceback(dataset, tiny_root, hub_server):  # noqa: F811
    dataset.add_commit("main", {**dataset.resolve("main").files, "runs/../../escape.txt": b"x"}, "hostile commit")
    env = {"HF_TOKEN": None, "DUALBOARD_HUB_ENDPOINT": hub_server.endpoint}
    result = CliRunner(env=env).invoke(main, ["grade", "--root", str(tiny_root), "--hub", REPO, "--no-progress"])
    assert result.exit_code == 1, result.output
    assert "file name 'runs/../../escape.txt' could escape the store folder" in result.output
    assert "Traceback" not in result.output


def test_commit_refuses_a_path_that_could_escape(dataset, hub_server, tmp_path):  # noqa: F811
    store = make_hub_store(hub_server, tmp_path)
    commits = hub_server.calls_to("commit")
    with pytest.raises(UnsafeStorePathError, match="commit to dualboard/tiny-store: file name 'runs/../x'"):
        store.commit([StagedFile("runs/../x", b"x")], "hostile", parent=store.head())
    assert hub_server.calls_to("commit") == commits


@pytest.mark.slow
def test_hub_cache_keeps_the_snapshots_used_last(dataset, hub_server, tmp_path):  # noqa: F811
    commits = []
    for number in range(KEEP_SNAPSHOTS + 2):
        files = {**dataset.resolve("main").files, f"runs/tiny/run-a/notes-{number}.txt": b"n"}
        commits.append(dataset.add_commit("main", files, f"commit {number}").oid)
    store = make_hub_store(hub_server, tmp_path / "reader")
    snapshots = store.cache_dir / "snapshots"
    (snapshots / ".staging-of-a-killed-download").mkdir(parents=True)
    for commit in commits:
        store.snapshot(commit)
        time.sleep(0.02)  # distinct modification times, whatever the file system's clock granularity
    assert _cached(snapshots) == set(commits[-KEEP_SNAPSHOTS:]), "the oldest were pruned"
    store.snapshot(commits[3])  # used again: kept over the others
    time.sleep(0.02)
    store.snapshot(commits[0])  # downloaded again
    assert _cached(snapshots) == {commits[0], *commits[3:]}, "the least recently used one (commits[2]) went"
    assert (snapshots / commits[0] / "runs/tiny/run-a/notes-0.txt").is_file()


def _cached(snapshots) -> set[str]:
    return {p.name for p in snapshots.iterdir()}
