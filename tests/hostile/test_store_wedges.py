"""The store never wedges: killed, concurrent and failed ingests leave it usable.

- A kill between ``os.replace(staging, N)`` and the swap of ``current`` leaves
  snapshot N behind; the next ingest recovers instead of failing "Directory
  not empty".
- Ingests take turns through a lock file: the second waits, or says why it
  gave up; no ingest's staging folder is pruned by another.
- A full disk: the failed ingest removes its staging folder and says what
  happened, without a traceback.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dualboard import cli
from dualboard.intake.benchmark import load_benchmarks
from dualboard.project import Project
from dualboard.store import LocalStore, local
from dualboard.store.lock import StoreBusyError, exclusive
from dualboard.store.tree import StoreWriteError
from tests.conftest import REPO, tree_bytes, write_run

KILL_AT_SWAP = textwrap.dedent("""
    import os, signal, sys
    import dualboard.store.local as local
    local._swap_symlink = lambda link, target: os.kill(os.getpid(), signal.SIGKILL)  # die right before the swap
    from dualboard.cli import main
    main(["ingest", "--root", sys.argv[1]])
""")


def _ingest(root, store, *run_ids):
    return store.ingest([root / "submissions" / "tiny" / r for r in run_ids], load_benchmarks(root / "data"))


def _leftovers(store: LocalStore) -> list[str]:
    return sorted(p.name for p in (store.root / "snapshots").iterdir() if p.name.startswith("."))


@pytest.fixture
def stored(tiny_root):
    """The tiny leaderboard with run-a stored (revision 000001) and run-b waiting in submissions/."""
    store = LocalStore(Project(tiny_root).store_dir)
    _ingest(tiny_root, store, "run-a")
    write_run(tiny_root, "run-b")
    return tiny_root, store


def test_ingest_after_a_kill_between_rename_and_swap_recovers(stored):
    root, store = stored
    killed = subprocess.run(
        [sys.executable, "-c", KILL_AT_SWAP, str(root)],
        cwd=REPO,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    assert store.revision() == "000001" and (store.root / "snapshots" / "000002").is_dir(), "an orphan snapshot"
    result = _ingest(root, store, "run-a", "run-b")
    assert result.revision == "000002" and result.added == ("tiny/run-b",)
    assert [p.name for p in store.run_dirs("tiny")] == ["run-a", "run-b"]
    assert _leftovers(store) == []


def test_second_ingest_waits_for_the_lock_then_says_why_it_gave_up(stored):
    root, store = stored
    before = tree_bytes(store.snapshot())
    busy = rf"another ingest \(process {os.getpid()}\) has held the store for over 0\.2 s; nothing was changed — wait"
    with exclusive(store.root / local.LOCK, what="ingest"), pytest.raises(StoreBusyError, match=busy):
        _ingest(root, LocalStore(store.root, lock_timeout_s=0.2), "run-a", "run-b")
    assert tree_bytes(store.snapshot()) == before and store.revision() == "000001"
    released: list[float] = []
    holding = threading.Event()
    holder = threading.Thread(target=_hold, args=(store.root / local.LOCK, 0.5, holding, released))
    holder.start()
    holding.wait()
    assert _ingest(root, store, "run-a", "run-b").added == ("tiny/run-b",), "the waiting ingest goes ahead afterwards"
    assert released and time.monotonic() > released[0], "it committed only after the other released the lock"
    holder.join()


def _hold(lock: Path, seconds: float, holding: threading.Event, released: list[float]) -> None:
    with exclusive(lock, what="ingest"):
        holding.set()
        time.sleep(seconds)
        released.append(time.monotonic())


def test_concurrent_ingests_all_land_and_keep_each_others_staging(stored, monkeypatch):
    root, store = stored
    for run_id in ("run-c", "run-d", "run-e"):
        write_run(root, run_id)
    slow_build = local.build_tree

    def build_slowly(*args):
        slow_build(*args)
        time.sleep(0.2)  # a wide window in which another ingest could prune this staging folder

    monkeypatch.setattr(local, "build_tree", build_slowly)
    errors: list[BaseException] = []
    threads = [
        threading.Thread(target=_ingest_catching, args=(root, run_id, errors))
        for run_id in ("run-b", "run-c", "run-d", "run-e")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [p.name for p in store.run_dirs("tiny")] == ["run-a", "run-b", "run-c", "run-d", "run-e"]
    assert store.revision() == "000005" and _leftovers(store) == []


def _ingest_catching(root: Path, run_id: str, errors: list[BaseException]) -> None:
    try:
        _ingest(root, LocalStore(Project(root).store_dir), run_id)
    except BaseException as exc:  # noqa: BLE001 — reported by the test
        errors.append(exc)


def _full_disk(*args, **kwargs):
    """A disk that refuses to flush what was written: where a full disk shows, with delayed allocation."""
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("where", ["write", "swap"])
def test_full_disk_removes_staging_and_says_what_happened(stored, monkeypatch, where):
    root, store = stored
    before = tree_bytes(store.root)
    if where == "write":
        monkeypatch.setattr(os, "fsync", _full_disk)
    else:
        monkeypatch.setattr(local, "_swap_symlink", _full_disk)
    with pytest.raises(StoreWriteError, match=r"No space left on device\); nothing was changed .* free disk space"):
        _ingest(root, store, "run-a", "run-b")
    monkeypatch.undo()
    assert tree_bytes(store.root) == before, "no staging folder, no orphan snapshot, current unchanged"
    assert _ingest(root, store, "run-a", "run-b").revision == "000002", "the next ingest works"


class ImpatientLocalStore(LocalStore):
    """The local store the CLI makes, waiting only 0.1 s for another ingest's lock."""

    def __init__(self, root):
        super().__init__(root, lock_timeout_s=0.1)


def test_cli_reports_full_disk_and_busy_store_without_a_traceback(stored, monkeypatch):
    root, store = stored
    monkeypatch.setattr(os, "fsync", _full_disk)
    full = CliRunner().invoke(cli.main, ["ingest", "--root", str(root)])
    monkeypatch.undo()
    assert full.exit_code == 1 and "No space left on device" in full.output and "free disk space" in full.output
    monkeypatch.setattr(cli, "LocalStore", ImpatientLocalStore)
    with exclusive(store.root / local.LOCK, what="ingest"):
        busy = CliRunner().invoke(cli.main, ["ingest", "--root", str(root)])
    assert busy.exit_code == 1 and "another ingest" in busy.output and "run the command again" in busy.output
    assert "Traceback" not in full.output + busy.output


def test_full_disk_while_staging_for_the_hub_leaves_no_overlay(tiny_root, tmp_path, monkeypatch):
    from dualboard.store.hub import HubStore
    from dualboard.store.staged import StagedHubStore

    hub = HubStore("o/n", endpoint="http://127.0.0.1:9", cache_dir=tmp_path / "cache")
    monkeypatch.setattr(hub, "base_commit", lambda: "0" * 40)  # a dataset not created yet: nothing to download
    staged = StagedHubStore(hub, tmp_path / "pending")
    monkeypatch.setattr(os, "fsync", _full_disk)
    with pytest.raises(StoreWriteError, match="No space left on device"):
        _ingest(tiny_root, staged, "run-a")
    assert not (tmp_path / "pending").exists() and list(tmp_path.glob(".pending*")) == []
