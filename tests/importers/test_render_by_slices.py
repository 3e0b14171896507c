"""The question and run pages read the answers a slice of questions at a time, and every run's list of
questions from one grouping: their pages and data files are byte for byte those of the plain way, which
holds every response in memory (main's code before the change, kept here as the reference).

On the real multiple-choice release (13 models × 30 questions × 10 rounds, shuffled options), with runs
read from the store in full and as a build reads them after validation (predictions not yet read), and
with slices of many questions, of one question each, and of the whole benchmark.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from dualboard import pipeline
from dualboard.errors import DualboardError
from dualboard.grading.choices import options_as_shown
from dualboard.intake.validate import DeferredPredictions
from dualboard.project import Project
from dualboard.render import answer_texts, question_pages, run_pages
from dualboard.render.answer_shards import shard_groups, shard_of
from dualboard.render.charts import GRADINGS
from dualboard.render.item_pages import item_page
from dualboard.render.kept_files import KeptFiles
from dualboard.render.lazy_tables import data_document
from dualboard.render.pages import SHOWN_VERDICT_COLUMNS, BenchmarkResults, question_slugs, run_href, run_slug
from dualboard.render.shared_files import SharedFiles
from dualboard.scored_files import ANSWER_SLOT, ANSWERS, VERDICTS, ScoredFolder
from dualboard.store import LocalStore


@pytest.fixture(scope="module")
def graded(imported_mc: Path, tmp_path_factory) -> Project:
    """A private copy of the imported release, validated (runs remembered), ingested, graded and analysed."""
    root = tmp_path_factory.mktemp("slices")
    for name in ("data", "submissions"):
        shutil.copytree(imported_mc / name, root / name)
    project = Project(root)
    store = LocalStore(project.store_dir)
    cache = pipeline.open_cache(project)
    pipeline.validate(project, cache=cache)
    pipeline.ingest(project, store)
    pipeline.grade(project, store, progress=False)
    pipeline.stats(project)
    return project


def results(project: Project, *, deferred: bool) -> BenchmarkResults:
    """The benchmark's results, its runs read in full or (``deferred``) as a build after validation reads them."""
    cache = pipeline.open_cache(project) if deferred else None
    [result] = pipeline.analysed_results(project, LocalStore(project.store_dir), cache)
    assert all(isinstance(r.predictions, DeferredPredictions) == deferred for r in result.runs)
    return result


def reference_question_pages(result: BenchmarkResults) -> tuple[list, dict[str, bytes]]:
    """Every answer of every run merged with its verdicts at once (details included, read from the verdicts file,
    which the render's own table lacks), then cut by question and shard."""
    shown = result.files.read(VERDICTS, list(SHOWN_VERDICT_COLUMNS)).to_pandas()
    verdicts = question_pages._verdict_table(shown, question_pages._grader_order(shown))
    by_id = {q["id"]: q for q in result.benchmark.questions}
    predictions = pd.DataFrame(
        [
            (run.run_id, p["question_id"], int(p.get("round", 0)), p.get("response", ""))
            + options_as_shown(by_id[p["question_id"]], p)[1:]
            for run in result.runs
            for p in run.predictions
        ],
        columns=[*ANSWER_SLOT, "response", "options_shown", "correct_letter"],
    )
    table = verdicts.merge(predictions, on=list(ANSWER_SLOT), how="left")
    table["shard"] = table["run_id"].map(shard_of)
    by_question = {
        (qid, shard): answers
        for shard, part in table.groupby("shard")
        for qid, answers in question_pages._answers_by_question(part.drop(columns="shard")).items()
    }
    graders = question_pages.question_graders(result.verdicts)
    groups = shard_groups(result.verdicts["run_id"])
    models = dict(zip(result.models["run_id"], result.models["model"]))
    files, data = {}, {}
    for (qid, shard), answers in sorted(by_question.items(), key=lambda item: item[0][1]):
        links = {r: (i, (models[r], run_href(run_slug(r), "../../"))) for i, r in enumerate(groups[shard])}
        columns = question_pages.answer_columns(by_id[qid], graders.get(qid, []))
        rows = question_pages._answer_rows(answers, by_id[qid], graders.get(qid, []), links)
        path, blob = data_document(columns, rows, [link for _, link in links.values()])
        files.setdefault(qid, []).append(path)
        data[path] = blob
    slugs = question_slugs(result.benchmark)
    pages = [question_pages.question_list(result, slugs), item_page(result.name, "questions", "Question")]
    roles = dict(zip(shown["grader"], shown["role"]))
    for q in result.benchmark.questions:
        qid = q["id"]
        at = (slugs[qid], graders.get(qid, []), files.get(qid, []), roles)
        document, _ = question_pages.question_page(result.name, q, *at)
        data.update(zip(document.paths, document.data))
    return pages, data


def carried(files: list) -> dict[str, bytes]:
    """The data files that page documents and lazy tables carry (the answers' shards went to their SharedFiles)."""
    return {path: blob for f in files for path, blob in zip(f.paths, f.data)}


def reference_per_question(scored: pd.DataFrame) -> dict:
    """Main's list of one run's questions: a grouping per run, each round's mark joined by pandas."""
    ordered = scored.sort_values("round", kind="stable")
    question_ids = ordered["question_id"].astype(str)
    grouped = ordered.groupby(question_ids, sort=False)
    summary = grouped[list(GRADINGS)].mean()
    summary["category"] = grouped["category"].first()
    for g in GRADINGS:
        summary[f"rounds:{g}"] = ordered[g].map(run_pages._round_mark).groupby(question_ids, sort=False).agg(" ".join)
    return summary.to_dict("index")


def reference_run_pages(result: BenchmarkResults) -> tuple[list, dict[str, bytes]]:
    """Main's run pages: each run's questions grouped on their own, its disagreements' text from its predictions."""
    slugs, models = question_slugs(result.benchmark), result.models.set_index("run_id")
    pages, data = [run_pages.runs_index(result), item_page(result.name, "runs", "Run")], {}
    for run in result.runs:
        scored = result.scored[result.scored["run_id"] == run.run_id]
        texts = {(run.run_id, p["question_id"], int(p.get("round", 0))): p.get("response", "") for p in run.predictions}
        document, tables = run_pages.run_page(
            result.name,
            run,
            models.loc[run.run_id],
            scored,
            slugs,
            result.benchmark.questions,
            current_version=result.benchmark.version,
            answered=reference_per_question(scored),
            responses=texts,
        )
        data.update(pair for t in [document, *tables] for pair in zip(t.paths, t.data))
    return pages, data


@pytest.mark.slow
@pytest.mark.parametrize("deferred", [False, True], ids=["runs-in-full", "runs-deferred"])
@pytest.mark.parametrize("slice_answers", [1000, 1, 10**9], ids=["slices", "one-question-each", "one-slice"])
def test_question_pages_by_slices_are_byte_identical(graded, monkeypatch, deferred, slice_answers):
    expected_pages, expected_data = reference_question_pages(results(graded, deferred=False))
    monkeypatch.setattr(answer_texts, "SLICE_ANSWERS", slice_answers)
    shared = SharedFiles()
    result = results(graded, deferred=deferred)
    with question_pages.answer_files(result, shared) as answers:
        pages, files = question_pages.question_pages(result, answers)
    assert [(p.path, p.content) for p in pages] == [(p.path, p.content) for p in expected_pages]
    assert shared.data | carried(files) == expected_data
    assert len(shared.data) >= 30, "a file per question and shard"


@pytest.mark.slow
@pytest.mark.parametrize("deferred", [False, True], ids=["runs-in-full", "runs-deferred"])
def test_question_pages_made_by_worker_processes_are_byte_identical(graded, tmp_path, deferred):
    """A worker process makes the shards' files in the docs folder (two jobs: it and this process): the same files."""
    expected_pages, expected_data = reference_question_pages(results(graded, deferred=False))
    shared = SharedFiles(tmp_path)
    result = results(graded, deferred=deferred)
    with question_pages.answer_files(result, shared, jobs=2) as answers:
        assert len(answers.pending) >= 2, "the shards are being made by workers"
        # a shard whose worker fails is made again here: the worker path must not fail unseen
        assert all(future.exception() is None for future, _work in answers.pending.values())
        pages, files = question_pages.question_pages(result, answers)
    assert [(p.path, p.content) for p in pages] == [(p.path, p.content) for p in expected_pages]
    assert {name: (tmp_path / name).read_bytes() for name in shared.names} | carried(files) == expected_data


@pytest.mark.slow
@pytest.mark.parametrize("deferred", [False, True], ids=["runs-in-full", "runs-deferred"])
def test_run_pages_from_one_grouping_are_byte_identical(graded, deferred):
    expected_pages, expected_data = reference_run_pages(results(graded, deferred=False))
    pages, files = run_pages.run_pages(results(graded, deferred=deferred))
    assert [(p.path, p.content) for p in pages] == [(p.path, p.content) for p in expected_pages]
    assert carried(files) == expected_data
    assert sum(f.key.endswith("#page") for f in files) == 13


def test_the_slices_hold_every_answer_once_in_question_order(graded):
    files = ScoredFolder.of(graded.scored_dir(), "easy-problems-mc")
    table = files.read(ANSWERS, answer_texts.TEXT_COLUMNS).to_pandas()
    questions = list(dict.fromkeys(table["question_id"]))
    slices = answer_texts.question_slices(questions, table["question_id"].value_counts().to_dict(), limit=300)
    assert [q for s in slices for q in s] == questions and len(slices) == 15  # 130 answers a question
    parts = [t.to_pandas() for t in answer_texts.texts_by_slice(files, slices)]
    for ids, part in zip(slices, parts, strict=True):
        assert set(part["question_id"]) == set(ids)
    pd.testing.assert_frame_equal(
        pd.concat(parts).sort_values(list(ANSWER_SLOT)).reset_index(drop=True),
        table.sort_values(list(ANSWER_SLOT)).reset_index(drop=True),
    )


def test_a_grade_while_the_render_reads_fails_the_render(graded, tmp_path):
    """The shards are keyed by the files' bytes and made from them: a grade in between would have its files kept
    under the first one's keys, so the render stops and keeps nothing."""
    result = results(graded, deferred=False)
    kept = KeptFiles(tmp_path / "kept.json")
    with question_pages.answer_files(result, SharedFiles(tmp_path / "docs"), kept, jobs=1) as answers:
        result.files.write_about(result.files.about())  # as a grade rewrites it
        with pytest.raises(DualboardError, match="replaced while the render read it"):
            question_pages.question_pages(result, answers)
    assert not (tmp_path / "kept.json").exists()


def test_the_responses_of_one_runs_answers_read_that_runs_file_only(graded, monkeypatch):
    """As after adding a run: its listed disagreements' texts, from its own file of the answers table."""
    result = results(graded, deferred=False)
    scored = result.scored
    listed = {r.run_id: run_pages.listed_disagreements(scored[scored["run_id"] == r.run_id]) for r in result.runs}
    run = max(result.runs, key=lambda r: len(listed[r.run_id]))
    slots = listed[run.run_id]
    read, read_table = [], pq.read_table
    monkeypatch.setattr(
        pq, "read_table", lambda path, *a, **k: read.append(Path(path).name) or read_table(path, *a, **k)
    )
    texts = answer_texts.responses_of(result.files, slots)
    submitted = {(run.run_id, p["question_id"], int(p.get("round", 0))): p.get("response", "") for p in run.predictions}
    assert len(slots) > 0 and texts == {slot: submitted[slot] for slot in texts}
    assert set(texts) == set(zip(slots["run_id"], slots["question_id"], slots["round"].tolist()))
    assert set(read) == {f"{run.run_id}.parquet"}
