"""Strict grading passes only a committed final answer (issue 25 §3): no hedge, negation or shotgun.

``rules`` used to pass any final answer that held the key: "not 36", "24 or 36",
every option of a multiple-choice question. A run written without reading a
single key (every option; the prompt's words and the integers 0-129) scored
62.5 under answer-key grading on the demo and ranked 4 of 8 (issue: 64.6, 3 of 8). Now a final answer
that names several candidates, negates or hedges the key, or runs far longer
than the key fails (0, not "no verdict"), and says why.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualboard.grading import grade_benchmark
from dualboard.grading.rules import NAMED_KEY_WORDS, RulesGrader
from dualboard.intake.models import Run
from dualboard.intake.validate import find_run_dirs, load_benchmarks, load_runs
from dualboard.pipeline import human_labels
from dualboard.stats import analyse
from tests.conftest import DEMO, REPO

KEY_36 = {
    "id": "q36",
    "type": "open",
    "prompt": "What is 15% of 240?",
    "answer_key": {"answer": "36", "aliases": ["thirty-six"], "patterns": [], "numeric": {"value": 36, "tolerance": 0}},
}
QUESTIONS = {q["id"]: q for q in map(json.loads, (DEMO / "questions.jsonl").read_text(encoding="utf-8").splitlines())}


def grade(question: dict, final: str):
    return RulesGrader().grade(question, {"response": f"Let me think it through.\nFinal answer: {final}"})


@pytest.mark.parametrize(
    ("question", "final"),
    [
        (KEY_36, "not 36"),
        (KEY_36, "36 is wrong, it is 37"),
        (KEY_36, "anything except 36"),
        (KEY_36, "24 or 36"),
        (KEY_36, "36, 24"),
        (KEY_36, "maybe 36"),
        (QUESTIONS["demo-001"], "96 or 102 or 112 or 106"),  # every option
        (QUESTIONS["demo-001"], "B or A"),
        (QUESTIONS["demo-001"], "C D A B"),  # every letter, no joining word
        (QUESTIONS["demo-001"], "B A"),
        (QUESTIONS["demo-006"], "1024 is tempting, but it is 512"),
        (QUESTIONS["demo-024"], "carbon dioxide or oxygen"),
        (QUESTIONS["demo-024"], "not carbon dioxide but oxygen"),
    ],
)
def test_a_hedged_final_answer_fails_and_says_why(question: dict, final: str) -> None:
    verdict = grade(question, final)
    assert verdict.score == 0.0, verdict.detail
    assert "no committed answer" in verdict.detail


@pytest.mark.parametrize(
    ("question", "final"),
    [
        (KEY_36, "36"),
        (KEY_36, "**36**"),
        (KEY_36, "36 apples"),
        (KEY_36, "thirty-six"),
        (QUESTIONS["demo-001"], "B"),
        (QUESTIONS["demo-001"], "(B) 102"),
        (QUESTIONS["demo-001"], "B. A multiple of 17."),
        (QUESTIONS["demo-006"], "1,024"),
        (QUESTIONS["demo-024"], "Carbon dioxide (CO2)."),
    ],
)
def test_a_committed_final_answer_still_passes(question: dict, final: str) -> None:
    assert grade(question, final).score == 100.0


def test_numbers_restated_before_the_final_answer_do_not_count() -> None:
    """The rule reads the final answer only: reasoning may name the question's numbers and other candidates."""
    response = "10% of 240 is 24 and 5% is 12, so not 24 but 24 + 12.\nFinal answer: 36"
    assert RulesGrader().grade(KEY_36, {"response": response}).score == 100.0


WORDS = st.sampled_from(["Paris", "London", "36", "24", "thirty-six", "102", "96", "B", "C", "oxygen", "no"])
JOINERS = st.sampled_from([" or ", ", ", " and ", "; ", " / ", " | ", " vs ", " & ", " either "])


@settings(max_examples=300, deadline=None)
@given(
    question=st.sampled_from([KEY_36, QUESTIONS["demo-001"], QUESTIONS["demo-024"], QUESTIONS["demo-028"]]),
    committed=WORDS | st.sampled_from(["carbon dioxide", "the Indian Ocean", "Jupiter"]),
    candidate=WORDS | st.sampled_from(["carbon dioxide", "Indian Ocean", "the Pacific"]),
    joiner=JOINERS,
    before=st.booleans(),
)
def test_adding_a_candidate_never_turns_a_fail_into_a_pass(question, committed, candidate, joiner, before) -> None:
    if grade(question, committed).score != 0.0:
        return
    both = f"{candidate}{joiner}{committed}" if before else f"{committed}{joiner}{candidate}"
    assert grade(question, both).score == 0.0, both


def key_blind_run(runs: list[Run]) -> Run:
    """Answers written without a key: every option of a multiple-choice question; the prompt's words and the
    integers 0-129 for an open one; as many rounds as the demo's runs."""
    template = next(run for run in runs if run.run_id == "fjord-3b")
    rounds = sorted({p["round"] for p in template.predictions})
    answers = []
    for question in QUESTIONS.values():
        if question["type"] == "multiple_choice":
            final = " or ".join(question["choices"])
        else:
            final = f"{question['prompt']} {' '.join(map(str, range(130)))}"
        answers += [{"question_id": question["id"], "round": r, "response": f"Final answer: {final}"} for r in rounds]
    return Run("demo", "key-blind", {**template.metadata, "model": "key-blind"}, tuple(answers))


@pytest.mark.slow
def test_a_key_blind_run_scores_nothing_on_what_it_hedged() -> None:
    benchmarks = load_benchmarks(REPO / "data")
    benchmark = benchmarks["demo"]
    runs = load_runs(find_run_dirs([REPO / "submissions" / "demo"]), benchmarks)
    blind = key_blind_run(runs)
    graded = grade_benchmark(benchmark, [*runs, blind], human_labels=human_labels(benchmark))
    mine = graded.scored[graded.scored.run_id == "key-blind"]
    assert (mine.answer_key_grader == "rules").all()
    assert (mine.answer_key == 0).all(), mine[mine.answer_key != 0].head()
    models = analyse(graded.scored, n_boot=200).models.set_index("run_id")
    print(
        f"key-blind run: answer_key {models.answer_key_mean['key-blind']:.1f}, "
        f"rank {models.rank_answer_key['key-blind']:g}"
    )
    assert models.rank_answer_key["key-blind"] == len(models)


HEDGE = "It is hard to say; my working gives 17 in one place and 23 in another, so I leave it open."
"""An unmarked answer that names no key: no verdict once, which left the answer out of the run's mean."""


def _named_key(question: dict) -> bool:
    """A key every right answer names: a number, or at most NAMED_KEY_WORDS words (a longer one is paraphrased,
    and an unmarked answer to it still gets no verdict)."""
    key = question["answer_key"]
    texts = [key["answer"], *key.get("aliases", [])]
    return bool(key.get("numeric")) or max(len(text.split()) for text in texts) <= NAMED_KEY_WORDS


def test_a_run_cannot_hedge_its_failed_answers_into_no_verdict() -> None:
    """fjord-3b again, its open answers that rules failed replaced by the unmarked hedge. Before, each got no
    verdict and dropped out of the mean: 40.3 → 55.4 under answer-key grading, rank 6 → 4, 0 findings (found by
    an attacker's walk after the commitment rule). Now each fails where the key is a number or a few words: the
    key is nowhere in it."""
    benchmarks = load_benchmarks(REPO / "data")
    runs = load_runs(find_run_dirs([REPO / "submissions" / "demo"]), benchmarks)
    fjord = next(run for run in runs if run.run_id == "fjord-3b")
    graded = grade_benchmark(benchmarks["demo"], [fjord]).scored.set_index(["question_id", "round"])
    named = {q for q, question in QUESTIONS.items() if question["type"] == "open" and _named_key(question)}
    failed = {slot for slot, row in graded.iterrows() if row.answer_key == 0 and slot[0] in named}
    assert len(failed) > 10
    hedged = tuple(
        {**p, "response": HEDGE} if (p["question_id"], p["round"]) in failed else p for p in fjord.predictions
    )
    copy = Run("demo", "fjord-3b-hedged", {**fjord.metadata, "model": "fjord-3b-hedged"}, hedged)
    scored = grade_benchmark(benchmarks["demo"], [*runs, copy], human_labels=human_labels(benchmarks["demo"])).scored
    mine = scored[(scored.run_id == copy.run_id) & scored.set_index(["question_id", "round"]).index.isin(failed)]
    assert (mine.answer_key == 0).all(), mine[mine.answer_key != 0].head()
    models = analyse(scored, n_boot=200).models.set_index("run_id")
    assert models.answer_key_mean[copy.run_id] <= models.answer_key_mean["fjord-3b"]
    assert models.rank_answer_key[copy.run_id] >= models.rank_answer_key["fjord-3b"]
