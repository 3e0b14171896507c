"""Shared fixtures of the grading tests: questions, runs and a loopback judge."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dualboard import pipeline
from dualboard.project import Project
from dualboard.store import LocalStore
from tests.conftest import REPO
from tests.grading.judge_server import Reply, ScriptedJudgeServer


@pytest.fixture
def demo_board(tmp_path: Path) -> tuple[Project, LocalStore]:
    """The bundled demo board (human labels on a sample), ingested into its local store."""
    root = tmp_path / "board"
    for name in ("data", "submissions"):
        shutil.copytree(REPO / name, root / name)
    project = Project(root)
    store = LocalStore(project.store_dir)
    pipeline.ingest(project, store, today="2026-01-01")
    return project, store


@pytest.fixture
def mc_question() -> dict[str, Any]:
    return {
        "id": "horses",
        "category": "Puzzle",
        "type": "multiple_choice",
        "prompt": "You have six horses... What is the minimum number of races needed?",
        "choices": ["One", "Two", "Three", "Unknown"],
        "correct_choice": "One",
        "answer_key": {
            "answer": "One",
            "aliases": ["1", "a single race"],
            "patterns": [],
            "numeric": None,
            "reference": "Race them once on a track with six lanes.",
            "notes": "",
        },
    }


@pytest.fixture
def open_question() -> dict[str, Any]:
    return {
        "id": "capital",
        "category": "Geography",
        "type": "open",
        "prompt": "What is the capital of France?",
        "answer_key": {
            "answer": "Paris",
            "aliases": ["City of Paris"],
            "patterns": [r"\bparis\b"],
            "numeric": None,
            "reference": "Paris is the capital of France.",
            "notes": "",
        },
    }


@pytest.fixture
def numeric_question() -> dict[str, Any]:
    return {
        "id": "speed",
        "category": "Math",
        "type": "open",
        "prompt": "How many km is 5 miles?",
        "answer_key": {
            "answer": "8.05 km",
            "aliases": [],
            "patterns": [],
            "numeric": {"value": 8.05, "tolerance": 0.05},
            "reference": "About 8.05 km.",
            "notes": "",
        },
    }


@pytest.fixture
def judge() -> Iterator[ScriptedJudgeServer]:
    """A loopback judge answering 'Verdict {nonce}: pass'; tests replace ``.script``."""
    with ScriptedJudgeServer(lambda body, number: Reply("Verdict {nonce}: pass")) as server:
        yield server
