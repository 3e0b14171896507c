"""Ingest stores the bytes validation read, or nothing: a file rewritten, added or grown after its validation
(while the ingest waits for the store's lock, say) is refused with a message that says what to do, and the
store is left as it was."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import pytest

from dualboard.build_cache import BuildCache
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.validate import find_run_dirs, load_runs
from dualboard.store import LocalStore, local
from dualboard.store.base import CopiedFile, Expected, SourceChangedError, expected_files, staged_files
from dualboard.store.lock import exclusive
from dualboard.store.tree import build_tree
from tests.conftest import tiny_predictions, tree_bytes, write_run

REFUSED = r"changed after it was validated .* nothing was stored — do not edit submissions while a build runs"


def _swapped_predictions() -> list[dict]:
    """Valid predictions other than those validated: what an editor saves meanwhile."""
    rows = tiny_predictions()
    rows[0]["response"] = "Final answer: 5"
    return rows


def _stored(root: Path) -> LocalStore:
    """A store holding run-a, the tiny board's run."""
    store = LocalStore(root / "store")
    store.ingest([root / "submissions" / "tiny" / "run-a"], load_benchmarks(root / "data"))
    return store


def _swap_while_waiting(action):
    """``exclusive`` that first does ``action``: the file changes while the ingest waits for the lock."""

    def waiting(*args, **kwargs):
        action()
        return exclusive(*args, **kwargs)

    return waiting


@pytest.mark.parametrize("cached", [False, True], ids=["no cache", "build cache"])
def test_predictions_swapped_while_waiting_for_the_lock_are_refused(tiny_root, tmp_path, cached):
    store = _stored(tiny_root)
    before = tree_bytes(store.root)
    run = write_run(tiny_root, "run-b")
    cache = BuildCache(tmp_path / "cache.json") if cached else None
    swap = _swap_while_waiting(lambda: write_run(tiny_root, "run-b", _swapped_predictions()))
    with mock.patch.object(local, "exclusive", swap), pytest.raises(SourceChangedError, match=REFUSED) as info:
        store.ingest(find_run_dirs([tiny_root / "submissions"]), load_benchmarks(tiny_root / "data"), cache=cache)
    assert str(run / "predictions.jsonl") in str(info.value)
    assert tree_bytes(store.root) == before


def test_a_file_added_after_validation_is_refused(tiny_root):
    store = _stored(tiny_root)
    before = tree_bytes(store.root)
    run = write_run(tiny_root, "run-b")
    add = _swap_while_waiting(lambda: (run / "provenance.jsonl").write_bytes(b'{"source": "elsewhere"}\n'))
    with mock.patch.object(local, "exclusive", add), pytest.raises(SourceChangedError, match=REFUSED) as info:
        store.ingest(find_run_dirs([tiny_root / "submissions"]), load_benchmarks(tiny_root / "data"))
    assert "run-b/provenance.jsonl" in str(info.value)
    assert tree_bytes(store.root) == before


def test_a_stored_file_is_the_validated_one_even_when_its_source_changed_since(tiny_root):
    """An unchanged run whose file is rewritten after validation keeps the stored (validated) bytes: nothing
    is copied, nothing unvalidated enters the store."""
    store = _stored(tiny_root)
    stored = store.snapshot() / "runs/tiny/run-a/predictions.jsonl"
    validated = stored.read_bytes()
    swap = _swap_while_waiting(lambda: write_run(tiny_root, "run-a", _swapped_predictions()))
    with mock.patch.object(local, "exclusive", swap):
        result = store.ingest(find_run_dirs([tiny_root / "submissions"]), load_benchmarks(tiny_root / "data"))
    assert result.unchanged == ("tiny/run-a",) and result.skipped
    assert (store.snapshot() / "runs/tiny/run-a/predictions.jsonl").read_bytes() == validated


def test_a_copy_past_the_validated_limit_is_refused(tmp_path):
    """A file that grew past the limit validation applies is refused as the copy passes it, whatever its digest."""
    source = tmp_path / "submissions" / "tiny" / "run-a" / "predictions.jsonl"
    source.parent.mkdir(parents=True)
    source.write_bytes(b"x" * 100)
    copy = CopiedFile("runs/tiny/run-a/predictions.jsonl", source, Expected("0" * 64, 10))
    with pytest.raises(SourceChangedError, match=REFUSED):
        build_tree(None, [], tmp_path / "tree", copies=[copy])
    assert not (tmp_path / "tree").exists()


def test_a_hub_ingest_reads_only_the_validated_bytes(tiny_root):
    """Hub stores hold the files in memory before their commit: those too must be the bytes validated."""
    benchmarks = load_benchmarks(tiny_root / "data")
    run_dirs = find_run_dirs([tiny_root / "submissions"])
    expected = expected_files(load_runs(run_dirs, benchmarks), benchmarks)
    assert {f.path for f in staged_files(run_dirs, benchmarks, expected)} == set(expected)
    write_run(tiny_root, "run-a", _swapped_predictions())
    with pytest.raises(SourceChangedError, match=REFUSED):
        staged_files(run_dirs, benchmarks, expected)


def _waiting_on(process: subprocess.Popen, lock: Path) -> bool:
    """Whether ``process`` has the lock file open: it validated, and now waits for the lock."""
    folder = Path(f"/proc/{process.pid}/fd")
    try:
        return any(os.readlink(fd) == str(lock) for fd in folder.iterdir())
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see the ingest wait for the lock")
def test_cli_ingest_refuses_a_file_swapped_while_it_waits_for_the_lock(tiny_root):
    """``dualboard ingest`` validates, then waits for the lock another process holds; the predictions are
    swapped meanwhile: it refuses, says what to do, and the store stays as it was."""
    subprocess.run([sys.executable, "-m", "dualboard", "ingest", "--root", str(tiny_root)], check=True)
    store = tiny_root / ".dualboard" / "store"
    before = tree_bytes(store)
    write_run(tiny_root, "run-b")
    lock = store / local.LOCK
    with exclusive(lock, what="test"):
        ingest = subprocess.Popen(
            [sys.executable, "-m", "dualboard", "ingest", "--root", str(tiny_root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 120
        while not _waiting_on(ingest, lock) and ingest.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _waiting_on(ingest, lock), "the ingest never waited for the lock"
        write_run(tiny_root, "run-b", _swapped_predictions())
    output, _ = ingest.communicate(timeout=120)
    assert ingest.returncode != 0
    assert "run-b/predictions.jsonl: changed after it was validated" in output
    assert "do not edit submissions while a build runs, and run the command again" in output
    assert _without_lock(tree_bytes(store)) == _without_lock(before)


def _without_lock(files: dict[str, bytes]) -> dict[str, bytes]:
    """The store's files but the lock file (which holds the id of the process that last held it)."""
    return {name: data for name, data in files.items() if name != local.LOCK}


def test_a_definition_edited_after_it_was_loaded_is_refused(tiny_root):
    """The runs were validated against the definitions as loaded: an answer key edited after that (before the
    ingest takes the lock) is refused, not stored beside runs it never checked."""
    store = _stored(tiny_root)
    before = tree_bytes(store.root)
    write_run(tiny_root, "run-b")
    questions = tiny_root / "data" / "benchmarks" / "tiny" / "questions.jsonl"
    original = questions.read_bytes()
    questions.write_bytes(original.replace(b"The Pacific.", b"The Pacific Ocean."))  # the edit validated
    benchmarks = load_benchmarks(tiny_root / "data")
    questions.write_bytes(original.replace(b"The Pacific.", b"The Atlantic."))  # and another one meanwhile
    with pytest.raises(SourceChangedError, match=REFUSED) as info:
        store.ingest(find_run_dirs([tiny_root / "submissions"]), benchmarks)
    assert str(questions) in str(info.value)
    assert tree_bytes(store.root) == before
