"""Benchmark the grading stage: the demo board, and answers per second for ``rules`` and for ``llm``.

``demo`` times :func:`grade_benchmark` on the bundled demo (its runs and human
labels) without a verdict cache and with a warm one: the best of ``--repeat``
runs, in CPU seconds of this process, so other work on the machine moves it little.

``rules`` runs on the 3,900 real answers of the 2024-09-13 multiple-choice
release when ``../shared`` is present (else on synthetic answers). ``llm``
runs against a scripted OpenAI-compatible server on 127.0.0.1, in a child
process like a real judge, that answers each request after a fixed latency
(100 ms by default), first sequentially
(``max_concurrency=1``), then concurrently; the ratio is the point.

Usage::

    python bench/grading.py [--repeat 20] [--answers 64] [--latency 0.1] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "grading")]

from judge_server import ScriptedJudgeServer, always  # noqa: E402

from dualboard import pipeline  # noqa: E402
from dualboard.grading import VerdictCache, grade_benchmark  # noqa: E402
from dualboard.grading.llm import LlmGrader  # noqa: E402
from dualboard.grading.rules import RulesGrader  # noqa: E402
from dualboard.intake.benchmark import load_benchmarks  # noqa: E402
from dualboard.intake.importers import import_autogenai  # noqa: E402
from dualboard.intake.validate import find_run_dirs, load_runs  # noqa: E402
from dualboard.store import LocalStore  # noqa: E402

RELEASE = ROOT.parent / "shared" / "data" / "easy-problems" / "2024-09-13-Multi-Benchmark"
QUESTION = {
    "id": "capital",
    "type": "open",
    "category": "Geography",
    "prompt": "What is the capital of France?",
    "answer_key": {"answer": "Paris", "aliases": [], "patterns": [], "numeric": None, "reference": "Paris."},
}


def real_items() -> list[tuple[dict, dict]]:
    """Return (question, prediction) pairs of the real MC release, or synthetic ones without it."""
    if not RELEASE.is_dir():
        return [
            (QUESTION, {"response": f"Some reasoning {i}.\nFinal answer: {'Paris' if i % 2 else 'Lyon'}"})
            for i in range(3900)
        ]
    import json

    with tempfile.TemporaryDirectory() as dest:
        import_autogenai(RELEASE, benchmark="bench", dest=Path(dest))
        questions = {
            q["id"]: q
            for q in map(json.loads, (Path(dest) / "data/benchmarks/bench/questions.jsonl").read_text().splitlines())
        }
        items = []
        for predictions in sorted((Path(dest) / "submissions/bench").glob("*/predictions.jsonl")):
            for prediction in map(json.loads, predictions.read_text().splitlines()):
                items.append((questions[prediction["question_id"]], prediction))
    return items


def bench_demo(repeat: int) -> None:
    """Time grading the demo board, cold and from a warm verdict cache (best of ``repeat``, CPU seconds)."""
    benchmarks = load_benchmarks(ROOT / "data")
    benchmark, labels = benchmarks["demo"], pipeline.human_labels(benchmarks["demo"])
    runs = load_runs(find_run_dirs([ROOT / "submissions" / "demo"]), benchmarks)
    with tempfile.TemporaryDirectory() as store:
        grade_benchmark(benchmark, runs, cache=VerdictCache(LocalStore(Path(store))), human_labels=labels)
        for name, cache in (("no cache", lambda: None), ("warm cache", lambda: VerdictCache(LocalStore(Path(store))))):
            seconds = []
            for _ in range(repeat):
                start = time.process_time()
                tables = grade_benchmark(benchmark, runs, cache=cache(), human_labels=labels)
                seconds.append(time.process_time() - start)
            print(f"demo ({len(tables.verdicts):,} verdicts, {name}): best {min(seconds):.3f} s of {repeat}")


def rate(grader, items) -> tuple[float, float]:
    """Return (answers per second, seconds) of one grade_many call."""
    start = time.perf_counter()
    grader.grade_many(items)
    seconds = time.perf_counter() - start
    return len(items) / seconds, seconds


def bench_rules() -> None:
    items = real_items()
    per_second, seconds = rate(RulesGrader(), items)
    source = "real MC release" if RELEASE.is_dir() else "synthetic"
    print(f"rules: {len(items)} answers ({source}) in {seconds:.2f} s = {per_second:,.0f} answers/s")


def serve_judge(latency: float, connection) -> None:
    """Run the scripted judge in this (child) process until told to stop; report the peak in flight."""
    with ScriptedJudgeServer(always("The answer agrees.\nVerdict: pass", delay_s=latency)) as server:
        connection.send(server.base_url)
        connection.recv()
        connection.send(server.peak_in_flight)


def bench_llm(n_answers: int, latency: float, concurrency: int) -> None:
    """Time the llm grader against a judge in another process (as a real server would be)."""
    items = [(QUESTION, {"response": f"Final answer: Paris ({i})"}) for i in range(n_answers)]
    ours, theirs = multiprocessing.Pipe()
    judge = multiprocessing.get_context("fork").Process(target=serve_judge, args=(latency, theirs), daemon=True)
    judge.start()
    options = {"base_url": ours.recv(), "model": "bench-judge", "timeout_s": 30}
    sequential, t_seq = rate(LlmGrader({**options, "max_concurrency": 1}), items)
    concurrent, t_con = rate(LlmGrader({**options, "max_concurrency": concurrency}), items)
    ours.send("stop")
    peak = ours.recv()
    judge.join(timeout=5)
    print(f"llm (loopback, {latency * 1000:.0f} ms latency, {n_answers} answers):")
    print(f"  sequential  (max_concurrency=1):  {t_seq:6.2f} s = {sequential:7.1f} answers/s")
    print(
        f"  concurrent  (max_concurrency={concurrency}): {t_con:6.2f} s = {concurrent:7.1f} answers/s "
        f"(peak in flight {peak})"
    )
    print(f"  ratio concurrent/sequential: {concurrent / sequential:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="gradings of the demo to take the best of")
    parser.add_argument("--answers", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    bench_demo(args.repeat)
    bench_rules()
    bench_llm(args.answers, args.latency, args.concurrency)


if __name__ == "__main__":
    main()
