"""Real data: the paper release's LLM judge and ``rules`` against the authors' own marks (issue 9 §1).

The release is imported and graded as ``dualboard build`` does; the
agreement rows are then checked against the source files read directly
(``llm_outputs/final_answers-*.json`` are the human marks,
``auto_eval_outputs/auto_eval-*.json`` the judge), with κ from statsmodels.
Run ``pytest -s`` to see the tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from dualboard.grading import grade_benchmark
from dualboard.intake.importers import import_autogenai
from dualboard.stats import analyse
from dualboard.stats.scores import MIN_COVERAGE
from tests.importers.import_fixtures import (
    OPEN_RELEASE,
    load_imported,
    load_labels,
    real_data,
)

NAME = "easy-problems-open"
SHOWN = [
    "grader_a",
    "run_id",
    "category",
    "n",
    "coverage_a",
    "accuracy",
    "kappa",
    "kappa_ci_low",
    "kappa_ci_high",
    "label",
    "mean_abs_diff",
    "mean_abs_diff_ci_low",
    "mean_abs_diff_ci_high",
    "reason",
]


def source_marks(folder: Path) -> pd.DataFrame:
    """Return run_id, question_id, category, judge and human marks read straight from the release."""
    rows = []
    for path in sorted((folder / "llm_outputs").glob("final_answers-*.json")):
        run_id = path.stem.removeprefix("final_answers-")
        human = json.loads(path.read_text(encoding="utf-8"))
        judge = json.loads((folder / "auto_eval_outputs" / f"auto_eval-{run_id}.json").read_text(encoding="utf-8"))
        rows += [
            {
                "run_id": run_id,
                "question_id": q,
                "category": rec["category"],
                "human": float(rec["score"]),
                "judge": float(judge[q]["score"]),
            }
            for q, rec in human.items()
        ]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """Import, grade and analyse the paper release; return its source marks, graded tables and agreement."""
    folder = real_data() / OPEN_RELEASE
    dest = tmp_path_factory.mktemp("paper")
    import_autogenai(folder, benchmark=NAME, dest=dest)
    benchmark, runs = load_imported(dest, NAME)
    labels = load_labels(dest, NAME)
    graded = grade_benchmark(benchmark, runs, human_labels=labels)
    agreement = analyse(graded.scored, verdicts=graded.verdicts, n_boot=2000).agreement
    against = agreement[agreement["grader_b"] == "human"]
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print("\n" + against[SHOWN].round(3).to_string(index=False))
    return source_marks(folder), (benchmark, runs, labels), graded, against


def _row(against: pd.DataFrame, grader: str, run_id: str = "all", category: str = "all") -> pd.Series:
    hit = against[(against.grader_a == grader) & (against.run_id == run_id) & (against.category == category)]
    assert len(hit) == 1, (grader, run_id, category)
    return hit.iloc[0]


def _reference(marks: pd.DataFrame) -> tuple[float, float, float]:
    """Accuracy and κ of the pass/fail reading (≥ 50) and the mean absolute difference, from the source."""
    j, h = marks["judge"].to_numpy() >= 50, marks["human"].to_numpy() >= 50
    table = [[np.sum(j & h), np.sum(j & ~h)], [np.sum(~j & h), np.sum(~j & ~h)]]
    return float(np.mean(j == h)), cohens_kappa(table).kappa, float((marks["judge"] - marks["human"]).abs().mean())


def test_judge_against_human_marks_per_model_reproduces_the_source(release):
    source, _, _, against = release
    for run_id, marks in [("all", source), *source.groupby("run_id")]:
        row = _row(against, "recorded", run_id)
        accuracy, kappa, mad = _reference(marks)
        assert row["n"] == len(marks) and row["coverage_a"] == 1.0
        assert row["accuracy"] == pytest.approx(accuracy, abs=1e-12)
        assert row["kappa"] == pytest.approx(kappa, abs=1e-12)
        assert row["mean_abs_diff"] == pytest.approx(mad, abs=1e-9)
        assert row["kappa_ci_low"] < row["kappa"] < row["kappa_ci_high"]
    assert source["run_id"].nunique() == 7


def test_by_category_only_categories_of_ten_questions_get_a_kappa(release):
    source, _, _, against = release
    sizes = source.groupby("category")["question_id"].nunique()
    for category, n_questions in sizes.items():
        row = _row(against, "recorded", category=category)
        assert bool(row["estimable"]) == (n_questions >= 10), (category, n_questions)
        assert row["accuracy"] == pytest.approx(_reference(source[source.category == category])[0], abs=1e-12)


def test_every_automatic_answer_key_grader_is_read_against_the_same_marks(release):
    _, (benchmark, _, _), graded, against = release
    automatic = {spec.name for spec in benchmark.answer_key} - {"human"}
    assert automatic and automatic <= set(against["grader_a"])
    for grader in automatic:
        row = _row(against, grader)
        judged = graded.verdicts[(graded.verdicts.grader == grader)]["score"].notna()
        assert row["n_judged_b"] == 210 and row["n"] == judged.sum()


def test_full_human_marks_are_the_answer_key_and_a_sample_hands_it_to_a_qualified_grader(release):
    _, (benchmark, runs, labels), graded, _ = release
    assert set(graded.scored["answer_key_grader"]) == {"human"}
    sample = labels[labels["question_id"].astype(int) <= 15]
    chosen = set(grade_benchmark(benchmark, runs, human_labels=sample).scored["answer_key_grader"])
    rules = graded.verdicts[graded.verdicts.grader == "rules"]
    qualifies = rules["score"].notna().mean() >= MIN_COVERAGE  # its κ on 105 labelled answers is estimable here
    assert chosen == ({"rules"} if qualifies else {"human"})
