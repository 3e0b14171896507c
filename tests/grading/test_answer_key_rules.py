"""rules (answer key), exact and numeric (traditional): extraction and key matching."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualboard.grading.commitment import KeyTexts, uncommitted
from dualboard.grading.errors import GraderConfigError
from dualboard.grading.exact import ExactGrader, NumericGrader
from dualboard.grading.final_answer import extract_final_answer, find_numbers
from dualboard.grading.rules import (
    SHORT_MAX_CHARS,
    SHORT_MAX_WORDS,
    RulesGrader,
    is_short,
)


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


LONG_UNMARKED = "Paris was lovely that spring. " * 10  # 50 words, no marker, the key named


@pytest.mark.parametrize(
    ("response", "score", "parse"),
    [
        ("Final answer: Paris", 100.0, "ok"),
        ("Final answer: paris.", 100.0, "ok"),
        ("Final answer: The City of Paris", 100.0, "ok"),  # alias, whole words
        ("Final answer: Lyon", 0.0, "ok"),
        ("Final answer: Parisian suburbs", 0.0, "ok"),  # 'paris' pattern needs a word boundary
        ('{"final_answer": "Paris"}', 100.0, "ok"),
        ("So it is \\boxed{Lyon}", 0.0, "ok"),
        ("I believe it is Paris", 100.0, "ok"),  # short: one line of at most 20 words, taken whole
        ("Lyon, I think.", 0.0, "ok"),
        ("Paris was lovely.\nBut the capital is Lyon", None, "none"),  # two lines, no marker: cannot judge
        (LONG_UNMARKED, None, "none"),  # no last-line or anywhere-in-the-text guess
        ("", 0.0, "none"),  # the model's failure
        ("Let me think about it.\n\n**Final answer:**", 0.0, "none"),  # a marker with no answer: the model's failure
        ("Answer: Lyon\nHmm, no.\nAnswer: Paris", 100.0, "recovered"),  # two different marked answers: the last
    ],
)
def test_rules_on_open_questions(open_question: dict, response: str, score: float | None, parse: str) -> None:
    verdict = RulesGrader().grade(open_question, {"response": response})
    assert (verdict.score, verdict.verdict_parse) == (score, parse), verdict.detail


@pytest.mark.parametrize(
    ("response", "why"),
    [
        ("Paris was lovely.\nBut the capital is Lyon", "no marked final answer in a 8-word response: cannot judge"),
        (LONG_UNMARKED, "no marked final answer in a 50-word response: cannot judge"),
    ],
)
def test_rules_says_why_it_cannot_judge(open_question: dict, response: str, why: str) -> None:
    assert RulesGrader().grade(open_question, {"response": response}).detail == why


def test_rules_flags_two_different_marked_answers(open_question: dict) -> None:
    verdict = RulesGrader().grade(open_question, {"response": '{"ANSWER": "Lyon"} or rather {"ANSWER": "Paris"}'})
    assert verdict.verdict_parse == "recovered" and "2 different answers given ('Lyon', 'Paris')" in verdict.detail


@pytest.mark.parametrize("words", [SHORT_MAX_WORDS, SHORT_MAX_WORDS + 1])
def test_short_means_one_line_of_at_most_the_word_limit(open_question: dict, words: int) -> None:
    response = " ".join(["Paris"] * words)
    assert is_short(response) == (words <= SHORT_MAX_WORDS)
    assert (RulesGrader().grade(open_question, {"response": response}).score is None) == (words > SHORT_MAX_WORDS)


def test_short_also_bounds_characters() -> None:
    assert is_short("x" * SHORT_MAX_CHARS) and not is_short("x" * (SHORT_MAX_CHARS + 1))
    assert is_short("  Paris  \n\n") and not is_short("Paris\nLyon")


@pytest.mark.parametrize(
    ("response", "score"),
    [
        ("Final answer: 8.05 km", 100.0),
        ("Final answer: 8.1 km", 100.0),
        ("Final answer: 8.2", 0.0),
        ("Final answer: 7.9 km, i.e. 5 miles", 0.0),
        ("Final answer: 5 miles", 0.0),
        ("It is about 8.04 km.", 100.0),  # the only number, within the key's tolerance
        ("Roughly 8.3 km.", 0.0),  # the only number, outside it
        ("A mile is a long way, " * 10 + "and the distance comes to 8.05 km in the end.", 100.0),  # long, one number
        ("8.05 km, that is 8.05 km.", 100.0),  # one distinct number, said twice
        ("5 miles is about 8.04", None),  # two different numbers, no marker: cannot judge
        ("One mile is 1.609 km,\nso 5 miles come to about 8 km", None),
    ],
)
def test_rules_numeric_key_reads_the_stated_or_only_number(
    numeric_question: dict, response: str, score: float | None
) -> None:
    verdict = RulesGrader().grade(numeric_question, {"response": response})
    assert verdict.score == score, verdict.detail


def test_rules_numeric_key_says_which_numbers_it_saw(numeric_question: dict) -> None:
    verdict = RulesGrader().grade(numeric_question, {"response": "5 miles is about 8.04"})
    assert verdict.detail == "2 different numbers (5, 8.04) and no marked final answer: cannot judge"


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


def test_rules_flags_two_json_answers_on_multiple_choice(mc_question: dict) -> None:
    """The answer the autogenai scorer reads first and mc_letter can be told to take: still ambiguous here."""
    response = '{"ANSWER": "A"}\nExplanation ... So, the correct answer is:\n{"ANSWER": "C"}'
    verdict = RulesGrader().grade(mc_question, {"response": response})
    assert (verdict.score, verdict.verdict_parse) == (0.0, "recovered")
    assert "2 different answers given (A, C), took the last" in verdict.detail


@pytest.mark.parametrize("response", ["I am not sure, all seem plausible.", "Let me think. " * 40])
def test_rules_on_multiple_choice_without_a_readable_option_is_the_models_failure(
    mc_question: dict, response: str
) -> None:
    verdict = RulesGrader().grade(mc_question, {"response": response})
    assert (verdict.score, verdict.verdict_parse) == (0.0, "none")
    assert "the model's failure" in verdict.detail


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


PROSE_WORDS = st.sampled_from(
    ["Paris", "Lyon", "is", "the", "capital", "of", "France", "I", "think", "so", "well,", "yes."]
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.lists(PROSE_WORDS, min_size=1, max_size=15).map(" ".join), min_size=2, max_size=6))
def test_rules_never_guesses_from_unmarked_prose(open_question: dict, lines: list[str]) -> None:
    """For every unmarked answer of several lines, whatever its last line says, rules gives no verdict; unless it
    never names the (one-word) key, which it then cannot have given: a fail."""
    response = "\n".join(lines)
    verdict = RulesGrader().grade(open_question, {"response": response})
    if "Paris" in response.split():
        assert (verdict.score, verdict.verdict_parse) == (None, "none"), verdict.detail
        assert verdict.detail.endswith("cannot judge")
    else:
        assert (verdict.score, verdict.verdict_parse) == (0.0, "none"), verdict.detail
        assert "the key is nowhere in the response" in verdict.detail


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(PROSE_WORDS, min_size=1, max_size=SHORT_MAX_WORDS).map(" ".join))
def test_rules_judges_every_short_answer(open_question: dict, words: str) -> None:
    """For every one-line answer within the limits, rules judges it whole: it passes exactly when it names the key
    and commits to it (a long line of "Paris Paris ..." or "Paris well, Lyon" does not)."""
    verdict = RulesGrader().grade(open_question, {"response": words})
    key = open_question["answer_key"]
    committed = uncommitted(words, KeyTexts((key["answer"], *key["aliases"]))) is None
    assert verdict.score == (100.0 if "paris" in words.lower().split() and committed else 0.0), verdict.detail
