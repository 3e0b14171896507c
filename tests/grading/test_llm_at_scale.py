"""The llm grader against a serving cluster: bounded concurrency, back-pressure, pacing, options, resumable grades.

Everything goes over real HTTP to the scripted judge on 127.0.0.1
(tests/grading/judge_server.py), which records each request and when it came.
The resumable grade runs ``dualboard ingest`` and ``dualboard grade`` as
subprocesses, and kills the grade with SIGKILL halfway.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dualboard.grading import VerdictCache
from dualboard.grading.errors import GraderConfigError, GraderUnavailableError
from dualboard.grading.llm import LlmGrader
from dualboard.grading.rules import RulesGrader
from dualboard.grading.verdict import Verdict
from dualboard.scored_files import read_scored
from dualboard.store import LocalStore
from dualboard.store.verdicts import read_parts
from tests.conftest import REPO, TINY_BENCHMARK, tiny_metadata, write_run
from tests.grading.judge_server import Reply, ScriptedJudgeServer, always


def llm(server: ScriptedJudgeServer, **options) -> LlmGrader:
    base = {"base_url": server.base_url, "model": "judge-7b", "backoff_s": 0.01, "timeout_s": 5.0}
    return LlmGrader({**base, **options})


def test_answers_are_pulled_as_requests_go_out_never_queued(judge, open_question) -> None:
    """Back-pressure: at any time the grader holds at most max_concurrency answers it has not sent."""
    pulled, seen = [], []
    # The first 32 replies wait for each other, so the peak reaches the limit however loaded the machine is
    # (with short replies alone, a slow client could see some come back before the 32nd went out).
    first_wave = threading.Barrier(32, timeout=10)

    def script(body, n):
        seen.append((n, len(pulled)))
        if n < 32:
            first_wave.wait()
        return Reply("Verdict {nonce}: pass", delay_s=0.01)

    judge.script = script

    def answers():
        for i in range(400):
            pulled.append(i)
            yield open_question, {"response": f"Paris {i}"}

    verdicts = llm(judge, max_concurrency=32).grade_many(answers())
    assert [v.score for v in verdicts] == [100.0] * 400 and len(judge.requests) == 400
    assert judge.peak_in_flight == 32
    assert max(taken - (n + 1) for n, taken in seen) <= 32  # pulled ≤ sent + one answer per worker


@pytest.mark.slow
def test_requests_per_minute_spaces_requests_across_workers(judge, open_question) -> None:
    items = [(open_question, {"response": f"Paris {i}"}) for i in range(12)]
    llm(judge, max_concurrency=8).grade_many(items)
    assert judge.arrivals[-1] - judge.arrivals[0] < 0.5  # unpaced, 8 at a time: all at once
    judge.arrivals.clear()
    llm(judge, max_concurrency=8, requests_per_minute=600).grade_many(items)  # one every 0.1 s
    arrivals = judge.arrivals
    assert arrivals[-1] - arrivals[0] >= 11 * 0.1 - 0.02
    assert max(sum(t <= a < t + 0.5 for a in arrivals) for t in arrivals) <= 6  # ≤ 5 per half second, +1 jitter


def test_retries_are_paced_too(judge, open_question) -> None:
    judge.script = lambda body, n: Reply(status=503) if n < 3 else Reply("Verdict {nonce}: pass")
    start = time.monotonic()
    verdict = llm(judge, backoff_s=0.0, requests_per_minute=300).grade(open_question, {"response": "Paris"})
    assert verdict.score == 100.0 and len(judge.requests) == 4
    assert time.monotonic() - start >= 3 * 0.2 - 0.02  # four requests, 0.2 s apart


def test_dropped_connections_are_retried_then_the_endpoint_is_unavailable(open_question) -> None:
    """A replica that restarts mid-grade refuses connections for a moment: retried, not fatal at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    grader = LlmGrader({"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "backoff_s": 0.01, "max_retries": 2})
    with pytest.raises(GraderUnavailableError, match=r"cannot reach .*3 tries.*start the server"):
        grader.grade(open_question, {"response": "Paris"})


def test_a_rejecting_endpoint_stops_every_worker(judge, open_question) -> None:
    judge.script = lambda body, n: Reply(status=401, raw_body='{"error": "bad key"}', delay_s=0.02)
    items = [(open_question, {"response": f"Paris {i}"}) for i in range(500)]
    with pytest.raises(GraderUnavailableError, match="HTTP 401"):
        llm(judge, max_concurrency=16).grade_many(items)
    time.sleep(0.1)
    assert len(judge.requests) <= 2 * 16  # the workers stopped: no request after the first refusal came back


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_concurrency": 0}, "options.max_concurrency must be an integer from 1 to 1024, got 0"),
        ({"max_concurrency": 5000}, "max_concurrency must be an integer from 1 to 1024"),
        ({"max_concurrency": True}, "max_concurrency must be an integer"),
        ({"max_concurrency": 8.5}, "max_concurrency must be an integer"),
        ({"requests_per_minute": 0}, "options.requests_per_minute must be a number > 0, or null for no limit"),
        ({"requests_per_minute": float("nan")}, "requests_per_minute must be a number > 0"),
        ({"requests_per_minute": "600"}, "requests_per_minute must be a number > 0"),
        ({"timeout_s": -1}, "options.timeout_s must be a number of seconds > 0"),
        ({"max_retries": 100}, "options.max_retries must be an integer from 0 to 20"),
        ({"backoff_s": float("inf")}, "options.backoff_s must be a number of seconds ≥ 0"),
        ({"max_tokens": 0}, "options.max_tokens must be an integer ≥ 1"),
        ({"prompt": 3}, "options.prompt must be the name of a prompt template"),
        ({"max_concurency": 64}, "unknown option(s) 'max_concurency' — use only base_url, model, prompt"),
        ({"base_url": "localhost:8000/v1"}, "options.base_url 'localhost:8000/v1' is not an http(s) URL"),
    ],
)
def test_each_bad_option_is_named_with_the_fix(options, message) -> None:
    with pytest.raises(GraderConfigError) as refused:
        LlmGrader({"base_url": "http://127.0.0.1:9/v1", "model": "m", **options})
    assert message in str(refused.value) and " — " in str(refused.value)  # what is wrong — what to write


def test_validate_names_the_file_the_grader_and_the_option(tiny_root: Path) -> None:
    judge = {"name": "llm", "options": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "requests_per_minute": -5}}
    benchmark = {**TINY_BENCHMARK, "graders": {**TINY_BENCHMARK["graders"], "answer_key": [judge]}}
    (tiny_root / "data" / "benchmarks" / "tiny" / "benchmark.yaml").write_text(yaml.safe_dump(benchmark), "utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "dualboard", "validate", "--root", str(tiny_root)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "data/benchmarks/tiny/benchmark.yaml: graders.llm: llm grader: options.requests_per_minute must be a "
        "number > 0, or null for no limit, got -5 — write e.g. requests_per_minute: 600"
    ) in result.stdout


def test_operational_options_leave_the_config_hash_alone(judge) -> None:
    base = llm(judge).config_hash
    assert llm(judge, max_concurrency=256, requests_per_minute=6000, backoff_s=0).config_hash == base


def test_checkpoint_saves_a_part_every_interval(tmp_path: Path) -> None:
    now = [0.0]
    cache = VerdictCache(LocalStore(tmp_path), save_every_s=5.0, clock=lambda: now[0])
    grader, ok = RulesGrader(), Verdict(100.0, "ok", "equals")
    assert cache.checkpoint(grader, {"a": ok}) is None
    now[0] = 4.9
    assert cache.checkpoint(grader, {"b": ok, "gone": Verdict(None, "none", "timeout", transient=True)}) is None
    now[0] = 5.0
    first = cache.checkpoint(grader, {"c": ok})
    assert sorted(pd.read_parquet(first)["key"]) == ["a", "b", "c"]  # transient verdicts are never saved
    now[0] = 6.0
    assert cache.checkpoint(grader, {"d": ok}) is None
    last = cache.store(grader, {"e": ok})
    assert sorted(pd.read_parquet(last)["key"]) == ["d", "e"]
    again = VerdictCache(LocalStore(tmp_path))
    assert sorted(again.lookup(grader, ["a", "b", "c", "d", "e", "gone"])) == ["a", "b", "c", "d", "e"]
    # what a part saved holds is not saved again, by this cache or another: only the new keys make a part
    assert cache.store(grader, {"a": ok, "e": ok}) is None
    assert again.store(grader, {"c": ok, "d": ok}) is None
    newer = again.store(grader, {"b": ok, "f": ok})
    assert sorted(pd.read_parquet(newer)["key"]) == ["f"]


QUESTIONS = 400
RUNS = 2


def cluster_board(
    root: Path, base_url: str, *, questions: int = QUESTIONS, runs: int = RUNS, concurrency: int = 4, shared: int = 0
) -> Path:
    """A leaderboard of ``runs`` runs × ``questions`` open questions whose answer key an llm judge grades,
    ``concurrency`` requests at a time; every run gives one answer to the first ``shared`` questions."""
    n_questions, n_runs = questions, runs
    questions = [
        {
            "id": f"q{i}",
            "category": "geography",
            "prompt": f"Capital of country {i}?",
            "type": "open",
            "answer_key": {"answer": "Paris", "aliases": [], "patterns": [], "numeric": None, "reference": "Paris."},
        }
        for i in range(n_questions)
    ]
    judge = {"name": "llm", "options": {"base_url": base_url, "model": "judge-7b", "max_concurrency": concurrency}}
    benchmark = {**TINY_BENCHMARK, "graders": {**TINY_BENCHMARK["graders"], "answer_key": [judge]}}
    folder = root / "data" / "benchmarks" / "tiny"
    folder.mkdir(parents=True)
    (folder / "benchmark.yaml").write_text(yaml.safe_dump(benchmark), "utf-8")
    (folder / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), "utf-8")
    for run in range(n_runs):
        answers = [
            {
                "question_id": q["id"],
                "round": 0,
                "response": "Final answer: Paris" if i < shared else f"Final answer: Paris ({run})",
                "recorded": {"judge": 100},
            }
            for i, q in enumerate(questions)
        ]
        write_run(root, f"run-{run}", answers, tiny_metadata(model=f"model-{run}"))
    return root


def dualboard(root: Path, *command: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dualboard", *command, "--root", str(root)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, killed whole
    )


def saved_parts(root: Path) -> list[Path]:
    return sorted((root / ".dualboard" / "store" / "verdicts").glob("llm/*/part-*.parquet"))


@pytest.mark.slow
def test_a_killed_grade_keeps_its_verdicts_and_the_rerun_asks_only_for_the_rest(tmp_path: Path) -> None:
    answers = QUESTIONS * RUNS
    with ScriptedJudgeServer(always("Verdict {nonce}: pass", delay_s=0.05)) as judge:  # 4 × 20 answers/s: 10 s in all
        root = cluster_board(tmp_path, judge.base_url)
        ingest = dualboard(root, "ingest")
        assert ingest.wait(timeout=300) == 0, ingest.stdout.read()
        grade = dualboard(root, "grade", "--no-progress")
        deadline = time.monotonic() + 120
        while not saved_parts(root) and grade.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(grade.pid, signal.SIGKILL)
        assert grade.wait(timeout=30) == -signal.SIGKILL, grade.stdout.read()  # killed mid-grade, not finished
        time.sleep(0.3)  # the requests in flight reach the judge's count
        first = len(judge.requests)
        saved = len(read_parts([root / ".dualboard" / "store"], "llm", saved_parts(root)[0].parent.name))
        assert 0 < saved < answers

        rerun = dualboard(root, "grade", "--no-progress")
        assert rerun.wait(timeout=300) == 0, rerun.stdout.read()
        second = len(judge.requests) - first

    assert second == answers - saved, (
        first,
        saved,
        second,
    )  # the rerun asks only for answers whose verdict was not received and saved
    batch = LlmGrader({"base_url": judge.base_url, "model": "m", "max_concurrency": 4}).batch_size
    assert first + second - answers <= batch + 4  # asked twice: at most the batch being graded when killed
    scored = read_scored(root / "build" / "scored", "tiny")
    assert len(scored) == answers and scored["answer_key"].eq(100.0).all()


@pytest.mark.slow
def test_dualboard_grade_keeps_the_answers_of_several_runs_in_flight_and_asks_once_per_distinct_answer(
    tmp_path: Path,
) -> None:
    """Runs of 5 answers, a judge taking 16 at a time: graded run by run, at most 5 would be in flight."""
    with ScriptedJudgeServer(always("Verdict {nonce}: pass", delay_s=0.2)) as judge:
        root = cluster_board(tmp_path, judge.base_url, questions=5, runs=8, concurrency=16, shared=2)
        ingest = dualboard(root, "ingest")
        assert ingest.wait(timeout=300) == 0, ingest.stdout.read()
        grade = dualboard(root, "grade", "--no-progress")
        assert grade.wait(timeout=300) == 0, grade.stdout.read()

    assert len(judge.requests) == 2 + 8 * 3  # the two answers every run gave are asked about once
    assert judge.peak_in_flight > 5
    scored = read_scored(root / "build" / "scored", "tiny")
    assert len(scored) == 40 and scored["answer_key"].eq(100.0).all()
