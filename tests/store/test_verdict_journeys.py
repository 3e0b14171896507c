"""Grader calls across builds: a second build, on any store, calls the judge zero times.

``dualboard`` runs as a subprocess; the tiny benchmark's answer key is graded
by the ``llm`` grader against the loopback judge (tests/grading/judge_server.py),
which counts every request; the Hub is the loopback Hub (tests/store/hub_server.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from dualboard.store.verdicts import VERDICTS
from tests.conftest import GIT_ENV, REPO, TINY_BENCHMARK, git_repository, write_run
from tests.grading.judge_server import ScriptedJudgeServer, always
from tests.store.conftest import TOKEN

DATASET = "dualboard/tiny-verdicts"
ANSWERS = 3
"""Answers of one tiny run: the judge is asked once per answer."""


@pytest.fixture
def judge():
    with ScriptedJudgeServer(always("Verdict {nonce}: pass")) as server:
        yield server


@pytest.fixture
def board(tiny_root, judge):
    """The tiny leaderboard, its answer key graded by an LLM judge."""
    llm = {"name": "llm", "options": {"base_url": judge.base_url, "model": "judge-7b", "backoff_s": 0.01}}
    benchmark = {**TINY_BENCHMARK, "graders": {**TINY_BENCHMARK["graders"], "answer_key": [llm]}}
    (tiny_root / "data" / "benchmarks" / "tiny" / "benchmark.yaml").write_text(yaml.safe_dump(benchmark), "utf-8")
    return tiny_root


def dualboard(root, *args: str, token: str | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m dualboard COMMAND --root ROOT ARGS`` with HF_TOKEN only when given."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "DUALBOARD_HUB_ENDPOINT")}
    env.update(GIT_ENV)  # `release` commits the site to gh-pages with mike
    if token is not None:
        env["HF_TOKEN"] = token
    command, *rest = args
    return subprocess.run(
        [sys.executable, "-m", "dualboard", command, "--root", str(root), *rest],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
    )


def calls(judge, root, *args: str, token: str | None = None, ok: bool = True) -> int:
    """Run one command; return how many requests the judge got meanwhile."""
    before = len(judge.requests)
    result = dualboard(root, *args, token=token)
    assert (result.returncode == 0) == ok, result.stdout + result.stderr
    return len(judge.requests) - before


def hub(server) -> list[str]:
    return ["--hub", DATASET, "--hub-endpoint", server.endpoint]


@pytest.mark.slow
def test_second_local_build_calls_the_judge_zero_times(board, judge):
    assert calls(judge, board, "build", "--no-progress") == ANSWERS
    assert calls(judge, board, "build", "--no-progress") == 0
    assert list((board / ".dualboard" / "store" / VERDICTS).glob("llm/*/part-*.parquet"))


@pytest.mark.slow
def test_staged_builds_publish_and_a_fresh_checkout_call_the_judge_once_per_answer(board, judge, hub_server):
    stage = [*hub(hub_server), "--stage"]
    assert calls(judge, board, "build", "--no-progress", *stage) == ANSWERS
    assert calls(judge, board, "build", "--no-progress", *stage) == 0, "the second staged build"
    write_run(board, "run-b", metadata=None)
    assert calls(judge, board, "ingest", *stage) == 0
    assert calls(judge, board, "grade", "--no-progress", *stage) == 0, (
        "run-b answers like run-a: same content, same key"
    )
    write_run(
        board,
        "run-c",
        [
            {"question_id": "q1", "round": 0, "response": "Final answer: four", "recorded": {"judge": 100}},
            {"question_id": "q2", "round": 0, "response": '{"ANSWER": "B"}'},
            {"question_id": "q3", "round": 0, "response": "Final answer: Pacific", "recorded": {"judge": 90}},
        ],
    )
    assert calls(judge, board, "build", "--no-progress", *stage) == ANSWERS, (
        "re-staged runs keep the verdicts: only run-c is new"
    )
    assert calls(judge, git_repository(board), "release", "v1", *stage) == 0
    assert calls(judge, board, "publish", *hub(hub_server), "--release", "v1", token=TOKEN) == 0
    published = hub_server.repos[DATASET].resolve("v1").files
    assert len([p for p in published if p.startswith(f"{VERDICTS}/llm/")]) == 2, "both staged parts reached the Hub"
    shutil.rmtree(board / ".dualboard")
    shutil.rmtree(board / "build")
    assert calls(judge, board, "build", "--no-progress", *stage) == 0, "a fresh checkout reads the published verdicts"


@pytest.mark.slow
def test_direct_hub_builds_reuse_their_waiting_verdicts_and_publish_pushes_them(board, judge, hub_server):
    direct = hub(hub_server)
    assert calls(judge, board, "build", "--no-progress", *direct, token=TOKEN) == ANSWERS
    repo = hub_server.repos[DATASET]
    read = repo.branches["main"]
    assert not [p for p in repo.resolve("main").files if p.startswith(f"{VERDICTS}/")], (
        "grading wrote nothing to the Hub"
    )
    second = dualboard(board, "build", "--no-progress", *direct, token=TOKEN)
    assert second.returncode == 0, second.stderr
    assert len(judge.requests) == ANSWERS, "the second direct build reads the verdicts waiting in hub-pending/"
    assert re.search(r"grade: .*; \d+ verdict part\(s\) wait in .*hub-pending for `dualboard publish`", second.stdout)
    assert repo.branches["main"] == read, "and leaves the revision it read as it was"
    assert calls(judge, git_repository(board), "release", "v1", *direct, token=TOKEN) == 0
    assert calls(judge, board, "publish", *direct, "--release", "v1", token=TOKEN) == 0
    assert repo.resolve("v1").parent == read
    assert [p for p in repo.resolve("v1").files if p.startswith(f"{VERDICTS}/llm/")], "publish pushed them"
    shutil.rmtree(board / ".dualboard")
    assert calls(judge, board, "build", "--no-progress", *direct, token=TOKEN) == 0, "read from the dataset"
