"""The real graders score every simulated demo answer exactly as the simulator says they should.

This is what makes the simulator a ground truth for the statistics: if a
grader and the simulator disagree, one of them misreads the contract
(``choice_order`` holds canonical letters; the answer-key grading reads the
``Final answer:`` sentence, which may contradict the committed letter).
The truth says what each grading should *observe*, errors included: the
``rules`` grader must fail the paraphrases and pass the key-mentioning answers
the simulator wrote to mislead it. Free-prose answers (``marked`` False) are
left out: whether ``rules`` can read them is the grader's rule to make, not the
simulator's, so only their rate is tested (test_simulated_runs.py).
Skipped until the grading package is present.
"""

from __future__ import annotations

import pytest

from dualboard.intake.benchmark import load_benchmark
from dualboard.simulation import load_answer_texts, load_simulated_models, simulate_run
from dualboard.simulation.models import MODELS_FILE
from tests.conftest import DEMO

registry = pytest.importorskip("dualboard.grading.registry")

BENCHMARK = load_benchmark(DEMO)
TEXTS = load_answer_texts(DEMO / MODELS_FILE)


@pytest.fixture(scope="module")
def graded():
    """(question, prediction, truth row) for every demo answer under two seeds."""
    models = load_simulated_models(DEMO / MODELS_FILE)
    rows = []
    for seed in (7, 8):
        for model in models:
            sim = simulate_run(BENCHMARK, model, seed=seed, answer_texts=TEXTS)
            for prediction, truth in zip(sim.run.predictions, sim.truth.itertuples(), strict=True):
                rows.append((BENCHMARK.question(prediction["question_id"]), prediction, truth))
    return rows


def disagreements(grader_for, rows, column: str) -> list[str]:
    out = []
    for question, prediction, truth in rows:
        verdict = grader_for(question).grade(question, prediction)
        if (verdict.score or 0.0) != getattr(truth, column):
            out.append(
                f"{question['id']}: {prediction['response']!r} {prediction.get('choice_order')} "
                f"-> {verdict.score} ({verdict.detail}); truth {getattr(truth, column)}"
            )
    return out


def test_traditional_graders_reproduce_the_truth(graded):
    graders = {t: registry.get_grader(spec) for t, spec in BENCHMARK.traditional.items()}
    wrong = disagreements(lambda q: graders[q["type"]], graded, "traditional")
    assert not wrong, f"{len(wrong)} of {len(graded)} disagree, e.g.\n" + "\n".join(wrong[:5])


def test_answer_key_grader_reproduces_the_truth_on_marked_answers(graded):
    grader = registry.get_grader(BENCHMARK.answer_key[0])
    marked = [row for row in graded if row[2].marked]
    assert len(graded) - len(marked) > 20, "the demo should hold free-prose answers"
    wrong = disagreements(lambda q: grader, marked, "answer_key")
    assert not wrong, f"{len(wrong)} of {len(marked)} disagree, e.g.\n" + "\n".join(wrong[:5])


def test_the_graders_really_err(graded):
    """The demo holds false passes and false fails of both graders, so agreement with people is below 1."""
    truths = [truth for _, _, truth in graded]
    rules_errors = [t for t in truths if t.marked and t.answer_key != t.ideal_answer_key]
    assert sum(t.ideal_answer_key == 100 for t in rules_errors) > 10  # paraphrases failed
    assert not any(t.ideal_answer_key == 0 for t in rules_errors)  # key mentions hedge: rules fails them
    assert sum(t.traditional > t.ideal_traditional for t in truths) > 10  # the judge's false passes
    assert sum(t.human != t.ideal_answer_key for t in truths) > 10  # the labellers' mistakes


@pytest.mark.parametrize("question_id", sorted(TEXTS))
def test_rules_fails_every_paraphrase_and_every_key_mention(question_id):
    question = BENCHMARK.question(question_id)
    grader = registry.get_grader(BENCHMARK.answer_key[0])
    for answer, expected in [
        *((a, 0.0) for a in TEXTS[question_id].paraphrased),
        *((a, 0.0) for a in TEXTS[question_id].key_mentioning),  # "not 36 but 40": no committed answer
    ]:
        verdict = grader.grade(question, {"response": f"Thinking it through.\nFinal answer: {answer}"})
        assert verdict.score == expected, (answer, verdict.detail)
