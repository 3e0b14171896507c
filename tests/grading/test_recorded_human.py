"""recorded scores and human labels."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from generator.grading.errors import GraderConfigError, GradingInputError
from generator.grading.human import HumanGrader, load_human_labels, parse_human_labels
from generator.grading.recorded import RecordedGrader


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
    path.write_text("run,question,round,label\n" + "".join(f"a,{i},0,{label}\n" for i, label in enumerate(labels)))
    parsed = load_human_labels(path)
    assert list(parsed.columns) == ["run_id", "question_id", "round", "score"]
    assert parsed["score"].tolist() == scores
    assert parsed["question_id"].tolist()[:2] == ["0", "1"] and parsed["round"].dtype == "int64"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("run,question,label\na,1,1\n", "missing column"),
        ("run,question,round,label\na,1,0,maybe\n", ":2: label 'maybe' is not pass/fail, 0/1 or a mark on 0–100"),
        ("run,question,round,label\na,1,0,0\na,2,0,101\n", ":3: label '101'"),
        ("run,question,round,label\na,1,0,-20\n", ":2: label '-20'"),
        ("run,question,round,label\na,1,0,nan\n", ":2: label 'nan'"),
        ("run,question,round,label\na,1,0,\n", ":2: label ''"),
        ("run,question,round,label\na,1,0,60\na,2,0,1\n", r":3: label 1 is ambiguous .*\(line 2: '60'\) — write 100"),
        ("run,question,round,label\na,1,x,1\n", ":2: round"),
        ("run,question,round,label\na,1,0,1\na,1,0,0\n", ":3: a second label"),
    ],
)
def test_load_human_labels_reports_the_line_and_the_fix(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "human_labels.csv"
    path.write_text(body)
    with pytest.raises(GradingInputError, match=message):
        load_human_labels(path)


def test_human_grader_passes_partial_credit_through() -> None:
    verdict = HumanGrader().grade({"id": "q"}, {"response": "x", "human_label": 60.0})
    assert (verdict.score, verdict.verdict_parse, verdict.detail) == (60.0, "ok", "human label 60")
    assert HumanGrader().grade({"id": "q"}, {"response": "x"}).score is None


def test_parse_keeps_string_question_ids() -> None:
    labels = parse_human_labels(pd.DataFrame({"run": ["a"], "question": ["007"], "round": ["0"], "label": ["pass"]}))
    assert labels["question_id"].tolist() == ["007"]
