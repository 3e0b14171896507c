"""Seeded simulated runs with known truth, written as ordinary submissions.

``simulated_models.yaml`` (next to a benchmark's ``questions.jsonl``) lists
fictional models with their true accuracy per category and grading. For each
model and category, :func:`~generator.simulation.outcomes.question_probabilities`
draws every question's pass probability under both gradings and
:func:`~generator.simulation.outcomes.draw_rounds` draws each round's verdicts;
:mod:`generator.simulation.responses` then writes text that graders must score
back to exactly those verdicts. :func:`true_scores` gives the population truth
the statistics should cover; :func:`simulate_run` also returns the realised
per-answer truth, which graders should reproduce exactly.

Everything is a pure function of the inputs and the seed: the same seed writes
byte-identical files.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from generator.names import is_name
from generator.atomic import atomic_write_text
from generator.errors import DualboardError, Finding, InvalidInputError
from generator.intake.benchmark import load_benchmark
from generator.intake.models import Benchmark, Run
from generator.intake.yaml_mapping import read_yaml_mapping
from generator.simulation.outcomes import GRADINGS, draw_rounds, question_probabilities
from generator.simulation.responses import (
    JUDGE_FIELD,
    MC_STYLES,
    Outcome,
    SimulatedAnswer,
    expected_judge_score,
    simulate_answer,
)

MODELS_FILE = "simulated_models.yaml"
HUMAN_LABELS_FILE = "human_labels.csv"
FIRST_DATE = dt.date(2026, 1, 1)
DATE_SPAN_DAYS = 300


@dataclass(frozen=True)
class SimulatedModel:
    """A fictional model with known true accuracies (one entry of ``simulated_models.yaml``)."""

    run_id: str
    """Run folder name, matching ``^[a-z0-9][a-z0-9._-]{0,99}$``."""
    model: str
    """Model name shown on the leaderboard."""
    accuracy: dict[str, dict[str, float]]
    """True population accuracy (0–1) per category, then per grading."""
    rounds: int
    """Rounds sampled per question."""
    seed: int
    """The model's own seed: combined with the simulation seed, and reported as decoding.seed."""
    model_revision: str = ""
    """Revision string written to metadata.yaml."""
    submitter: str = "Dualboard simulator"
    """Submitter written to metadata.yaml."""
    license: str = "CC-BY-4.0"
    """License written to metadata.yaml."""
    decoding: dict[str, Any] = field(default_factory=dict)
    """temperature, top_p, max_tokens (the seed is added from ``seed``)."""
    concentration: float | None = 4.0
    """Beta a + b of per-question probabilities; small means easy/hard questions."""
    rho: float = 0.6
    """Copula correlation between the two gradings' question probabilities."""
    malformed_rate: float = 0.02
    """Share of answers that are empty, truncated or refused (fail both gradings)."""
    shuffle_choices: bool = False
    """Show multiple-choice options in a new random order each round."""
    styles: tuple[str, ...] = MC_STYLES
    """Multiple-choice answer styles the model uses."""


@dataclass(frozen=True)
class SimulatedRun:
    """A simulated run and the verdicts its answers must receive."""

    run: Run
    """The run, exactly as it is written to ``submissions/``."""
    truth: pd.DataFrame
    """One row per answer: ``question_id``, ``category``, ``type``, ``round``,
    ``traditional`` (0–100: 0/100 for MC, the judge score for open),
    ``answer_key`` (0 or 100), ``malformed`` (bool)."""


def load_simulated_models(path: Path) -> list[SimulatedModel]:
    """Read and check the ``models`` of a ``simulated_models.yaml``; raise once with every problem."""
    path = Path(path)
    data = read_yaml_mapping(path, example=f"data/benchmarks/demo/{MODELS_FILE}")
    defaults = data.get("defaults") or {}
    entries = data.get("models")
    if not isinstance(entries, list) or not entries:
        raise InvalidInputError([Finding(str(path), None, "models", "no list of models", "add `models:` with at least one entry")])
    models, findings = [], []
    for index, entry in enumerate(entries):
        merged = {**defaults, **entry, "decoding": {**defaults.get("decoding", {}), **entry.get("decoding", {})}}
        problems = _model_findings(merged, f"models[{index}]", str(path))
        findings += problems
        if not problems:
            models.append(_model(merged))
    duplicated = sorted({m.run_id for m in models if [n.run_id for n in models].count(m.run_id) > 1})
    if duplicated:
        findings.append(Finding(str(path), None, "run_id", f"duplicated run ids {duplicated}", "give every model its own run_id"))
    if findings:
        raise InvalidInputError(findings)
    return models


def load_wrong_answers(path: Path) -> dict[str, tuple[str, ...]]:
    """Read the ``wrong_answers`` table (question id → plausible wrong final answers)."""
    table = read_yaml_mapping(Path(path), example=f"data/benchmarks/demo/{MODELS_FILE}").get("wrong_answers") or {}
    return {str(qid): tuple(str(a) for a in answers) for qid, answers in table.items()}


def _model_findings(entry: dict[str, Any], where: str, file: str) -> list[Finding]:
    """Check one merged model entry; return every problem."""
    problems = []
    for name in ("run_id", "rounds", "seed", "accuracy"):
        if name not in entry:
            problems.append(Finding(file, None, f"{where}.{name}", "missing", f"add {name}"))
    if problems:
        return problems
    if not is_name(str(entry["run_id"])):
        problems.append(Finding(file, None, f"{where}.run_id", f"{str(entry['run_id'])[:100]!r} is not a valid run id", "use lower-case letters, digits, '.', '_' or '-'"))
    if not isinstance(entry["rounds"], int) or entry["rounds"] < 1:
        problems.append(Finding(file, None, f"{where}.rounds", f"{entry['rounds']!r} is not a positive integer", "sample at least one round"))
    unknown = sorted(set(entry.get("styles", ())) - set(MC_STYLES))
    if unknown:
        problems.append(Finding(file, None, f"{where}.styles", f"unknown styles {unknown}", f"use some of {list(MC_STYLES)}"))
    return problems + _accuracy_findings(entry["accuracy"], f"{where}.accuracy", file)


def _accuracy_findings(accuracy: Any, where: str, file: str) -> list[Finding]:
    if not isinstance(accuracy, dict) or not accuracy:
        return [Finding(file, None, where, "expected category: {traditional: p, answer_key: p}", "list every category")]
    problems = []
    for category, means in accuracy.items():
        for grading in GRADINGS:
            value = means.get(grading) if isinstance(means, dict) else None
            if not isinstance(value, (int, float)) or not 0 <= value <= 1:
                problems.append(Finding(file, None, f"{where}.{category}.{grading}", f"{value!r} is not a probability", "give a number between 0 and 1"))
    return problems


def _model(entry: dict[str, Any]) -> SimulatedModel:
    accuracy = {str(c): {g: float(m[g]) for g in GRADINGS} for c, m in entry["accuracy"].items()}
    return SimulatedModel(
        run_id=str(entry["run_id"]),
        model=str(entry.get("model", entry["run_id"])),
        accuracy=accuracy,
        rounds=int(entry["rounds"]),
        seed=int(entry["seed"]),
        model_revision=str(entry.get("model_revision", "")),
        submitter=str(entry.get("submitter", "Dualboard simulator")),
        license=str(entry.get("license", "CC-BY-4.0")),
        decoding=dict(entry.get("decoding") or {}),
        concentration=_optional_float(entry.get("concentration", 4.0)),
        rho=float(entry.get("rho", 0.6)),
        malformed_rate=float(entry.get("malformed_rate", 0.02)),
        shuffle_choices=bool(entry.get("shuffle_choices", False)),
        styles=tuple(entry.get("styles", MC_STYLES)),
    )


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def draw_truth(benchmark: Benchmark, model: SimulatedModel, *, seed: int) -> pd.DataFrame:
    """Draw every answer's pass/fail under both gradings, category by category.

    Returns
    -------
    pandas.DataFrame
        One row per (question, round) in file order: ``question_id``,
        ``category``, ``type``, ``round``, ``traditional`` and ``answer_key``
        (0/1 passes, already 0 for malformed answers) and ``malformed`` (bool).
    """
    _check_categories(benchmark, model)
    rng = np.random.default_rng([seed, model.seed, 0])
    frames = []
    for category, questions in _questions_by_category(benchmark).items():
        means = model.accuracy[category]
        probabilities = question_probabilities(
            len(questions), means, concentration=model.concentration, rho=model.rho, rng=rng
        )
        rounds = draw_rounds(probabilities, model.rounds, rng=rng)
        rounds["question_id"] = [questions[i]["id"] for i in rounds["question"]]
        frames.append(rounds)
    truth = pd.concat(frames, ignore_index=True)
    truth["malformed"] = rng.random(len(truth)) < model.malformed_rate
    truth.loc[truth["malformed"], list(GRADINGS)] = 0
    return _in_file_order(truth, benchmark)


def _questions_by_category(benchmark: Benchmark) -> dict[str, list[dict[str, Any]]]:
    """Group questions by category, categories in order of first appearance."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for question in benchmark.questions:
        groups.setdefault(question["category"], []).append(question)
    return groups


def _in_file_order(truth: pd.DataFrame, benchmark: Benchmark) -> pd.DataFrame:
    position = {q["id"]: i for i, q in enumerate(benchmark.questions)}
    truth = truth.assign(position=truth["question_id"].map(position))
    truth = truth.sort_values(["position", "round"], kind="stable").reset_index(drop=True)
    truth["category"] = [benchmark.question(q)["category"] for q in truth["question_id"]]
    truth["type"] = [benchmark.question(q)["type"] for q in truth["question_id"]]
    columns = ["question_id", "category", "type", "round", *GRADINGS, "malformed"]
    return truth[columns]


def _check_categories(benchmark: Benchmark, model: SimulatedModel) -> None:
    missing = sorted({q["category"] for q in benchmark.questions} - set(model.accuracy))
    if missing:
        raise DualboardError(
            f"simulated model {model.run_id!r} has no accuracy for categories {missing} of benchmark "
            f"{benchmark.name!r} — add them under its `accuracy:` in {MODELS_FILE}"
        )


def simulate_run(
    benchmark: Benchmark,
    model: SimulatedModel,
    *,
    seed: int,
    wrong_answers: Mapping[str, Sequence[str]] | None = None,
) -> SimulatedRun:
    """Simulate one model's run on ``benchmark``: text for every answer plus its truth.

    Examples
    --------
    >>> from generator.intake.models import GraderSpec
    >>> q = {"id": "q1", "category": "facts", "prompt": "Capital of Italy?", "type": "open",
    ...      "answer_key": {"answer": "Rome", "aliases": []}}
    >>> bench = Benchmark("toy", "1", "Toy", "", {}, (GraderSpec("rules"),), (q,))
    >>> model = SimulatedModel("toy-lm", "toy-lm", {"facts": {"traditional": 1.0, "answer_key": 1.0}},
    ...                        rounds=2, seed=1, malformed_rate=0.0)
    >>> sim = simulate_run(bench, model, seed=0)
    >>> [p["response"].splitlines()[-1] for p in sim.run.predictions]
    ['Final answer: Rome', 'Final answer: Rome']
    """
    truth = draw_truth(benchmark, model, seed=seed)
    rng = np.random.default_rng([seed, model.seed, 1])
    wrong_answers = wrong_answers or {}
    predictions, traditional_scores = [], []
    for row in truth.itertuples(index=False):
        question = benchmark.question(row.question_id)
        outcome = Outcome(bool(row.traditional), bool(row.answer_key), bool(row.malformed))
        answer = simulate_answer(
            question, outcome, rng=rng, styles=model.styles, shuffle=model.shuffle_choices,
            wrong_answers=wrong_answers.get(row.question_id, ()),
        )
        predictions.append(_prediction(row.question_id, int(row.round), answer))
        traditional_scores.append(answer.recorded[JUDGE_FIELD] if answer.recorded else 100 * int(row.traditional))
    truth = truth.assign(traditional=traditional_scores, answer_key=100 * truth["answer_key"])
    run = Run(benchmark.name, model.run_id, run_metadata(benchmark, model, seed=seed), tuple(predictions))
    return SimulatedRun(run=run, truth=truth)


def _prediction(question_id: str, round_: int, answer: SimulatedAnswer) -> dict[str, Any]:
    """Lay out one predictions.jsonl row with the contract's fields, in contract order."""
    row: dict[str, Any] = {"question_id": question_id, "round": round_, "response": answer.response}
    if answer.choice_order is not None:
        row["choice_order"] = list(answer.choice_order)
    if answer.recorded is not None:
        row["recorded"] = dict(answer.recorded)
    return row


def run_metadata(benchmark: Benchmark, model: SimulatedModel, *, seed: int) -> dict[str, Any]:
    """Build the run's ``metadata.yaml`` content; the date derives from the seeds, not the clock."""
    rng = np.random.default_rng([seed, model.seed, 2])
    date = FIRST_DATE + dt.timedelta(days=int(rng.integers(DATE_SPAN_DAYS)))
    decoding = {key: model.decoding.get(key) for key in ("temperature", "top_p", "max_tokens")}
    return {
        "model": model.model,
        "model_revision": model.model_revision or f"{model.model}@simulated",
        "submitter": model.submitter,
        "date": date.isoformat(),
        "benchmark": benchmark.name,
        "benchmark_version": benchmark.version,
        "decoding": {**decoding, "seed": model.seed},
        "rounds": model.rounds,
        "license": model.license,
        "notes": (
            f"Simulated run, not a real model: written by Dualboard's seeded simulator (seed {seed}) "
            f"from known true accuracies (data/benchmarks/{benchmark.name}/{MODELS_FILE})."
        ),
    }


def simulate_runs(
    benchmark: Benchmark,
    models: list[SimulatedModel],
    *,
    seed: int,
    wrong_answers: Mapping[str, Sequence[str]] | None = None,
) -> list[Run]:
    """Simulate one run per model; see :func:`simulate_run` for the truth behind each."""
    return [simulate_run(benchmark, m, seed=seed, wrong_answers=wrong_answers).run for m in models]


def true_scores(models: list[SimulatedModel], benchmark: Benchmark) -> pd.DataFrame:
    """Return each run's true expected score per grading, per category and overall.

    The truth is the population mean the statistics estimate: for a question
    of a category with true accuracy p and malformed rate m, the expected
    answer-key score is 100·(1−m)·p; the traditional one is the same for
    multiple choice and (1−m)·E[judge score] for open questions. Category and
    overall values average these over the benchmark's questions.

    Returns
    -------
    pandas.DataFrame
        ``run_id``, ``grading`` (``traditional`` | ``answer_key``),
        ``category`` (a category name or ``all``), ``true_mean`` (0–100).
    """
    rows = []
    for model in models:
        _check_categories(benchmark, model)
        expected = pd.DataFrame([_expected_scores(q, model) for q in benchmark.questions])
        for grading in GRADINGS:
            per_category = expected.groupby("category", sort=False)[grading].mean()
            for category, value in [*per_category.items(), ("all", expected[grading].mean())]:
                rows.append({"run_id": model.run_id, "grading": grading, "category": category, "true_mean": float(value)})
    return pd.DataFrame(rows, columns=["run_id", "grading", "category", "true_mean"])


def _expected_scores(question: Mapping[str, Any], model: SimulatedModel) -> dict[str, Any]:
    """Expected 0–100 score of one question under each grading."""
    accuracy = model.accuracy[question["category"]]
    kept = 1 - model.malformed_rate
    traditional = 100 * accuracy["traditional"]
    if question["type"] == "open":
        traditional = expected_judge_score(accuracy["traditional"])
    return {
        "category": question["category"],
        "traditional": kept * traditional,
        "answer_key": kept * 100 * accuracy["answer_key"],
    }


def write_run(run: Run, submissions_dir: Path) -> Path:
    """Write ``<submissions_dir>/<benchmark>/<run_id>/`` (predictions + metadata), each file atomically."""
    for name in (run.benchmark, run.run_id):
        if not is_name(name):
            raise DualboardError(f"{name[:100]!r} is not a valid folder name — use lower-case letters, digits, '.', '_' or '-'")
    folder = Path(submissions_dir) / run.benchmark / run.run_id
    lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in run.predictions)
    atomic_write_text(folder / "predictions.jsonl", lines)
    metadata = yaml.safe_dump(run.metadata, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)
    atomic_write_text(folder / "metadata.yaml", metadata)
    return folder


def simulate_benchmark(root: Path, name: str, *, seed: int) -> list[Path]:
    """Regenerate ``submissions/<name>/`` from ``data/benchmarks/<name>/simulated_models.yaml``.

    Run folders of models no longer listed are left alone (never deleted).
    When the file lists ``human_labelled_runs``, their true answer-key
    verdicts are also written to ``data/benchmarks/<name>/human_labels.csv``.
    Returns the run folders written.
    """
    folder = Path(root) / "data" / "benchmarks" / name
    benchmark = load_benchmark(folder)
    models = load_simulated_models(folder / MODELS_FILE)
    wrong_answers = load_wrong_answers(folder / MODELS_FILE)
    simulated = [simulate_run(benchmark, m, seed=seed, wrong_answers=wrong_answers) for m in models]
    labelled = load_labelled_runs(folder / MODELS_FILE)
    if labelled:
        write_human_labels(human_labels(simulated, labelled), folder / HUMAN_LABELS_FILE)
    return [write_run(sim.run, Path(root) / "submissions") for sim in simulated]


def load_labelled_runs(path: Path) -> tuple[str, ...]:
    """Read ``human_labelled_runs`` (run ids whose answers get simulated human labels)."""
    config = read_yaml_mapping(Path(path), example=f"data/benchmarks/demo/{MODELS_FILE}")
    return tuple(str(r) for r in config.get("human_labelled_runs") or ())


def human_labels(simulated: Sequence[SimulatedRun], run_ids: Sequence[str]) -> pd.DataFrame:
    """Label every answer of the named runs with its true answer-key verdict (1 pass, 0 fail).

    The simulated truth is what a careful human applying the answer key would
    say, so these labels let the graders page compare graders with "humans".

    Returns
    -------
    pandas.DataFrame
        ``run``, ``question``, ``round``, ``label`` (0/1), runs in ``run_ids`` order.
    """
    by_id = {sim.run.run_id: sim for sim in simulated}
    unknown = [r for r in run_ids if r not in by_id]
    if unknown:
        raise DualboardError(f"human_labelled_runs names {unknown}, which {MODELS_FILE} does not simulate — "
                             "list run ids of its models")
    frames = [pd.DataFrame({"run": run_id, "question": by_id[run_id].truth["question_id"],
                            "round": by_id[run_id].truth["round"],
                            "label": (by_id[run_id].truth["answer_key"] > 0).astype(int)})
              for run_id in run_ids]
    return pd.concat(frames, ignore_index=True)


def write_human_labels(labels: pd.DataFrame, path: Path) -> Path:
    """Write ``human_labels.csv`` atomically (columns run, question, round, label)."""
    return atomic_write_text(path, labels.to_csv(index=False, lineterminator="\n"))


def simulate_demo(root: Path, *, seed: int = 7) -> list[Path]:
    """Regenerate the bundled demo runs under ``<root>/submissions/demo/``."""
    return simulate_benchmark(root, "demo", seed=seed)
