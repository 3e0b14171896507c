"""The local store: atomic ingests, unchanged on failure, byte-exact copies."""

from __future__ import annotations

import os
from unittest import mock

import pytest

from dualboard import build_cache
from dualboard.build_cache import BuildCache
from dualboard.errors import InvalidInputError
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.validate import check_runs
from dualboard.store import LocalStore, tree
from dualboard.store.base import SourceChangedError
from tests.conftest import tiny_metadata, tiny_predictions, tree_bytes, write_run


def _ingest(root, store, *run_ids):
    runs = [root / "submissions" / "tiny" / r for r in run_ids]
    return store.ingest(runs, load_benchmarks(root / "data"))


def test_ingest_copies_runs_and_benchmark_byte_for_byte(tiny_root):
    store = LocalStore(tiny_root / "store")
    result = _ingest(tiny_root, store, "run-a")
    assert result.added == ("tiny/run-a",) and result.revision == "000001"
    snap = store.snapshot()
    src = tiny_root / "submissions" / "tiny" / "run-a"
    for name in ("predictions.jsonl", "metadata.yaml"):
        assert (snap / "runs" / "tiny" / "run-a" / name).read_bytes() == (src / name).read_bytes()
    assert (snap / "benchmarks" / "tiny" / "questions.jsonl").read_bytes() == (
        tiny_root / "data/benchmarks/tiny/questions.jsonl"
    ).read_bytes()
    assert [p.name for p in store.run_dirs("tiny")] == ["run-a"]


def test_second_identical_ingest_changes_nothing(tiny_root):
    store = LocalStore(tiny_root / "store")
    first = _ingest(tiny_root, store, "run-a")
    before = tree_bytes(store.root)
    second = _ingest(tiny_root, store, "run-a")
    assert second.revision == first.revision and second.unchanged == ("tiny/run-a",)
    assert tree_bytes(store.root) == before


def test_bad_run_leaves_store_unchanged(tiny_root):
    store = LocalStore(tiny_root / "store")
    _ingest(tiny_root, store, "run-a")
    before = tree_bytes(store.root)
    write_run(tiny_root, "run-b")
    write_run(tiny_root, "run-bad", raw_lines=[b'{"question_id": "q1", "response": "x"}', b"{broken"])
    with pytest.raises(InvalidInputError) as info:
        _ingest(tiny_root, store, "run-b", "run-bad")
    assert "run-bad/predictions.jsonl:2" in str(info.value)
    assert tree_bytes(store.root) == before, "a failed ingest must not add even the valid run"


def test_replacing_a_run_keeps_old_snapshot_intact(tiny_root):
    store = LocalStore(tiny_root / "store")
    _ingest(tiny_root, store, "run-a")
    old = store.snapshot()
    old_bytes = (old / "runs/tiny/run-a/predictions.jsonl").read_bytes()
    preds = tiny_predictions()
    preds[0]["response"] = "Final answer: 5"
    write_run(tiny_root, "run-a", preds)
    result = _ingest(tiny_root, store, "run-a")
    assert result.replaced == ("tiny/run-a",) and result.revision == "000002"
    assert (old / "runs/tiny/run-a/predictions.jsonl").read_bytes() == old_bytes, (
        "hard links must be broken before writing"
    )
    assert b"Final answer: 5" in (store.snapshot() / "runs/tiny/run-a/predictions.jsonl").read_bytes()


def test_unknown_revision_says_where_to_look(tiny_root):
    store = LocalStore(tiny_root / "store")
    with pytest.raises(Exception, match="no revision '999999'"):
        store.snapshot("999999")


def _links_to(new, old) -> bool:
    """Whether the file ``new`` is the very file ``old`` (a hard link, not a copy)."""
    return new.stat().st_ino == old.stat().st_ino


@pytest.mark.parametrize("with_cache", [True, False])
def test_one_more_run_stages_only_its_files_and_equals_a_fresh_ingest(tiny_root, tmp_path, with_cache):
    store = LocalStore(tiny_root / "store")
    cache = BuildCache(tmp_path / "cache.json") if with_cache else None
    runs = [tiny_root / "submissions" / "tiny" / "run-a"]
    store.ingest(runs, load_benchmarks(tiny_root / "data"), cache=cache)
    old = store.snapshot()
    preds = tiny_predictions()
    preds[1]["response"] = "Final answer: Paris"
    runs.append(write_run(tiny_root, "run-b", preds))
    result = store.ingest(runs, load_benchmarks(tiny_root / "data"), cache=cache)
    assert (result.added, result.unchanged, result.revision) == (("tiny/run-b",), ("tiny/run-a",), "000002")
    new = store.snapshot()
    for kept in (
        "runs/tiny/run-a/predictions.jsonl",
        "runs/tiny/run-a/metadata.yaml",
        "benchmarks/tiny/questions.jsonl",
    ):
        assert _links_to(new / kept, old / kept), f"{kept} is unchanged: linked, not read and written again"
    fresh = LocalStore(tmp_path / "fresh")
    fresh.ingest(runs, load_benchmarks(tiny_root / "data"))
    assert tree_bytes(new) == tree_bytes(fresh.snapshot())


def test_a_run_with_one_changed_file_is_replaced_and_keeps_the_other_linked(tiny_root, tmp_path):
    store, cache = LocalStore(tiny_root / "store"), BuildCache(tmp_path / "cache.json")
    runs = [tiny_root / "submissions" / "tiny" / "run-a"]
    store.ingest(runs, load_benchmarks(tiny_root / "data"), cache=cache)
    old = store.snapshot()
    write_run(tiny_root, "run-a", metadata=tiny_metadata(submitter="someone else"))
    result = store.ingest(runs, load_benchmarks(tiny_root / "data"), cache=cache)
    assert result.replaced == ("tiny/run-a",) and not result.skipped
    new = store.snapshot()
    assert _links_to(new / "runs/tiny/run-a/predictions.jsonl", old / "runs/tiny/run-a/predictions.jsonl")
    assert b"someone else" in (new / "runs/tiny/run-a/metadata.yaml").read_bytes()
    assert b"someone else" not in (old / "runs/tiny/run-a/metadata.yaml").read_bytes()
    again = store.ingest(runs, load_benchmarks(tiny_root / "data"), cache=cache)
    assert again.skipped and again.revision == result.revision


def _age(folder, seconds: float = 60) -> None:
    """Date the files of ``folder`` ``seconds`` back, as files committed a while ago are (a fresh file's digest is never
    remembered: a second write within the clock's tick could keep its stat)."""
    for path in folder.iterdir():
        past = path.stat().st_mtime - seconds
        os.utime(path, (past, past))


def test_one_more_run_is_the_only_file_read_or_hashed(tiny_root, tmp_path):
    """After a validation (which hashes the new run), an ingest reads the new run's files once, to copy them,
    and hashes nothing: every stored file's digest is remembered, copies' included."""
    store, cache = LocalStore(tiny_root / "store"), BuildCache(tmp_path / "cache.json")
    benchmarks = load_benchmarks(tiny_root / "data")
    runs = [tiny_root / "submissions" / "tiny" / "run-a"]
    _age(runs[0])
    _age(tiny_root / "data" / "benchmarks" / "tiny")
    store.ingest(runs, benchmarks, cache=cache)
    runs.append(write_run(tiny_root, "run-b"))
    _age(runs[1])
    check_runs(runs, benchmarks, cache=cache)  # the validate stage, before the ingest
    with (
        mock.patch("dualboard.build_cache.file_sha256", wraps=build_cache.file_sha256) as hashed,
        mock.patch("dualboard.store.tree.open_regular", wraps=tree.open_regular) as read,
    ):
        result = store.ingest(runs, benchmarks, cache=cache)
    assert result.added == ("tiny/run-b",)
    assert hashed.call_count == 0
    assert sorted(call.args[0].name for call in read.call_args_list) == ["metadata.yaml", "predictions.jsonl"]
    assert {call.args[0].parent.name for call in read.call_args_list} == {"run-b"}
    copied = store.snapshot() / "runs/tiny/run-b/predictions.jsonl"
    assert copied.read_bytes() == (runs[1] / "predictions.jsonl").read_bytes()
    assert copied.stat().st_mtime_ns == (runs[1] / "predictions.jsonl").stat().st_mtime_ns


def test_a_file_changed_after_validation_is_not_stored(tiny_root, tmp_path):
    """The copy hashes what it writes: bytes other than those validated leave the store as it was."""
    store, cache = LocalStore(tiny_root / "store"), BuildCache(tmp_path / "cache.json")
    benchmarks = load_benchmarks(tiny_root / "data")
    _ingest(tiny_root, store, "run-a")
    before = tree_bytes(store.root)
    run = write_run(tiny_root, "run-b")
    check_runs([run], benchmarks, cache=cache)

    def edited_meanwhile(path, open_regular=tree.open_regular, **kwargs):
        if path.name == "predictions.jsonl":  # an editor saves the file between its validation and its copy
            path.write_bytes(path.read_bytes().replace(b"Final", b"final"))
        return open_regular(path, **kwargs)

    with mock.patch("dualboard.store.tree.open_regular", edited_meanwhile), pytest.raises(SourceChangedError) as info:
        store.ingest([tiny_root / "submissions" / "tiny" / "run-a", run], benchmarks, cache=cache)
    assert "run-b/predictions.jsonl: changed after it was validated" in str(info.value)
    assert tree_bytes(store.root) == before
