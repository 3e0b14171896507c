"""rules (answer key), exact and numeric (traditional): extraction and key matching."""

from __future__ import annotations

import pytest

from generator.grading.errors import GraderConfigError
from generator.grading.exact import ExactGrader, NumericGrader
from generator.grading.final_answer import extract_final_answer, find_numbers
from generator.grading.rules import RulesGrader


@pytest.mark.parametrize(
    ("response", "text", "method"),
    [
        ("Long reasoning.\nFinal answer: Paris", "Paris", "final_answer"),
        ("**Final Answer:** Paris.", "Paris", "final_answer"),
        ("The final answer is: Paris", "Paris", "final_answer"),
        ('{"answer": "Paris"}', "Paris", "json"),
        ("So we get \\boxed{8.05}", "8.05", "boxed"),
        ("Answer: Paris", "Paris", "answer_line"),
        ("I think the answer is Paris.", "Paris", "answer_is"),
        ("No marker here\nParis, of course", "Paris, of course", "last_line"),
        ("", "", "none"),
        ("   \n  ", "", "none"),
    ],
)
def test_final_answer_extraction(response: str, text: str, method: str) -> None:
    found = extract_final_answer(response)
    assert (found.text, found.method) == (text, method)


@pytest.mark.parametrize(
    ("text", "numbers"),
    [("1,000 m", [1000.0]), ("-2.5 and 3/4", [-2.5, 0.75]), ("seven days", [7.0]), ("v2 model", []), ("3.", [3.0])],
)
def test_find_numbers(text: str, numbers: list[float]) -> None:
    assert find_numbers(text) == numbers


@pytest.mark.parametrize(
    ("response", "score", "parse"),
    [
        ("Final answer: Paris", 100.0, "ok"),
        ("Final answer: paris.", 100.0, "ok"),
        ("Final answer: The City of Paris", 100.0, "ok"),  # alias, whole words
        ("Final answer: Lyon", 0.0, "ok"),
        ("Final answer: Parisian suburbs", 0.0, "ok"),  # 'paris' pattern needs a word boundary
        ("I believe it is Paris", 100.0, "recovered"),  # no marker: last line
        ("Paris was lovely.\nBut the capital is Lyon", 0.0, "recovered"),  # only the last line counts
        ("", 0.0, "none"),
    ],
)
def test_rules_on_open_questions(open_question: dict, response: str, score: float, parse: str) -> None:
    verdict = RulesGrader().grade(open_question, {"response": response})
    assert (verdict.score, verdict.verdict_parse) == (score, parse), verdict.detail


@pytest.mark.parametrize(
    ("response", "score"),
    [
        ("Final answer: 8.05 km", 100.0),
        ("Final answer: 8.1 km", 100.0),
        ("Final answer: 8.2", 0.0),
        ("5 miles is about 8.04", 100.0),
        ("Final answer: 7.9 km, i.e. 5 miles", 0.0),
        ("Final answer: 5 miles", 0.0),
    ],
)
def test_rules_numeric_key_reads_the_stated_number(numeric_question: dict, response: str, score: float) -> None:
    assert RulesGrader().grade(numeric_question, {"response": response}).score == score


def test_rules_patterns_decide_when_text_does_not_match() -> None:
    question = {
        "id": "q",
        "type": "open",
        "answer_key": {"answer": "no bullet", "aliases": [], "patterns": [r"spin\s+again"]},
    }
    verdict = RulesGrader().grade(question, {"response": "Final answer: yes, ask him to spin again"})
    assert verdict.score == 100.0 and "pattern" in verdict.detail


def test_rules_on_multiple_choice_compares_the_chosen_option(mc_question: dict) -> None:
    shuffled = {"choice_order": ["D", "C", "B", "A"]}  # shown: Unknown, Three, Two, One
    right = RulesGrader().grade(mc_question, {"response": '{"ANSWER": "D"}', **shuffled})
    wrong = RulesGrader().grade(mc_question, {"response": '{"ANSWER": "A"}', **shuffled})
    assert (right.score, right.verdict_parse) == (100.0, "ok")
    assert wrong.score == 0.0 and "'Unknown'" in wrong.detail


@pytest.mark.parametrize(
    ("response", "score", "parse"),
    [
        ("Final answer: PARIS!", 100.0, "ok"),
        ("city of paris", 100.0, "recovered"),
        ("Final answer: Paris, France", 0.0, "ok"),
        ("", 0.0, "none"),
    ],
)
def test_exact_requires_equality(open_question: dict, response: str, score: float, parse: str) -> None:
    verdict = ExactGrader().grade(open_question, {"response": response})
    assert (verdict.score, verdict.verdict_parse) == (score, parse)


def test_numeric_tolerance_option_overrides_the_key(numeric_question: dict) -> None:
    prediction = {"response": "Final answer: 8.3"}
    assert NumericGrader().grade(numeric_question, prediction).score == 0.0
    assert NumericGrader({"tolerance": 0.5}).grade(numeric_question, prediction).score == 100.0


def test_numeric_without_a_numeric_key_says_what_to_do(open_question: dict) -> None:
    with pytest.raises(GraderConfigError, match="add answer_key.numeric"):
        NumericGrader().grade(open_question, {"response": "4"})


@pytest.mark.parametrize("tolerance", [-1, "0.1", True])
def test_numeric_rejects_bad_tolerance(tolerance: object) -> None:
    with pytest.raises(GraderConfigError, match="tolerance"):
        NumericGrader({"tolerance": tolerance})
