"""The seeded simulator: deterministic files, valid submissions, and a truth the text carries."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from tests.simulation.answer_matching import extracted_letter, final_answer, states_key

from generator.errors import DualboardError, InvalidInputError
from generator.intake.benchmark import load_benchmark, load_benchmarks
from generator.intake.models import Benchmark, GraderSpec, Run
from generator.intake.validate import find_run_dirs, load_runs
from generator.names import is_name
from generator.simulation.responses import HEDGES, MC_STYLES, REFUSAL, Outcome, simulate_answer
from generator.simulation.runs import (
    SimulatedModel,
    load_simulated_models,
    load_wrong_answers,
    simulate_demo,
    simulate_run,
    true_scores,
    write_run,
)

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "benchmarks" / "demo"
METADATA_FIELDS = {"model", "model_revision", "submitter", "date", "benchmark", "benchmark_version",
                   "decoding", "rounds", "license", "notes"}


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    """A leaderboard folder holding only the demo benchmark definition."""
    shutil.copytree(DEMO, tmp_path / "data" / "benchmarks" / "demo")
    return tmp_path


@pytest.fixture(scope="module")
def demo_runs() -> list[Run]:
    """The committed demo runs, read back through intake's validator."""
    return load_runs(find_run_dirs([REPO / "submissions" / "demo"]), load_benchmarks(REPO / "data"))


def synthetic_benchmark(n_questions: int) -> Benchmark:
    """Many MC and open questions in one category, for measuring rates."""
    questions = []
    for i in range(n_questions):
        key = {"answer": f"answer{i}", "aliases": [f"alias{i}"], "patterns": [], "numeric": None, "reference": "", "notes": ""}
        question = {"id": f"s{i}", "category": "facts", "prompt": "?", "answer_key": key}
        if i % 2:
            question.update(type="open")
        else:
            question.update(type="multiple_choice", choices=[f"answer{i}", "w1", "w2", "w3"], correct_choice="A")
        questions.append(question)
    return Benchmark("synthetic", "1", "Synthetic", "", {}, (GraderSpec("rules"),), tuple(questions))


def synthetic_model(**overrides) -> SimulatedModel:
    settings = dict(run_id="sim-lm", model="sim-lm", accuracy={"facts": {"traditional": 0.7, "answer_key": 0.4}},
                    rounds=3, seed=5, shuffle_choices=True, styles=("json", "json_fenced"), malformed_rate=0.05)
    return SimulatedModel(**{**settings, **overrides})


def test_same_seed_writes_identical_bytes_and_another_seed_differs(demo_root, tmp_path):
    first = simulate_demo(demo_root, seed=7)
    before = files_under(demo_root / "submissions")
    assert simulate_demo(demo_root, seed=7) == first
    assert files_under(demo_root / "submissions") == before
    simulate_demo(demo_root, seed=8)
    after = files_under(demo_root / "submissions")
    assert after.keys() == before.keys()
    assert all(after[name] != before[name] for name in before)


def test_committed_demo_runs_are_the_seed_7_output(demo_root):
    simulate_demo(demo_root, seed=7)
    assert files_under(demo_root / "submissions" / "demo") == files_under(REPO / "submissions" / "demo"), (
        "submissions/demo is stale: regenerate it with simulate_demo(Path('.'), seed=7)"
    )


def test_demo_runs_pass_intake_validation_with_valid_ids(demo_runs):
    models = load_simulated_models(DEMO / "simulated_models.yaml")
    assert 6 <= len(demo_runs) <= 8
    assert sorted(r.run_id for r in demo_runs) == sorted(m.run_id for m in models)
    for run in demo_runs:
        assert is_name(run.run_id)
        assert run.metadata["rounds"] >= 3 and len(run.predictions) <= 48 * 5


def test_demo_metadata_has_every_contract_field(demo_runs):
    for run in demo_runs:
        assert set(run.metadata) == METADATA_FIELDS
        assert set(run.metadata["decoding"]) == {"temperature", "top_p", "max_tokens", "seed"}
        assert run.metadata["benchmark"] == "demo" and run.metadata["benchmark_version"] == "1.0"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", run.metadata["date"])
        assert "simulated" in run.metadata["notes"].lower()


def test_demo_has_malformed_answers_and_every_mc_answer_has_explanation_and_final(demo_runs):
    malformed = 0
    for run in demo_runs:
        for prediction in run.predictions:
            response = prediction["response"]
            if response == "" or response == REFUSAL or final_answer(response) in (None, ""):
                malformed += 1
                continue
            lines = response.splitlines()
            assert len(lines) >= 2 and not lines[0].startswith("Final answer:")
    total = sum(len(r.predictions) for r in demo_runs)
    assert 0.005 < malformed / total < 0.06, (malformed, total)


def test_no_markup_in_simulator_output(demo_runs):
    responses = [p["response"] for r in demo_runs for p in r.predictions]
    big = simulate_run(synthetic_benchmark(200), synthetic_model(styles=MC_STYLES), seed=1)
    responses += [p["response"] for p in big.run.predictions]
    for response in responses:
        assert not re.search(r"[<>&]|javascript:|\]\(", response), response


def test_mc_letters_and_final_answers_carry_the_truth_row_by_row():
    benchmark = synthetic_benchmark(400)
    sim = simulate_run(benchmark, synthetic_model(), seed=3)
    for prediction, truth in zip(sim.run.predictions, sim.truth.itertuples(), strict=True):
        question = benchmark.question(prediction["question_id"])
        if question["type"] == "multiple_choice":
            letter = extracted_letter(prediction["response"], prediction.get("choice_order"))
            assert (letter == question["correct_choice"]) == (truth.traditional == 100), prediction
        else:
            assert prediction["recorded"]["judge"] == truth.traditional
            assert prediction["recorded"]["judge"] in {0, 20, 40, 80, 100}
            assert not truth.malformed or truth.traditional == 0
        said = final_answer(prediction["response"])
        assert states_key(said, question["answer_key"]) == (truth.answer_key == 100), prediction


def test_rates_recover_the_true_accuracy():
    benchmark = synthetic_benchmark(600)
    model = synthetic_model()
    sim = simulate_run(benchmark, model, seed=11)
    mc_hits = [
        extracted_letter(p["response"], p.get("choice_order")) == "A"
        for p in sim.run.predictions if benchmark.question(p["question_id"])["type"] == "multiple_choice"
    ]
    assert np.mean(mc_hits) == pytest.approx(0.7 * (1 - model.malformed_rate), abs=0.05)
    truth = true_scores([model], benchmark).set_index(["grading", "category"])["true_mean"]
    for grading in ("traditional", "answer_key"):
        assert sim.truth[grading].mean() == pytest.approx(truth[(grading, "all")], abs=5)


def test_malformed_answers_fail_both_gradings():
    sim = simulate_run(synthetic_benchmark(100), synthetic_model(malformed_rate=0.3), seed=2)
    bad = sim.truth[sim.truth["malformed"]]
    assert len(bad) > 20
    assert (bad["traditional"] == 0).all() and (bad["answer_key"] == 0).all()
    texts = {sim.run.predictions[i]["response"] for i in bad.index}
    assert "" in texts and REFUSAL in texts


OUTCOMES = [Outcome(t, a) for t, a in itertools.product([True, False], repeat=2)] + [Outcome(False, False, True)]


@pytest.mark.parametrize("style", MC_STYLES)
@pytest.mark.parametrize("outcome", OUTCOMES, ids=str)
@pytest.mark.parametrize("shuffle", [False, True])
def test_every_style_and_outcome_reads_back(style, outcome, shuffle):
    question = synthetic_benchmark(1).questions[0]
    for seed in range(20):
        answer = simulate_answer(question, outcome, rng=np.random.default_rng(seed), styles=[style], shuffle=shuffle)
        letter = extracted_letter(answer.response, list(answer.choice_order) if answer.choice_order else None)
        assert (letter == "A") == outcome.traditional, answer.response
        assert states_key(final_answer(answer.response), question["answer_key"]) == outcome.answer_key


def test_true_scores_shape_and_values():
    benchmark = load_benchmark(DEMO)
    models = load_simulated_models(DEMO / "simulated_models.yaml")
    truth = true_scores(models, benchmark)
    assert list(truth.columns) == ["run_id", "grading", "category", "true_mean"]
    categories = {q["category"] for q in benchmark.questions} | {"all"}
    assert len(truth) == len(models) * 2 * len(categories)
    assert truth["true_mean"].between(0, 100).all()
    overall = truth[truth.category == "all"].pivot(index="run_id", columns="grading", values="true_mean")
    drop = overall["traditional"] - overall["answer_key"]
    assert drop.max() > 20 and drop.min() < 3  # some big drops, some none
    gaps = np.abs(np.subtract.outer(overall["answer_key"].to_numpy(), overall["answer_key"].to_numpy()))
    assert (gaps[np.triu_indices(len(gaps), 1)] < 1).any()  # two models nearly tied


def test_wrong_answer_table_is_used():
    benchmark = load_benchmark(DEMO)
    wrong = load_wrong_answers(DEMO / "simulated_models.yaml")
    model = synthetic_model(accuracy={c: {"traditional": 0.0, "answer_key": 0.0} for c in
                                      {q["category"] for q in benchmark.questions}}, malformed_rate=0.0)
    sim = simulate_run(benchmark, model, seed=4, wrong_answers=wrong)
    open_finals = {final_answer(p["response"]) for p in sim.run.predictions if p["question_id"] in wrong}
    assert open_finals <= {a for answers in wrong.values() for a in answers} | set(HEDGES)
    assert len(open_finals) > 24


@pytest.mark.parametrize("change, field", [
    ({"run_id": "../evil"}, "run_id"),
    ({"rounds": 0}, "rounds"),
    ({"styles": ["xml"]}, "styles"),
    ({"accuracy": {"facts": {"traditional": 1.5, "answer_key": 0.5}}}, "accuracy.facts.traditional"),
])
def test_bad_model_files_are_rejected_with_the_field(tmp_path, change, field):
    entry = {"run_id": "ok-lm", "rounds": 3, "seed": 1, "accuracy": {"facts": {"traditional": 0.5, "answer_key": 0.5}}}
    path = tmp_path / "simulated_models.yaml"
    path.write_text(yaml.safe_dump({"models": [{**entry, **change}]}), "utf-8")
    with pytest.raises(InvalidInputError) as caught:
        load_simulated_models(path)
    assert field in str(caught.value)


def test_missing_category_names_the_fix():
    model = synthetic_model(accuracy={"other": {"traditional": 0.5, "answer_key": 0.5}})
    with pytest.raises(DualboardError, match="facts"):
        simulate_run(synthetic_benchmark(4), model, seed=0)


def test_write_run_refuses_path_traversal(tmp_path):
    run = Run("demo", "../escape", {}, ())
    with pytest.raises(DualboardError, match="not a valid folder name"):
        write_run(run, tmp_path)
    assert not any(tmp_path.parent.glob("escape"))


def test_written_lines_are_plain_json(demo_runs):
    path = REPO / "submissions" / "demo" / demo_runs[0].run_id / "predictions.jsonl"
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert all(set(r) <= {"question_id", "round", "response", "choice_order", "recorded"} for r in rows)
    rounds = demo_runs[0].metadata["rounds"]
    assert [(r["question_id"], r["round"]) for r in rows[:rounds]] == [("demo-001", i) for i in range(rounds)]
