"""`dualboard preview` as a submitter and CI run it: a subprocess on copies of the demo leaderboard.

A new simulated run (a strong model, known truth) is placed among the seven
stored demo runs. What the preview says must be what the board says once the
run is merged: the same numbers as `dualboard build` with the run in it. The
store is only read, the board can come from the local store, a git base
commit or a Hub dataset read anonymously, and human labels of runs the
board lacks do not stop it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dualboard.preview.document import renderer
from tests.conftest import TINY_BENCHMARK, tiny_predictions, tree_bytes
from tests.conftest import write_run as write_tiny_run
from tests.grading.judge_server import ScriptedJudgeServer, always
from tests.preview.demo_runs import DEMO, NEW, STORED, add_strong_run, copy_demo, git
from tests.store.conftest import TOKEN, hub_server  # noqa: F401 — hub_server is a fixture

pytestmark = pytest.mark.slow  # builds a board for the module: only make test-all runs it


def dualboard(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dualboard", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )


def preview(root: Path, *args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, dict | None]:
    """Run ``dualboard preview ARGS --json preview.json``; return it and the document (None when none was written)."""
    done = dualboard(root, "preview", "--no-progress", "--json", "preview.json", *args, env=env)
    path = root / "preview.json"
    return done, json.loads(path.read_text("utf-8")) if path.exists() else None


@pytest.fixture(scope="module")
def built_demo(tmp_path_factory) -> Path:
    """The demo built once (store and verdict cache filled), then the strong run added to submissions/."""
    root = copy_demo(tmp_path_factory.mktemp("demo"))
    done = dualboard(root, "build", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    add_strong_run(root)
    return root


@pytest.fixture(scope="module")
def placed(built_demo) -> tuple[subprocess.CompletedProcess, dict]:
    before = tree_bytes(built_demo / ".dualboard")
    done, doc = preview(built_demo, f"submissions/demo/{NEW}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert tree_bytes(built_demo / ".dualboard") == before, (
        "a preview never writes the store (nor leaves a working folder)"
    )
    return done, doc


def test_the_new_run_is_placed_among_the_stored_ones(placed):
    done, doc = placed
    assert renderer().check_preview(doc) == doc
    assert doc["schema"] == "dualboard-preview/3" and doc["problem"] is None
    assert doc["validation"] == {"valid": True, "findings_total": 0, "findings": []}
    [benchmark] = doc["benchmarks"]
    assert (benchmark["name"], benchmark["board_runs"], benchmark["runs_total"]) == ("demo", len(STORED) + 1, 1)
    [run] = benchmark["runs"]
    for grading in ("traditional", "answer_key"):
        mine = run[grading]
        assert (mine["rank"], mine["ranked_runs"], mine["rank_ci_low"]) == (1, len(STORED) + 1, 1), grading
        assert mine["rank_ci_low"] <= mine["rank"] <= mine["rank_ci_high"]
        assert mine["ci_low"] < mine["mean"] < mine["ci_high"] and mine["coverage_percent"] == 100
        versus = mine["versus"]
        assert versus["role"] == "runner-up" and versus["run_id"] in STORED and versus["mean"] > 0
        assert versus["ci_low"] < versus["mean"] < versus["ci_high"] and 0 <= versus["p_value"] <= versus["p_holm"] <= 1
    assert run["traditional"]["grader"] == "mc_letter, recorded" and run["answer_key"]["grader"] == "rules"
    assert doc["board"].startswith("local store .dualboard/store, revision ")


def test_the_terminal_shows_the_comment(placed):
    done, doc = placed
    assert done.stdout == renderer().render(doc)
    assert f"### `{NEW}` on `demo` ({len(STORED) + 1} runs on the board)" in done.stdout
    assert f"| traditional | {doc['benchmarks'][0]['runs'][0]['traditional']['mean']:.1f} [" in done.stdout
    assert f" | 1 of {len(STORED) + 1} [1, " in done.stdout and "vs runner-up `" in done.stdout


def test_the_preview_says_what_the_merged_board_will_say(placed, built_demo, tmp_path):
    """The same run merged and built: models.csv and pairwise.csv hold the preview's numbers."""
    _, doc = placed
    merged = copy_demo(tmp_path)
    shutil.copytree(built_demo / "submissions" / "demo" / NEW, merged / "submissions" / "demo" / NEW)
    done = dualboard(merged, "build", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    models = pd.read_csv(merged / "build" / "stats" / "demo" / "models.csv").set_index("run_id")
    pairwise = pd.read_csv(merged / "build" / "stats" / "demo" / "pairwise.csv")
    run = doc["benchmarks"][0]["runs"][0]
    row = models.loc[NEW]
    for g in ("traditional", "answer_key"):
        got = run[g]
        assert [got["mean"], got["ci_low"], got["ci_high"]] == pytest.approx(
            [row[f"{g}_mean"], row[f"{g}_ci_low"], row[f"{g}_ci_high"]], abs=1e-9
        )
        assert [got["rank"], got["rank_ci_low"], got["rank_ci_high"]] == [
            row[f"rank_{g}"],
            row[f"rank_ci_low_{g}"],
            row[f"rank_ci_high_{g}"],
        ]
        other = got["versus"]["run_id"]
        pair = pairwise[
            (pairwise["grading"] == g) & pairwise["run_a"].isin([NEW, other]) & pairwise["run_b"].isin([NEW, other])
        ]
        [pair] = pair.to_dict("records")
        sign = 1 if pair["run_a"] == NEW else -1
        assert got["versus"]["mean"] == pytest.approx(sign * pair["diff_mean"], abs=1e-9)
        assert got["versus"]["p_holm"] == pytest.approx(pair["p_holm"], abs=1e-12)
        best_other = models.drop(index=NEW)[f"{g}_mean"].idxmax()
        assert other == best_other
    assert run["difference"]["mean"] == pytest.approx(row["diff_mean"], abs=1e-9)
    assert run["difference"]["p_value"] == pytest.approx(row["p_value"], abs=1e-12)


def test_a_run_already_stored_is_replaced_not_added(built_demo):
    done, doc = preview(built_demo, "submissions/demo/fjord-3b")
    assert done.returncode == 0, done.stderr
    assert doc["benchmarks"][0]["board_runs"] == len(STORED)
    assert doc["benchmarks"][0]["runs"][0]["traditional"]["ranked_runs"] == len(STORED)


def test_the_base_commit_is_the_board_when_the_store_is_local(placed, tmp_path):
    """CI: no store in the checkout; --base builds the board from the base commit and previews what changed since."""
    root = copy_demo(tmp_path)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD")
    add_strong_run(root)  # not even committed: untracked runs count as changed
    done, doc = preview(root, "--base", "main")
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc["board"].startswith(f"submissions/ of git commit {base[:12]}")
    assert doc["benchmarks"] == placed[1]["benchmarks"], "the same board gives the same numbers, whatever its source"
    assert not (root / ".dualboard").exists(), "no store is made, nothing is left behind"


def test_labels_of_runs_the_board_lacks_do_not_stop_the_preview(tmp_path):
    """The demo labels answers of aurora-lm-70b and cinder-7b-instruct; a board without them still previews."""
    root = copy_demo(tmp_path)
    assert {"aurora-lm-70b", "cinder-7b-instruct"} <= set(pd.read_csv(DEMO / "human_labels.csv")["run"])
    add_strong_run(root)
    done, doc = preview(root, f"submissions/demo/{NEW}")  # the local store was never built: an empty board
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc["benchmarks"][0]["board_runs"] == 1 and doc["board"].startswith("an empty local store")
    assert doc["benchmarks"][0]["runs"][0]["traditional"]["versus"] is None
    assert "– (no other run)" in done.stdout
    assert not (root / ".dualboard" / "store").exists(), "reading an absent store does not create it"


def test_the_published_hub_dataset_is_read_without_a_token(tiny_root, hub_server):  # noqa: F811 — the imported fixture
    """The board of a Hub store: built with the token, previewed with none (an anonymous read)."""
    endpoint = ["--hub", "dualboard/tiny-board", "--hub-endpoint", hub_server.endpoint]
    env = {key: value for key, value in os.environ.items() if key != "HF_TOKEN"}
    built = dualboard(tiny_root, "build", "--no-progress", *endpoint, env={**env, "HF_TOKEN": TOKEN})
    assert built.returncode == 0, built.stdout + built.stderr
    shutil.rmtree(tiny_root / ".dualboard")
    published = dict(hub_server.repos["dualboard/tiny-board"].resolve("main").files)
    write_tiny_run(tiny_root, "run-b")
    done, doc = preview(tiny_root, "submissions/tiny/run-b", *endpoint, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert doc["board"].startswith(f"Hub dataset dualboard/tiny-board on {hub_server.endpoint}, revision ")
    assert doc["benchmarks"][0]["board_runs"] == 2
    assert doc["benchmarks"][0]["runs"][0]["traditional"]["versus"]["run_id"] == "run-a"
    assert hub_server.repos["dualboard/tiny-board"].resolve("main").files == published


def test_without_runs_or_base_it_says_what_to_pass(tiny_root):
    done = dualboard(tiny_root, "preview")
    assert done.returncode == 2 and "RUN_DIR" in done.stderr and "--base REV" in done.stderr


@pytest.mark.parametrize("revision", ["no-such-branch", "--output=/tmp/x", "a b"])
def test_a_base_git_does_not_know_is_refused(tiny_root, revision):
    git(tiny_root, "init", "-q", "-b", "main")
    done = dualboard(tiny_root, "preview", "--base", revision)
    assert done.returncode == 1 and "--base" in done.stderr and "Traceback" not in done.stderr


def test_a_run_outside_submissions_is_a_finding(tiny_root, tmp_path):
    elsewhere = write_tiny_run(tmp_path / "elsewhere", "run-x")
    done, doc = preview(tiny_root, str(elsewhere))
    assert done.returncode == 1
    assert any(f["field"] == "path" for f in doc["validation"]["findings"]) and doc["benchmarks"] == []


def test_a_changed_stored_run_is_an_error_and_listed_as_changed(tmp_path):
    """A pull request may only add runs: one that edits a stored run fails, and the preview says which."""
    root = copy_demo(tmp_path)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    metadata = root / "submissions" / "demo" / "fjord-3b" / "metadata.yaml"
    metadata.write_text(metadata.read_text("utf-8").replace("model: fjord-3b", "model: fjord-3b-v2"), "utf-8")
    done, doc = preview(root, "--base", "main")
    assert done.returncode == 1, done.stdout + done.stderr
    assert doc["runs_changed"]["runs"] == [{"benchmark": "demo", "run_id": "fjord-3b", "change": "changed"}]
    [error] = doc["validation"]["findings"]
    assert (error["file"], error["field"], doc["benchmarks"]) == ("submissions/demo/fjord-3b", "run", [])


def test_files_changed_outside_submissions_are_errors_in_the_comment(tmp_path):
    """A run's pull request that also rewrites an answer key (and adds site settings) fails, file by file."""
    root = copy_demo(tmp_path)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD")
    add_strong_run(root)
    questions = root / "data" / "benchmarks" / "demo" / "questions.jsonl"
    text = questions.read_text("utf-8")
    assert text.count('"correct_choice": "B"') > 1
    questions.write_text(text.replace('"correct_choice": "B"', '"correct_choice": "A"', 1), "utf-8")
    (root / "mkdocs.yml").write_text("site_name: Mine\n", "utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a run, and a key that suits it")
    done, doc = preview(root, "--base", base)
    assert done.returncode == 1, done.stdout + done.stderr
    found = [(f["severity"], f["file"], f["line"]) for f in doc["validation"]["findings"]]
    assert found == [("error", "data/benchmarks/demo/questions.jsonl", None), ("error", "mkdocs.yml", None)]
    assert not doc["validation"]["valid"] and doc["benchmarks"] == []
    assert "error: data/benchmarks/demo/questions.jsonl: path: changed by this pull request outside submissions/" in (
        done.stdout
    )


def test_the_verdict_cache_is_read_and_never_written(tiny_root):
    """An llm-judged answer key: the stored run's answers come from the cache, only the new run's reach the judge."""
    llm = {"name": "llm", "options": {"base_url": "", "model": "judge-7b", "backoff_s": 0.01}}
    with ScriptedJudgeServer(always("Verdict {nonce}: pass")) as judge:
        llm["options"]["base_url"] = judge.base_url
        benchmark = {**TINY_BENCHMARK, "graders": {**TINY_BENCHMARK["graders"], "answer_key": [llm]}}
        (tiny_root / "data" / "benchmarks" / "tiny" / "benchmark.yaml").write_text(yaml.safe_dump(benchmark), "utf-8")
        assert dualboard(tiny_root, "build", "--no-progress").returncode == 0
        built = len(judge.requests)
        stored = tree_bytes(tiny_root / ".dualboard")
        write_tiny_run(
            tiny_root, "run-b", [{**p, "response": p["response"] + "\nChecked twice."} for p in tiny_predictions()]
        )
        for _ in range(2):
            before = len(judge.requests)
            done, doc = preview(tiny_root, "submissions/tiny/run-b")
            assert done.returncode == 0, done.stdout + done.stderr
            assert len(judge.requests) - before == len(tiny_predictions()), "run-b's answers only: run-a's are cached"
        assert built == len(tiny_predictions())
    assert doc["benchmarks"][0]["board_runs"] == 2 and doc["benchmarks"][0]["runs"][0]["answer_key"]["grader"] == "llm"
    assert tree_bytes(tiny_root / ".dualboard") == stored
