"""The verdict cache holds verdicts as columns: what it returns is what was saved, before and after folding."""

from __future__ import annotations

from pathlib import Path

import pytest

from dualboard.grading import cache as cache_module
from dualboard.grading.cache import VerdictCache
from dualboard.grading.rules import RulesGrader
from dualboard.grading.verdict import Verdict
from dualboard.store import LocalStore

SAVED = {
    f"k{i}": Verdict(None if i % 3 == 0 else float(100 * (i % 2)), ["ok", "none", "recovered"][i % 3], f"d{i} é\n")
    for i in range(7)
}


@pytest.mark.parametrize("fold_at", [1, 2, 1000])
def test_lookups_return_the_saved_verdicts_whether_held_in_the_dict_or_folded(
    tmp_path: Path, monkeypatch, fold_at: int
) -> None:
    monkeypatch.setattr(cache_module, "FOLD_AT", fold_at)
    grader = RulesGrader()
    cache = VerdictCache(LocalStore(tmp_path))
    items = list(SAVED.items())
    for start in range(0, len(items), 2):
        cache.store(grader, dict(items[start : start + 2]))
    asked = ["missing", *reversed(SAVED), "k1"]
    assert cache.lookup(grader, asked) == {k: SAVED[k] for k in reversed(SAVED)}
    assert list(cache.lookup(grader, asked)) == list(reversed(SAVED))
    assert cache.store(grader, {"k0": SAVED["k0"]}) is None  # known, folded or not: not saved twice
    # a new cache reads the parts back as columns
    assert VerdictCache(LocalStore(tmp_path)).lookup(grader, asked) == {k: SAVED[k] for k in reversed(SAVED)}
