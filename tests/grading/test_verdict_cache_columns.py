"""The verdict cache returns what was saved, whether held in memory, in parts it saved, or in parts it reads back
through their key indexes (kept in a folder or made in memory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dualboard.grading.cache import VerdictCache
from dualboard.grading.rules import RulesGrader
from dualboard.grading.verdict import Verdict
from dualboard.store import LocalStore

SAVED = {
    f"k{i}": Verdict(None if i % 3 == 0 else float(100 * (i % 2)), ["ok", "none", "recovered"][i % 3], f"d{i} é\n")
    for i in range(7)
}


@pytest.mark.parametrize("kept", [False, True])
def test_lookups_return_the_saved_verdicts_from_parts_saved_or_read_back(tmp_path: Path, kept: bool) -> None:
    grader = RulesGrader()
    index = tmp_path / "keys" if kept else None
    cache = VerdictCache(LocalStore(tmp_path), index=index)
    items = list(SAVED.items())
    for start in range(0, len(items), 2):
        cache.store(grader, dict(items[start : start + 2]))
    asked = ["missing", *reversed(SAVED), "k1"]
    assert cache.lookup(grader, asked) == {k: SAVED[k] for k in reversed(SAVED)}
    assert list(cache.lookup(grader, asked)) == list(reversed(SAVED))
    assert cache.store(grader, {"k0": SAVED["k0"]}) is None  # known: not saved twice
    # a new cache reads the parts back, through the indexes kept or made again
    again = VerdictCache(LocalStore(tmp_path), index=index)
    assert again.lookup(grader, asked) == {k: SAVED[k] for k in reversed(SAVED)}
    assert (len(list(index.rglob("*.npy"))) == 4) if kept else True
