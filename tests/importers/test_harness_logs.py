"""Logs made by the real harnesses, offline, imported with the CLI: Inspect AI (``inspect eval`` with a solver that
sets each answer, 3 epochs, multiple-choice and open tasks, two models) and lm-evaluation-harness (a task YAML
over a local JSON file and a registered model class). Each run's traditional mean must be the harness's own
number to 1e-9 where the harness takes the mean over rounds; under another reducer the board records it and
says both numbers.

Needs the ``[harness]`` extra (inspect-ai, lm-eval, torch); runs in ``make test-all``, which installs it.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.importers.harness_logs import make_inspect_logs, make_lm_eval_output
from tests.importers.test_lm_eval_import import dualboard, harness_results, tree
from tests.render.html_tables import item_page

pytestmark = [pytest.mark.test_all, pytest.mark.harness, pytest.mark.slow]


def import_inspect(logs: list[Path], dest: Path, *extra: str):
    return dualboard("import", "inspect", *map(str, logs), "--submitter", "tester", "--dest", str(dest), *extra)


def built(root: Path) -> Path:
    proc = dualboard("build", "--root", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


def reported_by_log(logs: list[Path]) -> dict[tuple[str, str], float]:
    """(task, run id) → the first scorer's accuracy as Inspect reported it, read with Inspect's own reader."""
    from inspect_ai.log import read_eval_log

    out = {}
    for path in logs:
        log = read_eval_log(str(path))
        out[log.eval.task, log.eval.model.replace("/", "-")] = log.results.scores[0].metrics["accuracy"].value
    return out


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory) -> list[Path]:
    return make_inspect_logs(tmp_path_factory.mktemp("inspect"))


@pytest.fixture(scope="module")
def inspect_board(inspect_logs, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("board")
    proc = import_inspect(inspect_logs, root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return built(root)


def test_inspect_logs_give_one_run_per_model_and_task_with_epochs_as_rounds(inspect_logs, inspect_board):
    assert len(inspect_logs) == 4
    for task in ("quiz_mc", "quiz_open"):
        runs = sorted(p.name for p in (inspect_board / "submissions" / task).iterdir())
        assert runs == ["mockllm-alpha", "mockllm-beta"]
        metadata = yaml.safe_load((inspect_board / "submissions" / task / runs[0] / "metadata.yaml").read_text())
        assert metadata["rounds"] == 3 and metadata["model"] == "mockllm/alpha"
        assert metadata["harness"]["name"] == "Inspect AI" and metadata["harness"]["reducer"] == "mean"
    predictions = [
        json.loads(line)
        for line in (inspect_board / "submissions/quiz_open/mockllm-alpha/predictions.jsonl").read_text().splitlines()
    ]
    assert sorted({p["round"] for p in predictions}) == [0, 1, 2]
    assert {p["recorded"]["match"] for p in predictions} == {0.0, 100.0}  # right and wrong, by sample and epoch
    assert all(set(p["recorded"]) == {"match", "includes"} for p in predictions)


def test_inspect_multiple_choice_keeps_the_options_and_the_target_letter(inspect_board):
    questions = [
        json.loads(line)
        for line in (inspect_board / "data/benchmarks/quiz_mc/questions.jsonl").read_text().splitlines()
    ]
    capital = next(q for q in questions if q["id"] == "capital")
    assert capital["choices"] == ["Berlin", "Paris", "Rome"] and capital["correct_choice"] == "B"
    assert capital["answer_key"]["answer"] == "Paris" and capital["category"] == "mc"


def test_each_inspect_run_s_traditional_mean_is_inspect_s_accuracy(inspect_logs, inspect_board):
    reported = reported_by_log(inspect_logs)
    for task in ("quiz_mc", "quiz_open"):
        models = pd.read_csv(inspect_board / "build" / "stats" / task / "models.csv")
        for row in models.itertuples():
            assert abs(row.traditional_mean - 100 * reported[task, row.run_id]) <= 1e-9, (task, row.run_id)
    assert len(set(reported.values())) > 1


def test_answer_key_grading_regrades_the_completions(inspect_board):
    """The choice scorer and rules read the same "ANSWER: X" lines: their means agree on every run."""
    models = pd.read_csv(inspect_board / "build" / "stats" / "quiz_mc" / "models.csv")
    assert (models["answer_key_mean"] - models["traditional_mean"]).abs().max() <= 1e-9
    assert models["answer_key_coverage"].eq(1).all()


def test_under_another_reducer_the_board_records_it_and_says_both_numbers(tmp_path):
    logs = make_inspect_logs(tmp_path / "logs", models=("mockllm/alpha",), reducer="mode")
    root = tmp_path / "lb"
    assert import_inspect(logs, root).returncode == 0
    built(root)
    reported = reported_by_log(logs)
    differ = 0
    for task in ("quiz_mc", "quiz_open"):
        metadata = yaml.safe_load((root / "submissions" / task / "mockllm-alpha" / "metadata.yaml").read_text())
        assert metadata["harness"]["reducer"] == "mode"
        mean = pd.read_csv(root / "build" / "stats" / task / "models.csv")["traditional_mean"].iloc[0]
        page = html.unescape(item_page(root / "site", f"benchmarks/{task}/runs", "mockllm-alpha"))
        assert f"the harness reported accuracy {reported[task, 'mockllm-alpha']:.4f}" in page
        if abs(mean - 100 * reported[task, "mockllm-alpha"]) > 1e-7:
            differ += 1
            assert "a different number, because the harness reduced the rounds by mode first." in page
        else:
            assert "the same number." in page
    assert differ >= 1  # the plan makes mode and mean disagree somewhere


def test_fresh_lm_eval_output_imports_with_the_harness_s_numbers(tmp_path):
    output = make_lm_eval_output(tmp_path / "lm-eval")
    root = tmp_path / "lb"
    proc = dualboard("import", "lm-eval", str(output), "--submitter", "tester", "--dest", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    built(root)
    reported = harness_results(output)
    for task, key in (("quiz_mc", "acc,none"), ("quiz_gen", "exact_match,take_first")):
        for row in pd.read_csv(root / "build" / "stats" / task / "models.csv").itertuples():
            assert abs(row.traditional_mean - 100 * reported[row.run_id, task][key]) <= 1e-9


def test_a_truncated_inspect_log_is_a_finding_and_nothing_is_written(inspect_logs, tmp_path):
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(inspect_logs[0].read_bytes()[:2000])
    dest = tmp_path / "lb"
    proc = import_inspect([inspect_logs[1], truncated], dest)
    assert proc.returncode == 1
    assert "truncated.eval: -: is not a readable Inspect log" in proc.stderr, proc.stderr
    assert not dest.exists() or tree(dest) == {}


def test_an_archive_that_unpacks_past_the_cap_is_refused_unopened(tmp_path):
    bomb = tmp_path / "bomb.eval"
    chunk = bytes(64 * 1024**2)
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open("header.json", "w", force_zip64=True) as member:
            for _ in range(66):  # 4.4 GB of zeros, stored in 19 MB
                member.write(chunk)
    proc = import_inspect([bomb], tmp_path / "lb")
    assert proc.returncode == 1
    assert "unpacks to 4429185024 bytes, over the" in proc.stderr, proc.stderr


BAD_TASKS = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import match
from inspect_ai.solver import solver


@solver
def answer_or_fail():
    async def solve(state, generate):
        if state.sample_id == "down":
            raise RuntimeError("model server down")
        state.output = ModelOutput.from_content(str(state.model), "2")
        return state

    return solve


@task
def failing():
    samples = [Sample(id="up", input="1+1?", target="2"), Sample(id="down", input="2+0?", target="2")]
    return Task(dataset=samples, solver=answer_or_fail(), scorer=match())


@task
def untargeted():
    samples = [Sample(id="up", input="1+1?", target="2"), Sample(id="blank", input="2+0?", target="")]
    return Task(dataset=samples, solver=answer_or_fail(), scorer=match())
"""


def inspect_eval(folder: Path, *args: str) -> Path:
    """Run ``inspect eval`` on BAD_TASKS with ``args``; return the one log it wrote."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bad.py").write_text(BAD_TASKS, "utf-8")
    subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", *args, "--model", "mockllm/model", "--log-dir", "logs"],
        cwd=folder,
        capture_output=True,
        env={**os.environ, "INSPECT_DISPLAY": "none"},
    )
    (log,) = (folder / "logs").glob("*.eval")
    return log


@pytest.mark.parametrize(
    ("args", "finding"),
    [
        (("bad.py@failing",), "status: the evaluation ended with status 'error'"),
        (("bad.py@failing", "--no-fail-on-error"), "sample down (epoch 1): failed: RuntimeError"),
        (("bad.py@untargeted",), "sample blank (epoch 1): has no target"),
    ],
    ids=["failed evaluation", "errored sample", "missing target"],
)
def test_a_failed_evaluation_an_errored_sample_or_a_missing_target_is_a_finding(tmp_path, args, finding):
    log = inspect_eval(tmp_path / "eval", *args)
    proc = import_inspect([log], tmp_path / "lb")
    assert proc.returncode == 1
    assert finding in proc.stderr, proc.stderr
    assert "nothing was changed" in proc.stderr and not (tmp_path / "lb" / "submissions").exists()


def as_json_log(log: Path, folder: Path) -> Path:
    """The same log as ``inspect log convert --to json`` writes it."""
    subprocess.run(
        [sys.executable, "-m", "inspect_ai", "log", "convert", str(log), "--to", "json", "--output-dir", str(folder)],
        check=True,
        capture_output=True,
    )
    (converted,) = folder.rglob("*.json")
    return converted


def test_a_log_that_drops_the_samples_it_got_wrong_is_a_finding(inspect_logs, tmp_path):
    log = as_json_log(inspect_logs[0], tmp_path / "json")
    data = json.loads(log.read_text("utf-8"))
    wrong = {s["id"] for s in data["samples"] if any(v["value"] != "C" for v in s["scores"].values())}
    assert wrong and len(wrong) < len(data["eval"]["dataset"]["sample_ids"])
    data["samples"] = [s for s in data["samples"] if s["id"] not in wrong]
    log.write_text(json.dumps(data), "utf-8")
    proc = import_inspect([log], tmp_path / "lb")
    assert proc.returncode == 1
    assert f"samples: {3 * len(wrong)} sample(s) the evaluation ran are not in the log" in proc.stderr, proc.stderr


def test_a_json_log_imports_as_its_eval_log_does(inspect_logs, tmp_path):
    converted = as_json_log(inspect_logs[0], tmp_path / "json")
    for name, log in (("eval", inspect_logs[0]), ("json", converted)):
        assert import_inspect([log], tmp_path / f"from-{name}").returncode == 0
    eval_files = {k: v for k, v in tree(tmp_path / "from-eval").items() if not k.endswith("metadata.yaml")}
    assert eval_files == {k: v for k, v in tree(tmp_path / "from-json").items() if not k.endswith("metadata.yaml")}
    assert any(k.endswith("predictions.jsonl") for k in eval_files)
