"""Issue 26: every sentence the leaderboard says about a number is true (items 1, 3, 8 and 10, render side).

A constructed board: three runs of 30 questions, one of them judged by the answer-key grader on under 80 % of its
answers (not ranked there) with one unreadable answer, and a run whose gradings share only 2 judged questions. Its
models row is given the NaN interval of a comparison under TOO_FEW_QUESTIONS (exact test only), as the stats stage
writes it, so these tests read the render alone.
"""

from __future__ import annotations

import html
import json

import numpy as np
import pandas as pd
import pytest

from dualboard.render.leaderboard import leaderboard_page
from dualboard.render.numbers import format_interval
from dualboard.render.pages import BenchmarkResults
from dualboard.render.reference_pages import methodology_appendix
from dualboard.render.run_pages import run_page
from dualboard.stats import analyse
from tests.render.html_tables import document_page
from tests.stats.stats_builders import board_results, scored_run

N = 30


def _board() -> BenchmarkResults:
    rng = np.random.default_rng(26)
    frames = []
    for run_id, p in (("a", 0.8), ("b", 0.5), ("c", 0.6)):
        trad = 100.0 * (rng.random((N, 1)) < p)
        key = np.where(rng.random((N, 1)) < 0.8, trad, 100.0 - trad)
        if run_id == "c":
            key[:12] = np.nan  # answer-key verdicts on 60 % of its answers: not ranked under answer-key grading
        frames.append(scored_run(run_id, trad, key))
    # "two": the answer-key grader judged 2 of its 30 answers, both a drop: 2 judged questions, exact p = 0.5
    key = np.full((N, 1), np.nan)
    key[:2] = 0.0
    frames.append(scored_run("two", np.full((N, 1), 100.0), key))
    scored = pd.concat(frames, ignore_index=True).assign(answer_key_parse="ok")
    unreadable = (scored["run_id"] == "a") & (scored["question_id"] == "q000")  # the model's failure: 0, parse none
    scored.loc[unreadable, ["traditional", "answer_key", "verdict_parse", "answer_key_parse"]] = [
        0.0,
        0.0,
        "none",
        "none",
    ]
    stats = analyse(scored, n_boot=100)
    two = stats.models["run_id"] == "two"
    stats.models.loc[two, ["diff_ci_low", "diff_ci_high"]] = np.nan  # exact test only: no interval
    return board_results(scored, stats, N, ("a", "b", "c", "two"))


@pytest.fixture(scope="module")
def board() -> BenchmarkResults:
    return _board()


@pytest.fixture(scope="module")
def page(board):
    return leaderboard_page(board)


def _rows(text: str) -> dict[str, str]:
    """Each table row of the answer-key ranking, keyed by model name."""
    pane = text.split('class="dualboard-switch-pane"')[1]
    rows = [html.unescape(r) for r in pane.split("<tr")[2:]]
    return {r.split("</a>")[0].rsplit(">", 1)[1]: r for r in rows}


def _chart(page, name: str) -> dict:
    return json.loads(page[1][f"benchmarks/b/charts/{name}.json"])


def _ys(trace: dict) -> list[str]:
    return [y for y in trace.get("y") or [] if y is not None]


# ---------------------------------------------------------------- item 1: nothing drawn under TOO_FEW_QUESTIONS


def test_a_comparison_on_two_judged_questions_reads_too_few_with_the_exact_p(board, page):
    row = _rows(page[0].content)["model-two"]
    p = board.stats.models.set_index("run_id").loc["two", "p_value"]
    assert p == pytest.approx(0.5)
    assert "too few judged questions (2): exact p 0.500" in row  # before: "-100.0 [nan, nan]"
    assert "nothing detectable: too few judged questions (2 < 10)" in row


def test_the_forest_plot_and_the_dumbbell_bar_leave_it_out(page):
    forest = _chart(page, "differences")["data"][0]
    assert "two" not in _ys(forest) and set(_ys(forest)) == {"a", "b", "c"}
    bar = _chart(page, "scores")["data"][0]
    assert "two" not in _ys(bar)  # no bar joins its dots


def test_the_run_page_shows_no_interval_either(board):
    models = board.stats.models.set_index("run_id", drop=False)
    page, _ = run_page("b", board.runs[3], models.loc["two"], board.scored.query("run_id == 'two'"), {})
    text = html.unescape(document_page(page))
    assert "too few judged questions (2): exact p 0.500" in text


# ---------------------------------------------------------------- item 3: no interval rounded to a point


def test_an_interval_is_never_rounded_to_a_point():
    assert format_interval(1.0, 0.9974, 1.0, 2) == "1.000 [0.997, 1.000]"  # before: "1.00 [1.00, 1.00]"
    assert format_interval(100.0, 99.97, 100.0) == "100.00 [99.97, 100.00]"
    assert format_interval(0.0, 0.0, 0.0) == "0.0 [0.0, 0.0]"  # a degenerate one stays as it is
    # a bound that is not 0 never reads as 0: before, "-0.0 [-0.1, 0.0]" hid that the interval crosses 0
    assert format_interval(-0.026, -0.078, 0.027) == "-0.03 [-0.08, 0.03]"


# ---------------------------------------------------------------- item 8: the actual cause, no overlap claim


def test_captions_never_read_order_from_overlapping_intervals(page):
    text = page[0].content
    assert "overlapping intervals between two runs mean" not in text
    assert "Whether intervals overlap is not a test" in text and "pairwise matrix" in text
    assert "a drawn interval crossing zero is compatible with no difference" in text


def test_each_nothing_detectable_states_its_cause(board, page):
    text = html.unescape(page[0].content)
    models = board.stats.models.set_index("run_id")
    for run_id, row in _rows(page[0].content).items():
        rec = models.loc[run_id.removeprefix("model-")]
        if rec["mde_status"] != "nothing_detectable":
            continue
        n, k = int(rec["n_questions_paired"]), int(rec["n_discordant_up"] + rec["n_discordant_down"])
        cause = f"too few judged questions ({n} < 10)" if n < 10 else f"too few discordant questions ({k} of {n})"
        assert f"nothing detectable: {cause}" in row, row
    assert "the two gradings disagree on too few questions for any difference" not in text
    appendix = html.unescape(methodology_appendix([board]).content)
    assert "nothing detectable: too few judged questions (2 < 10)" in appendix


def test_the_power_table_gives_the_cause_of_a_run_whose_gradings_agree_on_every_question(board):
    """Several rounds, every question difference 0: before, the power table said "the disagreement is
    concentrated on too few questions" where no question differs (it did not know the discordant count)."""
    rng = np.random.default_rng(8)
    trad = 100.0 * (rng.random((N, 3)) < 0.6)
    scored = scored_run("same", trad, trad.copy()).assign(answer_key_parse="ok")
    agreeing = board_results(scored, analyse(scored, n_boot=100), N, ("same",))
    appendix = html.unescape(methodology_appendix([agreeing]).content)
    assert f"nothing detectable: no judged question differs (of {N})" in appendix
    assert "concentrated on too few questions" not in appendix


# ---------------------------------------------------------------- item 10: unreadable answers, unranked runs


def test_the_unreadable_share_stands_beside_each_grading(board, page):
    models = board.stats.models.set_index("run_id")
    assert models.loc["a", "traditional_missing_rate"] == pytest.approx(1 / N)
    assert models.loc["a", "answer_key_missing_rate"] == pytest.approx(1 / N)
    assert (models.drop("a")[["traditional_missing_rate", "answer_key_missing_rate"]] == 0).all().all()
    rows = _rows(page[0].content)
    assert rows["model-a"].count("3.3 % unreadable (scored 0)") == 2
    assert "unreadable" not in rows["model-b"]


def test_charts_leave_out_a_grading_that_does_not_rank_the_run(board, page):
    models = board.stats.models.set_index("run_id")
    assert not models.loc["c", "ranked_answer_key"] and models.loc["c", "ranked_traditional"]
    traces = {t.get("name"): t for t in _chart(page, "scores")["data"]}
    assert "c" not in _ys(traces["Answer-key grading"]) and "c" in _ys(traces["Traditional grading"])
    assert "c" not in _ys(_chart(page, "scores")["data"][0])  # no bar to a dot that is not drawn
    heat = _chart(page, "categories")["data"]
    key_panel = next(t for t in heat if t["xaxis"] == "x2")
    c_row = key_panel["y"].index("c")
    assert key_panel["text"][c_row] == [""]  # a blank cell; before: c's answer-key score was drawn
    forest = _chart(page, "differences")["data"][0]
    symbols = dict(zip(forest["y"], forest["marker"]["symbol"], strict=True))
    assert symbols == {"a": "square", "b": "square", "c": "square-open"}  # c is greyed in the table
    pairwise = _chart(page, "pairwise-answer_key")["data"][0]
    assert "c" not in pairwise["x"] and "c" in _chart(page, "pairwise-traditional")["data"][0]["x"]
