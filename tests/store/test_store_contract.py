"""One contract, two stores: every test here runs against LocalStore and HubStore.

HubStore talks to tests/store/hub_server.py, an in-memory stand-in for the
Hugging Face Hub started on 127.0.0.1 for the test.
"""

from __future__ import annotations

import pytest

from dualboard.errors import DualboardError, InvalidInputError
from dualboard.intake.benchmark import load_benchmarks
from tests.conftest import tiny_predictions, write_run


def _ingest(root, store, *run_ids):
    runs = [root / "submissions" / "tiny" / r for r in run_ids]
    return store.ingest(runs, load_benchmarks(root / "data"))


def _files(folder) -> dict[str, bytes]:
    """The logical tree, by content (a Hub snapshot and a local one must read the same)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_ingest_copies_runs_and_benchmark_byte_for_byte(tiny_root, store):
    result = _ingest(tiny_root, store, "run-a")
    assert result.added == ("tiny/run-a",) and result.replaced == () and result.unchanged == ()
    assert result.revision == store.revision()
    src = tiny_root / "submissions" / "tiny" / "run-a"
    bench = tiny_root / "data" / "benchmarks" / "tiny"
    assert _files(store.snapshot()) == {
        "benchmarks/tiny/benchmark.yaml": (bench / "benchmark.yaml").read_bytes(),
        "benchmarks/tiny/questions.jsonl": (bench / "questions.jsonl").read_bytes(),
        "runs/tiny/run-a/metadata.yaml": (src / "metadata.yaml").read_bytes(),
        "runs/tiny/run-a/predictions.jsonl": (src / "predictions.jsonl").read_bytes(),
    }
    assert [p.name for p in store.run_dirs("tiny")] == ["run-a"]


@pytest.mark.slow
def test_snapshot_holds_plain_files_that_validate(tiny_root, store):
    _ingest(tiny_root, store, "run-a")
    snapshot = store.snapshot()
    assert not any(p.is_symlink() for p in snapshot.rglob("*")), "stored runs must pass the no-symlink check"
    from dualboard.intake.validate import load_runs

    [run] = load_runs(store.run_dirs("tiny"), load_benchmarks(snapshot))
    assert run.run_id == "run-a" and len(run.predictions) == 3


@pytest.mark.slow
def test_second_identical_ingest_changes_nothing(tiny_root, store):
    first = _ingest(tiny_root, store, "run-a")
    before = _files(store.snapshot())
    second = _ingest(tiny_root, store, "run-a")
    assert second.revision == first.revision == store.revision()
    assert second.unchanged == ("tiny/run-a",) and second.added == ()
    assert _files(store.snapshot()) == before


@pytest.mark.slow
def test_bad_run_leaves_store_unchanged(tiny_root, store):
    first = _ingest(tiny_root, store, "run-a")
    before = _files(store.snapshot())
    write_run(tiny_root, "run-b")
    write_run(tiny_root, "run-bad", raw_lines=[b'{"question_id": "q1", "response": "x"}', b"{broken"])
    with pytest.raises(InvalidInputError) as info:
        _ingest(tiny_root, store, "run-b", "run-bad")
    assert "run-bad/predictions.jsonl:2" in str(info.value)
    assert store.revision() == first.revision
    assert _files(store.snapshot()) == before, "a failed ingest must not add even the valid run"


@pytest.mark.slow
def test_replacing_a_run_keeps_the_old_revision_readable(tiny_root, store):
    first = _ingest(tiny_root, store, "run-a")
    old_bytes = (store.snapshot() / "runs/tiny/run-a/predictions.jsonl").read_bytes()
    preds = tiny_predictions()
    preds[0]["response"] = "Final answer: 5"
    write_run(tiny_root, "run-a", preds)
    second = _ingest(tiny_root, store, "run-a")
    assert second.replaced == ("tiny/run-a",) and second.revision != first.revision
    assert (store.snapshot(first.revision) / "runs/tiny/run-a/predictions.jsonl").read_bytes() == old_bytes
    assert b"Final answer: 5" in (store.snapshot() / "runs/tiny/run-a/predictions.jsonl").read_bytes()


@pytest.mark.slow
def test_adding_a_run_keeps_the_others(tiny_root, store):
    _ingest(tiny_root, store, "run-a")
    write_run(tiny_root, "run-b")
    result = _ingest(tiny_root, store, "run-b")
    assert result.added == ("tiny/run-b",)
    assert [p.name for p in store.run_dirs()] == ["run-a", "run-b"]


def test_unknown_revision_says_where_to_look(tiny_root, store):
    _ingest(tiny_root, store, "run-a")
    with pytest.raises(DualboardError, match="no revision '999999'"):
        store.snapshot("999999")
