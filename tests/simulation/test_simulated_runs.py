"""The seeded simulator: deterministic files, valid submissions, and a truth the text carries.

The text is read back with the test-only readers of ``answer_matching``, never
with the simulator's own code, so a simulator that writes something other than
its truth table says fails here.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from dualboard.errors import DualboardError, InvalidInputError
from dualboard.intake.benchmark import load_benchmark, load_benchmarks
from dualboard.intake.models import Benchmark, GraderSpec, Run
from dualboard.intake.schemas import load_schema
from dualboard.intake.validate import find_run_dirs, load_runs
from dualboard.names import is_name
from dualboard.simulation import (
    DEMO_SEED,
    AnswerTexts,
    SimulatedModel,
    load_answer_texts,
    load_simulated_models,
    simulate_demo,
    simulate_run,
    true_scores,
    write_run,
)
from dualboard.simulation.models import MODELS_FILE
from dualboard.simulation.responses import (
    HEDGES,
    MC_STYLES,
    REFUSAL,
    Outcome,
    simulate_answer,
)
from tests.conftest import DEMO, REPO, tree_bytes
from tests.simulation.answer_matching import (
    extracted_letter,
    final_answer,
    mentions_key,
    states_key,
)

METADATA = load_schema("metadata")["properties"]
MODEL_FACTS = {"parameters_billions", "weights", "model_license", "model_url"}
"""Optional metadata fields the demo gives for some models (shown as leaderboard columns)."""
METADATA_FIELDS = set(METADATA) - MODEL_FACTS - {"deployment", "harness"}
"""Every field of the metadata contract but the model facts, the serving deployment and the harness a run was
imported from (a simulated model has none)."""


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
        key = {
            "answer": f"answer{i}",
            "aliases": [f"alias{i}"],
            "patterns": [],
            "numeric": None,
            "reference": "",
            "notes": "",
        }
        question = {"id": f"s{i}", "category": "facts", "prompt": "?", "answer_key": key}
        if i % 2:
            question.update(type="open")
        else:
            question.update(type="multiple_choice", choices=[f"answer{i}", "w1", "w2", "w3"], correct_choice="A")
        questions.append(question)
    return Benchmark("synthetic", "1", "Synthetic", "", {}, (GraderSpec("rules"),), tuple(questions))


def synthetic_texts(benchmark: Benchmark) -> dict[str, AnswerTexts]:
    """Prepared answers for every open question of a synthetic benchmark."""
    return {
        q["id"]: AnswerTexts(
            wrong=("w1", "w2"),
            paraphrased=(f"solution number {q['id']}",),
            key_mentioning=(f"not {q['answer_key']['answer']} but w1",),
        )
        for q in benchmark.questions
        if q["type"] == "open"
    }


RATES = {
    "malformed_rate": 0.05,
    "unmarked_rate": 0.12,
    "rules_false_fail_rate": 0.08,
    "rules_false_pass_rate": 0.2,
    "judge_false_pass_rate": 0.3,
    "human_error_rate": 0.05,
}
"""Distinct error rates, so that a rate applied to the wrong answers shows."""


def synthetic_model(**overrides) -> SimulatedModel:
    settings = dict(
        run_id="sim-lm",
        model="sim-lm",
        accuracy={"facts": {"traditional": 0.7, "answer_key": 0.4}},
        rounds=3,
        seed=5,
        shuffle_choices=True,
        styles=("json", "json_fenced"),
        **RATES,
    )
    return SimulatedModel(**{**settings, **overrides})


def simulate_synthetic(n_questions: int, seed: int, **overrides):
    """Simulate the synthetic model on a synthetic benchmark, with prepared answers."""
    benchmark = synthetic_benchmark(n_questions)
    texts = synthetic_texts(benchmark)
    return benchmark, texts, simulate_run(benchmark, synthetic_model(**overrides), seed=seed, answer_texts=texts)


def is_malformed(response: str) -> bool:
    """Empty, refused, or cut off before its final answer."""
    return response in ("", REFUSAL) or response.endswith(("Final answer:", '{"ANSWER": "'))


def test_same_seed_writes_identical_bytes_and_another_seed_differs(demo_root, tmp_path):
    first = simulate_demo(demo_root, seed=DEMO_SEED)
    before = tree_bytes(demo_root / "submissions")
    assert simulate_demo(demo_root, seed=DEMO_SEED) == first
    assert tree_bytes(demo_root / "submissions") == before
    simulate_demo(demo_root, seed=DEMO_SEED + 1)
    after = tree_bytes(demo_root / "submissions")
    assert after.keys() == before.keys()
    assert all(after[name] != before[name] for name in before)


@pytest.mark.slow
def test_committed_demo_runs_are_what_dualboard_simulate_writes_by_default(demo_root):
    done = subprocess.run(
        [sys.executable, "-m", "dualboard", "simulate", "--root", str(demo_root)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(f"simulated runs for demo (seed {DEMO_SEED})\n"), done.stdout
    assert tree_bytes(demo_root / "submissions" / "demo") == tree_bytes(REPO / "submissions" / "demo"), (
        "submissions/demo is stale: regenerate it with `dualboard simulate`"
    )


def test_demo_runs_pass_intake_validation_with_valid_ids(demo_runs):
    models = load_simulated_models(DEMO / MODELS_FILE)
    assert 6 <= len(demo_runs) <= 8
    assert sorted(r.run_id for r in demo_runs) == sorted(m.run_id for m in models)
    for run in demo_runs:
        assert is_name(run.run_id)
        assert run.metadata["rounds"] >= 3 and len(run.predictions) <= 48 * 5


def test_demo_metadata_has_every_contract_field(demo_runs):
    for run in demo_runs:
        assert set(run.metadata) - MODEL_FACTS == METADATA_FIELDS
        assert set(run.metadata["decoding"]) == set(METADATA["decoding"]["properties"])
        assert run.metadata["benchmark"] == "demo" and run.metadata["benchmark_version"] == "1.0"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", run.metadata["date"])
        assert "simulated" in run.metadata["notes"].lower()


def test_demo_has_malformed_answers_and_every_readable_answer_has_explanation_and_final(demo_runs):
    benchmark = load_benchmark(DEMO)
    malformed = 0
    for run in demo_runs:
        for prediction in run.predictions:
            response = prediction["response"]
            if is_malformed(response):
                malformed += 1
                continue
            lines = response.splitlines()
            assert len(lines) >= 2 and not lines[0].startswith("Final answer:")
            is_open = benchmark.question(prediction["question_id"])["type"] == "open"
            assert is_open or final_answer(response), response  # only open answers may be free prose
    total = sum(len(r.predictions) for r in demo_runs)
    assert 0.005 < malformed / total < 0.06, (malformed, total)


def test_demo_unmarked_open_answers_come_at_each_models_rate(demo_runs):
    """Free-prose answers (no ``Final answer:``) are as frequent as simulated_models.yaml says."""
    benchmark = load_benchmark(DEMO)
    rates = {m.run_id: m.unmarked_rate for m in load_simulated_models(DEMO / MODELS_FILE)}
    for run in demo_runs:
        readable_open = [
            p["response"]
            for p in run.predictions
            if benchmark.question(p["question_id"])["type"] == "open" and not is_malformed(p["response"])
        ]
        unmarked = sum(final_answer(r) is None for r in readable_open)
        assert unmarked > 0, run.run_id
        assert stats.binomtest(unmarked, len(readable_open), rates[run.run_id]).pvalue > 0.001, (run.run_id, unmarked)


def test_no_markup_in_simulator_output(demo_runs):
    responses = [p["response"] for r in demo_runs for p in r.predictions]
    _, _, big = simulate_synthetic(200, seed=1, styles=MC_STYLES)
    responses += [p["response"] for p in big.run.predictions]
    for response in responses:
        assert not re.search(r"[<>&]|javascript:|\]\(", response), response


def test_text_carries_the_truth_row_by_row():
    benchmark, texts, sim = simulate_synthetic(400, seed=3)
    for prediction, truth in zip(sim.run.predictions, sim.truth.itertuples(), strict=True):
        question = benchmark.question(prediction["question_id"])
        said = final_answer(prediction["response"])
        if question["type"] == "multiple_choice":
            letter = extracted_letter(prediction["response"], prediction.get("choice_order"))
            assert (letter == question["correct_choice"]) == (truth.traditional == 100), prediction
            assert states_key(said, question["answer_key"]) == (truth.answer_key == truth.ideal_answer_key == 100)
        else:
            assert prediction["recorded"]["judge"] == truth.traditional
            assert prediction["recorded"]["judge"] in {0, 20, 40, 80, 100}
            if not truth.malformed:
                check_open_text(prediction["response"], question, texts[question["id"]], truth)


def check_open_text(response: str, question: dict, texts: AnswerTexts, truth) -> None:
    """A readable open answer: marked or prose, correct or not, and what a string matcher reads."""
    key = question["answer_key"]
    said = final_answer(response)
    assert (said is not None) == truth.marked, response
    if not truth.marked:
        assert np.isnan(truth.answer_key) and not truth.misleading
        assert mentions_key(response, key) == (truth.ideal_answer_key == 100), response
        return
    correct = states_key(said, key) or said in texts.paraphrased
    assert correct == (truth.ideal_answer_key == 100), response
    # A string matcher passes the key and the answers that mention it (paraphrases aside); rules passes only
    # a committed key: "not 36 but 40" mentions it and fails.
    assert mentions_key(said, key) == ((truth.ideal_answer_key == 100) != truth.misleading), response
    assert (truth.answer_key == 100) == (truth.ideal_answer_key == 100 and not truth.misleading), response
    assert (said in texts.paraphrased + texts.key_mentioning) == truth.misleading, response


def eligible_share(flags: np.ndarray, eligible: np.ndarray) -> tuple[int, int]:
    return int(flags[eligible].sum()), int(eligible.sum())


def test_error_rates_match_the_configuration():
    """Each error, read from the text where it can be, comes at its configured rate among the answers it can hit."""
    _, texts, sim = simulate_synthetic(1200, seed=12)
    responses = [p["response"] for p in sim.run.predictions]
    said = [final_answer(r) for r in responses]
    truth = sim.truth
    readable = ~np.array([is_malformed(r) for r in responses])
    readable_open = readable & (truth["type"] == "open").to_numpy()
    marked = np.array([s is not None for s in said])
    paraphrased = np.array([s in texts.get(q, AnswerTexts()).paraphrased for s, q in zip(said, truth["question_id"])])
    mentioning = np.array([s in texts.get(q, AnswerTexts()).key_mentioning for s, q in zip(said, truth["question_id"])])
    correct = truth["ideal_answer_key"].to_numpy() == 100
    judge = np.array([p["recorded"]["judge"] if "recorded" in p else 0 for p in sim.run.predictions])
    counts = {
        "malformed_rate": eligible_share(~readable, np.ones(len(truth), dtype=bool)),
        "unmarked_rate": eligible_share(~marked, readable_open),
        "rules_false_fail_rate": eligible_share(paraphrased, readable_open & marked & correct),
        "rules_false_pass_rate": eligible_share(mentioning, readable_open & marked & ~correct),
        "judge_false_pass_rate": eligible_share(
            judge >= 80, readable_open & (truth["ideal_traditional"] < 80).to_numpy()
        ),
        "human_error_rate": eligible_share(truth["human"].to_numpy() != truth["ideal_answer_key"].to_numpy(), readable),
    }
    for rate, (hits, n) in counts.items():
        assert n >= 300, (rate, n)
        assert stats.binomtest(hits, n, RATES[rate]).pvalue > 0.001, (rate, hits, n, RATES[rate])


def test_rates_recover_the_true_accuracy():
    benchmark, _, sim = simulate_synthetic(600, seed=11)
    model = synthetic_model()
    mc_hits = [
        extracted_letter(p["response"], p.get("choice_order")) == "A"
        for p in sim.run.predictions
        if benchmark.question(p["question_id"])["type"] == "multiple_choice"
    ]
    assert np.mean(mc_hits) == pytest.approx(0.7 * (1 - model.malformed_rate), abs=0.05)
    truth = true_scores([model], benchmark).set_index(["grading", "category"])
    for grading in ("traditional", "answer_key"):
        assert sim.truth[f"ideal_{grading}"].mean() == pytest.approx(truth.loc[(grading, "all"), "ideal_mean"], abs=4)
        assert sim.truth[grading].mean() == pytest.approx(truth.loc[(grading, "all"), "observed_mean"], abs=4)


def test_true_scores_ideal_and_observed_by_hand():
    """One open question, p = .5 under both gradings, 10 % malformed answers, half the rest unmarked."""
    question = synthetic_benchmark(2).questions[1]
    benchmark = Benchmark("one", "1", "One", "", {}, (GraderSpec("rules"),), (question,))
    accuracy = {"facts": {"traditional": 0.5, "answer_key": 0.5}}
    exact = SimulatedModel("a", "a", accuracy, rounds=1, seed=1, malformed_rate=0.1)
    erring = SimulatedModel(
        "b",
        "b",
        accuracy,
        rounds=1,
        seed=1,
        malformed_rate=0.1,
        unmarked_rate=0.5,
        rules_false_fail_rate=0.2,
        rules_false_pass_rate=0.1,
        judge_false_pass_rate=0.5,
    )
    table = true_scores([exact, erring], benchmark).query("category == 'all'").set_index(["run_id", "grading"])
    assert (table.loc["a", "ideal_mean"] == table.loc["a", "observed_mean"]).all()
    # rules judges the malformed .1 and the marked .9 · .5 = .45, passing .5 · .8 of the marked: it fails
    # paraphrases of the key, and the wrong answers that mention it (they hedge).
    assert table.loc[("b", "answer_key"), ["ideal_mean", "observed_mean"]].tolist() == pytest.approx(
        [45, 100 * 0.45 * 0.4 / 0.55]
    )
    # The judge scores 94 on average for a pass and 14 for a fail, and passes .5 + .5 · .5 = 75 %.
    assert table.loc[("b", "traditional"), ["ideal_mean", "observed_mean"]].tolist() == pytest.approx(
        [0.9 * 54, 0.9 * (0.75 * 94 + 0.25 * 14)]
    )


def test_malformed_answers_fail_both_gradings():
    _, _, sim = simulate_synthetic(100, seed=2, malformed_rate=0.3)
    bad = sim.truth[sim.truth["malformed"]]
    assert len(bad) > 20
    scores = ["ideal_traditional", "traditional", "ideal_answer_key", "answer_key", "human"]
    assert (bad[scores] == 0).all().all()
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
    models = load_simulated_models(DEMO / MODELS_FILE)
    truth = true_scores(models, benchmark)
    assert list(truth.columns) == ["run_id", "grading", "category", "ideal_mean", "observed_mean"]
    categories = {q["category"] for q in benchmark.questions} | {"all"}
    assert len(truth) == len(models) * 2 * len(categories)
    assert truth[["ideal_mean", "observed_mean"]].stack().between(0, 100).all()
    overall = truth[truth.category == "all"].pivot(index="run_id", columns="grading", values="ideal_mean")
    drop = overall["traditional"] - overall["answer_key"]
    assert drop.max() > 20 and drop.min() < 3  # some big drops, some none
    gaps = np.abs(np.subtract.outer(overall["answer_key"].to_numpy(), overall["answer_key"].to_numpy()))
    assert (gaps[np.triu_indices(len(gaps), 1)] < 1).any()  # two models nearly tied
    # The lenient judge's false passes only ever raise the traditional score.
    traditional = truth[truth.grading == "traditional"]
    assert (traditional["observed_mean"] > traditional["ideal_mean"]).all()


def test_answer_text_tables_are_used():
    benchmark = load_benchmark(DEMO)
    texts = load_answer_texts(DEMO / MODELS_FILE)
    model = synthetic_model(
        accuracy={c: {"traditional": 0.0, "answer_key": 0.0} for c in {q["category"] for q in benchmark.questions}},
        malformed_rate=0.0,
        unmarked_rate=0.0,
        rules_false_pass_rate=0.5,
    )
    sim = simulate_run(benchmark, model, seed=4, answer_texts=texts)
    open_finals = {final_answer(p["response"]) for p in sim.run.predictions if p["question_id"] in texts}
    wrong = {a for t in texts.values() for a in t.wrong}
    mentioning = {a for t in texts.values() for a in t.key_mentioning}
    assert open_finals <= wrong | mentioning | set(HEDGES)
    assert len(open_finals & wrong) > 24 and len(open_finals & mentioning) > 24


def test_missing_prepared_answers_name_the_table():
    with pytest.raises(DualboardError, match="paraphrased_answers"):
        simulate_run(synthetic_benchmark(4), synthetic_model(), seed=0)
    with pytest.raises(DualboardError, match="key_mentioning_answers"):
        simulate_run(synthetic_benchmark(4), synthetic_model(rules_false_fail_rate=0.0), seed=0)
    honest = synthetic_model(rules_false_fail_rate=0.0, rules_false_pass_rate=0.0)
    assert simulate_run(synthetic_benchmark(4), honest, seed=0).truth["misleading"].sum() == 0


@pytest.mark.parametrize(
    "change, field",
    [
        ({"run_id": "../evil"}, "run_id"),
        ({"rounds": 0}, "rounds"),
        ({"styles": ["xml"]}, "styles"),
        ({"accuracy": {"facts": {"traditional": 1.5, "answer_key": 0.5}}}, "accuracy.facts.traditional"),
        ({"unmarked_rate": 1.5}, "unmarked_rate"),
        ({"human_error_rate": "often"}, "human_error_rate"),
        ({"judge_false_pass_rte": 0.1}, "judge_false_pass_rte"),
    ],
)
def test_bad_model_files_are_rejected_with_the_field(tmp_path, change, field):
    entry = {"run_id": "ok-lm", "rounds": 3, "seed": 1, "accuracy": {"facts": {"traditional": 0.5, "answer_key": 0.5}}}
    path = tmp_path / "simulated_models.yaml"
    path.write_text(yaml.safe_dump({"models": [{**entry, **change}]}), "utf-8")
    with pytest.raises(InvalidInputError) as caught:
        load_simulated_models(path)
    assert field in str(caught.value)


def test_missing_category_names_the_fix():
    model = synthetic_model(accuracy={"other": {"traditional": 0.5, "answer_key": 0.5}})
    benchmark = synthetic_benchmark(4)
    with pytest.raises(DualboardError, match="facts"):
        simulate_run(benchmark, model, seed=0, answer_texts=synthetic_texts(benchmark))


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
