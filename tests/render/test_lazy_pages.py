"""Question and run page documents carry no answer: the answers are in data files under shared/, read back here
and checked against the scored Parquet tables; a question's page document stays the same when the runs double.

Built in-process from the tiny leaderboard (tests/conftest.py) graded and analysed for real.
"""

from __future__ import annotations

import gzip
import html
import json
import posixpath
import shutil
from pathlib import Path

import pytest
import yaml

from dualboard import pipeline
from dualboard.kappa import PASS_MARK
from dualboard.project import Project
from dualboard.release_files import load_releases
from dualboard.render.answer_shards import shard_of
from dualboard.render.lazy_tables import FORMAT, Column, data_document, data_files, lazy_table, number, read_data
from dualboard.render.pages import run_slug
from dualboard.render.question_pages import ROLE_LABELS, _verdict, _verdicts, answer_files, question_pages
from dualboard.render.run_pages import disagreements
from dualboard.render.shared_files import SHARED_DIR, SharedFiles
from dualboard.render.site_content import site_content
from dualboard.scored_files import TABLES, ScoredFolder
from dualboard.store import LocalStore
from tests.conftest import tiny_metadata, tiny_predictions, write_run, write_tiny_board
from tests.render.html_tables import item_page, lazy_sources, lazy_table_after, read_document

QUESTIONS = ("q1", "q2", "q3")


def second_run() -> list[dict]:
    """run-b: right on q1 under both gradings, q3 passed by its judge (60) but wrong under the answer key."""
    rows = tiny_predictions()
    rows[2] = {"question_id": "q3", "round": 0, "response": "Final answer: Indian", "recorded": {"judge": 60}}
    return rows


def build(root: Path):
    """Ingest, grade and analyse the folder; return its project and site content."""
    project = Project(root)
    store = LocalStore(project.store_dir)
    pipeline.ingest(project, store)
    pipeline.grade(project, store, progress=False)
    pipeline.stats(project)
    return project, site_content(pipeline.analysed_results(project, store), load_releases(root))


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """(project, content) of the tiny leaderboard with run-a and run-b."""
    root = write_tiny_board(tmp_path_factory.mktemp("lazy"))
    write_run(root, "run-b", second_run(), tiny_metadata(model="second-model"))
    return build(root)


def page(content, path: str) -> str:
    return next(p.content for p in content.pages if p.path == path)


QUESTIONS_FOLDER, RUNS_FOLDER = "benchmarks/tiny/questions", "benchmarks/tiny/runs"
QUESTION_PAGE, RUN_PAGE = f"{QUESTIONS_FOLDER}/question.md", f"{RUNS_FOLDER}/run.md"
"""The pages that show one question, one run (by the address's ``?id=``)."""


def scored_tables(project: Project):
    folder = ScoredFolder.of(project.scored_dir(), "tiny")
    return (folder.published(table).to_pandas() for table in TABLES)


@pytest.mark.parametrize("question", QUESTIONS)
def test_each_question_file_holds_every_answer_and_verdict(board, question):
    project, content = board
    scored, answers, verdicts = scored_tables(project)
    text = item_page(content.assets, QUESTIONS_FOLDER, question)
    table, data = lazy_table_after(QUESTION_PAGE, text, "## Answers and verdicts", content.assets)
    assert data["format"] == FORMAT and data["pass_mark"] == PASS_MARK
    mine = verdicts[verdicts.question_id == question]
    # each grader's column is headed by its grading first: "Traditional · recorded"
    roles = dict(zip(mine.grader, mine.role))
    headers = [h.text.split(" · ")[-1] for h in table.headers]
    graders = headers[headers.index("Response") + 1 :]
    assert set(graders) == set(mine.dropna(subset=["score"]).grader)
    labels = [h.text for h in table.headers][headers.index("Response") + 1 :]
    assert labels == [f"{ROLE_LABELS[roles[g]]} · {g}" for g in graders]
    expected = scored[scored.question_id == question]
    # Shown shard after shard (answer_shards), by run and round within each.
    expected = expected.assign(shard=expected.run_id.map(shard_of)).sort_values(["shard", "run_id", "round"])
    assert len(table.rows) == len(expected)
    responses = answers.set_index(["run_id", "question_id", "round"])["response"]
    for row, answer in zip(table.rows, expected.itertuples()):
        assert row[0].text == answer.model
        assert row[0].links == [{"href": f"../../runs/run/?id={run_slug(answer.run_id)}"}]
        assert row[1].text == str(answer.round)
        assert row[headers.index("Response")].text == responses[(answer.run_id, question, answer.round)]
        for grader in graders:
            verdict = mine[(mine.run_id == answer.run_id) & (mine["round"] == answer.round) & (mine.grader == grader)]
            assert row[headers.index(grader)].text == f"{verdict.score.iloc[0]:.0f}: {verdict.detail.iloc[0]}"


def test_the_data_file_is_named_by_its_content_and_reproducible(board, tmp_path):
    project, content = board
    files = {p: d for p, d in content.assets.items() if p.startswith(f"{SHARED_DIR}/")}
    shards = len({shard_of("run-a"), shard_of("run-b")})
    assert len(files) == len(QUESTIONS) * shards + 2 + 1 + len(QUESTIONS) + 2, (
        "one per question and shard, one per run's questions, run-b's disagreement, one page document per item"
    )
    for path, data in files.items():
        assert path.endswith(".json.gz") and data[:2] == b"\x1f\x8b"
        assert json.loads(gzip.decompress(data)) == read_data(data)
    _, again = build(project.root)
    assert {p: d for p, d in again.assets.items() if p.startswith(f"{SHARED_DIR}/")} == files


def test_pages_carry_no_answer_and_say_how_to_get_them_without_scripts(board):
    project, content = board
    _, answers, _ = scored_tables(project)
    items = [(QUESTIONS_FOLDER, q) for q in QUESTIONS] + [(RUNS_FOLDER, "run-a"), (RUNS_FOLDER, "run-b")]
    for folder, slug in items:
        text = html.unescape(item_page(content.assets, folder, slug))
        assert not any(response in text for response in answers.response), slug
    for path in (QUESTION_PAGE, RUN_PAGE):
        text = html.unescape(page(content, path))
        assert "if this line stays, scripts are off in this browser or the file could not be loaded" in text
    index = json.loads(content.assets[f"{QUESTIONS_FOLDER}/data-files.json"])
    (name,) = index["files"]["q3#page"]
    blocks = read_document(content.assets[posixpath.normpath(f"{QUESTIONS_FOLDER}/{index['shared']}{name}")])
    (lazy,) = [b["lazy"] for b in blocks["blocks"] if "lazy" in b]
    # what the status line of the answers links, from the page's address (benchmarks/tiny/questions/question/)
    assert posixpath.normpath(f"{QUESTIONS_FOLDER}/question/{lazy['downloads']}") == "downloads"
    assert "(≥ 50 counts as a pass)" in html.unescape(item_page(content.assets, QUESTIONS_FOLDER, "q3"))


def test_a_run_page_loads_its_disagreements(board):
    project, content = board
    scored, answers, _ = scored_tables(project)
    text = item_page(content.assets, RUNS_FOLDER, "run-b")
    table, data = lazy_table_after(RUN_PAGE, text, "## Answers the gradings disagree on", content.assets)
    found = disagreements(scored[scored.run_id == "run-b"])
    assert [row[0].text for row in table.rows] == list(found.question_id) == ["q3"]
    (row,) = table.rows
    assert row[0].links == [{"href": "../../questions/question/?id=q3"}]
    assert [c.text for c in row[1:6]] == ["0", "geography", "60", "0", "ok"]
    assert row[6].text == "Final answer: Indian"
    assert "None: each of the" in item_page(content.assets, RUNS_FOLDER, "run-a"), "run-a's gradings agree"


def test_a_release_page_finds_the_shared_files_beside_its_version_folder(board):
    """A release's page is the same page; its folder's index points one level higher, at gh-pages/shared/."""
    project, content = board
    results = pipeline.analysed_results(project, LocalStore(project.store_dir))
    shared = SharedFiles()
    with answer_files(results[0], shared) as answers:
        pages, files = question_pages(results[0], answers)
    released = data_files(files, shared, versioned=True)  # what site_content adds to a release's assets
    released.update({f"../{path}": data for path, data in shared.data.items()})  # beside the version folder
    index = f"{QUESTIONS_FOLDER}/data-files.json"
    assert next(p.content for p in pages if p.path == QUESTION_PAGE) == page(content, QUESTION_PAGE)
    text = item_page(released, QUESTIONS_FOLDER, "q1")
    assert text == item_page(content.assets, QUESTIONS_FOLDER, "q1")
    plain = lazy_sources(QUESTION_PAGE, text, "## Answers", content.assets)
    assert plain and lazy_sources(QUESTION_PAGE, text, "## Answers", released) == [f"../{p}" for p in plain]
    assert json.loads(released[index])["shared"] == "../" + json.loads(content.assets[index])["shared"]
    assert [released[f"../{p}"] for p in plain] == [content.assets[p] for p in plain]


def test_question_page_document_stays_the_same_when_the_runs_double(board, tmp_path):
    """Only the answers' data files and the index change: a question's page document is the same file."""
    project, content = board
    root = tmp_path / "doubled"
    shutil.copytree(project.root / "data", root / "data")
    for run in ("run-a", "run-b"):
        copy = root / "submissions" / "tiny" / f"{run}-again"
        shutil.copytree(project.root / "submissions" / "tiny" / run, copy)
        metadata = yaml.safe_load((copy / "metadata.yaml").read_text("utf-8"))  # the same model: its own revision
        (copy / "metadata.yaml").write_text(yaml.safe_dump({**metadata, "model_revision": "again"}), "utf-8")
        shutil.copytree(project.root / "submissions" / "tiny" / run, root / "submissions" / "tiny" / run)
    _, doubled = build(root)
    index = f"{QUESTIONS_FOLDER}/data-files.json"
    for question in QUESTIONS:
        before, after = (json.loads(c.assets[index])["files"][f"{question}#page"] for c in (content, doubled))
        assert after == before, question
        text = item_page(doubled.assets, QUESTIONS_FOLDER, question)
        now, then = (lazy_table_after(QUESTION_PAGE, text, "## Answers", c.assets)[1] for c in (doubled, content))
        assert now != then
        assert len(now["rows"]) == 2 * len(then["rows"])


def test_two_tables_of_one_page_with_one_noun_are_refused():
    tables = [lazy_table("b/questions/q.md", [Column("Round", "number")], [[i]], [], noun="answers") for i in (0, 1)]
    with pytest.raises(ValueError, match=r"two lazy tables of b/questions/data-files.json have the key 'q#answers'"):
        data_files(tables, SharedFiles(), versioned=False)


def test_a_data_file_reads_back_the_numbers_it_was_given():
    """Floats Python writes with an exponent (msgspec writes them otherwise) read back as the same numbers;
    NaN and infinities, which JSON lacks, are null through number()."""
    values = [1e-05, 2.5e-07, 1e16, 1.2345678901234568e17, 0.0001, 66.66666666666667, 100.0, -0.0, 7, None]
    special = [number(float("nan")), number(float("inf")), number(float("-inf"))]
    _, data = data_document([Column("Value", "number")], [[v] for v in values + special], [])
    assert read_data(data)["rows"] == [[v] for v in values] + [[None]] * 3


def test_each_answer_s_verdict_cell_is_the_one_made_for_it_alone() -> None:
    """Scores are formatted once per distinct value: -0.0 (equal to 0.0 as a key) and 1 vs 1.0 stay apart."""
    scores = [0.0, -0.0, 100.0, 1, 1.0, float("nan"), None, -0.0, 0.0]
    details = [f"d{i}" for i in range(len(scores))]
    assert _verdicts(scores, details) == [_verdict(s, d) for s, d in zip(scores, details, strict=True)]
    assert json.dumps(_verdicts([0.0, -0.0], ["a", "b"])) == json.dumps([_verdict(0.0, "a"), _verdict(-0.0, "b")])
