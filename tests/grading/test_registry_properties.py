"""The grader registry, and properties every grader must have ("for every" tests)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualboard.grading import REGISTRY, get_grader, grade_benchmark
from dualboard.grading.errors import GraderConfigError
from dualboard.grading.registry import GRADER_CLASSES, build_registry
from dualboard.grading.verdict import PARSE_OUTCOMES
from dualboard.intake.models import GraderSpec
from tests.grading.grading_fixtures import make_benchmark, make_run

OPTIONS = {
    "recorded": {"field": "judge"},
    "embedding": {"threshold": 0.6},
    "llm": {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
}
OFFLINE = ["mc_letter", "recorded", "exact", "rules"]  # graders that need neither a service nor a numeric key


def test_duplicate_grader_names_are_refused() -> None:
    with pytest.raises(GraderConfigError, match="two graders are named 'rules'"):
        build_registry([*GRADER_CLASSES, GRADER_CLASSES[4]])


def test_unknown_grader_lists_the_known_ones() -> None:
    with pytest.raises(GraderConfigError, match="use one of: embedding, exact, human, llm, mc_letter"):
        get_grader(GraderSpec("mc-letter"))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_grader_has_an_identity(name: str) -> None:
    grader = get_grader(GraderSpec(name, OPTIONS.get(name, {})))
    assert grader.name == name and grader.version and len(grader.config_hash) == 64
    assert grader.role in ("traditional", "answer_key", "human")
    assert grader.__doc__ and grader.__doc__.strip()
    assert get_grader(GraderSpec(name, OPTIONS.get(name, {}))).config_hash == grader.config_hash


@pytest.mark.parametrize("name", ["numeric", "embedding", "llm"])
def test_options_change_the_config_hash(name: str) -> None:
    changes = {
        "numeric": ({}, {"tolerance": 0.5}),
        "embedding": ({"threshold": 0.6}, {"threshold": 0.7}),
        "llm": (OPTIONS["llm"], {**OPTIONS["llm"], "prompt": "judge_v2", "seed": 3}),
    }
    before, after = changes[name]
    assert get_grader(GraderSpec(name, before)).config_hash != get_grader(GraderSpec(name, after)).config_hash


# Responses mixing real answer styles with arbitrary text.
RESPONSES = st.one_of(
    st.text(max_size=200),
    st.sampled_from(['{"ANSWER": "A"}', "Answer: B", "**C**", "(D)", "Final answer: Paris", "One", "", "1,000"]),
    st.tuples(st.text(max_size=60), st.sampled_from(['{"ANSWER": "B"}', "Final answer: 8.05", "the answer is C."])).map(
        "\n".join
    ),
)


@pytest.mark.parametrize("name", OFFLINE)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(response=RESPONSES, judge=st.integers(0, 100), order=st.permutations("ABCD"))
def test_scores_stay_on_the_scale_and_repeat(name, mc_question, open_question, response, judge, order) -> None:
    grader = get_grader(GraderSpec(name, OPTIONS.get(name, {})))
    question = mc_question if name == "mc_letter" else open_question
    prediction = {"response": response, "recorded": {"judge": judge}, "choice_order": list(order)}
    verdict = grader.grade(question, prediction)
    assert verdict.score is None or 0.0 <= verdict.score <= 100.0
    assert verdict.verdict_parse in PARSE_OUTCOMES
    if name != "recorded":
        assert verdict.score in (0.0, 100.0) or (name == "rules" and verdict.score is None)
    if verdict.score is None:  # no verdict: a grader that cannot judge says so, and why
        assert verdict.verdict_parse == "none" and "cannot judge" in verdict.detail
    assert grader.grade(question, prediction) == verdict
    assert grader.grade_many([(question, prediction)] * 2) == [verdict, verdict]


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(responses=st.lists(RESPONSES, min_size=1, max_size=6), seed=st.integers(0, 10_000))
def test_row_order_changes_nothing(mc_question, open_question, responses, seed) -> None:
    bench = make_benchmark([mc_question, open_question])
    predictions = [
        {"question_id": qid, "round": i, "response": text, "recorded": {"judge": 40}}
        for i, text in enumerate(responses)
        for qid in ("horses", "capital")
    ]
    runs = [make_run("a", predictions), make_run("b", predictions[::-1])]
    shuffled = predictions[:]
    random.Random(seed).shuffle(shuffled)
    reordered = [make_run("b", shuffled), make_run("a", shuffled[::-1])]
    first, second = grade_benchmark(bench, runs), grade_benchmark(bench, reordered)
    assert first.scored.equals(second.scored) and first.verdicts.equals(second.verdicts)
    assert first.scored.traditional.between(0, 100).all()


def test_describe_graders_covers_the_registry() -> None:
    from dualboard.grading.registry import describe_graders

    described = describe_graders()
    assert [d["name"] for d in described] == [cls.name for cls in GRADER_CLASSES]
    assert all(d["summary"] and d["summary"][0].isupper() for d in described)
    assert all(d["rule"] and ">>>" not in d["rule"] and "Examples" not in d["rule"] for d in described)


def test_the_rules_rule_printed_on_the_site_states_its_limits() -> None:
    """What `rules` judges is printed from the constants that define it, never copied by hand."""
    from dualboard.grading.registry import describe_graders
    from dualboard.grading.rules import SHORT_MAX_CHARS, SHORT_MAX_WORDS

    rule = next(d["rule"] for d in describe_graders() if d["name"] == "rules")
    assert f"at most {SHORT_MAX_WORDS} words and {SHORT_MAX_CHARS} characters" in rule
    assert "exactly one distinct number" in rule and "no verdict" in rule
