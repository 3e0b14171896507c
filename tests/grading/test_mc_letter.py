"""mc_letter: real-world answer styles, shuffling, ambiguity, unreadable answers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualboard.grading.choices import extract_choice
from dualboard.grading.errors import GraderConfigError, GradingInputError
from dualboard.grading.mc_letter import McLetterGrader

OPTIONS = ["One", "Two", "Three", "Unknown"]

# (response, expected letter or None, expected method)
STYLES = [
    ('Explanation...\n{"ANSWER": "A"}', "A", "json"),
    ('Reasoning.\n```json\n{"ANSWER": "C"}\n```', "C", "json"),
    ("Because.\n{'ANSWER': 'B'}", "B", "json"),
    ('{"answer": "d"}', "D", "json"),
    ('```json\n{\n  "explanation": "Sally has one sister.",\n  "ANSWER": "B"\n}\n```', "B", "json"),
    ('{"REASON": "north is to your right", "ANSWER": "C"} ', "C", "json"),
    ('{"ANSWER": "C. Three"}', "C", "json"),
    ('{"ANSWER": "Three"}', "C", "json"),
    ("{ANSWER: B}", "B", "json"),
    ("Answer: C", "C", "phrase"),
    ("After thinking it through, the answer is C.", "C", "phrase"),
    ("Final answer: **(B)**", "B", "phrase"),
    ("The correct option is D", "D", "phrase"),
    ("I would go with **C**", "C", "bold"),
    ("**B. Two** is what I pick.", "B", "bold"),
    ("Clearly (D) is right.", "D", "paren"),
    ("B", "B", "bare"),
    ("(a)", "A", "bare"),
    ("c.", "C", "bare"),
    ("Having compared them all, my choice:\nUnknown", "D", "option_text"),
    ("", None, "none"),
    ("I am not sure, all seem plausible.", None, "none"),
    ("The answer is a difficult one.", None, "none"),  # lower-case 'a' is an article, not an option
    ('{"ANSWER": "E"}', None, "none"),  # no option E among four
]


@pytest.mark.parametrize(("response", "letter", "method"), STYLES)
def test_extract_choice_reads_real_answer_styles(response: str, letter: str | None, method: str) -> None:
    found = extract_choice(response, OPTIONS)
    assert found.method == method
    assert (None if found.index is None else "ABCD"[found.index]) == letter


def test_an_option_starting_with_a_is_read_as_text_not_as_letter_a() -> None:
    options = ["Two pounds of bricks.", "A pound of feathers.", "They all weigh the same.", "Three pounds of air."]
    assert extract_choice("The answer is A pound of feathers.", options).index == 1
    assert extract_choice("The answer is A.", options).index == 0


def test_choice_order_outside_the_choices_is_an_input_error(mc_question: dict) -> None:
    with pytest.raises(GradingInputError, match="choice_order"):
        McLetterGrader().grade(mc_question, {"response": "A", "choice_order": ["A", "B", "C", "H"]})


def test_several_answers_take_the_last_committed_and_record_ambiguity() -> None:
    # Real case: Llama 3.1 70B answered {"ANSWER": "A"} first, then {"ANSWER": "C"} at the end.
    found = extract_choice('{"ANSWER": "A"}\nExplanation ... So, the correct answer is:\n{"ANSWER": "C"}', OPTIONS)
    assert found.index == 2
    assert found.ambiguous and found.candidates == (0, 2)


def test_repeated_same_letter_is_not_ambiguous() -> None:
    found = extract_choice('{"ANSWER": "B"} ... to restate: {"ANSWER": "B"}', OPTIONS)
    assert found.index == 1 and not found.ambiguous


def test_grade_maps_letters_through_the_shown_order(mc_question: dict) -> None:
    # Shown order: Two, Three, Unknown, One -> the correct "One" is letter D.
    prediction = {"response": '{"ANSWER": "D"}', "choice_order": ["B", "C", "D", "A"]}
    verdict = McLetterGrader().grade(mc_question, prediction)
    assert (verdict.score, verdict.verdict_parse) == (100.0, "ok")
    wrong = McLetterGrader().grade(mc_question, {"response": '{"ANSWER": "A"}', "choice_order": ["B", "C", "D", "A"]})
    assert wrong.score == 0.0 and "correct D" in wrong.detail


@pytest.mark.parametrize("correct", ["One", 0, "A"])
def test_correct_choice_as_text_index_or_letter(mc_question: dict, correct: object) -> None:
    question = {**mc_question, "correct_choice": correct}
    assert McLetterGrader().grade(question, {"response": '{"ANSWER": "A"}'}).score == 100.0


@pytest.mark.parametrize("response", ["", "   ", "no idea"])
def test_unreadable_answer_scores_zero_with_parse_none(mc_question: dict, response: str) -> None:
    verdict = McLetterGrader().grade(mc_question, {"response": response})
    assert (verdict.score, verdict.verdict_parse) == (0.0, "none")


def test_fallback_and_ambiguous_answers_are_recovered(mc_question: dict) -> None:
    assert McLetterGrader().grade(mc_question, {"response": "Answer: A"}).verdict_parse == "recovered"
    verdict = McLetterGrader().grade(mc_question, {"response": '{"ANSWER": "B"} no wait {"ANSWER": "A"}'})
    assert (verdict.score, verdict.verdict_parse) == (100.0, "recovered")
    assert "2 different answers given (B, A), took the last" in verdict.detail


def test_json_answer_first_takes_the_first_of_several_json_answers(mc_question: dict) -> None:
    """The autogenai scorer reads the first JSON object; the option reproduces that, still flagged."""
    response = '{"ANSWER": "A"}\nExplanation ... So, the correct answer is:\n{"ANSWER": "C"}'
    first = McLetterGrader({"json_answer": "first"}).grade(mc_question, {"response": response})
    last = McLetterGrader().grade(mc_question, {"response": response})
    assert (first.score, first.verdict_parse) == (100.0, "recovered")
    assert "2 different answers given (A, C), took the first; chose A (json)" in first.detail
    assert (last.score, last.verdict_parse) == (0.0, "recovered") and "took the last; chose C" in last.detail


def test_json_answer_first_leaves_other_answer_styles_to_the_last(mc_question: dict) -> None:
    verdict = McLetterGrader({"json_answer": "first"}).grade(mc_question, {"response": "Answer: B\nAnswer: A"})
    assert verdict.score == 100.0 and "took the last" in verdict.detail


def test_json_answer_is_part_of_the_config_hash() -> None:
    assert McLetterGrader().config_hash == McLetterGrader({"json_answer": "last"}).config_hash
    assert McLetterGrader().config_hash != McLetterGrader({"json_answer": "first"}).config_hash


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"json_answer": "middle"}, "options.json_answer must be last or first, got 'middle'"),
        ({"json_answers": "first"}, "unknown option\\(s\\) 'json_answers'"),
    ],
)
def test_mc_letter_options_are_checked(options: dict, message: str) -> None:
    with pytest.raises(GraderConfigError, match=message):
        McLetterGrader(options)


@pytest.mark.parametrize(("response", "why"), [("", "empty response"), ("no idea", "no readable option")])
def test_a_missing_option_is_the_models_failure(mc_question: dict, response: str, why: str) -> None:
    verdict = McLetterGrader().grade(mc_question, {"response": response})
    assert verdict.detail.startswith(f"{why}: the model's failure, scored 0")


def test_correct_choice_not_among_options_is_an_input_error(mc_question: dict) -> None:
    with pytest.raises(GradingInputError, match="correct_choice 'Seven'"):
        McLetterGrader().grade({**mc_question, "correct_choice": "Seven"}, {"response": "A"})


@settings(max_examples=200, deadline=None)
@given(prefix=st.text(max_size=300), letter=st.sampled_from("ABCD"), quote=st.sampled_from(['"', "'"]))
def test_a_closing_json_answer_always_wins(prefix: str, letter: str, quote: str) -> None:
    """For every explanation, a final {"ANSWER": X} line is the answer read."""
    response = f"{prefix}\n{{{quote}ANSWER{quote}: {quote}{letter}{quote}}}"
    found = extract_choice(response, OPTIONS)
    assert found.method == "json" and "ABCD"[found.index] == letter
