"""The demo benchmark honours the questions.jsonl contract and its answer keys are unambiguous."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from dualboard.intake.benchmark import load_benchmark
from dualboard.simulation import load_answer_texts
from dualboard.simulation.models import MODELS_FILE
from dualboard.simulation.responses import (
    DEFAULT_EXPLANATIONS,
    EXPLANATIONS,
    HEDGES,
    PROSE,
    REFUSAL,
)
from tests.conftest import DEMO
from tests.simulation.answer_matching import NUMBER, mentions_key, normalize, states_key

QUESTIONS = [json.loads(line) for line in (DEMO / "questions.jsonl").read_text("utf-8").splitlines()]
MC = [q for q in QUESTIONS if q["type"] == "multiple_choice"]
OPEN = [q for q in QUESTIONS if q["type"] == "open"]
TEXTS = load_answer_texts(DEMO / MODELS_FILE)
FIELDS = {"id", "category", "prompt", "type", "choices", "correct_choice", "answer_key"}
KEY_FIELDS = {"answer", "aliases", "patterns", "numeric", "reference", "notes"}


def test_benchmark_loads_through_intake():
    benchmark = load_benchmark(DEMO)
    assert benchmark.name == "demo" and benchmark.version == "1.0"
    assert benchmark.traditional["multiple_choice"].name == "mc_letter"
    assert benchmark.traditional["open"].options == {"field": "judge"}
    assert [g.name for g in benchmark.answer_key] == ["rules"]
    assert len(benchmark.questions) == len(QUESTIONS)


def test_size_categories_and_mix():
    assert len(QUESTIONS) >= 48
    categories = Counter(q["category"] for q in QUESTIONS)
    assert len(categories) >= 4 and min(categories.values()) >= 8, categories
    assert 0.4 <= len(MC) / len(QUESTIONS) <= 0.6
    for category in categories:
        types = {q["type"] for q in QUESTIONS if q["category"] == category}
        assert types == {"multiple_choice", "open"}, category


def test_ids_unique_and_well_formed():
    ids = [q["id"] for q in QUESTIONS]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"demo-\d{3}", i) for i in ids), ids


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q["id"])
def test_every_question_has_exactly_the_contract_fields(question):
    expected = FIELDS if question["type"] == "multiple_choice" else FIELDS - {"choices", "correct_choice"}
    assert set(question) == expected
    assert set(question["answer_key"]) == KEY_FIELDS
    key = question["answer_key"]
    assert key["answer"].strip() and len(key["reference"]) > len(key["answer"])
    assert all(isinstance(a, str) and a.strip() for a in key["aliases"])
    for pattern in key["patterns"]:
        assert re.search(pattern, normalize(key["answer"]), re.IGNORECASE), pattern
    assert "<" not in question["prompt"] and ">" not in question["prompt"]


@pytest.mark.parametrize("question", MC, ids=lambda q: q["id"])
def test_multiple_choice_options_and_key_agree(question):
    assert len(question["choices"]) == 4 and len(set(question["choices"])) == 4
    assert question["correct_choice"] in "ABCD"
    correct = question["choices"]["ABCD".index(question["correct_choice"])]
    key = question["answer_key"]
    assert normalize(correct) in {normalize(a) for a in [key["answer"], *key["aliases"]]}
    for option in question["choices"]:
        # A bare letter in an option would be read as a committed letter by extractors.
        assert not re.search(r"\b[A-Da-d]\b", option), option
        if option != correct:
            assert not mentions_key(option, key), option


@pytest.mark.parametrize("question", [q for q in QUESTIONS if q["answer_key"]["numeric"]], ids=lambda q: q["id"])
def test_numeric_keys_parse_and_match_the_answer(question):
    numeric = question["answer_key"]["numeric"]
    assert isinstance(numeric["value"], (int, float)) and numeric["tolerance"] >= 0
    first_number = NUMBER.search(question["answer_key"]["answer"]).group()
    assert abs(float(first_number.replace(",", "")) - numeric["value"]) <= numeric["tolerance"]


@pytest.mark.parametrize("question", OPEN, ids=lambda q: q["id"])
def test_open_questions_have_wrong_answers_that_miss_the_key(question):
    wrong = TEXTS[question["id"]].wrong
    assert len(wrong) >= 2
    for answer in wrong:
        assert not mentions_key(answer, question["answer_key"]), answer


@pytest.mark.parametrize("question", OPEN, ids=lambda q: q["id"])
def test_paraphrases_escape_a_string_matcher(question):
    """Correct paraphrases: neither the key nor any of its aliases, patterns or number appears."""
    texts = TEXTS[question["id"]]
    assert len(texts.paraphrased) >= 2
    for answer in texts.paraphrased:
        assert not states_key(answer, question["answer_key"]), answer
        assert not mentions_key(answer, question["answer_key"]), answer
        assert answer not in texts.wrong, answer


@pytest.mark.parametrize("question", OPEN, ids=lambda q: q["id"])
def test_key_mentioning_answers_mention_the_key_and_settle_on_a_wrong_answer(question):
    texts = TEXTS[question["id"]]
    key = question["answer_key"]
    assert len(texts.key_mentioning) >= 2
    for answer in texts.key_mentioning:
        assert mentions_key(answer, key), answer
        assert normalize(answer) not in {normalize(a) for a in [key["answer"], *key["aliases"]]}, answer
        assert any(wrong.casefold() in answer.casefold() for wrong in texts.wrong), answer


def test_prepared_answers_only_name_open_questions():
    assert set(TEXTS) == {q["id"] for q in OPEN}
    assert all(t.wrong and t.paraphrased and t.key_mentioning for t in TEXTS.values())


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q["id"])
def test_filler_text_never_states_a_key(question):
    prose = [sentence.format("") for sentence in PROSE]
    filler = [*EXPLANATIONS.get(question["category"], ()), *DEFAULT_EXPLANATIONS, *HEDGES, *prose, REFUSAL]
    for text in filler:
        assert not mentions_key(text, question["answer_key"]), text
        assert not re.search(r"\b[A-Da-d]\b|\d", text), text


def test_every_category_has_its_own_explanations():
    assert {q["category"] for q in QUESTIONS} <= set(EXPLANATIONS)


@pytest.mark.parametrize("sentence", PROSE)
def test_prose_has_no_final_answer_marker(sentence):
    """Free prose must not say "final answer", "answer:" or "the answer is", or graders could read it."""
    assert "answer" not in sentence.casefold() and sentence.count("{}") == 1
