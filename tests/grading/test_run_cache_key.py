"""The grading code's digest keys every run's files in build/scored: whatever decides a verdict must be in it, or a
change to it would leave grades of the old code behind."""

from __future__ import annotations

from dualboard.grading import run_cache


def test_the_digest_covers_the_modules_outside_grading_that_decide_a_verdict_or_the_files() -> None:
    names = {path.name for path in run_cache.code_sources()}
    assert {"linear_regex.py", "scored_files.py", "scored_columns.yaml"} <= names


def test_another_re2_is_another_digest(monkeypatch) -> None:
    run_cache.code_digest.cache_clear()
    before = run_cache.code_digest()
    real = run_cache.metadata.version
    for tool in run_cache.GRADING_TOOLS:
        monkeypatch.setattr(
            run_cache.metadata, "version", lambda name, t=tool: real(name) + ("+x" if name == t else "")
        )
        run_cache.code_digest.cache_clear()
        assert run_cache.code_digest() != before, tool
    monkeypatch.undo()
    run_cache.code_digest.cache_clear()
    assert run_cache.code_digest() == before
