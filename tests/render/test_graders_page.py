"""The graders page: every grader against human labels (overall, by model, by category) and the answer-key choice."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from dualboard.grading import grade_benchmark
from dualboard.grading.exact import ExactGrader
from dualboard.grading.rules import RulesGrader
from dualboard.grading.verdict import Verdict
from dualboard.intake.human_labels import parse_human_labels, response_sha256
from dualboard.intake.models import GraderSpec
from dualboard.render.graders_page import (
    answer_key_choice,
    coverage_rates,
    grader_disagreements,
    graders_page,
)
from dualboard.render.pages import BenchmarkResults
from dualboard.stats import analyse, read_tables, write_tables
from tests.grading.grading_fixtures import make_benchmark, make_run

N = 12
IDS = [f"q{i:02d}" for i in range(N)]
LABELLED = IDS[:10]
HUMAN = {
    "a": [100.0, 0.0, 60.0, 20.0, 100.0, 0.0, 80.0, 0.0, 100.0, 40.0],
    "b": [0.0, 0.0, 100.0, 60.0, 100.0, 20.0, 0.0, 100.0, 40.0, 100.0],
}
RULES = {
    "a": [100.0, 0.0, 100.0, None, 100.0, 0.0, 0.0, 0.0, 100.0, 0.0, 0.0, 100.0],
    "b": [0.0, 0.0, 100.0, 100.0, 100.0, 0.0, None, 100.0, 0.0, 100.0, 0.0, 0.0],
}
EXACT = {
    "a": [100.0, 0.0, 100.0, 0.0, 100.0, 0.0, 100.0, 0.0, 100.0, 100.0, 0.0, 0.0],
    "b": [0.0, 0.0, 100.0, 100.0, 100.0, 0.0, 0.0, 100.0, 0.0, 100.0, 0.0, 0.0],
}


def _scripted(table: dict[str, list[float | None]]):
    def grade(self, question, prediction):
        score = table[prediction["run"]][IDS.index(question["id"])]
        return Verdict(score, "ok" if score is not None else "none", "scripted")

    return grade


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[str, BenchmarkResults]:
    """Two runs × 12 questions; people marked the first 10 questions of each run (20 of 24 answers)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(RulesGrader, "grade", _scripted(RULES))
    mp.setattr(ExactGrader, "grade", _scripted(EXACT))
    questions = [
        {
            "id": q,
            "category": "Puzzle" if i < 10 else "Spatial",
            "type": "open",
            "prompt": "?",
            "answer_key": {"answer": "x", "aliases": [], "patterns": [], "numeric": None},
        }
        for i, q in enumerate(IDS)
    ]
    bench = make_benchmark(questions, answer_key=(GraderSpec("rules"), GraderSpec("exact"), GraderSpec("human")))
    runs = [
        make_run(
            r,
            [
                {"question_id": q, "response": "x", "run": r, "recorded": {"judge": 60.0 if i % 3 else 0.0}}
                for i, q in enumerate(IDS)
            ],
            model=f"Model {r.upper()}",
        )
        for r in ("a", "b")
    ]
    labels = parse_human_labels(
        pd.DataFrame(
            {
                "run": np.repeat(["a", "b"], 10),
                "question": LABELLED * 2,
                "round": 0,
                "label": HUMAN["a"] + HUMAN["b"],
                "response_sha256": response_sha256("x"),
            }
        )
    )
    graded = grade_benchmark(bench, runs, human_labels=labels)
    mp.undo()
    out = tmp_path_factory.mktemp("stats")
    write_tables(analyse(graded.scored, verdicts=graded.verdicts, n_boot=200), Path(out))
    result = BenchmarkResults(bench, graded.scored, graded.verdicts, tuple(runs), stats=read_tables(Path(out)))
    return graders_page(result).content, result


def _text(content: str) -> str:
    """Return the page as plain text: cells separated by ' | ', rows by newlines."""
    content = re.sub(r"</tr>", "\n", content)
    return html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"</t[dh]>", " | ", content)))


def _kappa(grader: dict, runs=("a", "b")) -> float:
    g = np.array([grader[r][i] for r in runs for i in range(10)], dtype=float)
    h = np.array([HUMAN[r][i] for r in runs for i in range(10)])
    keep = ~np.isnan(g)
    a, b = g[keep] >= 50, h[keep] >= 50
    return cohens_kappa([[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]).kappa


@pytest.mark.slow
def test_answer_key_column_names_the_chosen_grader_and_its_kappa(page):
    content, result = page
    assert _kappa(EXACT) > _kappa(RULES)
    assert set(result.scored.answer_key_grader) == {"exact"}
    text = _text(content)
    assert f"Answer-key column: exact, chosen by κ = {_kappa(EXACT):.2f} [" in text
    assert "against 20 human-labelled answers (20 of 24 answers carry a label)" in text
    assert "at least 80% of the labelled answers" in text


def test_every_grader_is_read_against_people_overall_by_model_and_by_category(page):
    text = _text(page[0])
    overall = text[text.index("### Overall") : text.index("### By answering model")]
    for grader in ("recorded (traditional)", "rules (answer_key)", "exact (answer_key)"):
        assert grader in overall
    by_model = text[text.index("### By answering model") : text.index("### By category")]
    assert "| Model A |" in by_model and "| Model B |" in by_model
    by_category = text[text.index("### By category") : text.index("## Between graders")]
    assert "| Puzzle |" in by_category and "Spatial" not in by_category  # nobody labelled Spatial
    assert "fewer than 10 questions" not in overall


def test_rules_coverage_of_the_labelled_answers_and_its_mad_are_shown(page):
    text = _text(page[0])
    rules = next(line for line in text[text.index("### Overall") :].splitlines() if line.startswith("rules"))
    assert "| 18 of 20 (90 %) |" in rules  # rules could not judge two labelled answers
    g = [RULES[r][i] for r in "ab" for i in range(10)]
    h = [HUMAN[r][i] for r in "ab" for i in range(10)]
    mad = np.mean([abs(x - y) for x, y in zip(g, h, strict=True) if x is not None])
    assert f"| {mad:.1f} [" in rules
    assert "mean absolute difference" in text and "weighted κ" in text  # says which measure, and why


def test_per_model_rows_are_not_estimable_under_ten_questions(page):
    _, result = page
    rows = result.stats.agreement
    per_run = rows[(rows.grader_b == "human") & (rows.run_id != "all")].set_index(["grader_a", "run_id"])
    assert len(per_run) == 6
    # Each run has 10 labelled questions; rules could not judge one per run, which leaves 9.
    assert per_run.loc[("rules", "a"), "n_questions"] == 9 and not per_run.loc[("rules", "a"), "estimable"]
    assert per_run.loc[("rules", "a"), "reason"] == "fewer than 10 questions (9)"
    assert per_run.loc[("exact", "a"), "estimable"] and per_run.loc[("recorded", "b"), "estimable"]


def test_coverage_table_separates_no_verdict_from_unreadable(page):
    _, result = page
    rates = coverage_rates(result.verdicts).set_index("grader")
    assert rates.loc["rules", "coverage"] == pytest.approx(22 / 24)
    assert rates.loc["human", "n"] == 20 and rates.loc["exact", "no_verdict"] == 0


def _choice(graders: list[str], scores: dict[str, list[float | None]], chosen: str, agreement=None) -> str:
    verdicts = pd.concat(
        [
            pd.DataFrame(
                {
                    "grader": g,
                    "role": "human" if g == "human" else "answer_key",
                    "score": pd.array(scores[g], dtype="Float64"),
                }
            )
            for g in graders
        ]
    )
    scored = pd.DataFrame({"answer_key_grader": [chosen] * len(scores[graders[0]])})
    return answer_key_choice(scored, verdicts, agreement if agreement is not None else pd.DataFrame())


def test_choice_sentence_when_people_are_the_grading():
    text = _choice(["human", "rules"], {"human": [100.0, 0.0], "rules": [100.0, 100.0]}, "human")
    assert text.startswith("Answer-key column: human, listed first by the benchmark: people's labels (2 of 2 answers")


def test_choice_sentence_when_people_are_the_grading_and_labels_are_missing():
    text = _choice(["human", "rules"], {"human": [100.0, None, None], "rules": [100.0, None, None]}, "human")
    assert "(1 of 3 answers carry one). A run with an answer nobody labelled awaits labels" in text


def test_choice_sentence_when_no_grader_qualifies():
    text = _choice(["rules", "human"], {"human": [100.0, None, None], "rules": [None, 100.0, None]}, "rules")
    assert text.startswith("Answer-key column: rules, the first answer-key grader the benchmark lists: no grader")
    assert text.endswith("1 of 3 answers carry a human label.")


def test_each_graders_rule_is_printed_from_its_code(page):
    """The reader sees what `rules` reads and when it abstains, in the words of grading/rules.py."""
    from dualboard.grading.rules import RULE, SHORT_MAX_WORDS
    from dualboard.render.escape import escape_text

    content, _ = page
    assert "## How each grader judges" in content
    assert escape_text(RULE) in content and str(SHORT_MAX_WORDS) in RULE


def _verdicts(scores: dict[tuple[str, str], list[float | None]]) -> pd.DataFrame:
    """Verdicts of three answers (run r, questions q0–q2) by (grader, role)."""
    return pd.concat(
        pd.DataFrame(
            {"run_id": "r", "question_id": ["q0", "q1", "q2"], "round": 0, "grader": g, "role": role, "score": values}
        )
        for (g, role), values in scores.items()
    )


@pytest.mark.parametrize(
    ("scores", "audited"),
    [
        ({("rules", "answer_key"): [100.0, 0.0, 100.0], ("exact", "traditional"): [0.0, 0.0, 0.0]}, ["q0", "q2"]),
        ({("rules", "answer_key"): [100.0, 0.0, None], ("judge", "answer_key"): [100.0, 100.0, 0.0]}, ["q1"]),
        ({("rules", "answer_key"): [100.0, 0.0, 0.0], ("human", "human"): [100.0, None, 100.0]}, ["q2"]),
        ({("human", "human"): [100.0, 0.0, 0.0]}, []),
    ],
    ids=["an-answer-key-and-a-traditional-grader", "two-answer-key-graders", "a-grader-and-people", "people-only"],
)
def test_disagreements_to_audit_need_two_graders_and_a_verdict_from_each(scores, audited):
    """Every two graders are compared, whatever their roles (issue 26 §6: a traditional grader counted
    only against people, so `rules` against the judge listed nothing); a grader alone agrees."""
    found = grader_disagreements(_verdicts(scores))
    assert found["question_id"].tolist() == audited
    assert {c for c in found.columns if c.startswith("score:")} == {f"score:{g}" for g, _ in scores}


def listed_per_pair(found: pd.DataFrame, agreement: pd.DataFrame) -> list[tuple[str, str, int, int]]:
    """Per overall pair row of agreement.csv: (grader_a, grader_b, its pass/fail + fail/pass, the listed answers
    on which those two graders' verdicts differ)."""
    rows = agreement[agreement.run_id.eq("all") & agreement.category.eq("all")]
    out = []
    for r in rows.itertuples(index=False):
        a, b = found[f"score:{r.grader_a}"].astype(float), found[f"score:{r.grader_b}"].astype(float)
        split = a.notna() & b.notna() & ((a >= 50) != (b >= 50))
        out.append((r.grader_a, r.grader_b, int(r.n_a_pass_b_fail + r.n_a_fail_b_pass), int(split.sum())))
    return out


def test_the_disagreements_listed_are_those_of_every_pair_the_tables_show(page):
    content, result = page
    pairs = listed_per_pair(grader_disagreements(result.verdicts), result.stats.agreement)
    assert {(a, b) for a, b, _, _ in pairs} >= {("rules", "recorded"), ("exact", "recorded"), ("rules", "human")}
    assert all(counted == listed for _, _, counted, listed in pairs), pairs
    assert any(counted for _, _, counted, _ in pairs) and "None:" not in content
