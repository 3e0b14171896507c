"""Coverage on the pages: verdict shares beside the numbers, unranked runs greyed with the reason,
the banner with the fix when most runs are unranked, and "the gradings agree on N of M answers"."""

from __future__ import annotations

import html

import markdown
import numpy as np
import pandas as pd
import pytest

from dualboard.render.leaderboard import coverage_banner, leaderboard_page
from dualboard.render.pages import BenchmarkResults, home_page
from dualboard.render.run_pages import run_page
from dualboard.stats import analyse
from tests.render.html_tables import document_page, tables
from tests.stats.stats_builders import board_results, scored_run

FIX = "configure the `llm` grader against an OpenAI-compatible endpoint, or add human labels"


def _results(missing: dict[str, int]) -> BenchmarkResults:
    """Runs of 50 questions × 2 rounds; ``missing`` answer-key verdicts removed per run (of 100)."""
    rng = np.random.default_rng(3)
    frames = []
    for i, (run_id, gap) in enumerate(missing.items()):
        trad = 100.0 * (rng.random((50, 2)) < 0.3 + 0.15 * i)
        key = trad.copy()
        key[0, 0] = 100.0 - key[0, 0]  # one disagreement per run
        key.ravel()[100 - gap :] = np.nan
        frames.append(scored_run(run_id, trad, key))
    scored = pd.concat(frames, ignore_index=True).assign(answer_key_parse="ok")
    return board_results(scored, analyse(scored, n_boot=100), 50, missing)


@pytest.fixture(scope="module")
def one_unranked() -> BenchmarkResults:
    return _results({"a": 0, "b": 20, "c": 21, "d": 0})


@pytest.fixture(scope="module")
def most_unranked() -> BenchmarkResults:
    return _results({"a": 0, "b": 30, "c": 21, "d": 50})


def _rows(text: str) -> dict[str, str]:
    """Each table row of the answer-key ranking, keyed by model name."""
    pane = text.split('class="dualboard-switch-pane"')[1]
    rows = [html.unescape(r) for r in pane.split("<tr")[2:]]
    return {r.split("</a>")[0].rsplit(">", 1)[1]: r for r in rows}


def test_an_unranked_run_is_greyed_with_the_reason(one_unranked):
    page, _ = leaderboard_page(one_unranked)
    rows = _rows(page.content)
    assert rows["model-c"].startswith(' class="dualboard-unranked"')
    assert "not ranked: answer-key verdicts on 79 % of answers (under 80 %)" in rows["model-c"]
    assert "79 % judged" in rows["model-c"]
    assert "dualboard-unranked" not in rows["model-b"] and "80 % judged" in rows["model-b"]
    assert "dualboard-unranked" not in rows["model-a"]
    assert "% judged" not in rows["model-a"]  # full coverage needs no mention
    assert "ranks few runs" not in page.content  # one run of four is not most


def test_most_runs_unranked_puts_the_fix_at_the_top(most_unranked):
    page, _ = leaderboard_page(most_unranked)
    banner = page.content.index('!!! warning "Answer-key grading ranks few runs"')
    assert banner < page.content.index("dualboard-switch")
    assert "3 of 4 runs have answer-key verdicts on under 80 % of their answers" in page.content
    assert f"To fix: {FIX}." in page.content
    assert "Traditional grading ranks few runs" not in page.content
    shown = markdown.markdown(coverage_banner(most_unranked.models), extensions=["admonition"])
    assert shown.startswith('<div class="admonition warning">') and "<code>llm</code>" in shown


def test_the_difference_says_on_how_many_answers_the_gradings_agree(one_unranked):
    page, _ = leaderboard_page(one_unranked)
    rows = _rows(page.content)
    assert "the gradings agree on 99 of 100 answers" in rows["model-a"]
    assert "the gradings agree on 78 of the 79 answers both judged (of 100)" in rows["model-c"]
    assert "Answers with a verdict: traditional 100.0 %, answer-key 89.8 % of 400." in page.content


def test_the_run_page_gives_coverage_the_n_used_and_why_unranked(one_unranked):
    models = one_unranked.models.set_index("run_id")
    page, _ = run_page("b", one_unranked.runs[2], models.loc["c"], one_unranked.scored.query("run_id == 'c'"), {})
    text = html.unescape(document_page(page))
    assert "traditional 100 %, answer-key 79 % of 100 answers" in text
    assert "not ranked: answer-key verdicts on 79 % of answers (under 80 %)" in text
    assert "the gradings agree on 78 of the 79 answers both judged (of 100), over 40 of 50 questions" in text
    assert "1 of the 79 answers both gradings judged pass one and fail the other" in text


@pytest.mark.parametrize("grading", ["traditional", "answer_key"])
def test_the_home_page_names_every_run_tied_for_first(one_unranked, grading):
    """Tied 1st as the leaderboard marks it (the rank interval starts at 1): the home page names them all."""
    models = one_unranked.models
    tied = models[models[f"tied_first_{grading}"].fillna(False).astype(bool) & models[f"ranked_{grading}"]]
    row = tables(home_page([one_unranked], None).content)[0].rows[0]
    leader = row[3 if grading == "traditional" else 4].text
    if len(tied) > 1:
        assert leader.startswith("tied 1st: ")
        assert sorted(part.split(" (")[0] for part in leader.removeprefix("tied 1st: ").split(", ")) == sorted(
            tied["model"]
        )
    else:
        assert "tied" not in leader and leader.startswith(tied["model"].iloc[0])


def test_an_unranked_run_never_leads_the_home_page(one_unranked):
    models = one_unranked.models.set_index("run_id")
    assert models["answer_key_mean"].idxmax() == "d" and models.loc["d", "ranked_answer_key"]
    text = html.unescape(home_page([one_unranked], None).content)
    assert "model-d (" in text
    gappy = _results({"a": 30, "b": 30})
    assert "none ranked (every run has answer-key verdicts on under 80 % of its answers)" in html.unescape(
        home_page([gappy], None).content
    )
