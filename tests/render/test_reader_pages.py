"""What a reader sees: every question on a run page, self-explaining leaderboard columns, model metadata,
the naive interval, the notes, the options in each round's order, and a searchable question list.

Built in-process from the tiny leaderboard plus a two-round run with shuffled options and model
metadata; expected values come from the scored Parquet file and the stats tables read back from disk.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from dualboard import pipeline
from dualboard.project import Project
from dualboard.release_files import load_releases
from dualboard.render.html import safe_url
from dualboard.render.leaderboard import COLUMNS
from dualboard.render.numbers import format_interval, format_number
from dualboard.render.run_pages import OUTCOMES
from dualboard.render.site_content import site_content
from dualboard.scored_files import read_scored
from dualboard.stats.tables import read_tables
from dualboard.store import LocalStore
from tests.browser.payloads import PAYLOADS
from tests.conftest import TINY_QUESTIONS, tiny_metadata, write_run, write_tiny_board
from tests.render.html_tables import item_page, lazy_table_after, tables

FACTS = {
    "parameters_billions": 70,
    "weights": "open",
    "model_license": "Apache-2.0",
    "model_url": "https://example.org/models/shuffler-70b",
}
SHUFFLED = {0: ["B", "A", "C", "D"], 1: ["C", "D", "A", "B"]}
"""The option order of q2 (Lyon, Paris, Nice, Lille) in each round of run-c: Paris is A, then D."""


def two_round_predictions() -> list[dict]:
    """run-c: q2 answered "A" in both rounds: right in round 0 (A = Paris), wrong in round 1 (A = Nice)."""
    rows = []
    for round_ in (0, 1):
        rows += [
            {"question_id": "q1", "round": round_, "response": "Final answer: 4", "recorded": {"judge": 100}},
            {"question_id": "q2", "round": round_, "response": '{"ANSWER": "A"}', "choice_order": SHUFFLED[round_]},
            {
                "question_id": "q3",
                "round": round_,
                "response": "Final answer: Pacific" if round_ else "Final answer: Indian",
                "recorded": {"judge": 60},
            },
        ]
    return rows


@pytest.fixture(scope="module")
def reader_site(tmp_path_factory):
    """(project, content) of the tiny leaderboard with run-a (no model metadata) and run-c (two rounds, metadata)."""
    root = write_tiny_board(tmp_path_factory.mktemp("reader"))
    write_run(root, "run-c", two_round_predictions(), tiny_metadata(model="shuffler-70b", rounds=2, **FACTS))
    project = Project(root)
    store = LocalStore(project.store_dir)
    pipeline.validate(project)
    pipeline.ingest(project, store)
    pipeline.grade(project, store, progress=False)
    pipeline.stats(project)
    results = pipeline.analysed_results(project, store)
    return project, site_content(results, load_releases(root))


def model_name(cell) -> str:
    """The model of a leaderboard Model cell (its badge follows the name)."""
    return cell.text.removesuffix("too few questions").strip()


def page(content, path: str) -> str:
    return next(p.content for p in content.pages if p.path == path)


RUN_PAGE, QUESTION_PAGE = "benchmarks/tiny/runs/run.md", "benchmarks/tiny/questions/question.md"
"""The pages that show one run, one question (by the address's ``?id=``)."""


def test_run_page_lists_every_question_with_both_gradings_per_round(reader_site):
    project, content = reader_site
    scored = read_scored(project.scored_dir(), "tiny")
    run = scored[scored.run_id == "run-c"].sort_values(["question_id", "round"])
    text = item_page(content.assets, "benchmarks/tiny/runs", "run-c")
    listed, _ = lazy_table_after(RUN_PAGE, text, "## Every question", content.assets)
    assert [h.text for h in listed.headers] == [
        "Question",
        "Category",
        "Prompt",
        "Traditional",
        "Answer-key",
        "Difference",
        "Outcome",
    ]
    assert [r[0].text for r in listed.rows] == [q["id"] for q in TINY_QUESTIONS]
    for row, (qid, answers) in zip(listed.rows, run.groupby("question_id"), strict=True):
        question = next(q for q in TINY_QUESTIONS if q["id"] == qid)
        assert row[0].links[0]["href"] == f"../../questions/question/?id={qid}"
        assert row[1].text == question["category"]
        assert question["prompt"].startswith(row[2].text.rstrip("…"))
        for cell, grading in ((row[3], "traditional"), (row[4], "answer_key")):
            assert cell.text == format_number(answers[grading].mean())
            marks = [
                "–" if pd.isna(v) else {100.0: "✓", 0.0: "✗"}.get(v, format_number(v, 0)) for v in answers[grading]
            ]
            assert cell.note.split(" ") == marks, (qid, grading)
    q2 = listed.rows[1]
    assert (q2[3].text, q2[3].note, q2[6].text) == ("50.0", "✓ ✗", "passes both")  # a mean of 50 counts as a pass
    q3 = listed.rows[2]
    assert (q3[3].note, q3[4].note) == ("60 60", "✗ ✓")


def test_run_page_question_list_filters_on_category_and_outcome(reader_site):
    _, content = reader_site
    text = item_page(content.assets, "benchmarks/tiny/runs", "run-c")
    listed, _ = lazy_table_after(RUN_PAGE, text, "## Every question", content.assets)
    filters = [h.text for h in listed.headers if h.attrs.get("data-filter") == "select"]
    assert filters == ["Category", "Outcome"]
    assert 'class="dualboard-table dualboard-sortable dualboard-filterable"' in text[text.index("## Every question") :]
    outcomes = {row[6].text for row in listed.rows}
    assert outcomes <= set(OUTCOMES)


def test_leaderboard_headers_explain_themselves_on_hover_and_on_the_methodology_page(reader_site):
    _, content = reader_site
    board = tables(page(content, "benchmarks/tiny/index.md"))[0]
    titles = {h.text: h.attrs.get("title", "") for h in board.headers}
    for header in ("Rank (interval)", "p (Holm)", "Effect d_z [95% CI]", "MDE (points)"):
        assert len(titles[header]) > 60, header
    assert "Holm" in titles["p (Holm)"] and "simultaneous" in titles["Rank (interval)"]
    assert "80 % power" in titles["MDE (points)"] and "SD of the question differences" in titles["Effect d_z [95% CI]"]
    methodology = html.unescape("".join(a.content for a in content.appendices if a.path == "methodology.md"))
    assert "{#leaderboard-columns}" in methodology
    for header in COLUMNS:
        assert header.title and header.title in methodology, header.text
    assert len({h.key for h in COLUMNS}) == len(COLUMNS), "URL sort keys must be unique"


def test_leaderboard_shows_model_metadata_as_filterable_columns(reader_site):
    _, content = reader_site
    board = tables(page(content, "benchmarks/tiny/index.md"))[0]
    rows = {model_name(r[board.column("Model")]): r for r in board.rows}
    facts = [board.column(h) for h in ("Parameters", "Weights", "Licence", "Link")]
    given, missing = rows["shuffler-70b"], rows["tiny-model"]
    assert [given[i].text for i in facts] == ["70 B", "open", "Apache-2.0", "model card"]
    assert given[facts[3]].links == [{"href": FACTS["model_url"], "rel": "nofollow noopener noreferrer"}]
    assert [given[i].attrs.get("data-filter") for i in facts[:3]] == ["10–100 B", "open", "Apache-2.0"]
    assert [missing[i].text for i in facts] == ["—"] * 4
    assert [missing[i].attrs.get("data-filter") for i in facts[:3]] == ["not given"] * 3
    assert [h.text for h in board.headers if h.attrs.get("data-filter")] == ["Parameters", "Weights", "Licence"]


def test_leaderboard_shows_the_naive_interval_beside_the_honest_one(reader_site):
    project, content = reader_site
    models = read_tables(project.stats_dir("tiny")).models.set_index("model")
    board = tables(page(content, "benchmarks/tiny/index.md"))[0]
    for row in board.rows:
        model = models.loc[model_name(row[board.column("Model")])]
        for grading, header in (("traditional", "Traditional [95% CI]"), ("answer_key", "Answer-key [95% CI]")):
            cell = row[board.column(header)]
            assert cell.text == format_interval(
                model[f"{grading}_mean"], model[f"{grading}_ci_low"], model[f"{grading}_ci_high"]
            )
            naive = format_interval(
                model[f"{grading}_naive_mean"], model[f"{grading}_naive_ci_low"], model[f"{grading}_naive_ci_high"]
            )
            assert cell.note.endswith(f"naive {naive}"), (cell.note, naive)


def test_the_notes_are_on_the_board(reader_site):
    project, content = reader_site
    notes = read_tables(project.stats_dir("tiny")).notes
    board = html.unescape(page(content, "benchmarks/tiny/index.md"))
    assert any("too few questions" in n for n in notes), "3 questions must raise the too-few note"
    for note in notes:
        assert note in board
    models = tables(page(content, "benchmarks/tiny/index.md"))[0]
    assert all(row[1].text.endswith("too few questions") for row in models.rows)


def test_question_page_shows_each_rounds_option_order(reader_site):
    _, content = reader_site
    q2 = item_page(content.assets, "benchmarks/tiny/questions", "q2")
    answers, _ = lazy_table_after(QUESTION_PAGE, q2, "## Answers and verdicts", content.assets)
    assert answers.headers[2].text == "Options as shown"
    run_c = [r for r in answers.rows if r[0].text == "shuffler-70b"]
    assert [(r[1].text, r[2].text, r[2].note) for r in run_c] == [
        ("0", "A. Paris  B. Lyon  C. Nice  D. Lille", "correct here: A"),
        ("1", "A. Nice  B. Lille  C. Lyon  D. Paris", "correct here: D"),
    ]
    verdicts = [next(c.text for c in r if c.text.startswith(("100:", "0:")) and "chose" in c.text) for r in run_c]
    assert "chose A" in verdicts[0] and verdicts[0].endswith("correct A")
    assert "chose A" in verdicts[1] and verdicts[1].endswith("correct D")
    unshuffled = next(r for r in answers.rows if r[0].text == "tiny-model")
    assert (unshuffled[2].text, unshuffled[2].note) == ("A. Lyon  B. Paris  C. Nice  D. Lille", "correct here: B")
    assert "B (in the order listed above" in html.unescape(q2)


def test_questions_index_carries_every_question_text_and_is_searchable(reader_site):
    _, content = reader_site
    text = page(content, "benchmarks/tiny/questions/index.md")
    assert "search:" not in text.split("---")[1], "the question list must stay in the search index"
    listed = tables(text)[0]
    assert [r[listed.column("Prompt")].text for r in listed.rows] == [q["prompt"] for q in TINY_QUESTIONS]
    for question in TINY_QUESTIONS:  # one heading each, which search finds, linking the question's page
        heading = f'<h3 id="q-{question["id"]}">{question["id"]}</h3>'
        section = html.unescape(text[text.index(heading) :].split("<h3", 2)[1])
        assert question["prompt"] in section and f'href="../questions/question/?id={question["id"]}"' in section
    assert "search:\n  exclude: true" in page(content, QUESTION_PAGE), "the page of one question stays out of it"


@pytest.mark.parametrize(
    "payload",
    PAYLOADS
    + [
        "https://example.org/a b",
        'https://example.org/"onmouseover=x',
        "http://example.org/",
        "HTTPS://example.org/",
        "//example.org/x",
        "https://user@example.org/",
        "https://example.org/\n",
        " https://example.org/",
    ],
)
def test_only_plain_https_links_are_made_clickable(payload):
    assert safe_url(payload) is None


def test_a_hostile_licence_is_text_and_a_filter_value_escaped():
    from dualboard.render.html import table
    from dualboard.render.leaderboard import model_facts

    cells = model_facts(
        {
            "model_license": PAYLOADS[1],
            "weights": "open",
            "parameters_billions": 0.5,
            "model_url": "javascript:alert(1)",
        }
    )
    out = table(["p", "w", "l", "u"], [cells])
    assert "<img" not in out and "javascript:" not in out and "href" not in out
    parsed = tables(out)[0].rows[0]
    assert parsed[2].text == PAYLOADS[1] and parsed[2].attrs["data-filter"] == PAYLOADS[1]
    assert (parsed[0].text, parsed[0].attrs["data-filter"]) == ("0.5 B", "under 10 B")


def test_every_leaderboard_column_key_is_a_url_safe_word():
    assert all(h.key and re.fullmatch(r"[a-z_]+", h.key) for h in COLUMNS)


@pytest.mark.slow
def test_tiny_reader_site_builds_strict(reader_site):
    project, _ = reader_site
    store = LocalStore(project.store_dir)
    pipeline.render(project, store)
    site: Path = project.site_dir
    assert "run-c#page" in json.loads((site / "benchmarks/tiny/runs/data-files.json").read_bytes())["files"]
    index = json.loads((site / "search/search_index.json").read_text("utf-8"))
    listed = [d for d in index["docs"] if d["location"].startswith("benchmarks/tiny/questions/")]
    assert listed and all(d["location"].split("#")[0] == "benchmarks/tiny/questions/" for d in listed)
    q2 = next(d for d in listed if d["location"].endswith("#q-q2"))
    assert q2["title"] == "q2" and "Capital of France" in q2["text"], "a question's entry: its id, its prompt"
    assert not any("Capital of France" in d["text"] and "Category" in d["text"] for d in listed), "no table in it"
