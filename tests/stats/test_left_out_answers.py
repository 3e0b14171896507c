"""Leaving out answers never raises a run's score or its rank (issue 25, item 2).

Small synthetic boards go through the grading stage and the statistics as a build runs them: a run let in by
``allow_incomplete`` with some answers left out scores each of them 0, and under ``min_answered`` it is listed
apart, ranked under neither grading.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualboard.grading import grade_benchmark
from dualboard.intake.models import Benchmark, GraderSpec, Run
from dualboard.stats import analyse
from dualboard.stats.scores import GRADINGS


def _question(i: int) -> dict:
    key = {"answer": f"colour{i}", "aliases": [], "patterns": [], "numeric": None}
    return {"id": f"q{i:02d}", "category": "c", "type": "open", "prompt": f"Colour {i}?", "answer_key": key}


def _benchmark(n: int, min_answered: float) -> Benchmark:
    return Benchmark(
        name="b",
        version="1",
        title="B",
        description="",
        traditional={"open": GraderSpec("exact")},
        answer_key=(GraderSpec("rules"),),
        questions=tuple(_question(i) for i in range(n)),
        allow_incomplete=True,
        min_answered=min_answered,
    )


def _run(run_id: str, right: list[bool], given: list[bool]) -> Run:
    lines = tuple(
        {"question_id": f"q{i:02d}", "round": 0, "response": f"Final answer: {f'colour{i}' if ok else 'grey'}"}
        for i, (ok, shown) in enumerate(zip(right, given, strict=True))
        if shown
    )
    return Run("b", run_id, {"model": run_id, "rounds": 1, "benchmark_version": "1"}, lines)


def _standing(benchmark: Benchmark, runs: list[Run]) -> dict[str, tuple[float, float]]:
    """(mean, rank) of run "target" per grading; a run not ranked stands below every rank."""
    models = analyse(grade_benchmark(benchmark, runs).scored, n_boot=20).models.set_index("run_id")
    row = models.loc["target"]
    return {g: (row[f"{g}_mean"], math.inf if math.isnan(row[f"rank_{g}"]) else row[f"rank_{g}"]) for g in GRADINGS}


boards = st.integers(10, 16).flatmap(
    lambda n: st.tuples(
        st.lists(st.lists(st.booleans(), min_size=n, max_size=n), min_size=3, max_size=3),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.sampled_from([0.0, 0.5, 0.9, 1.0]),
    )
)


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(boards)
def test_leaving_out_answers_never_raises_score_or_rank(board):
    (target, *others), given_, min_answered = board
    benchmark = _benchmark(len(target), min_answered)
    rest = [_run(f"other{i}", right, [True] * len(right)) for i, right in enumerate(others)]
    whole = _standing(benchmark, [_run("target", target, [True] * len(target)), *rest])
    part = _standing(benchmark, [_run("target", target, given_), *rest])
    for g in GRADINGS:
        assert part[g][0] <= whole[g][0] + 1e-9, f"{g}: leaving out answers raised the score"
        assert part[g][1] >= whole[g][1], f"{g}: leaving out answers raised the rank"


def test_a_left_out_answer_is_wrong_and_too_many_list_the_run_apart():
    benchmark = _benchmark(10, 0.9)
    runs = [_run("target", [True] * 10, [True] * 8 + [False] * 2), _run("other", [False] * 10, [True] * 10)]
    graded = grade_benchmark(benchmark, runs)
    verdicts = graded.verdicts[graded.verdicts.run_id == "target"]
    assert len(verdicts) == 8 * 2, "an answer not given has no verdict rows: no grader judged it"
    tables = analyse(graded.scored, n_boot=20)
    row = tables.models.set_index("run_id").loc["target"]
    assert (row.answer_key_mean, row.traditional_mean, row.n_unanswered) == (80.0, 80.0, 2)
    assert row.apart_reason == "answered 80% of the current questions (min_answered: 90%)"
    assert not row.ranked_answer_key and math.isnan(row.rank_answer_key)
    assert "not ranked, listed apart: answered 80% of the current questions" in row.note


def test_a_run_of_an_earlier_version_scores_the_questions_it_left_out_as_wrong():
    benchmark = dataclasses.replace(
        _benchmark(10, 0.9), previous_versions={"0.9": frozenset(f"q{i:02d}" for i in range(8))}
    )
    target = _run("target", [True] * 10, [True] * 4 + [False] * 6)
    target = dataclasses.replace(target, metadata={**target.metadata, "benchmark_version": "0.9"})
    scored = grade_benchmark(benchmark, [target]).scored
    assert sorted(scored.question_id) == [f"q{i:02d}" for i in range(8)], "q08 and q09 were never run"
    assert scored.unanswered.sum() == 4 and scored.answered_share.iloc[0] == 0.4
    row = analyse(scored, n_boot=20).models.iloc[0]
    assert (row.answer_key_mean, row.n_unanswered, row.n_never_run) == (50.0, 4, 0)
    assert row.apart_reason == "answered 40% of the current questions (min_answered: 90%)"
