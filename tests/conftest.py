"""Fixtures shared by the whole suite: small leaderboard folders built in tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from dualboard.intake.human_labels import response_sha256
from dualboard.render.shared_files import shared_href, shared_name

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data" / "easy-problems"
DEMO = REPO / "data" / "benchmarks" / "demo"
"""The bundled demo benchmark: its questions and the simulated models behind submissions/demo/."""

TINY_QUESTIONS = [
    {
        "id": "q1",
        "category": "arithmetic",
        "prompt": "What is 2 + 2?",
        "type": "open",
        "answer_key": {
            "answer": "4",
            "aliases": ["four"],
            "patterns": [],
            "numeric": {"value": 4, "tolerance": 0},
            "reference": "Two plus two is four.",
            "notes": "",
        },
    },
    {
        "id": "q2",
        "category": "geography",
        "prompt": "Capital of France?",
        "type": "multiple_choice",
        "choices": ["Lyon", "Paris", "Nice", "Lille"],
        "correct_choice": "B",
        "answer_key": {
            "answer": "Paris",
            "aliases": [],
            "patterns": [],
            "numeric": None,
            "reference": "Paris.",
            "notes": "",
        },
    },
    {
        "id": "q3",
        "category": "geography",
        "prompt": "Largest ocean?",
        "type": "open",
        "answer_key": {
            "answer": "Pacific Ocean",
            "aliases": ["Pacific"],
            "patterns": [],
            "numeric": None,
            "reference": "The Pacific.",
            "notes": "",
        },
    },
]

TINY_BENCHMARK = {
    "name": "tiny",
    "version": "1",
    "title": "Tiny",
    "description": "Three questions.",
    "graders": {
        "traditional": {
            "multiple_choice": {"name": "mc_letter"},
            "open": {"name": "recorded", "options": {"field": "judge"}},
        },
        "answer_key": [{"name": "rules"}],
    },
}


def tiny_metadata(**overrides) -> dict:
    meta = {
        "model": "tiny-model",
        "submitter": "tests",
        "date": "2026-01-02",
        "benchmark": "tiny",
        "benchmark_version": "1",
        "rounds": 1,
        "decoding": {"temperature": 0.0, "seed": 1},
    }
    return {**meta, **overrides}


LABELS_HEADER = "run,question,round,label,response_sha256\n"
"""The header of human_labels.csv."""


def tiny_label(run: str, question: str, label: str) -> str:
    """A line of human_labels.csv labelling the tiny run's response to ``question`` (round 0)."""
    response = {p["question_id"]: p["response"] for p in tiny_predictions()}[question]
    return f"{run},{question},0,{label},{response_sha256(response)}\n"


def tiny_predictions() -> list[dict]:
    return [
        {"question_id": "q1", "round": 0, "response": "2 + 2 = 4.\nFinal answer: 4", "recorded": {"judge": 100}},
        {"question_id": "q2", "round": 0, "response": 'Paris is the capital.\n{"ANSWER": "B"}'},
        {"question_id": "q3", "round": 0, "response": "Final answer: Atlantic", "recorded": {"judge": 40}},
    ]


def copy_run(source: Path, dest: Path) -> Path:
    """Copy the run folder ``source`` to ``dest`` as another model's run (named after ``dest``): two runs of one
    model name must state distinct revisions, and a copy is a newcomer, not a rerun."""
    shutil.copytree(source, dest)
    metadata = yaml.safe_load((dest / "metadata.yaml").read_text("utf-8"))
    (dest / "metadata.yaml").write_text(yaml.safe_dump({**metadata, "model": dest.name}), "utf-8")
    return dest


def write_run(
    root: Path,
    run_id: str,
    predictions: list[dict] | None = None,
    metadata: dict | None = None,
    *,
    raw_lines: list[bytes] | None = None,
) -> Path:
    """Write submissions/tiny/<run_id>/ with the given content (raw_lines wins over predictions)."""
    run = root / "submissions" / "tiny" / run_id
    run.mkdir(parents=True, exist_ok=True)
    lines = (
        raw_lines if raw_lines is not None else [json.dumps(p).encode() for p in (predictions or tiny_predictions())]
    )
    (run / "predictions.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    # runs that share a model name must state distinct revisions: each run its own, unless the test says otherwise
    metadata = {"model_revision": run_id, **(metadata or tiny_metadata())}
    (run / "metadata.yaml").write_text(yaml.safe_dump(metadata), "utf-8")
    return run


def write_tiny_board(root: Path) -> Path:
    """Write the tiny benchmark and one valid run into the leaderboard folder ``root``."""
    bench = root / "data" / "benchmarks" / "tiny"
    bench.mkdir(parents=True)
    (bench / "benchmark.yaml").write_text(yaml.safe_dump(TINY_BENCHMARK), "utf-8")
    (bench / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in TINY_QUESTIONS), "utf-8")
    write_run(root, "run-a")
    return root


@pytest.fixture
def tiny_root(tmp_path: Path) -> Path:
    """A leaderboard folder with the tiny benchmark and one valid run."""
    return write_tiny_board(tmp_path)


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Dualboard tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "Dualboard tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}
"""A git identity, so that mike can commit the site of a release to gh-pages."""


def git_repository(root: Path) -> Path:
    """Make the leaderboard folder a git repository with one commit, as `dualboard release` needs (mike)."""
    if not (root / ".git").exists():
        for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "leaderboard"]):
            subprocess.run(
                ["git", "-C", str(root), *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV}
            )
    return root


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under root (symlinks as their targets) for byte-for-byte comparisons."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = b"-> " + str(p.readlink()).encode()
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out


PROBE_PAGE = "probe/data.md"
"""A hand-written page (site_src) that shows shared files, as the question pages load their data."""


def write_shared_probe(root: Path, widths: list[int]) -> list[str]:
    """Put one shared file per width (an SVG that wide, named by its content) and PROBE_PAGE showing them all
    into ``root``'s site_src/, as a release's pages reference them (``versioned``); return their docs paths."""
    names, images = [], []
    for width in widths:
        data = f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="1"></svg>'.encode()
        name = shared_name(data, ".svg")
        (root / "site_src" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "site_src" / name).write_bytes(data)
        names.append(name)
        images.append(f'<img class="shared-probe" alt="" src="{shared_href(PROBE_PAGE, name, versioned=True)}">')
    page = root / "site_src" / PROBE_PAGE
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("# Shared files\n\n" + "\n".join(images) + "\n", "utf-8")
    return names


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--test-all",
        action="store_true",
        help="run every test: also those marked slow, browser, embed or test_all, which the quick suite skips",
    )


FULL_SUITE_ONLY = ("test_all", "slow", "browser", "embed")
"""Markers of the tests only ``make test-all`` runs: the quick suite (``make test``) is the unit tests and one demo
build end to end (tests/test_end_to_end.py)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the tests of :data:`FULL_SUITE_ONLY` unless --test-all (``make test-all``) asks for them."""
    if config.getoption("--test-all"):
        return
    skip = pytest.mark.skip(
        reason="slow, in the browser, [embed] or a long simulation: run with --test-all (make test-all)"
    )
    for item in items:
        if any(marker in item.keywords for marker in FULL_SUITE_ONLY):
            item.add_marker(skip)
