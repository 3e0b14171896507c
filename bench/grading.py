"""Benchmark the grading stage: the demo board, and answers per second for ``rules`` and for ``llm``.

``demo`` times :func:`grade_benchmark` on the bundled demo (its runs and human
labels) without a verdict cache and with a warm one: the best of ``--repeat``
runs, in CPU seconds of this process, so other work on the machine moves it little.

``rules`` runs on the 3,900 real answers of the 2024-09-13 multiple-choice
release of "Easy Problems That LLMs Get Wrong" when ``--release`` names its
folder (the one ``dualboard import autogenai`` reads), else on 3,900 synthetic
answers. ``llm``
runs against a scripted OpenAI-compatible server on 127.0.0.1, in a child
process like a real judge, that answers each request after a fixed latency
(100 ms by default), first sequentially
(``max_concurrency=1``), then concurrently; the ratio is the point.
``bench/judge.py`` measures the llm grader at 16 to 256 requests in flight.

Usage::

    python bench/grading.py [--release DIR] [--repeat 20] [--answers 64] [--latency 0.1] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from dualboard import pipeline
from dualboard.grading import VerdictCache, grade_benchmark
from dualboard.grading.llm import LlmGrader
from dualboard.grading.rules import RulesGrader
from dualboard.importers import import_autogenai
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.validate import find_run_dirs, load_runs
from dualboard.store import LocalStore

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "grading")]
# The loopback judge lives in the checkout's tests/, which `python bench/grading.py` does not put on the
# path: this import can only come after the line above.
from judge_server import judge_process  # noqa: E402

QUESTION = {
    "id": "capital",
    "type": "open",
    "category": "Geography",
    "prompt": "What is the capital of France?",
    "answer_key": {"answer": "Paris", "aliases": [], "patterns": [], "numeric": None, "reference": "Paris."},
}


def real_items(release: Path | None) -> list[tuple[dict, dict]]:
    """Return (question, prediction) pairs of the real MC release, or synthetic ones without it."""
    if release is None:
        return [
            (QUESTION, {"response": f"Some reasoning {i}.\nFinal answer: {'Paris' if i % 2 else 'Lyon'}"})
            for i in range(3900)
        ]
    import json

    with tempfile.TemporaryDirectory() as dest:
        import_autogenai(release, benchmark="bench", dest=Path(dest))
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


def bench_rules(release: Path | None) -> None:
    items = real_items(release)
    per_second, seconds = rate(RulesGrader(), items)
    source = "synthetic" if release is None else f"real MC release {release.name}"
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
    parser.add_argument(
        "--release",
        type=Path,
        help="folder of a release of Easy Problems That LLMs Get Wrong (e.g. 2024-09-13-Multi-Benchmark); "
        "without it the rules grader runs on synthetic answers",
    )
    parser.add_argument("--repeat", type=int, default=20, help="gradings of the demo to take the best of")
    parser.add_argument("--answers", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    if args.release is not None and not args.release.is_dir():
        parser.error(f"--release {args.release}: no such folder — pass the release folder, or leave --release out")
    bench_demo(args.repeat)
    bench_rules(args.release)
    bench_llm(args.answers, args.latency, args.concurrency)


if __name__ == "__main__":
    main()
