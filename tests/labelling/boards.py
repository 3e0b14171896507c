"""A small graded leaderboard to label: open questions, one whose key is a reference sentence, runs that repeat
one another's responses, a judge's partial-credit marks, and a run whose responses are hostile (HTML, script, a
100 KB line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.browser.payloads import PAYLOADS

BENCHMARK = "quiz"
CAPITALS = {
    "fr": "Paris",
    "de": "Berlin",
    "it": "Rome",
    "es": "Madrid",
    "pt": "Lisbon",
    "at": "Vienna",
    "nl": "Amsterdam",
    "se": "Stockholm",
    "no": "Oslo",
    "fi": "Helsinki",
    "pl": "Warsaw",
}
"""Enough questions (with the open one, 12) for κ to be estimable: it needs labels on 10."""
QUESTIONS = [
    {
        "id": f"cap-{code}",
        "category": "geography",
        "prompt": f"What is the capital of the country with ISO code {code.upper()}?",
        "type": "open",
        "answer_key": {"answer": city, "reference": f"{city} is the capital."},
    }
    for code, city in CAPITALS.items()
] + [
    {
        "id": "why-sky",
        "category": "science",
        "prompt": "Why is the sky blue? Answer in one sentence.",
        "type": "open",
        "answer_key": {"reference": "Air scatters short (blue) wavelengths of sunlight far more than long ones."},
    }
]
BENCHMARK_YAML = f"""name: {BENCHMARK}
version: "1"
title: Quiz
description: Capitals and one open question.
graders:
  traditional:
    open: {{name: recorded, options: {{field: judge}}}}
  answer_key:
    - {{name: rules}}
"""
LONG_LINE = "x" * 100_000
JUDGE = (100, 60, 0, 100, 20)
"""The marks a judge gave, partial credit among them: the page offers a mark on 0–100 beside Pass and Fail."""


def responses(run: int) -> dict[str, str]:
    """Run ``run``'s responses: runs 0 and 1 give identical ones (one item each), run 2 is right in its own words,
    run 3 is hostile."""
    if run == 3:
        texts = [*PAYLOADS[: len(CAPITALS)], f"{PAYLOADS[0]}\n{LONG_LINE}"]
        return dict(zip([q["id"] for q in QUESTIONS], texts, strict=True))
    out = {}
    for k, (code, city) in enumerate(CAPITALS.items()):
        wrong = k % 2 == 1
        out[f"cap-{code}"] = (
            f"Final answer: {'Lyon' if wrong else city}" if run < 2 else f"I believe it is {city}, the largest city."
        )
    out["why-sky"] = "Because of Rayleigh scattering of blue light." if run != 2 else "The sky reflects the sea."
    return out


def write_board(root: Path, runs: int = 4) -> Path:
    """Write the leaderboard under ``root`` and grade it with the CLI; return ``root``."""
    folder = root / "data" / "benchmarks" / BENCHMARK
    folder.mkdir(parents=True)
    (folder / "benchmark.yaml").write_text(BENCHMARK_YAML, encoding="utf-8")
    (folder / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    for run in range(runs):
        run_dir = root / "submissions" / BENCHMARK / f"model-{run}"
        run_dir.mkdir(parents=True)
        (run_dir / "metadata.yaml").write_text(
            f'model: model-{run}\nmodel_revision: r1\nsubmitter: tests\ndate: "2026-01-01"\nbenchmark: {BENCHMARK}\n'
            'benchmark_version: "1"\ndecoding: {temperature: 0.0}\nrounds: 1\nlicense: CC-BY-4.0\n',
            encoding="utf-8",
        )
        lines = [
            {"question_id": q, "round": 0, "response": text, "recorded": {"judge": JUDGE[(run + k) % len(JUDGE)]}}
            for k, (q, text) in enumerate(responses(run).items())
        ]
        (run_dir / "predictions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    dualboard(root, "ingest")
    dualboard(root, "grade", "--no-progress")
    return root


def dualboard(root: Path, *args: str) -> subprocess.CompletedProcess:
    """Run the CLI on ``root``; fail the test with its output when it fails."""
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", *args, "--root", str(root)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc
