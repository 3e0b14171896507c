"""recorded scores and human labels."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from generator.grading.errors import GraderConfigError, GradingInputError
from generator.grading.human import load_human_labels
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


def test_load_human_labels_accepts_every_label_form(tmp_path: Path) -> None:
    path = tmp_path / "human_labels.csv"
    path.write_text("run,question,round,label\na,1,0,1\na,2,0,0\nb,1,0,100\nb,2,1,PASS\nc,1,0,fail\nc,2,0,1.0\n")
    labels = load_human_labels(path)
    assert list(labels.columns) == ["run_id", "question_id", "round", "score"]
    assert labels["score"].tolist() == [100.0, 0.0, 100.0, 100.0, 0.0, 100.0]
    assert labels["question_id"].tolist()[:2] == ["1", "2"] and labels["round"].dtype == "int64"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("run,question,label\na,1,1\n", "missing column"),
        ("run,question,round,label\na,1,0,maybe\n", ":2: label 'maybe'"),
        ("run,question,round,label\na,1,x,1\n", ":2: round"),
        ("run,question,round,label\na,1,0,1\na,1,0,0\n", ":3: a second label"),
    ],
)
def test_load_human_labels_reports_the_line_and_the_fix(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "human_labels.csv"
    path.write_text(body)
    with pytest.raises(GradingInputError, match=message):
        load_human_labels(path)


def test_parse_keeps_string_question_ids() -> None:
    from generator.grading.human import parse_human_labels

    labels = parse_human_labels(pd.DataFrame({"run": ["a"], "question": ["007"], "round": ["0"], "label": ["pass"]}))
    assert labels["question_id"].tolist() == ["007"]
