"""A merged pull request's links never reach the store: no secret is ingested through them.

``human_labels.csv -> /proc/self/environ`` would put the build's environment
(HF_TOKEN in CI) into the store and on the Hub; a relative link to
``.git/config`` would store the checkout's token. The ingest refuses both,
names the file and the fix, and leaves the store as it was.
"""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from dualboard.cli import main
from dualboard.errors import DualboardError
from dualboard.intake.benchmark import load_benchmarks
from dualboard.project import Project
from dualboard.safe_read import UnsafeFileError
from dualboard.store import LocalStore
from tests.conftest import tree_bytes, write_run

SECRET = "hf_secret_from_the_checkout"


def _ingest(root, store, *run_ids):
    return store.ingest([root / "submissions" / "tiny" / r for r in run_ids], load_benchmarks(root / "data"))


@pytest.fixture
def checkout(tiny_root):
    """The tiny leaderboard as a checkout whose .git/config holds a token; run-a already stored."""
    (tiny_root / ".git").mkdir()
    (tiny_root / ".git" / "config").write_text(f'[http]\n\textraheader = "AUTHORIZATION: basic {SECRET}"\n')
    store = LocalStore(Project(tiny_root).store_dir)
    _ingest(tiny_root, store, "run-a")
    return tiny_root, store


@pytest.mark.parametrize("target", ["/proc/self/environ", "../../../.git/config"])
def test_linked_human_labels_never_reach_the_store(checkout, target, monkeypatch):
    root, store = checkout
    monkeypatch.setenv("HF_TOKEN", SECRET)
    labels = root / "data" / "benchmarks" / "tiny" / "human_labels.csv"
    write_run(root, "run-b")
    benchmarks = load_benchmarks(root / "data")  # loading refuses the link too; here the store's own check is tested
    labels.symlink_to(target)
    before = tree_bytes(store.root)
    with pytest.raises(UnsafeFileError, match=r"human_labels\.csv: is a symbolic link — commit the real file"):
        store.ingest([root / "submissions" / "tiny" / r for r in ("run-a", "run-b")], benchmarks)
    assert tree_bytes(store.root) == before, "the store is unchanged"
    assert not any(SECRET.encode() in data for data in tree_bytes(store.root).values())


def test_linked_run_file_is_refused_even_when_it_validates(checkout):
    root, store = checkout
    run_b = write_run(root, "run-b")
    (run_b / "predictions.jsonl").unlink()
    (run_b / "predictions.jsonl").symlink_to("../run-a/predictions.jsonl")  # valid content, through a link
    revision = store.revision()
    with pytest.raises(
        DualboardError, match=r"run-b/predictions\.jsonl.*(symbolic )?link"
    ):  # validation may refuse it first
        _ingest(root, store, "run-b")
    assert store.revision() == revision


def test_linked_benchmark_folder_is_refused(checkout, tmp_path_factory):
    root, store = checkout
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "tiny"
    os.replace(root / "data" / "benchmarks" / "tiny", elsewhere)
    (root / "data" / "benchmarks" / "tiny").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(DualboardError, match=r"benchmarks/tiny.*(symbolic )?link"):  # loading may refuse it first
        _ingest(root, store, "run-a")


def test_cli_reports_the_link_without_a_traceback(checkout):
    root, _ = checkout
    (root / "data" / "benchmarks" / "tiny" / "human_labels.csv").symlink_to("/proc/self/environ")
    result = CliRunner().invoke(main, ["ingest", "--root", str(root)])
    assert result.exit_code == 1, result.output
    assert "human_labels.csv: path: is a symbolic link — commit the real file or folder, not a link" in result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, UnsafeFileError)


def test_staged_hub_ingest_refuses_the_link_too(checkout, tmp_path):
    from dualboard.store.hub import HubStore
    from dualboard.store.staged import StagedHubStore

    root, _ = checkout
    benchmarks = load_benchmarks(root / "data")  # loading refuses the link too; here the store's own check is tested
    (root / "data" / "benchmarks" / "tiny" / "human_labels.csv").symlink_to("../../../.git/config")
    # the Hub is never reached: the files are read (and refused) before anything is compared
    staged = StagedHubStore(HubStore("o/n", endpoint="http://127.0.0.1:9", cache_dir=tmp_path / "c"), tmp_path / "p")
    with pytest.raises(UnsafeFileError, match="human_labels.csv: is a symbolic link"):
        staged.ingest([root / "submissions" / "tiny" / "run-a"], benchmarks)
    assert not (tmp_path / "p").exists()
