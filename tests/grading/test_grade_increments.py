"""A grade that reuses what the last one kept writes what a grade from nothing writes, byte for byte.

After one run is added, changed or removed, or the human labels change (which
can change the grader chosen for the answer-key column), ``dualboard grade``
reads only what it must: each run's files and answer-choice evidence are kept
in build/scored/, the verdict parts' key indexes in build/verdict-keys/, and
stored files' digests in the build cache. Each step here is graded that way
and, on a copy of the board, from nothing (no build/scored, no key index, no
build cache: what ``--force`` and a first
build do), and every file of build/scored/ must have the same bytes. The
verdict cache's indexes are checked against reading every part
(:func:`~dualboard.store.verdicts.read_parts`), also when parts are rewritten
behind them or hold keys of another form.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dualboard.grading.cache import VerdictCache, VerdictFolders
from dualboard.grading.rules import RulesGrader
from dualboard.grading.verdict import Verdict
from dualboard.grading.verdict_keys import VERDICT_KEYS_DIR
from dualboard.store import LocalStore
from dualboard.store.verdicts import part_files, read_parts
from tests.conftest import copy_run
from tests.grading.test_screened_readers import HOSTILE
from tests.importers.import_fixtures import OPEN_RELEASE, real_data


def _grade(root: Path) -> str:
    command = [sys.executable, "-m", "dualboard", "grade", "--no-progress", "--jobs", "2", "--root", str(root)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _ingest(root: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dualboard", "ingest", "--root", str(root)], capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _scored_files(root: Path) -> dict[str, bytes]:
    folder = root / "build" / "scored"
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _assert_as_from_nothing(root: Path, tmp_path: Path, step: str) -> None:
    """Grade a copy of ``root`` with nothing kept but the store's verdicts; its files must equal ``root``'s."""
    fresh = tmp_path / f"fresh-{step}"
    shutil.copytree(root, fresh, symlinks=True)
    for kept in (fresh / "build" / VERDICT_KEYS_DIR, fresh / "build" / "scored"):
        shutil.rmtree(kept, ignore_errors=True)
    (fresh / ".dualboard" / "build-cache.json").unlink(missing_ok=True)
    _grade(fresh)
    built, expected = _scored_files(root), _scored_files(fresh)
    assert sorted(built) == sorted(expected), step
    for name in expected:
        assert built[name] == expected[name], f"{step}: {name}"


def _steps(root: Path, benchmark: str, tmp_path: Path, labels: Path | None) -> None:
    runs = root / "submissions" / benchmark
    first = sorted(p for p in runs.iterdir() if p.is_dir())[0]
    _grade(root)
    _assert_as_from_nothing(root, tmp_path, "first")

    copy_run(first, runs / "newcomer")
    _ingest(root)
    assert "(1 of" in _grade(root)
    _assert_as_from_nothing(root, tmp_path, "added")

    predictions = runs / "newcomer" / "predictions.jsonl"
    lines = predictions.read_text("utf-8").splitlines()
    changed = json.loads(lines[0]) | {"response": HOSTILE[3]}
    predictions.write_text("\n".join([json.dumps(changed), *lines[1:]]) + "\n", "utf-8")
    _ingest(root)
    assert "(1 of" in _grade(root)
    _assert_as_from_nothing(root, tmp_path, "changed")

    if labels is not None:  # fewer labels: the evidence of the labelled runs changes, maybe the choice too
        rows = labels.read_text("utf-8").splitlines()
        labels.write_text("\n".join(rows[: len(rows) // 3]) + "\n", "utf-8")
        _ingest(root)
        _grade(root)
        _assert_as_from_nothing(root, tmp_path, "labels")

    shutil.rmtree(runs / "newcomer")
    _ingest(root)
    _grade(root)
    _assert_as_from_nothing(root, tmp_path, "removed")


@pytest.mark.slow
def test_the_demo_graded_step_by_step_as_from_nothing(demo_board, tmp_path: Path) -> None:
    project, _store = demo_board
    _steps(project.root, "demo", tmp_path, project.root / "data" / "benchmarks" / "demo" / "human_labels.csv")


@pytest.mark.slow
def test_a_real_release_graded_step_by_step_as_from_nothing(tmp_path: Path) -> None:
    from dualboard.importers import import_autogenai

    root = tmp_path / "board"
    import_autogenai(real_data() / OPEN_RELEASE, benchmark="easy-problems-open", dest=root)
    _ingest(root)
    _steps(root, "easy-problems-open", tmp_path, None)


def _saved(tmp_path: Path, keys: list[str]) -> LocalStore:
    store = LocalStore(tmp_path / "store")
    cache = VerdictCache(store)
    for start in range(0, len(keys), 3):  # several parts
        cache.store(
            RulesGrader(), {k: Verdict(float(len(k) % 2) * 100, "ok", f"d {k}") for k in keys[start : start + 3]}
        )
    return store


def _all(store: LocalStore, keys: list[str]) -> dict[str, Verdict]:
    grader = RulesGrader()
    frame = read_parts([store.snapshot(), store.verdict_root()], grader.name, grader.config_hash)
    wanted = frame[frame.key.isin(keys)]
    return {
        k: Verdict(None if pd.isna(s) else float(s), p, d)
        for k, s, p, d in zip(wanted.key, wanted.score, wanted.verdict_parse, wanted.detail, strict=True)
    }


KEYS = [f"{i:064x}" for i in range(7)] + ["not-a-hash", "é\n", "", "0" * 16 + "x" * 48, "a" * 64]


@pytest.mark.parametrize("kept", [False, True])
def test_lookups_through_the_key_indexes_equal_reading_every_part(tmp_path: Path, kept: bool) -> None:
    store = _saved(tmp_path, KEYS[:-1])
    index = tmp_path / "keys" if kept else None
    asked = [*reversed(KEYS), "b" * 64]
    expected = _all(store, asked)
    assert len(expected) == len(KEYS) - 1
    found = VerdictCache(VerdictFolders.of(store), index=index).lookup(RulesGrader(), asked)
    assert found == {k: expected[k] for k in asked if k in expected}
    again = VerdictCache(VerdictFolders.of(store), index=index).lookup(RulesGrader(), asked)  # indexes read back
    assert again == found


def test_a_part_rewritten_behind_its_index_is_indexed_again(tmp_path: Path) -> None:
    store, index, grader = _saved(tmp_path, KEYS[:6]), tmp_path / "keys", RulesGrader()
    assert len(VerdictCache(VerdictFolders.of(store), index=index).lookup(grader, KEYS)) == 6
    part = part_files([store.verdict_root()], grader.name, grader.config_hash)[0]
    frame = pd.read_parquet(part)
    frame["key"] = ["c" * 64, *frame.key[1:]]  # one key replaced, under the same name (not as Dualboard writes)
    frame.to_parquet(part, index=False)
    found = VerdictCache(VerdictFolders.of(store), index=index).lookup(grader, [*KEYS, "c" * 64])
    assert found == _all(store, [*KEYS, "c" * 64])
    assert "c" * 64 in found
    assert len(list((index / grader.name / grader.config_hash).glob(f"{part.stem}.*"))) == 1  # the old one is gone


def test_an_unreadable_index_is_made_again(tmp_path: Path) -> None:
    store, index, grader = _saved(tmp_path, KEYS[:6]), tmp_path / "keys", RulesGrader()
    VerdictCache(VerdictFolders.of(store), index=index).lookup(grader, KEYS)
    for kept in (index / grader.name / grader.config_hash).iterdir():
        kept.write_bytes(b"not an index")
    assert VerdictCache(VerdictFolders.of(store), index=index).lookup(grader, KEYS) == _all(store, KEYS)


def test_a_new_run_reads_only_the_parts_that_hold_its_keys(tmp_path: Path, monkeypatch) -> None:
    from dualboard.grading import cache as cache_module

    store, index, grader = _saved(tmp_path, KEYS[:6]), tmp_path / "keys", RulesGrader()
    VerdictCache(VerdictFolders.of(store), index=index).lookup(grader, KEYS)  # indexes kept
    read: list[Path] = []
    real = cache_module._read_verdicts
    monkeypatch.setattr(cache_module, "_read_verdicts", lambda part, wanted: read.append(part) or real(part, wanted))
    cache = VerdictCache(VerdictFolders.of(store), index=index)
    assert cache.lookup(grader, ["d" * 64, "e" * 64]) == {}
    assert read == []
    assert cache.lookup(grader, [KEYS[4]]) == _all(store, [KEYS[4]])
    assert len(read) == 1


@pytest.mark.slow
def test_a_damaged_run_file_is_graded_anew(demo_board, tmp_path: Path) -> None:
    project, _store = demo_board
    root = project.root
    _grade(root)
    damaged = sorted((root / "build" / "scored" / "demo" / "answers").glob("*.parquet"))[0]
    damaged.write_bytes(damaged.read_bytes()[:-100])  # its footer cut short
    (root / ".dualboard" / "build-cache.json").unlink()  # the stage is not skipped
    assert "(1 of" in _grade(root)
    _assert_as_from_nothing(root, tmp_path, "damaged")
