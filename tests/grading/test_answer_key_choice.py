"""Which grader fills the scored table's ``answer_key`` column (issue 9 §2, grade_benchmark's rule).

Graders are scripted (their ``grade`` is replaced by a table of scores per
question), so each test states exactly the κ and coverage it exercises.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from dualboard.grading import GradedTables, grade_benchmark
from dualboard.grading.exact import ExactGrader, NumericGrader
from dualboard.grading.rules import RulesGrader
from dualboard.grading.verdict import Verdict
from dualboard.intake.human_labels import parse_human_labels, response_sha256
from dualboard.intake.models import GraderSpec
from dualboard.scored_files import MIN_COVERAGE
from dualboard.stats.agreement import agreement_table
from tests.grading.grading_fixtures import make_benchmark, make_run

N = 20
IDS = [f"q{i:02d}" for i in range(N)]
CLASSES = {"rules": RulesGrader, "exact": ExactGrader, "numeric": NumericGrader}
HUMAN = [100.0 if i % 2 else 0.0 for i in range(N)]


def script(monkeypatch, scores: dict[str, Sequence[float | None]]) -> None:
    """Make each named grader return scores[name][i] on question i (None = no verdict)."""
    for name, column in scores.items():
        table = dict(zip(IDS, column, strict=True))

        def grade(self, question, prediction, table=table):
            score = table[question["id"]]
            return Verdict(score, "ok" if score is not None else "none", "scripted")

        monkeypatch.setattr(CLASSES[name], "grade", grade)


def graded(answer_key: Sequence[str], labelled: Sequence[int]) -> GradedTables:
    """Grade one run of N open questions with human marks on the ``labelled`` questions."""
    questions = [
        {
            "id": q,
            "category": "c",
            "type": "open",
            "prompt": "?",
            "answer_key": {"answer": "x", "aliases": [], "patterns": [], "numeric": {"value": 1}},
        }
        for q in IDS
    ]
    bench = make_benchmark(questions, answer_key=tuple(GraderSpec(name) for name in answer_key))
    run = make_run("r", [{"question_id": q, "response": "x", "recorded": {"judge": 50}} for q in IDS])
    labels = parse_human_labels(
        pd.DataFrame(
            {
                "run": "r",
                "question": [IDS[i] for i in labelled],
                "round": 0,
                "label": [HUMAN[i] for i in labelled],
                "response_sha256": response_sha256("x"),
            }
        )
    )
    return grade_benchmark(bench, [run], human_labels=labels if len(labelled) else None)


def flip(scores: Sequence[float], wrong: Sequence[int]) -> list[float]:
    """Return the human marks with the answers in ``wrong`` turned the other way."""
    return [100.0 - s if i in wrong else s for i, s in enumerate(scores)]


SAMPLE = range(10)
"""Half the answers carry a human mark."""


def test_higher_kappa_with_too_little_coverage_is_not_chosen(monkeypatch) -> None:
    # exact agrees perfectly with people but judges only 15 of the 20 labelled answers (75 % < 80 %).
    exact = [*HUMAN[:15], None, None, None, None, None]
    script(monkeypatch, {"exact": exact, "rules": flip(HUMAN, [0, 1])})
    assert np.mean([s is not None for s in exact]) < MIN_COVERAGE
    scored = graded(["exact", "rules", "human"], range(N)).scored
    assert set(scored.answer_key_grader) == {"rules"}
    assert scored.answer_key.tolist() == flip(HUMAN, [0, 1])


def test_coverage_counts_the_labelled_answers_only(monkeypatch) -> None:
    """Answers nobody labelled (another run's, say) cannot push a grader under the coverage threshold."""
    exact = [*HUMAN[:10], *[None] * 10]  # every labelled answer judged; none of the others
    script(monkeypatch, {"exact": exact, "rules": flip(HUMAN, [0, 1])})
    assert set(graded(["rules", "exact"], SAMPLE).scored.answer_key_grader) == {"exact"}


def test_the_highest_kappa_wins_against_the_listed_order(monkeypatch) -> None:
    script(monkeypatch, {"rules": flip(HUMAN, [0, 1, 2]), "exact": flip(HUMAN, [3])})
    assert set(graded(["rules", "exact"], SAMPLE).scored.answer_key_grader) == {"exact"}


def test_a_grader_at_exactly_eighty_percent_coverage_can_be_chosen(monkeypatch) -> None:
    exact = [*HUMAN[:16], None, None, None, None]
    script(monkeypatch, {"exact": exact, "rules": flip(HUMAN, [0])})
    assert set(graded(["rules", "exact"], SAMPLE).scored.answer_key_grader) == {"exact"}


@pytest.mark.parametrize("order", [["rules", "exact"], ["exact", "rules"]])
def test_equal_kappa_goes_to_the_benchmark_order(monkeypatch, order) -> None:
    # Different verdicts off the sample, the same κ on it.
    script(monkeypatch, {"rules": flip(HUMAN, [0, 15]), "exact": flip(HUMAN, [0, 16])})
    assert set(graded(order, SAMPLE).scored.answer_key_grader) == {order[0]}


def test_human_listed_first_is_the_answer_key_and_labels_alone_do_not_make_it(monkeypatch) -> None:
    """People are the answer-key grading when benchmark.yaml says so; labels on every answer do not decide it
    (issue 25 §4: which runs happen to carry labels must not choose the grader)."""
    script(monkeypatch, {"rules": flip(HUMAN, [0]), "exact": flip(HUMAN, [0])})
    scored = graded(["human", "rules", "exact"], range(N)).scored
    assert set(scored.answer_key_grader) == {"human"}
    assert scored.answer_key.tolist() == HUMAN
    for order in (["rules", "exact", "human"], ["rules", "exact"]):
        assert set(graded(order, range(N)).scored.answer_key_grader) == {"rules"}


def test_without_labels_the_first_listed_grader_stays(monkeypatch) -> None:
    script(monkeypatch, {"rules": flip(HUMAN, range(N)), "exact": HUMAN})
    assert set(graded(["rules", "exact"], []).scored.answer_key_grader) == {"rules"}


def test_when_no_grader_qualifies_the_first_listed_stays(monkeypatch) -> None:
    thin = [*HUMAN[:5], *[None] * 15]  # half the labelled answers judged
    script(monkeypatch, {"rules": thin, "exact": thin})
    scored = graded(["exact", "rules", "human"], SAMPLE).scored
    assert set(scored.answer_key_grader) == {"exact"}


def test_human_listed_first_grades_only_the_labelled_answers(monkeypatch) -> None:
    script(monkeypatch, {"rules": HUMAN, "exact": HUMAN})
    scored = graded(["human", "rules", "exact"], SAMPLE).scored
    assert set(scored.answer_key_grader) == {"human"}
    assert scored.answer_key.isna().sum() == N - len(SAMPLE)


def test_a_grader_of_one_class_on_the_sample_has_no_kappa_and_is_not_chosen(monkeypatch) -> None:
    # rules passes everything: κ = 0 by the formula, which would tie with numeric's 0 and win
    # by the listed order, but a one-class rater's κ is not estimable (Methodology, §Grader agreement).
    script(monkeypatch, {"rules": [100.0] * N, "numeric": flip(HUMAN, [0, 1, 2, 3, 4])})
    tables = graded(["rules", "numeric"], SAMPLE)
    assert set(tables.scored.answer_key_grader) == {"numeric"}
    table = agreement_table(tables.verdicts, n_boot=50)
    rows = table[table.category == "all"].set_index(["grader_a", "grader_b"])
    assert rows.loc[("numeric", "human"), "kappa"] == pytest.approx(0.0)
    assert not rows.loc[("rules", "human"), "estimable"]


def test_fewer_than_ten_labelled_questions_choose_nothing_by_kappa(monkeypatch) -> None:
    script(monkeypatch, {"rules": flip(HUMAN, [0, 1, 2]), "exact": HUMAN})
    assert set(graded(["rules", "exact"], range(9)).scored.answer_key_grader) == {"rules"}


def test_the_choice_is_the_best_kappa_that_agreement_csv_reports(monkeypatch) -> None:
    """The κ the choice ranks by is agreement.csv's (itself checked against statsmodels)."""
    script(monkeypatch, {"rules": flip(HUMAN, [0, 1, 14]), "exact": flip(HUMAN, [2]), "numeric": flip(HUMAN, [3, 4])})
    tables = graded(["rules", "numeric", "exact", "human"], SAMPLE)
    table = agreement_table(tables.verdicts, n_boot=50)
    against = table[(table.grader_b == "human") & (table.category == "all")].set_index("grader_a")["kappa"]
    a, b = np.array(flip(HUMAN, [2])[:10]) >= 50, np.array(HUMAN[:10]) >= 50
    counts = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    assert against["exact"] == pytest.approx(cohens_kappa(counts).kappa, abs=1e-12)
    assert set(tables.scored.answer_key_grader) == {against.drop("recorded").idxmax()} == {"exact"}
