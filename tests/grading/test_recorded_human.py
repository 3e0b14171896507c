"""recorded scores and human labels, and human labels as the answer-key grading."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dualboard.grading import grade_benchmark
from dualboard.grading.errors import GraderConfigError, GradingInputError
from dualboard.grading.human import HumanGrader
from dualboard.grading.recorded import RecordedGrader
from dualboard.intake.human_labels import HumanLabelsError, load_human_labels, parse_human_labels
from dualboard.intake.models import GraderSpec
from tests.conftest import LABELS_HEADER
from tests.grading.grading_fixtures import labels_of, make_benchmark, make_run

SHA = "ab" * 32
"""A digest of a response, for labels whose response no test reads."""


@pytest.mark.parametrize("value", [0, 20, 80.5, 100])
def test_recorded_passes_scores_through(value: float) -> None:
    verdict = RecordedGrader({"field": "judge"}).grade({"id": "q"}, {"response": "x", "recorded": {"judge": value}})
    assert (verdict.score, verdict.verdict_parse) == (float(value), "ok")


def test_recorded_missing_score_counts_as_zero() -> None:
    verdict = RecordedGrader({"field": "judge"}).grade({"id": "q"}, {"response": "x", "recorded": {"other": 50}})
    assert (verdict.score, verdict.verdict_parse) == (0.0, "none")


@pytest.mark.parametrize("value", [101, -1, "80", float("nan"), True])
def test_recorded_rejects_scores_off_the_scale(value: object) -> None:
    with pytest.raises(GradingInputError, match="between 0 and 100"):
        RecordedGrader({"field": "judge"}).grade({"id": "q"}, {"recorded": {"judge": value}})


def test_recorded_needs_a_field() -> None:
    with pytest.raises(GraderConfigError, match="options.field"):
        RecordedGrader({})


@pytest.mark.parametrize(
    ("labels", "scores"),
    [
        (["1", "0", "PASS", "fail", "1.0"], [100.0, 0.0, 100.0, 0.0, 100.0]),
        (["100", "0", "pass"], [100.0, 0.0, 100.0]),
        (["0", "20", "60", "100", "Fail", "33.5"], [0.0, 20.0, 60.0, 100.0, 0.0, 33.5]),
        (["pass", "fail"], [100.0, 0.0]),
    ],
    ids=["pass-fail-as-0-1", "0-100", "partial-credit-marks", "words"],
)
def test_load_human_labels_reads_the_files_scale(tmp_path: Path, labels: list[str], scores: list[float]) -> None:
    path = tmp_path / "human_labels.csv"
    path.write_text(LABELS_HEADER + "".join(f"a,{i},0,{label},{SHA}\n" for i, label in enumerate(labels)))
    parsed = load_human_labels(path)
    assert list(parsed.columns) == ["run_id", "question_id", "round", "score", "response_sha256"]
    assert parsed["score"].tolist() == scores
    assert parsed["question_id"].tolist()[:2] == ["0", "1"] and parsed["round"].dtype == "int64"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("run,question,label,response_sha256\na,1,1,x\n", "missing column"),
        ("run,question,round,label\na,1,0,1\n", "no response_sha256 column.*`dualboard label-digests BENCHMARK`"),
        (f"{LABELS_HEADER}a,1,0,1,ABC\n", ":2: response_sha256 'ABC' is not a SHA-256"),
        (f"{LABELS_HEADER}a,1,0,maybe,{SHA}\n", ":2: label 'maybe' is not pass/fail, 0/1 or a mark on 0–100"),
        (f"{LABELS_HEADER}a,1,0,0,{SHA}\na,2,0,101,{SHA}\n", ":3: label '101'"),
        (f"{LABELS_HEADER}a,1,0,-20,{SHA}\n", ":2: label '-20'"),
        (f"{LABELS_HEADER}a,1,0,nan,{SHA}\n", ":2: label 'nan'"),
        (f"{LABELS_HEADER}a,1,0,,{SHA}\n", ":2: label ''"),
        (f"{LABELS_HEADER}a,1,0,60,{SHA}\na,2,0,1,{SHA}\n", r":3: label 1 is ambiguous .*\(line 2: '60'\) — write 100"),
        (f"{LABELS_HEADER}a,1,x,1,{SHA}\n", ":2: round"),
        (f"{LABELS_HEADER}a,1,0,1,{SHA}\na,1,0,0,{SHA}\n", ":3: a second label"),
    ],
)
def test_load_human_labels_reports_the_line_and_the_fix(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "human_labels.csv"
    path.write_text(body)
    with pytest.raises(HumanLabelsError, match=message):
        load_human_labels(path)


def test_human_grader_passes_partial_credit_through() -> None:
    labelled, unlabelled = HumanGrader().grade_labels({("a", "q", 1): 60.0}, [("a", "q", 1), ("a", "q", 0)])
    assert (labelled.score, labelled.verdict_parse, labelled.detail) == (60.0, "ok", "human label 60")
    assert (unlabelled.score, unlabelled.verdict_parse) == (None, "none")


def test_human_grader_does_not_grade_a_response() -> None:
    """A label belongs to one run's answer; a (question, prediction) pair does not say which."""
    with pytest.raises(GradingInputError, match=r"by \(run, question, round\), not responses"):
        HumanGrader().grade({"id": "q"}, {"response": "x"})


def test_parse_keeps_string_question_ids() -> None:
    labels = parse_human_labels(
        pd.DataFrame({"run": ["a"], "question": ["007"], "round": ["0"], "label": ["pass"], "response_sha256": [SHA]})
    )
    assert labels["question_id"].tolist() == ["007"]


def _labels(rows: list[tuple[str, str, int, str]], runs: list) -> pd.DataFrame:
    """Labels of the runs' answers, each with the digest of the response it judged."""
    columns = ["run", "question", "round", "label"]
    return parse_human_labels(labels_of(runs, {c: [row[i] for row in rows] for i, c in enumerate(columns)}))


@pytest.fixture
def open_runs() -> list:
    return [
        make_run("alpha", [{"question_id": "capital", "response": "Lyon", "recorded": {"judge": 60}}]),
        make_run("beta", [{"question_id": "capital", "response": "Final answer: Paris", "recorded": {"judge": 100}}]),
    ]


def test_human_first_in_answer_key_fills_the_answer_key_column(open_question, open_runs) -> None:
    benchmark = make_benchmark([open_question], answer_key=(GraderSpec("human"), GraderSpec("rules")))
    labels = _labels([("alpha", "capital", 0, "40"), ("beta", "capital", 0, "80")], open_runs)
    tables = grade_benchmark(benchmark, open_runs, human_labels=labels)
    scored = tables.scored
    assert scored[["traditional", "answer_key"]].to_numpy().tolist() == [[60.0, 40.0], [100.0, 80.0]]
    assert set(scored.answer_key_grader) == {"human"} and set(scored.answer_key_parse) == {"ok"}
    roles = tables.verdicts.groupby("grader")["role"].agg(list).to_dict()
    assert roles == {"human": ["human"] * 2, "recorded": ["traditional"] * 2, "rules": ["answer_key"] * 2}
    seen: list[tuple[int, int]] = []
    grade_benchmark(benchmark, open_runs, human_labels=labels, progress=lambda *report: seen.append(report))
    assert seen[-1] == (len(tables.verdicts), len(tables.verdicts)) == (6, 6)


def test_an_unlabelled_answer_has_no_answer_key_verdict_when_people_grade(open_question, open_runs) -> None:
    benchmark = make_benchmark([open_question], answer_key=(GraderSpec("human"),))
    labels = _labels([("beta", "capital", 0, "60")], open_runs)
    scored = grade_benchmark(benchmark, open_runs, human_labels=labels).scored
    assert scored.answer_key.isna().tolist() == [True, False] and scored.answer_key.iloc[1] == 60.0
    assert scored.answer_key_parse.tolist() == ["none", "ok"]


def test_human_in_answer_key_needs_labels(open_question, open_runs) -> None:
    benchmark = make_benchmark([open_question], answer_key=(GraderSpec("human"), GraderSpec("rules")))
    with pytest.raises(GraderConfigError, match="remove 'human' from benchmark.yaml until the first labels exist"):
        grade_benchmark(benchmark, open_runs)
