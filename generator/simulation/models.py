"""Fictional models with known truth, read from ``simulated_models.yaml``.

The file (next to a benchmark's ``questions.jsonl``) lists the models under
``models:``, with shared settings under ``defaults:`` that each entry may
override, plus tables of prepared open answers per question id:
``wrong_answers``, ``paraphrased_answers`` and ``key_mentioning_answers``
(see :class:`~dualboard.simulation.responses.AnswerTexts`). Everything is
checked at once; one error lists every problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dualboard.errors import DualboardError, Finding, InvalidInputError
from dualboard.intake.models import Benchmark
from dualboard.intake.yaml_mapping import read_yaml_mapping
from dualboard.names import RUN_ID_RULE, is_name
from dualboard.scored_files import GRADINGS
from dualboard.simulation.outcomes import CONCENTRATION
from dualboard.simulation.responses import MC_STYLES, AnswerTexts

MODELS_FILE = "simulated_models.yaml"
EXAMPLE = f"data/benchmarks/demo/{MODELS_FILE}"
ERROR_RATES = (
    "malformed_rate",
    "unmarked_rate",
    "rules_false_fail_rate",
    "rules_false_pass_rate",
    "judge_false_pass_rate",
    "human_error_rate",
)
"""Settings that are probabilities of a model, writer or grader failure."""
TEXT_TABLES = {
    "wrong": "wrong_answers",
    "paraphrased": "paraphrased_answers",
    "key_mentioning": "key_mentioning_answers",
}
"""AnswerTexts field → the table of ``simulated_models.yaml`` that fills it."""


@dataclass(frozen=True)
class SimulatedModel:
    """A fictional model with known true accuracies (one entry of ``simulated_models.yaml``).

    The error rates default to 0: a model whose graders and labellers never
    err, so that every grading observes exactly its ideal verdicts.
    """

    run_id: str
    """Run folder name, a valid name (:data:`dualboard.names.RUN_ID`)."""
    model: str
    """Model name shown on the leaderboard."""
    accuracy: dict[str, dict[str, float]]
    """True population accuracy (0–1) per category, then per grading: the share
    of answers an ideal grader of that grading passes."""
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
    """Decoding settings (:data:`~dualboard.simulation.runs.DECODING`; the seed is added from ``seed``)."""
    model_facts: dict[str, Any] = field(default_factory=dict)
    """Optional model metadata written to metadata.yaml as given
    (parameters_billions, weights, model_license, model_url)."""
    concentration: float | None = CONCENTRATION
    """Beta a + b of per-question probabilities; small means easy/hard questions."""
    rho: float = 0.6
    """Copula correlation between the two gradings' question probabilities."""
    malformed_rate: float = 0.02
    """Share of answers that are empty, truncated or refused (fail both gradings)."""
    unmarked_rate: float = 0.0
    """Share of readable open answers written as free prose with no marked final
    answer: the ``rules`` grader cannot read them and should give no verdict."""
    rules_false_fail_rate: float = 0.0
    """Share of correct, marked open answers worded as a paraphrase the key does
    not list (``paraphrased_answers``): a string matcher fails them."""
    rules_false_pass_rate: float = 0.0
    """Share of wrong, marked open answers that mention the key
    (``key_mentioning_answers``, "not 36 but 40"): a plain string matcher passes them;
    ``rules`` fails them, as no committed answer (:mod:`dualboard.grading.commitment`)."""
    judge_false_pass_rate: float = 0.0
    """Share of readable open answers failing the traditional grading that the
    lenient judge passes anyway."""
    human_error_rate: float = 0.0
    """Share of readable answers whose simulated human label contradicts the
    ideal answer-key verdict."""
    shuffle_choices: bool = False
    """Show multiple-choice options in a new random order each round."""
    styles: tuple[str, ...] = MC_STYLES
    """Multiple-choice answer styles the model uses."""


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


_SETTINGS = {
    "run_id": str,
    "model": str,
    "rounds": int,
    "seed": int,
    "model_revision": str,
    "submitter": str,
    "license": str,
    "decoding": dict,
    "model_facts": dict,
    "concentration": _optional_float,
    "rho": float,
    "shuffle_choices": bool,
    "styles": tuple,
    **dict.fromkeys(ERROR_RATES, float),
}
"""Every setting an entry may give besides ``accuracy``, with its type."""


def load_simulated_models(path: Path) -> list[SimulatedModel]:
    """Read and check the ``models`` of a ``simulated_models.yaml``; raise once with every problem."""
    path = Path(path)
    data = read_yaml_mapping(path, example=EXAMPLE)
    defaults = data.get("defaults") or {}
    entries = data.get("models")
    if not isinstance(entries, list) or not entries:
        raise InvalidInputError(
            [Finding(str(path), None, "models", "no list of models", "add `models:` with at least one entry")]
        )
    models, findings = [], []
    for index, entry in enumerate(entries):
        merged = {**defaults, **entry, "decoding": {**defaults.get("decoding", {}), **entry.get("decoding", {})}}
        problems = _model_findings(merged, f"models[{index}]", str(path))
        findings += problems
        if not problems:
            models.append(_model(merged))
    duplicated = sorted({m.run_id for m in models if [n.run_id for n in models].count(m.run_id) > 1})
    if duplicated:
        findings.append(
            Finding(str(path), None, "run_id", f"duplicated run ids {duplicated}", "give every model its own run_id")
        )
    if findings:
        raise InvalidInputError(findings)
    return models


def load_answer_texts(path: Path) -> dict[str, AnswerTexts]:
    """Read the prepared open answers (``TEXT_TABLES``), keyed by question id."""
    data = read_yaml_mapping(Path(path), example=EXAMPLE)
    tables = {name: {str(q): a for q, a in (data.get(table) or {}).items()} for name, table in TEXT_TABLES.items()}
    ids = sorted(set().union(*tables.values()))
    return {
        qid: AnswerTexts(**{name: tuple(str(a) for a in table.get(qid, ())) for name, table in tables.items()})
        for qid in ids
    }


def load_labelled_runs(path: Path) -> tuple[str, ...]:
    """Read ``human_labelled_runs`` (run ids whose answers get simulated human labels)."""
    config = read_yaml_mapping(Path(path), example=EXAMPLE)
    return tuple(str(r) for r in config.get("human_labelled_runs") or ())


def _model_findings(entry: dict[str, Any], where: str, file: str) -> list[Finding]:
    """Check one merged model entry; return every problem."""
    problems = []
    for name in ("run_id", "rounds", "seed", "accuracy"):
        if name not in entry:
            problems.append(Finding(file, None, f"{where}.{name}", "missing", f"add {name}"))
    unknown = sorted(set(entry) - set(_SETTINGS) - {"accuracy"})
    if unknown:
        problems.append(
            Finding(
                file, None, f"{where}.{unknown[0]}", f"unknown settings {unknown}", f"use some of {sorted(_SETTINGS)}"
            )
        )
    if problems:
        return problems
    if not is_name(str(entry["run_id"])):
        problems.append(
            Finding(
                file,
                None,
                f"{where}.run_id",
                f"{str(entry['run_id'])[:100]!r} is not a valid run id",
                f"use {RUN_ID_RULE}",
            )
        )
    if not isinstance(entry["rounds"], int) or entry["rounds"] < 1:
        problems.append(
            Finding(
                file,
                None,
                f"{where}.rounds",
                f"{entry['rounds']!r} is not a positive integer",
                "sample at least one round",
            )
        )
    unknown_styles = sorted(set(entry.get("styles", ())) - set(MC_STYLES))
    if unknown_styles:
        problems.append(
            Finding(file, None, f"{where}.styles", f"unknown styles {unknown_styles}", f"use some of {list(MC_STYLES)}")
        )
    problems += _rate_findings(entry, where, file)
    return problems + _accuracy_findings(entry["accuracy"], f"{where}.accuracy", file)


def _is_probability(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


def _rate_findings(entry: dict[str, Any], where: str, file: str) -> list[Finding]:
    return [
        Finding(file, None, f"{where}.{name}", f"{entry[name]!r} is not a probability", "give a number between 0 and 1")
        for name in ERROR_RATES
        if name in entry and not _is_probability(entry[name])
    ]


def _accuracy_findings(accuracy: Any, where: str, file: str) -> list[Finding]:
    if not isinstance(accuracy, dict) or not accuracy:
        return [Finding(file, None, where, "expected category: {traditional: p, answer_key: p}", "list every category")]
    problems = []
    for category, means in accuracy.items():
        for grading in GRADINGS:
            value = means.get(grading) if isinstance(means, dict) else None
            if not _is_probability(value):
                problems.append(
                    Finding(
                        file,
                        None,
                        f"{where}.{category}.{grading}",
                        f"{value!r} is not a probability",
                        "give a number between 0 and 1",
                    )
                )
    return problems


def _model(entry: dict[str, Any]) -> SimulatedModel:
    """Build a model from a checked entry; settings it leaves out keep the class defaults."""
    settings = {name: convert(entry[name]) for name, convert in _SETTINGS.items() if name in entry}
    settings.setdefault("model", settings["run_id"])
    accuracy = {str(c): {g: float(m[g]) for g in GRADINGS} for c, m in entry["accuracy"].items()}
    return SimulatedModel(accuracy=accuracy, **settings)


def check_categories(benchmark: Benchmark, model: SimulatedModel) -> None:
    """Raise when the model has no accuracy for one of the benchmark's categories."""
    missing = sorted({q["category"] for q in benchmark.questions} - set(model.accuracy))
    if missing:
        raise DualboardError(
            f"simulated model {model.run_id!r} has no accuracy for categories {missing} of benchmark "
            f"{benchmark.name!r} — add them under its `accuracy:` in {MODELS_FILE}"
        )
