"""The reader's pages on the real multiple-choice release (13 models × 30 questions × 10 rounds):
readable model names, every question with its 10 rounds on a run page, each round's option order,
and the naive interval beside the clustered one."""

from __future__ import annotations

import gzip
import html
import json
import shutil
from pathlib import Path

import pytest

from dualboard import pipeline
from dualboard.project import Project
from dualboard.release_files import load_releases
from dualboard.render.shared_files import shared_name
from dualboard.render.site_content import site_content
from dualboard.scored_files import read_scored
from dualboard.stats.tables import read_tables
from dualboard.store import LocalStore
from tests.render.html_tables import item_page, lazy_table_after, tables

RUNS, QUESTIONS = "benchmarks/easy-problems-mc/runs", "benchmarks/easy-problems-mc/questions"


@pytest.fixture(scope="module")
def real_board(imported_mc: Path, tmp_path_factory):
    """(project, pages by path, data files by path) of the imported release, graded and analysed in a private copy."""
    root = tmp_path_factory.mktemp("real-board")
    for name in ("data", "submissions"):
        shutil.copytree(imported_mc / name, root / name)
    project = Project(root)
    store = LocalStore(project.store_dir)
    pipeline.ingest(project, store)
    pipeline.grade(project, store, progress=False)
    pipeline.stats(project)
    results = pipeline.analysed_results(project, store)
    content = site_content(results, load_releases(root))
    return project, {p.path: p.content for p in content.pages}, content.assets


@pytest.mark.slow
def test_the_board_shows_models_not_deployments(real_board):
    _, pages, assets = real_board
    board = html.unescape(pages["benchmarks/easy-problems-mc/index.md"])
    assert "azure" not in board
    models = [row[1].text for row in tables(pages["benchmarks/easy-problems-mc/index.md"])[0].rows]
    assert {"Meta-Llama-3-1-405B-Instruct", "Meta-Llama-3-1-70B-Instruct"} <= set(models) and len(models) == 13
    run_page = html.unescape(item_page(assets, RUNS, "meta-llama-3-1-405b-instruct"))
    assert "Meta-Llama-3-1-405B-Instruct-jjo_eastus_models_ai_azure_com" in run_page, (
        "the deployment stays in the metadata"
    )


def test_naive_interval_is_narrower_than_the_clustered_one_with_ten_rounds(real_board):
    """Ten correlated rounds per question: treating 300 answers as independent shrinks every interval."""
    project, _, _ = real_board
    models = read_tables(project.stats_dir("easy-problems-mc")).models
    for grading in ("traditional", "answer_key"):
        naive = models[f"{grading}_naive_ci_high"] - models[f"{grading}_naive_ci_low"]
        clustered = models[f"{grading}_ci_high"] - models[f"{grading}_ci_low"]
        assert (naive < clustered).all(), models[["run_id"]].assign(naive=naive, clustered=clustered)


def test_run_page_lists_all_30_questions_with_10_rounds_each(real_board):
    project, pages, assets = real_board
    listed, _ = lazy_table_after(f"{RUNS}/run.md", item_page(assets, RUNS, "o1-preview"), "## Every question", assets)
    scored = read_scored(project.scored_dir(), "easy-problems-mc")
    run = scored[scored.run_id == "o1-preview"]
    assert len(listed.rows) == 30
    for row in listed.rows:
        answers = run[run.question_id == row[0].text].sort_values("round")
        assert row[3].note.split(" ") == ["✓" if v == 100 else "✗" for v in answers.traditional]
        assert len(row[4].note.split(" ")) == 10


def test_question_page_shows_the_order_of_each_round(real_board):
    _, pages, assets = real_board
    page = item_page(assets, QUESTIONS, "1")
    answers, _ = lazy_table_after(f"{QUESTIONS}/question.md", page, "## Answers and verdicts", assets)
    assert answers.headers[2].text == "Options as shown"
    assert len(answers.rows) == 130
    orders = {row[2].text for row in answers.rows}
    assert len(orders) > 1, "the release shuffles options per round"
    for row in answers.rows:
        correct_here = row[2].note.removeprefix("correct here: ")
        verdict = next(
            c.text for c in row[4:] if "chose" in c.text or "no readable option" in c.text or "empty" in c.text
        )
        assert verdict.endswith(f"correct {correct_here}"), (row[2].text, row[2].note, verdict)


def test_data_files_hold_the_json_python_writes_and_are_named_by_it(real_board):
    """msgspec writes each data file's JSON (lazy_tables._ENCODER): on the real answers, byte for byte what
    ``json.dumps`` wrote before, so every file keeps its content name."""
    _, _, assets = real_board
    data_files = {path: data for path, data in assets.items() if path.endswith(".json.gz")}
    assert len(data_files) > 30  # every question's shards and every run's two tables
    for path, data in data_files.items():
        raw = gzip.decompress(data)
        again = json.dumps(json.loads(raw), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        assert raw == again.encode("utf-8"), path
        assert path == shared_name(raw, ".json.gz")
