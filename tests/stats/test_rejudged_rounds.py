"""Rounds that repeat one response are judge re-runs, not model samples (issue 26, item 9).

A run whose every question holds one response in all its rounds (identical after trimming whitespace) gave one
answer per question, judged several times: it is flagged ``rejudged``, its naive interval counts the distinct
answers, its note says its within-question variance is the judge's, and the site says "30 distinct answers, each
judged 10 times". A run that really sampled keeps its rounds as samples, even where short answers repeat.
"""

from __future__ import annotations

import html

import numpy as np
import pytest
from scipy import stats

from dualboard.grading import grade_benchmark
from dualboard.grading.run_grades import distinct_answers, plan_run
from dualboard.intake.models import Benchmark, GraderSpec, Run
from dualboard.render.leaderboard import leaderboard_page
from dualboard.render.pages import BenchmarkResults
from dualboard.render.run_pages import run_page
from dualboard.stats import analyse
from tests.importers.import_fixtures import MC_RELEASE, load_imported, real_data
from tests.render.html_tables import document_page

N_QUESTIONS, ROUNDS = 30, 10


def _benchmark() -> Benchmark:
    questions = tuple(
        {
            "id": f"q{i:02d}",
            "category": "c",
            "type": "open",
            "prompt": f"Colour {i}?",
            "answer_key": {"answer": f"colour{i}", "aliases": [], "patterns": [], "numeric": None},
        }
        for i in range(N_QUESTIONS)
    )
    return Benchmark(
        name="b",
        version="1",
        title="B",
        description="",
        traditional={"open": GraderSpec("recorded", {"field": "judge"})},
        answer_key=(GraderSpec("rules"),),
        questions=questions,
    )


def _run(run_id: str, response, judge) -> Run:
    """A run of ROUNDS rounds: ``response(q, r)`` its text, ``judge(q, r)`` the judge's recorded mark."""
    lines = tuple(
        {"question_id": f"q{q:02d}", "round": r, "response": response(q, r), "recorded": {"judge": judge(q, r)}}
        for q in range(N_QUESTIONS)
        for r in range(ROUNDS)
    )
    return Run("b", run_id, {"model": run_id, "rounds": ROUNDS, "benchmark_version": "1"}, lines)


MARKS = np.random.default_rng(26).choice([0, 20, 40, 60, 80, 100], size=(N_QUESTIONS, ROUNDS))
"""The judge's marks, varying from round to round as a real judge's do (seeded)."""


def _board() -> list[Run]:
    # The re-judged run: one response per question, with stray whitespace in some rounds, marked anew each round.
    rejudged = _run("rejudged", lambda q, r: f"It is colour{q}." + " " * (r % 2), lambda q, r: int(MARKS[q, r]))
    # The sampled run: short answers that repeat on a third of the questions and differ on the rest.
    sampled = _run(
        "sampled", lambda q, r: "grey" if q % 3 == 0 else f"colour{q} (take {r})", lambda q, r: int(MARKS[q, r])
    )
    return [rejudged, sampled]


@pytest.fixture(scope="module")
def board():
    runs = _board()
    graded = grade_benchmark(_benchmark(), runs)
    stats = analyse(graded.scored, n_boot=50)
    result = BenchmarkResults(_benchmark(), graded.scored, graded.verdicts, tuple(runs), stats=stats)
    return graded.scored, stats.models.set_index("run_id"), result


def test_a_run_repeating_one_response_per_question_is_flagged_and_a_sampled_run_is_not(board):
    scored, models, _ = board
    assert scored.groupby("run_id")["rejudged"].agg(["min", "max"]).to_dict("index") == {
        "rejudged": {"min": True, "max": True},
        "sampled": {"min": False, "max": False},
    }
    assert bool(models.loc["rejudged", "rejudged"]) and not bool(models.loc["sampled", "rejudged"])
    assert models.loc["rejudged", "n_distinct_answers"] == N_QUESTIONS
    # 10 questions answer "grey" every round (one distinct each), 20 answer differently in each of 10 rounds.
    assert models.loc["sampled", "n_distinct_answers"] == 10 + 20 * ROUNDS


def test_the_naive_interval_of_a_rejudged_run_counts_distinct_answers(board):
    _, models, _ = board
    per_answer = MARKS.mean(axis=1)  # one answer per question, at the mean of its judgements
    half = 1.96 * per_answer.std(ddof=1) / np.sqrt(N_QUESTIONS)  # the naive rule, written out (z = 1.96)
    row = models.loc["rejudged"]
    assert row["traditional_naive_ci_low"] == pytest.approx(per_answer.mean() - half, abs=1e-9)
    assert row["traditional_naive_ci_high"] == pytest.approx(per_answer.mean() + half, abs=1e-9)
    # The sampled run keeps its 300 answers as independent draws (the naive rule it is labelled as).
    marks = MARKS.ravel()
    low = marks.mean() - 1.96 * stats.tstd(marks) / np.sqrt(marks.size)
    assert models.loc["sampled", "traditional_naive_ci_low"] == pytest.approx(low, abs=1e-9)


def test_the_note_says_distinct_answers_and_judge_variation(board):
    _, models, _ = board
    note = models.loc["rejudged", "note"]
    assert "30 distinct answers, each judged 10 times" in note
    assert "var_within is judge variation" in note
    assert "distinct answers" not in models.loc["sampled", "note"]


def test_the_leaderboard_and_the_run_page_say_distinct_answers_judged_several_times(board):
    scored, models, result = board
    leaderboard = html.unescape(leaderboard_page(result)[0].content)
    assert "30 distinct answers, each judged 10 times" in leaderboard and "300 answers" in leaderboard
    runs = {run.run_id: run for run in result.runs}
    pages = {
        r: html.unescape(
            document_page(run_page("b", runs[r], models.loc[r].rename(r), scored[scored["run_id"] == r], {})[0])
        )
        for r in runs
    }
    assert "of 30 distinct answers, each judged 10 times" in pages["rejudged"]
    assert "σ̄² measures the judge's variation on one answer" in pages["rejudged"]
    assert "distinct answers" not in pages["sampled"] and "of 300 answers" in pages["sampled"]


def test_no_run_of_the_sampled_multiple_choice_release_is_flagged(tmp_path):
    from dualboard.importers import import_autogenai

    import_autogenai(real_data() / MC_RELEASE, benchmark="mc", dest=tmp_path)
    benchmark, runs = load_imported(tmp_path, "mc")
    flags = {run.run_id: distinct_answers(plan_run(benchmark, run, {}).answers) for run in runs}
    assert len(flags) == 13
    assert not any(rejudged for rejudged, _ in flags.values())
    # Real sampling: most answers differ from round to round, yet some repeat (short letters, same wording).
    distinct = [n for _, n in flags.values()]
    assert all(N_QUESTIONS < n <= N_QUESTIONS * ROUNDS for n in distinct)
    assert min(distinct) < N_QUESTIONS * ROUNDS  # 235 distinct of 300 for mistral-large-latest
