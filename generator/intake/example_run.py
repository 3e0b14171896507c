"""A complete, valid run folder for a benchmark, for submitters to copy.

Built from the metadata schema's ``examples`` and the benchmark's own
questions, so it changes with them and stays valid: a test writes it into a
leaderboard folder and runs ``dualboard validate`` on it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import yaml

from dualboard.intake.models import Benchmark
from dualboard.intake.schemas import load_schema

RUN_ID = "my-model-7b-instruct"
"""The example's run folder name."""


@dataclass(frozen=True)
class ExampleRun:
    """The two files of an example run folder."""

    folder: str
    """``submissions/<benchmark>/<run_id>``."""
    metadata_yaml: str
    """metadata.yaml: every field of the schema that has an example, with the benchmark's name and version."""
    prediction_lines: tuple[str, ...]
    """predictions.jsonl: one line per question of the benchmark, round 0."""


def example_run(benchmark: Benchmark) -> ExampleRun:
    """The example run answering every question of ``benchmark`` once, each with a marked final answer."""
    metadata = {
        **_schema_examples(load_schema("metadata")),
        "benchmark": benchmark.name,
        "benchmark_version": benchmark.version,
    }
    order = list(load_schema("metadata")["properties"])
    text = yaml.safe_dump(
        dict(sorted(metadata.items(), key=lambda kv: order.index(kv[0]))),
        sort_keys=False,
        allow_unicode=True,
        width=100,
    )
    lines = tuple(
        json.dumps({"question_id": q["id"], "round": 0, "response": example_response(q)}, ensure_ascii=False)
        for q in benchmark.questions
    )
    return ExampleRun(f"submissions/{benchmark.name}/{RUN_ID}", text, lines)


def example_response(question: dict) -> str:
    """A response that reasons briefly, then marks its answer the way every grader reads it."""
    if question.get("type") == "multiple_choice":
        return f'Comparing the options one by one, only one fits.\n{{"ANSWER": "{question["correct_choice"]}"}}'
    key = question["answer_key"]
    if "answer" not in key:  # a reference sentence: a right answer says it in its own words
        return f"In short: {key['reference']}"
    return f"Working it through step by step gives the result.\nFinal answer: {key['answer']}"


def _schema_examples(schema: dict) -> dict:
    """Each property's first example; an object property becomes the mapping of its own properties' examples."""
    values = {}
    for name, spec in schema.get("properties", {}).items():
        if spec.get("examples"):
            values[name] = spec["examples"][0]
        elif spec.get("type") == "object" and _schema_examples(spec):
            values[name] = _schema_examples(spec)
    return values
