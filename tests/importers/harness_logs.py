"""Make small logs with the real harnesses, offline: Inspect AI with a solver that sets each answer, and
lm-evaluation-harness with a deterministic model class registered in a script. No network, no model weights.

The answers are planned by (question, round, model) so that they are right and wrong, varying by sample and
epoch: a test that compares the board's numbers with the harness's cannot pass trivially.

Run ``python -m tests.importers.harness_logs DIR`` to write both into DIR (what ``tests/importers/fixtures/
lm-eval/`` was made with, by lm-eval 0.4.13).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

QUESTIONS = [
    {
        "id": "capital",
        "question": "Capital of France?",
        "choices": ["Berlin", "Paris", "Rome"],
        "label": 1,
        "answer": "Paris",
    },
    {"id": "sum", "question": "What is 2 + 2?", "choices": ["3", "5", "4"], "label": 2, "answer": "4"},
    {
        "id": "ocean",
        "question": "Largest ocean?",
        "choices": ["Pacific", "Atlantic", "Indian"],
        "label": 0,
        "answer": "Pacific",
    },
    {
        "id": "planet",
        "question": "Largest planet?",
        "choices": ["Mars", "Jupiter", "Venus"],
        "label": 1,
        "answer": "Jupiter",
    },
    {"id": "metal", "question": "Chemical symbol of gold?", "choices": ["Ag", "Au", "Fe"], "label": 1, "answer": "Au"},
]
"""The questions both harnesses ask, multiple choice (choices, label) and open (answer)."""
WRONG = {"capital": "Lyon", "sum": "5", "ocean": "Atlantic", "planet": "Saturn", "metal": "Ag"}


def right(model: str, question: str, round_: int) -> bool:
    """Whether ``model`` answers ``question`` right in ``round_`` (0-based): a fixed, uneven pattern."""
    return (sum(map(ord, model + question)) + 2 * round_) % 5 not in (0, 3)


INSPECT_TASKS = """
import json
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import choice, includes, match
from inspect_ai.solver import multiple_choice, solver

QUESTIONS = json.loads({questions!r})
WRONG = json.loads({wrong!r})
LETTERS = "ABC"


def right(model, question, round_):
    return (sum(map(ord, model + question)) + 2 * round_) % 5 not in (0, 3)


def planned(state, text):
    state.output = ModelOutput.from_content(str(state.model), text)
    state.messages.append(state.output.message)
    return state


@solver
def planned_choice():
    inner = multiple_choice()

    async def solve(state, generate):
        async def answer(state, **kwargs):
            q = next(q for q in QUESTIONS if q["id"] == state.sample_id)
            ok = right(str(state.model), q["id"], state.epoch - 1)
            letter = LETTERS[q["label"] if ok else (q["label"] + 1) % 3]
            return planned(state, f"Let me think.\\nANSWER: {{letter}}")

        return await inner(state, answer)

    return solve


@solver
def planned_text():
    async def solve(state, generate):
        q = next(q for q in QUESTIONS if q["id"] == state.sample_id)
        ok = right(str(state.model), q["id"], state.epoch - 1)
        return planned(state, q["answer"] if ok else WRONG[q["id"]])

    return solve


@task
def quiz_mc():
    samples = [Sample(id=q["id"], input=q["question"], choices=q["choices"], target=LETTERS[q["label"]],
                      metadata={{"category": "mc"}}) for q in QUESTIONS]
    return Task(dataset=samples, solver=planned_choice(), scorer=choice(), version=2)


@task
def quiz_open():
    samples = [Sample(id=q["id"], input=q["question"], target=q["answer"]) for q in QUESTIONS]
    return Task(dataset=samples, solver=planned_text(), scorer=[match(), includes()], version=1)
"""


def make_inspect_logs(
    folder: Path,
    *,
    models: tuple[str, ...] = ("mockllm/alpha", "mockllm/beta"),
    epochs: int = 3,
    reducer: str | None = None,
) -> list[Path]:
    """Run both Inspect tasks for every model with ``inspect eval`` (``--epochs``; ``--epochs-reducer`` when given)
    and return the ``.eval`` logs written into ``folder/logs``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "quiz.py").write_text(
        INSPECT_TASKS.format(questions=json.dumps(QUESTIONS), wrong=json.dumps(WRONG)), "utf-8"
    )
    env = {**os.environ, "INSPECT_DISPLAY": "none", "INSPECT_LOG_DIR": str(folder / "logs")}
    for model in models:
        command = [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            "quiz.py@quiz_mc",
            "quiz.py@quiz_open",
            "--model",
            model,
            "--epochs",
            str(epochs),
            "--log-dir",
            str(folder / "logs"),
        ]
        command += ["--epochs-reducer", reducer] if reducer else []
        subprocess.run(command, cwd=folder, env=env, check=True, capture_output=True, text=True)
    return sorted((folder / "logs").glob("*.eval"))


LM_EVAL_MC = """
task: quiz_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: label
metric_list:
  - metric: acc
  - metric: acc_norm
metadata:
  version: 1.0
"""
LM_EVAL_GEN = """
task: quiz_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: answer
repeats: 3
generation_kwargs:
  until: ["\\n"]
  do_sample: false
  temperature: 0.0
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
filter_list:
  - name: take_first
    filter:
      - function: take_first
metadata:
  version: 2.0
"""
LM_EVAL_SCRIPT = '''
import hashlib, json, sys
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

QUESTIONS = json.loads({questions!r})
WRONG = json.loads({wrong!r})


def right(model, question, round_):
    return (sum(map(ord, model + question)) + 2 * round_) % 5 not in (0, 3)


@register_model("planned")
class Planned(LM):
    """Log-likelihoods from a hash of the text; generations planned by (model, question, repeat)."""

    def __init__(self, pretrained="planned", **kwargs):
        super().__init__()
        self.name = pretrained

    def loglikelihood(self, requests):
        scores = []
        for request in requests:
            context, continuation = request.args
            digest = hashlib.sha256((self.name + context + continuation).encode()).hexdigest()
            scores.append((-(int(digest[:8], 16) % 1000) / 100.0, False))
        return scores

    def loglikelihood_rolling(self, requests):
        return [0.0 for _ in requests]

    def generate_until(self, requests):
        texts, seen = [], {{}}
        for request in requests:  # lm-eval passes a document's request once per repeat, in order
            q = next(q for q in QUESTIONS if q["question"] in request.args[0])
            repeat = seen[q["id"]] = seen.get(q["id"], -1) + 1
            texts.append(q["answer"] if right(self.name, q["id"], repeat) else WRONG[q["id"]])
        return texts


from lm_eval.__main__ import cli_evaluate

cli_evaluate()
'''


def make_lm_eval_output(folder: Path, *, models: tuple[str, ...] = ("planned-a", "planned-b")) -> Path:
    """Run the two lm-eval tasks for every model (``lm_eval run … --log_samples``); return the output folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tasks").mkdir(exist_ok=True)
    (folder / "tasks" / "quiz.json").write_text(json.dumps(QUESTIONS), "utf-8")
    data = "tasks/quiz.json"
    (folder / "tasks" / "quiz_mc.yaml").write_text(LM_EVAL_MC.format(data=data), "utf-8")
    (folder / "tasks" / "quiz_gen.yaml").write_text(LM_EVAL_GEN.format(data=data), "utf-8")
    (folder / "run_lm_eval.py").write_text(
        LM_EVAL_SCRIPT.format(questions=json.dumps(QUESTIONS), wrong=json.dumps(WRONG)), "utf-8"
    )
    for model in models:
        command = [
            sys.executable,
            "run_lm_eval.py",
            "run",
            "--model",
            "planned",
            "--model_args",
            f"pretrained={model}",
            "--include_path",
            "tasks",
            "--tasks",
            "quiz_mc,quiz_gen",
            "--output_path",
            "out",
            "--log_samples",
        ]
        subprocess.run(
            command,
            cwd=folder,
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"},
        )
    return folder / "out"


if __name__ == "__main__":
    target = Path(sys.argv[1])
    print(make_lm_eval_output(target / "lm-eval"))
    print(*make_inspect_logs(target / "inspect"), sep="\n")
    print(textwrap.dedent(__doc__ or ""))
