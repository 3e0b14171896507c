"""``dualboard grade`` writes what the plain per-answer path writes, file for file.

The grade stage takes shortcuts for speed: workers forked from a server that
imported the grading code, verdict keys built from a part per grader and a
part per answer, run grades built column by column, and the scored tables
joined from the run cache's files, their column chunks copied. The reference here is the plain path,
written out in this file as it was before the shortcuts: one row dict per
answer and per verdict, each key the sha256 of the canonical JSON of its whole
material, the ``answer_key`` column filled in pandas and every table written
through pandas. The same runs are graded both ways (the two real releases of
"Easy Problems That LLMs Get Wrong", the bundled demo with its human labels, and
hostile answers) and every file of build/scored/ is read
back and compared frame by frame.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dualboard import pipeline
from dualboard.grading.answer_key_choice import ChoiceEvidence, choose_answer_key, with_answer_key
from dualboard.grading.cache import question_digest, verdict_key
from dualboard.grading.choices import options_as_shown
from dualboard.grading.human import HumanGrader
from dualboard.grading.rules import RulesGrader
from dualboard.grading.run_grades import (
    RUN_ANSWER_COLUMNS,
    RunGrades,
    answered_share,
    distinct_answers,
    plan_run,
)
from dualboard.grading.tables import benchmark_labels, run_labels
from dualboard.grading.verdict import canonical_json, sha256_text
from dualboard.importers import import_autogenai
from dualboard.project import Project
from dualboard.scored_files import ANSWERS, SCORED, TABLES, VERDICTS, ScoredFolder, read_table, typed, write_scored
from dualboard.store import LocalStore
from tests.conftest import TINY_QUESTIONS, tiny_metadata, write_run, write_tiny_board
from tests.grading.test_screened_readers import HOSTILE
from tests.importers.import_fixtures import MC_RELEASE, OPEN_RELEASE, real_data


def _old_verdict_key(grader, question: dict, prediction: dict) -> str:
    """The key as first written: the sha256 of the canonical JSON of the whole material."""
    material = [
        grader.name,
        grader.version,
        grader.config_hash,
        question_digest(question),
        str(prediction.get("response") or ""),
        prediction.get("choice_order"),
        prediction.get("recorded"),
    ]
    return sha256_text(_dumps(material))


def _dumps(value) -> str:
    """Canonical JSON as keys were first made: ``json.dumps`` with the options, an encoder made per call."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.dates() | st.decimals(),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.tuples(inner, inner)
            | st.dictionaries(st.text(max_size=5) | st.integers() | st.floats() | st.booleans(), inner, max_size=4)
        ),
        max_leaves=12,
    )
)
def test_canonical_json_equals_json_dumps(value):
    """The encoder made once writes what ``json.dumps`` with the same options writes: unicode, NaN and infinities,
    nested values, keys of mixed types (sorted where they compare) and values only ``str`` can write."""
    try:
        expected = _dumps(value)
    except TypeError as error:  # keys of types that do not compare: refused the same way
        with pytest.raises(TypeError, match=str(error)[:20]):
            canonical_json(value)
        return
    assert canonical_json(value) == expected


@given(response=st.one_of(st.none(), st.text()), order=_JSON, recorded=_JSON, question=_JSON)
def test_verdict_keys_equal_the_canonical_json_of_the_whole_material(response, order, recorded, question):
    prediction = {"response": response, "choice_order": order, "recorded": recorded}
    question = {"id": "q", "x": question}
    assert verdict_key(RulesGrader(), question, prediction) == _old_verdict_key(RulesGrader(), question, prediction)


def _plain_verdicts(plan, assignment) -> list:
    """The assignment's verdicts straight from its grader: people's labels read, every other answer graded."""
    answers = [plan.answers[p] for p in assignment.positions]
    if isinstance(assignment.grader, HumanGrader):
        return assignment.grader.grade_labels(plan.applied, [plan.slot(a) for a in answers])
    return assignment.grader.grade_many([(a.question, a.prediction) for a in answers])


def _reference_run(benchmark, run, labels) -> RunGrades:
    """One run graded the plain way: the graders' verdicts, then one row dict per verdict and per answer."""
    plan = plan_run(benchmark, run, labels)
    graded = [(a, _plain_verdicts(plan, a)) for a in plan.assignments]
    verdict_rows = [
        {
            "run_id": run.run_id,
            "question_id": plan.answers[p].question["id"],
            "round": plan.answers[p].round,
            "category": plan.answers[p].question.get("category", ""),
            "grader": a.grader.name,
            "grader_version": a.grader.version,
            "config_hash": a.grader.config_hash,
            "role": a.role,
            "score": v.score,
            "verdict_parse": v.verdict_parse,
            "detail": v.detail,
        }
        for a, verdicts in graded
        for p, v in zip(a.positions, verdicts, strict=True)
    ]
    traditional = {
        p: (a.grader.name, v)
        for a, verdicts in graded
        if a.role == "traditional"
        for p, v in zip(a.positions, verdicts, strict=True)
    }
    answer_rows = []
    rejudged, n_distinct = distinct_answers(plan.answers)
    for position, answer in enumerate(plan.answers):
        name, verdict = traditional[position]
        response = answer.prediction.get("response")
        shown = options_as_shown(answer.question, answer.prediction)
        answer_rows.append(
            {
                "benchmark": benchmark.name,
                "run_id": run.run_id,
                "model": run.model,
                "question_id": answer.question["id"],
                "category": answer.question.get("category", ""),
                "question_type": answer.question.get("type", "open"),
                "round": answer.round,
                "traditional": verdict.score,
                "traditional_grader": name,
                "verdict_parse": verdict.verdict_parse,
                "missing": not str(response or "").strip(),
                "unanswered": answer.unanswered,
                "answered_share": answered_share(plan),
                "min_answered": benchmark.min_answered,
                "benchmark_version": str(run.metadata.get("benchmark_version", benchmark.version)),
                "rejudged": rejudged,
                "n_distinct_answers": n_distinct,
                "prompt": answer.question.get("prompt", ""),
                "key_answer": str(
                    answer.question["answer_key"].get("answer") or answer.question["answer_key"].get("reference", "")
                ),
                "response": response if isinstance(response, str) else None,
                **dict(zip(("choice_order", "options_shown", "correct_letter"), shown, strict=True)),
            }
        )
    return RunGrades(typed(ANSWERS, answer_rows, RUN_ANSWER_COLUMNS), typed(VERDICTS, verdict_rows))


class _Tables:
    def __init__(self, answers: pd.DataFrame, verdicts: pd.DataFrame):
        self.scored, self.answers, self.verdicts = answers[list(SCORED.names)], answers, verdicts


def _grade_both_ways(root: Path, tmp_path: Path, name: str) -> None:
    """Ingest ``root``, grade it with ``dualboard grade --jobs 2``, and compare every file with the plain path."""
    project = Project(root)
    store = LocalStore(project.store_dir)
    pipeline.ingest(project, store, today="2026-01-01")
    command = [sys.executable, "-m", "dualboard", "grade", "--no-progress", "--jobs", "2", "--root", str(root)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr

    benchmark, run_dirs = pipeline.stored_run_dirs(store)[name]
    _, runs = pipeline.stored_benchmarks(store)[name]
    labels = benchmark_labels(benchmark, pipeline.human_labels(benchmark))
    reference = {run.run_id: _reference_run(benchmark, run, run_labels(labels, run.run_id)) for run in runs}
    assert len(reference) > 1

    folder = ScoredFolder.of(project.scored_dir(), name)
    for directory in run_dirs:  # every run's grades, read back
        answers, verdicts = (folder.read(t, runs=[directory.name]).to_pandas() for t in (ANSWERS, VERDICTS))
        pd.testing.assert_frame_equal(answers, reference[directory.name].answers, obj=f"{directory.name} answers")
        pd.testing.assert_frame_equal(verdicts, reference[directory.name].verdicts, obj=directory.name)

    evidence = ChoiceEvidence()
    for grades in reference.values():
        evidence.add(len(grades.answers), grades.verdicts)
    choice = choose_answer_key(benchmark, evidence)
    answers = pd.concat([with_answer_key(g, choice) for g in reference.values()], ignore_index=True)
    verdicts = pd.concat([g.verdicts for g in reference.values()], ignore_index=True)
    expected_dir = tmp_path / "plain"
    expected_files = write_scored(_Tables(answers, verdicts), expected_dir, name, store.revision())
    for table in TABLES:
        built = ScoredFolder.of(project.scored_dir(), name).published(table)
        expected = expected_files.published(table)
        assert built.schema.equals(expected.schema, check_metadata=True), table.name
        assert built.equals(expected), table.name  # values and nulls (a NaN written for a null would differ)
        pd.testing.assert_frame_equal(
            read_table(table, project.scored_dir(), name), read_table(table, expected_dir, name), obj=table.name
        )


@pytest.mark.slow
@pytest.mark.parametrize(("release", "name"), [(MC_RELEASE, "easy-problems-mc"), (OPEN_RELEASE, "easy-problems-open")])
def test_real_releases_graded_by_the_stage_as_by_the_plain_path(release: str, name: str, tmp_path: Path):
    root = tmp_path / "board"
    import_autogenai(real_data() / release, benchmark=name, dest=root)
    _grade_both_ways(root, tmp_path, name)


@pytest.mark.slow
def test_the_demo_with_its_labels_graded_by_the_stage_as_by_the_plain_path(demo_board, tmp_path: Path):
    project, _store = demo_board
    _grade_both_ways(project.root, tmp_path, "demo")


@pytest.mark.slow
def test_hostile_answers_graded_by_the_stage_as_by_the_plain_path(tmp_path: Path):
    root = write_tiny_board(tmp_path / "board")
    for i, response in enumerate(HOSTILE):
        predictions = [
            {"question_id": q["id"], "round": 0, "response": response, "recorded": {"judge": 50}}
            | ({"choice_order": ["D", "C", "B", "A"]} if q["type"] == "multiple_choice" else {})
            for q in TINY_QUESTIONS
        ]
        write_run(root, f"hostile-{i:02d}", raw_lines=[json.dumps(p).encode() for p in predictions])
    write_run(root, "no-model-name", metadata=tiny_metadata(model="<script>alert(1)</script>"))
    _grade_both_ways(root, tmp_path, "tiny")
