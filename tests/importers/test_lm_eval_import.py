"""`dualboard import lm-eval` on output the real lm-evaluation-harness wrote (tests/importers/fixtures/lm-eval,
made by ``python -m tests.importers.harness_logs``): the CLI as a subprocess, the files read back, the built
board's numbers set against the harness's own. ``test_harness_logs.py`` makes fresh logs with the real tools."""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.render.html_tables import item_page

pytestmark = pytest.mark.slow  # builds a board for the module: only make test-all runs it

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "lm-eval"


def dualboard(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dualboard", *args], capture_output=True, text=True, cwd=cwd)


def import_lm_eval(source: Path, dest: Path, *extra: str) -> subprocess.CompletedProcess:
    return dualboard("import", "lm-eval", str(source), "--submitter", "tester", "--dest", str(dest), *extra)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes: what an import that fails must leave as it was."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def harness_results(folder: Path = FIXTURE) -> dict[tuple[str, str], dict]:
    """(model, task) → the task's row of lm-eval's results file."""
    rows = {}
    for path in folder.glob("*/results_*.json"):
        results = json.loads(path.read_text("utf-8"))
        for task, row in results["results"].items():
            rows[results["model_name"], task] = row
    return rows


def samples(model: str, task: str, folder: Path = FIXTURE) -> list[dict]:
    (path,) = (folder / model).glob(f"samples_{task}_*.jsonl")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Path:
    """A leaderboard made by importing the fixture and building it."""
    root = tmp_path_factory.mktemp("board")
    proc = import_lm_eval(FIXTURE, root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    build = dualboard("build", "--root", str(root))
    assert build.returncode == 0, build.stdout + build.stderr
    return root


def read_run(root: Path, benchmark: str, run: str) -> tuple[list[dict], dict, list[dict]]:
    folder = root / "submissions" / benchmark / run
    predictions = [json.loads(line) for line in (folder / "predictions.jsonl").read_text("utf-8").splitlines()]
    provenance = [json.loads(line) for line in (folder / "provenance.jsonl").read_text("utf-8").splitlines()]
    return predictions, yaml.safe_load((folder / "metadata.yaml").read_text("utf-8")), provenance


def test_one_run_per_model_and_task_and_one_benchmark_per_task(board):
    assert sorted(p.name for p in (board / "data" / "benchmarks").iterdir()) == ["quiz_gen", "quiz_mc"]
    for task in ("quiz_gen", "quiz_mc"):
        assert sorted(p.name for p in (board / "submissions" / task).iterdir()) == ["planned-a", "planned-b"]
    header = yaml.safe_load((board / "data" / "benchmarks" / "quiz_mc" / "benchmark.yaml").read_text("utf-8"))
    assert header["version"] == "1.0"
    assert header["graders"] == {
        "traditional": {"name": "recorded", "options": {"field": "acc"}},
        "answer_key": [{"name": "rules"}],
    }


def test_metadata_carries_model_harness_and_decoding(board):
    _, metadata, _ = read_run(board, "quiz_gen", "planned-a")
    assert metadata["model"] == "planned-a"
    assert metadata["benchmark_version"] == "2.0" and metadata["rounds"] == 1
    assert metadata["decoding"]["temperature"] == 0.0
    assert metadata["harness"] | {"reported": None} == {
        "name": "lm-evaluation-harness",
        "version": "0.4.13",
        "task": "quiz_gen",
        "score": "exact_match",
        "metric": "exact_match",
        "reported": None,
        "reducer": "take_first over 3 repeats",
    }
    assert metadata["harness"]["reported"] == harness_results()["planned-a", "quiz_gen"]["exact_match,take_first"]


def test_the_answer_is_the_text_lm_eval_scored_and_every_repeat_is_kept(board):
    """lm-eval scores one text per document (its filter's); no repeat gets a score the harness never gave."""
    predictions, _, provenance = read_run(board, "quiz_gen", "planned-a")
    by_question = {p["question_id"]: p for p in predictions}
    kept = {p["question_id"]: p for p in provenance}
    for doc in samples("planned-a", "quiz_gen"):
        answer = by_question[doc["doc"]["id"]]
        assert answer["round"] == 0 and answer["response"] == doc["filtered_resps"][0]
        assert answer["recorded"] == {"exact_match": doc["exact_match"] * 100}
        assert [kept[doc["doc"]["id"]][f"repeat_{r}"] for r in range(3)] == doc["resps"][0]
    assert {p["recorded"]["exact_match"] for p in predictions} == {0.0, 100.0}
    assert any(len(set(doc["resps"][0])) > 1 for doc in samples("planned-a", "quiz_gen"))  # repeats vary


def test_multiple_choice_response_is_the_option_the_metric_picks(board):
    predictions, _, provenance = read_run(board, "quiz_mc", "planned-b")
    by_question = {p["question_id"]: p for p in predictions}
    likelihoods = {p["question_id"]: json.loads(p["loglikelihoods"]) for p in provenance}
    for doc in samples("planned-b", "quiz_mc"):
        lls = [float(r[0]) for r in doc["filtered_resps"]]
        picked = max(range(len(lls)), key=lls.__getitem__)
        answer = by_question[doc["doc"]["id"]]
        assert answer["response"] == f"Final answer: {'ABC'[picked]}. {doc['doc']['choices'][picked]}"
        assert answer["recorded"] == {"acc": doc["acc"] * 100, "acc_norm": doc["acc_norm"] * 100}
        assert likelihoods[doc["doc"]["id"]] == lls
    assert {p["recorded"]["acc"] for p in predictions} == {0.0, 100.0}


def test_answer_key_grading_reads_the_chosen_option_as_the_harness_does(board):
    """The option lm-eval picked is right exactly when acc says so: rules, reading the response, agrees on every
    answer, and judges them all."""
    for task in ("quiz_mc", "quiz_gen"):
        models = pd.read_csv(board / "build" / "stats" / task / "models.csv")
        assert models["answer_key_coverage"].eq(1).all(), task
        assert (models["answer_key_mean"] - models["traditional_mean"]).abs().max() <= 1e-9, task
        assert models["traditional_mean"].between(1, 99).all()  # right and wrong answers both


def test_each_run_s_traditional_mean_is_the_harness_s_number(board):
    reported = harness_results()
    checked = 0
    for task, key in (("quiz_mc", "acc,none"), ("quiz_gen", "exact_match,take_first")):
        models = pd.read_csv(board / "build" / "stats" / task / "models.csv")
        for row in models.itertuples():
            assert abs(row.traditional_mean - 100 * reported[row.run_id, task][key]) <= 1e-9
            checked += 1
    assert checked == 4
    assert len({round(v[k], 6) for v in reported.values() for k in v if k.startswith(("acc,", "exact_match,"))}) > 1


def test_the_run_page_sets_the_harness_number_beside_the_board_s(board):
    text = html.unescape(item_page(board / "site", "benchmarks/quiz_gen/runs", "planned-a"))
    assert "imported from lm-evaluation-harness 0.4.13 (task quiz_gen): the harness reported exact_match" in text
    assert "reduced by take_first" in text and "the same number." in text


def test_a_second_import_into_an_existing_benchmark_only_adds_runs(board, tmp_path):
    root = tmp_path / "lb"
    shutil.copytree(board / "data", root / "data")
    proc = import_lm_eval(FIXTURE, root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "new benchmark" not in proc.stdout
    assert tree(root / "data") == tree(board / "data")
    assert tree(root / "submissions") == tree(board / "submissions")


def test_a_question_that_differs_from_the_benchmark_is_a_finding_naming_it(board, tmp_path):
    root = tmp_path / "lb"
    shutil.copytree(board / "data", root / "data")
    questions = root / "data" / "benchmarks" / "quiz_mc" / "questions.jsonl"
    rows = [json.loads(line) for line in questions.read_text("utf-8").splitlines()]
    rows[2]["correct_choice"] = "B"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    before = tree(root)
    proc = import_lm_eval(FIXTURE, root)
    assert proc.returncode == 1
    assert f"question {rows[2]['id']}: its correct answer differs from" in proc.stderr, proc.stderr
    assert "nothing was changed" in proc.stderr
    assert tree(root) == before


def test_an_existing_run_is_kept_unless_overwrite(board, tmp_path):
    root = tmp_path / "lb"
    shutil.copytree(board / "data", root / "data")
    shutil.copytree(board / "submissions", root / "submissions")
    proc = import_lm_eval(FIXTURE, root)
    assert proc.returncode == 1 and "already exists" in proc.stderr and "--overwrite" in proc.stderr
    assert import_lm_eval(FIXTURE, root, "--overwrite").returncode == 0


def samples_file(copy: Path, model: str = "planned-a", task: str = "quiz_gen") -> Path:
    (path,) = (copy / model).glob(f"samples_{task}_*.jsonl")
    return path


def broken_copy(tmp_path: Path, change, task: str = "quiz_gen") -> Path:
    """A copy of the fixture whose planned-a samples file of ``task`` ``change`` rewrites (text → text)."""
    copy = tmp_path / "out"
    shutil.copytree(FIXTURE, copy)
    path = samples_file(copy, task=task)
    path.write_text(change(path.read_text("utf-8")), "utf-8")
    return copy


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def as_text(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


BAD_SAMPLES = {
    "truncated": (lambda t: t[: len(t) // 2], "samples_quiz_gen_", "invalid JSON"),
    "duplicate document": (lambda t: t + t.splitlines(keepends=True)[0], "doc_id", "is also on line 1"),
    "missing target": (
        lambda t: as_text([{**r, "target": ""} if r["doc_id"] == 3 else r for r in lines(t)]),
        ":4: target",
        "is missing",
    ),
    "NaN score": (lambda t: t.replace('"exact_match": 1.0', '"exact_match": NaN', 1), "exact_match", "NaN"),
    "score out of range": (
        lambda t: t.replace('"exact_match": 1.0', '"exact_match": 7', 1),
        "exact_match",
        "from 0 to 1",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_SAMPLES))
def test_a_bad_samples_file_is_a_finding_and_nothing_is_written(tmp_path, case):
    change, where, problem = BAD_SAMPLES[case]
    source = broken_copy(tmp_path, change)
    dest = tmp_path / "lb"
    proc = import_lm_eval(source, dest)
    assert proc.returncode == 1, proc.stdout
    assert where in proc.stderr and problem in proc.stderr, proc.stderr
    assert "nothing was changed" in proc.stderr
    assert tree(dest) == {}


def test_log_likelihoods_that_contradict_the_harness_s_acc_are_a_finding(tmp_path):
    def flip_first_acc(text: str) -> str:
        rows = lines(text)
        rows[0]["acc"] = 1.0 - rows[0]["acc"]
        return as_text(rows)

    proc = import_lm_eval(broken_copy(tmp_path, flip_first_acc, task="quiz_mc"), tmp_path / "lb")
    assert proc.returncode == 1
    assert "acc: the highest log-likelihood picks" in proc.stderr and "contradicts acc" in proc.stderr


def test_a_linked_samples_file_is_refused(tmp_path):
    copy = broken_copy(tmp_path, lambda text: text)
    path = samples_file(copy)
    target = tmp_path / "elsewhere.jsonl"
    path.rename(target)
    os.symlink(target, path)
    proc = import_lm_eval(copy, tmp_path / "lb")
    assert proc.returncode == 1 and "symbolic link" in proc.stderr, proc.stderr


def test_a_folder_without_results_says_what_to_pass(tmp_path):
    proc = import_lm_eval(tmp_path, tmp_path / "lb")
    assert proc.returncode == 1
    assert "holds no results_*.json" in proc.stderr and "--log_samples" in proc.stderr


def test_a_missing_samples_file_says_to_log_samples(tmp_path):
    copy = broken_copy(tmp_path, lambda text: text)
    samples_file(copy, "planned-b", "quiz_mc").unlink()
    proc = import_lm_eval(copy, tmp_path / "lb")
    assert proc.returncode == 1 and "rerun lm_eval with --log_samples" in proc.stderr


def test_import_inspect_without_the_extra_says_which_to_install(tmp_path):
    log = tmp_path / "x.eval"
    log.write_bytes(b"PK")
    script = "import sys; sys.modules['inspect_ai'] = None; from dualboard.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", script, "import", "inspect", str(log), "--submitter", "me", "--dest", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 1
    assert 'pip install "dualboard[inspect]"' in proc.stderr, proc.stderr


def test_two_logs_of_one_model_on_one_task_are_a_finding(tmp_path):
    copy = tmp_path / "out"
    shutil.copytree(FIXTURE, copy)
    shutil.copytree(copy / "planned-a", copy / "planned-a-again")
    proc = import_lm_eval(copy, tmp_path / "lb")
    assert proc.returncode == 1
    assert "model: planned-a ran quiz_mc in" in proc.stderr and "import one log per model and task" in proc.stderr


def test_a_samples_file_that_drops_documents_is_a_finding(tmp_path):
    """Leaving out the questions it got wrong never passes: lm-eval's n-samples says how many it scored."""
    source = broken_copy(tmp_path, lambda t: as_text([r for r in lines(t) if r["exact_match"] == 1.0]))
    proc = import_lm_eval(source, tmp_path / "lb")
    assert proc.returncode == 1
    assert "doc_id: holds 4 documents, but lm_eval scored 5 (n-samples)" in proc.stderr, proc.stderr


def test_findings_name_files_where_they_will_be_not_the_staging_folder(board, tmp_path):
    root = tmp_path / "lb"
    shutil.copytree(board / "data", root / "data")
    header = root / "data" / "benchmarks" / "quiz_mc" / "benchmark.yaml"
    header.write_text(header.read_text("utf-8").replace("version: '1.0'", "version: '9'"), "utf-8")
    proc = dualboard("import", "lm-eval", str(FIXTURE), "--submitter", "t", "--dest", "lb", cwd=tmp_path)
    assert proc.returncode == 1
    assert "submissions/quiz_mc/planned-a/metadata.yaml" in proc.stderr, proc.stderr
    assert ".import-" not in proc.stderr
