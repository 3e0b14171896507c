"""Benchmark the ``llm`` grader against a loopback judge: answers per second at 16, 64 and 256 in flight.

The judge is the tests' scripted OpenAI-compatible server
(``tests/grading/judge_server.py``) in a child process, as a real judge
would be, answering every request after a fixed latency (100 ms by default),
so the best a grader can do is ``concurrency / latency`` answers per second.
For each concurrency the table prints:

- ``grade_many``: the grader alone, every answer in one call;
- ``grade``: :func:`dualboard.grading.grade_benchmark` with a verdict cache in
  a fresh local store (batches, the traditional grader, verdict parts saved
  every few seconds);
- ``dualboard grade``: the command itself, as a subprocess, on a leaderboard
  folder holding the same runs (ingested first, not timed); its wall time
  includes starting Python and writing build/scored;
- the peak of requests in flight the server saw, and the grader's CPU per answer.

Last, ``judge alone``: the server driven by bare ``http.client`` threads at
the highest concurrency, to show that the fake judge is not what limits the
figures above.

Usage::

    python bench/judge.py [--answers 10000] [--latency 0.1] [--concurrency 16 64 256]
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from dualboard.grading import VerdictCache, grade_benchmark  # noqa: E402
from dualboard.grading.llm import LlmGrader  # noqa: E402
from dualboard.intake.models import GraderSpec  # noqa: E402
from dualboard.store import LocalStore  # noqa: E402
from tests.conftest import TINY_BENCHMARK, tiny_metadata, write_run  # noqa: E402
from tests.grading.grading_fixtures import make_benchmark, make_run  # noqa: E402
from tests.grading.judge_server import judge_process  # noqa: E402

QUESTIONS = 100
"""Questions of the synthetic benchmark; the runs answer each once (answers / QUESTIONS runs)."""


def question(number: int) -> dict:
    return {
        "id": f"q{number}",
        "type": "open",
        "category": "Geography",
        "prompt": f"What is the capital of country {number}?",
        "answer_key": {"answer": "Paris", "aliases": [], "patterns": [], "numeric": None, "reference": "Paris."},
    }


def answers(n_answers: int) -> tuple[list[dict], list]:
    """Return the questions and the runs holding ``n_answers`` distinct answers (each is a new judge call)."""
    questions = [question(i) for i in range(QUESTIONS)]
    runs = [
        make_run(
            f"run-{r}",
            [
                {"question_id": q["id"], "response": f"Final answer: Paris ({r})", "recorded": {"judge": 100}}
                for q in questions
            ],
        )
        for r in range(n_answers // QUESTIONS)
    ]
    return questions, runs


def measured(work: Callable[[], object]) -> tuple[float, float]:
    """Return (wall seconds, CPU seconds of this process) of ``work()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def bench_concurrency(url: str, counts, concurrency: int, latency: float, questions: list[dict], runs: list) -> str:
    """One row of the table: the three paths at one concurrency."""
    options = {"base_url": url, "model": "bench-judge", "timeout_s": 60, "max_concurrency": concurrency}
    items = [(questions[0], p) for run in runs for p in run.predictions]
    n = len(items)
    counts()
    wall_many, cpu_many = measured(lambda: LlmGrader(options).grade_many(items))
    _, peak_many = counts()
    benchmark = make_benchmark(questions, answer_key=(GraderSpec("llm", options),))
    with tempfile.TemporaryDirectory() as store:
        cache = VerdictCache(LocalStore(Path(store)))
        wall_grade, cpu_grade = measured(lambda: grade_benchmark(benchmark, runs, cache=cache))
    _, peak_grade = counts()
    with tempfile.TemporaryDirectory() as root:
        wall_command = command_wall(Path(root), options, questions, runs)
    _, peak_command = counts()
    return (
        f"| {concurrency:>11} | {n / wall_many:>8,.0f} /s | {n / wall_grade:>8,.0f} /s | {n / wall_command:>8,.0f} /s"
        f" | {concurrency / latency:>8,.0f} | {peak_many:>4} / {peak_grade:<4} / {peak_command:<4}"
        f" | {cpu_many / n * 1000:.2f} / {cpu_grade / n * 1000:.2f} ms |"
    )


def command_wall(root: Path, options: dict, questions: list[dict], runs: list) -> float:
    """Seconds ``dualboard grade`` takes on a leaderboard folder holding ``runs`` (ingested beforehand)."""
    benchmark = {
        **TINY_BENCHMARK,
        "graders": {**TINY_BENCHMARK["graders"], "answer_key": [{"name": "llm", "options": options}]},
    }
    folder = root / "data" / "benchmarks" / "tiny"
    folder.mkdir(parents=True)
    (folder / "benchmark.yaml").write_text(json.dumps(benchmark), "utf-8")
    (folder / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), "utf-8")
    for run in runs:
        write_run(root, run.run_id, [{**p, "round": 0} for p in run.predictions], tiny_metadata(model=run.run_id))
    dualboard = [sys.executable, "-m", "dualboard"]
    subprocess.run([*dualboard, "ingest", "--root", str(root)], check=True, capture_output=True)
    wall, _ = measured(
        lambda: subprocess.run(
            [*dualboard, "grade", "--no-progress", "--root", str(root)], check=True, capture_output=True
        )
    )
    return wall


def bench_judge_alone(url: str, n_requests: int, concurrency: int) -> str:
    """Drive the judge with bare http.client threads, one keep-alive connection each."""
    parts = urlsplit(url)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 800}]}).encode()
    left = iter(range(n_requests))
    lock = threading.Lock()

    def worker() -> None:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        while True:
            with lock:
                if next(left, None) is None:
                    return
            connection.request("POST", parts.path + "/chat/completions", body, {"Content-Type": "application/json"})
            connection.getresponse().read()

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    wall, _ = measured(lambda: ([t.start() for t in threads], [t.join() for t in threads]))
    return f"judge alone, {concurrency} http.client threads: {n_requests / wall:,.0f} requests/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=10_000, help="answers graded per row (rounded to 100s)")
    parser.add_argument("--latency", type=float, default=0.1, help="the judge's seconds per request")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 64, 256], help="max_concurrency values")
    args = parser.parse_args()
    questions, runs = answers(args.answers)
    n = len(runs) * QUESTIONS
    print(f"llm grader, loopback judge in a child process, {args.latency * 1000:.0f} ms per request, {n:,} answers")
    print("| concurrency | grade_many  | grade       | dualboard grade | ceiling  | peak in flight | CPU per answer |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with judge_process(args.latency) as (url, counts):
        for concurrency in args.concurrency:
            print(bench_concurrency(url, counts, concurrency, args.latency, questions, runs), flush=True)
        print(bench_judge_alone(url, n, max(args.concurrency)))


if __name__ == "__main__":
    main()
