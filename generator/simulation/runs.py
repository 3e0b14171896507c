"""Seeded simulated runs with known truth, written as ordinary submissions.

:func:`simulate_run` draws one model's per-answer truth
(:func:`~dualboard.simulation.truth.draw_truth`: ideal verdicts, writer and
grader errors, scores) and has :mod:`dualboard.simulation.responses` write
text that graders must score back to exactly the observed scores.
:func:`simulate_benchmark` writes every model of a ``simulated_models.yaml``
(:mod:`dualboard.simulation.models`) into ``submissions/``, and the simulated
human labels into ``human_labels.csv``.

Everything is a pure function of the inputs and the seed: the same seed writes
byte-identical files.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from dualboard.atomic import atomic_write_text
from dualboard.errors import DualboardError
from dualboard.intake.benchmark import load_benchmark
from dualboard.intake.human_labels import DIGEST, LABELS_FILE, response_sha256
from dualboard.intake.models import Benchmark, Run
from dualboard.intake.schemas import load_schema
from dualboard.names import RUN_ID_RULE, is_name
from dualboard.simulation.models import (
    MODELS_FILE,
    TEXT_TABLES,
    SimulatedModel,
    load_answer_texts,
    load_labelled_runs,
    load_simulated_models,
)
from dualboard.simulation.responses import (
    JUDGE_PASS_SCORES,
    AnswerTexts,
    Outcome,
    SimulatedAnswer,
    simulate_answer,
)
from dualboard.simulation.truth import draw_truth

DEMO_SEED = 7
"""Seed of the committed demo runs (``submissions/demo/``) and the default of ``dualboard simulate``."""
FIRST_DATE = dt.date(2026, 1, 1)
DATE_SPAN_DAYS = 300
DECODING = tuple(k for k in load_schema("metadata")["properties"]["decoding"]["properties"] if k != "seed")
"""The metadata contract's decoding settings a simulated model gives (the seed comes from its ``seed``)."""
MISLEADING_TEXTS = {"rules_false_fail_rate": "paraphrased", "rules_false_pass_rate": "key_mentioning"}
"""Rate of misleading answers → the AnswerTexts field its answers come from."""


@dataclass(frozen=True)
class SimulatedRun:
    """A simulated run and the verdicts its answers must receive."""

    run: Run
    """The run, exactly as it is written to ``submissions/``."""
    truth: pd.DataFrame
    """One row per answer, in the order of ``run.predictions``: see
    :func:`~dualboard.simulation.truth.draw_truth` for the columns."""


def simulate_run(
    benchmark: Benchmark,
    model: SimulatedModel,
    *,
    seed: int,
    answer_texts: Mapping[str, AnswerTexts] | None = None,
) -> SimulatedRun:
    """Simulate one model's run on ``benchmark``: text for every answer plus its truth.

    ``answer_texts`` holds the prepared open answers per question id
    (:func:`~dualboard.simulation.models.load_answer_texts`); a model with a
    ``rules_false_*_rate`` above 0 needs paraphrased or key-mentioning answers
    for every open question.

    Examples
    --------
    >>> from dualboard.intake.models import GraderSpec
    >>> q = {"id": "q1", "category": "facts", "prompt": "Capital of Italy?", "type": "open",
    ...      "answer_key": {"answer": "Rome", "aliases": []}}
    >>> bench = Benchmark("toy", "1", "Toy", "", {}, (GraderSpec("rules"),), (q,))
    >>> model = SimulatedModel("toy-lm", "toy-lm", {"facts": {"traditional": 1.0, "answer_key": 1.0}},
    ...                        rounds=2, seed=1, malformed_rate=0.0)
    >>> sim = simulate_run(bench, model, seed=0)
    >>> [p["response"].splitlines()[-1] for p in sim.run.predictions]
    ['Final answer: Rome', 'Final answer: Rome']
    """
    answer_texts = answer_texts or {}
    _check_answer_texts(benchmark, model, answer_texts)
    truth = draw_truth(benchmark, model, seed=seed)
    rng = np.random.default_rng([seed, model.seed, 1])
    predictions = []
    for row in truth.itertuples(index=False):
        answer = simulate_answer(
            benchmark.question(row.question_id),
            _outcome(row),
            rng=rng,
            styles=model.styles,
            shuffle=model.shuffle_choices,
            texts=answer_texts.get(row.question_id, AnswerTexts()),
        )
        predictions.append(_prediction(row.question_id, int(row.round), answer))
    run = Run(benchmark.name, model.run_id, run_metadata(benchmark, model, seed=seed), tuple(predictions))
    return SimulatedRun(run=run, truth=truth)


def _outcome(row: Any) -> Outcome:
    """Say what one truth row's response must carry."""
    return Outcome(
        traditional=row.traditional >= min(JUDGE_PASS_SCORES),
        answer_key=row.ideal_answer_key == 100,
        malformed=row.malformed,
        marked=row.marked,
        misleading=row.misleading,
        judge_score=int(row.traditional),
    )


def _check_answer_texts(benchmark: Benchmark, model: SimulatedModel, texts: Mapping[str, AnswerTexts]) -> None:
    """Refuse a misleading-answer rate that some open question has no prepared answers for."""
    for rate, name in MISLEADING_TEXTS.items():
        if getattr(model, rate) == 0:
            continue
        missing = [
            q["id"]
            for q in benchmark.questions
            if q["type"] == "open" and not getattr(texts.get(q["id"], AnswerTexts()), name)
        ]
        if missing:
            raise DualboardError(
                f"simulated model {model.run_id!r} has {rate} {getattr(model, rate):g}, but open questions "
                f"{missing[:5]} have no {TEXT_TABLES[name]} in {MODELS_FILE} — add some, or set {rate} to 0"
            )


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
    decoding = {key: model.decoding.get(key) for key in DECODING}
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
        **model.model_facts,
    }


def simulate_runs(
    benchmark: Benchmark,
    models: list[SimulatedModel],
    *,
    seed: int,
    answer_texts: Mapping[str, AnswerTexts] | None = None,
) -> list[Run]:
    """Simulate one run per model; see :func:`simulate_run` for the truth behind each."""
    return [simulate_run(benchmark, m, seed=seed, answer_texts=answer_texts).run for m in models]


def write_run(run: Run, submissions_dir: Path) -> Path:
    """Write ``<submissions_dir>/<benchmark>/<run_id>/`` (predictions + metadata), each file atomically."""
    for name in (run.benchmark, run.run_id):
        if not is_name(name):
            raise DualboardError(f"{name[:100]!r} is not a valid folder name — use {RUN_ID_RULE}")
    folder = Path(submissions_dir) / run.benchmark / run.run_id
    lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in run.predictions)
    atomic_write_text(folder / "predictions.jsonl", lines)
    metadata = yaml.safe_dump(run.metadata, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)
    atomic_write_text(folder / "metadata.yaml", metadata)
    return folder


def simulate_benchmark(root: Path, name: str, *, seed: int) -> list[Path]:
    """Regenerate ``submissions/<name>/`` from ``data/benchmarks/<name>/simulated_models.yaml``.

    Run folders of models no longer listed are left alone (never deleted).
    When the file lists ``human_labelled_runs``, their simulated human labels
    are also written to ``data/benchmarks/<name>/human_labels.csv``.
    Returns the run folders written.
    """
    folder = Path(root) / "data" / "benchmarks" / name
    benchmark = load_benchmark(folder)
    models = load_simulated_models(folder / MODELS_FILE)
    answer_texts = load_answer_texts(folder / MODELS_FILE)
    simulated = [simulate_run(benchmark, m, seed=seed, answer_texts=answer_texts) for m in models]
    labelled = load_labelled_runs(folder / MODELS_FILE)
    if labelled:
        write_human_labels(human_labels(simulated, labelled), folder / LABELS_FILE)
    return [write_run(sim.run, Path(root) / "submissions") for sim in simulated]


def human_labels(simulated: Sequence[SimulatedRun], run_ids: Sequence[str]) -> pd.DataFrame:
    """Label every answer of the named runs as the simulated human did (1 pass, 0 fail).

    The label is the ideal answer-key verdict, what a careful person applying
    the key says, except on the answers where the labeller errs (the truth's
    ``human_error``, at the model's ``human_error_rate``), so the graders page
    compares graders with fallible "humans".

    Returns
    -------
    pandas.DataFrame
        ``run``, ``question``, ``round``, ``label`` (0/1), ``response_sha256`` (of the response labelled),
        runs in ``run_ids`` order.
    """
    by_id = {sim.run.run_id: sim for sim in simulated}
    unknown = [r for r in run_ids if r not in by_id]
    if unknown:
        raise DualboardError(
            f"human_labelled_runs names {unknown}, which {MODELS_FILE} does not simulate — list run ids of its models"
        )
    frames = [
        pd.DataFrame(
            {
                "run": run_id,
                "question": by_id[run_id].truth["question_id"],
                "round": by_id[run_id].truth["round"],
                "label": (by_id[run_id].truth["human"] > 0).astype(int),
                DIGEST: [response_sha256(p["response"]) for p in by_id[run_id].run.predictions],
            }
        )
        for run_id in run_ids
    ]
    return pd.concat(frames, ignore_index=True)


def write_human_labels(labels: pd.DataFrame, path: Path) -> Path:
    """Write ``human_labels.csv`` atomically (columns run, question, round, label, response_sha256)."""
    return atomic_write_text(path, labels.to_csv(index=False, lineterminator="\n"))


def simulate_demo(root: Path, *, seed: int = DEMO_SEED) -> list[Path]:
    """Regenerate the bundled demo runs under ``<root>/submissions/demo/``."""
    return simulate_benchmark(root, "demo", seed=seed)
