"""Benchmark the grading stage: answers per second for ``rules`` and for ``llm``.

``rules`` runs on the 3,900 real answers of the 2024-09-13 multiple-choice
release when ``../shared`` is present (else on synthetic answers). ``llm``
runs against a scripted OpenAI-compatible server on 127.0.0.1, in a child
process like a real judge, that answers each request after a fixed latency
(100 ms by default), first sequentially
(``max_concurrency=1``), then concurrently; the ratio is the point.
``bench/judge.py`` measures the llm grader at 16 to 256 requests in flight.

Usage::

    python bench/grading.py [--answers 64] [--latency 0.1] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "grading")]

from judge_server import judge_process  # noqa: E402

from dualboard.grading.llm import LlmGrader  # noqa: E402
from dualboard.grading.rules import RulesGrader  # noqa: E402
from dualboard.intake.importers import import_autogenai  # noqa: E402

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


def bench_llm(n_answers: int, latency: float, concurrency: int) -> None:
    """Time the llm grader against a judge in another process (as a real server would be)."""
    items = [(QUESTION, {"response": f"Final answer: Paris ({i})"}) for i in range(n_answers)]
    with judge_process(latency) as (url, counts):
        options = {"base_url": url, "model": "bench-judge", "timeout_s": 30}
        sequential, t_seq = rate(LlmGrader({**options, "max_concurrency": 1}), items)
        counts()  # the peak below is the concurrent run's
        concurrent, t_con = rate(LlmGrader({**options, "max_concurrency": concurrency}), items)
        _, peak = counts()
    print(f"llm (loopback, {latency * 1000:.0f} ms latency, {n_answers} answers):")
    print(f"  sequential  (max_concurrency=1):  {t_seq:6.2f} s = {sequential:7.1f} answers/s")
    print(
        f"  concurrent  (max_concurrency={concurrency}): {t_con:6.2f} s = {concurrent:7.1f} answers/s "
        f"(peak in flight {peak})"
    )
    print(f"  ratio concurrent/sequential: {concurrent / sequential:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    bench_rules()
    bench_llm(args.answers, args.latency, args.concurrency)


if __name__ == "__main__":
    main()
