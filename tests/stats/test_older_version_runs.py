"""A benchmark moves on: runs of an earlier version stay on the board, graded against the current keys, and the
questions added since (those benchmark.yaml does not list for their version) count as never run for them — left
out of their paired analyses, not counted wrong. Any other question they leave out is missing.

The board is built by `dualboard build` in a subprocess; the paired numbers are checked against scipy on the
questions both runs share, computed here from the responses as written (not from Dualboard's tables).
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import binomtest

from dualboard.scored_files import read_scored
from tests.conftest import REPO
from tests.render.html_tables import item_page

pytestmark = pytest.mark.slow  # builds a board for the module: only make test-all runs it

N_OLD, N_ADDED = 30, 6
VERSION_1 = [f"q{i:02d}" for i in range(N_OLD)] + ["q-retired"]
BENCHMARK = {
    "name": "moving",
    "version": "2",
    "previous_versions": [{"version": "1", "questions": VERSION_1}],
    "min_answered": 0.8,  # a run of version 1 answers 30 of the 36 current questions
    "title": "Moving",
    "description": "v2 adds 6.",
    "graders": {"traditional": {"name": "exact"}, "answer_key": [{"name": "rules"}]},
}
RIGHT_OLD = {i for i in range(N_OLD) if i % 3 != 0}  # 20 of the 30 shared questions
RIGHT_NEW = {i for i in range(N_OLD + N_ADDED) if i % 5 != 0}  # 24 of 30 shared, and 4 of the 6 new ones


def _question(i: int) -> dict:
    return {
        "id": f"q{i:02d}",
        "category": "colours",
        "prompt": f"Colour number {i}?",
        "type": "open",
        "answer_key": {
            "answer": f"colour{i}",
            "aliases": [],
            "patterns": [],
            "numeric": None,
            "reference": "",
            "notes": "",
        },
    }


def _write_run(root: Path, run_id: str, version: str, n: int, right: set[int], dropped: tuple[str, ...] = ()) -> None:
    """A run answering q00…q(n-1), right on ``right``, plus answers to ``dropped`` questions
    (gone from the benchmark)."""
    folder = root / "submissions" / "moving" / run_id
    folder.mkdir(parents=True)
    rows = [
        {
            "question_id": f"q{i:02d}",
            "round": 0,
            "response": f"Final answer: {'colour' + str(i) if i in right else 'grey'}",
        }
        for i in range(n)
    ]
    rows += [{"question_id": q, "round": 0, "response": "Final answer: colour"} for q in dropped]
    (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    meta = {
        "model": run_id,
        "submitter": "tests",
        "date": "2026-01-02",
        "benchmark": "moving",
        "benchmark_version": version,
        "rounds": 1,
    }
    (folder / "metadata.yaml").write_text(yaml.safe_dump(meta), "utf-8")


def _write_benchmark(root: Path, config: dict) -> None:
    folder = root / "data" / "benchmarks" / "moving"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "benchmark.yaml").write_text(yaml.safe_dump(config), "utf-8")
    (folder / "questions.jsonl").write_text("".join(json.dumps(_question(i)) + "\n" for i in range(N_OLD + N_ADDED)))


def dualboard(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dualboard", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ),
        timeout=600,
    )


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("moving")
    _write_benchmark(root, BENCHMARK)
    _write_run(root, "old-run", "1", N_OLD, RIGHT_OLD, dropped=("q-retired",))
    _write_run(root, "new-run", "2", N_OLD + N_ADDED, RIGHT_NEW)
    proc = dualboard("build", "--root", str(root), "--no-progress")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


def test_an_answer_to_a_question_dropped_since_is_a_warning_and_is_not_graded(board):
    proc = dualboard("validate", "--root", str(board))
    assert proc.returncode == 0, proc.stdout
    assert (
        "old-run/predictions.jsonl:31: question_id: question 'q-retired' is not in version '2' of moving — "
        "nothing to do: this answer of an earlier version is left out of grading"
    ) in proc.stdout
    scored = read_scored(board / "build" / "scored", "moving")
    assert "q-retired" not in set(scored["question_id"])


def test_an_earlier_version_is_refused_until_benchmark_yaml_lists_it(tmp_path):
    _write_benchmark(tmp_path, {k: v for k, v in BENCHMARK.items() if k != "previous_versions"})
    _write_run(tmp_path, "old-run", "1", N_OLD, RIGHT_OLD)
    proc = dualboard("validate", "--root", str(tmp_path))
    assert proc.returncode == 1
    assert "benchmark_version: '1' does not exist — answer version '2' of moving" in proc.stdout
    assert "previous_versions" in proc.stdout


def test_a_run_of_the_current_version_must_still_answer_every_question(tmp_path):
    _write_benchmark(tmp_path, BENCHMARK)
    _write_run(tmp_path, "lazy-run", "2", N_OLD, RIGHT_OLD)
    proc = dualboard("validate", "--root", str(tmp_path))
    assert proc.returncode == 1 and "coverage: 6 of 36 answers (question, round) missing" in proc.stdout


def test_a_run_of_an_earlier_version_must_answer_every_question_of_that_version(tmp_path):
    _write_benchmark(tmp_path, BENCHMARK)
    _write_run(tmp_path, "picky-run", "1", N_OLD - 3, RIGHT_OLD)
    proc = dualboard("validate", "--root", str(tmp_path))
    assert proc.returncode == 1 and "coverage: 3 of 30 answers (question, round) missing: q27 round 0" in proc.stdout


def test_a_run_of_an_earlier_version_may_not_pick_questions_added_since(tmp_path):
    _write_benchmark(tmp_path, BENCHMARK)
    _write_run(tmp_path, "picky-run", "1", N_OLD + 2, RIGHT_NEW, dropped=("q-retired",))
    proc = dualboard("validate", "--root", str(tmp_path))
    assert proc.returncode == 1
    assert "question_id: 2 answer(s) to questions version '1' did not have, e.g. 'q30'" in proc.stdout


def test_the_older_run_stays_marked_with_the_version_it_answered(board):
    models = pd.read_csv(board / "build" / "stats" / "moving" / "models.csv", dtype={"benchmark_version": str})
    old, new = (models.set_index("run_id").loc[r] for r in ("old-run", "new-run"))
    assert (old.benchmark_version, old.n_questions, old.n_never_run) == ("1", N_OLD, N_ADDED)
    assert (new.benchmark_version, new.n_questions, new.n_never_run) == ("2", N_OLD + N_ADDED, 0)
    assert old.answer_key_mean == pytest.approx(100 * len(RIGHT_OLD) / N_OLD), "never-run questions are not zeros"
    assert "6 question(s) never run (it answered version 1)" in old.note
    scored = read_scored(board / "build" / "scored", "moving")
    assert set(scored.loc[scored.run_id == "old-run", "benchmark_version"]) == {"1"}
    page = html.unescape((board / "site" / "benchmarks" / "moving" / "index.html").read_text("utf-8"))
    assert "answered v1" in page and "30 (6 never run)" in page
    run_page = item_page(board / "site", "benchmarks/moving/runs", "old-run")
    assert "This run answered benchmark version 1 (current: 2)" in run_page


@pytest.mark.parametrize("grading", ["answer_key", "traditional"])
def test_paired_comparison_uses_the_shared_questions_only(board, grading):
    """Both graders mark exactly the written answers right, so the truth is known question by question."""
    old = np.array([i in RIGHT_OLD for i in range(N_OLD)], dtype=float)
    new = np.array([i in RIGHT_NEW for i in range(N_OLD)], dtype=float)  # the 30 questions both were asked
    b, c = int(((old == 1) & (new == 0)).sum()), int(((old == 0) & (new == 1)).sum())
    pairwise = pd.read_csv(board / "build" / "stats" / "moving" / "pairwise.csv")
    row = pairwise[(pairwise.grading == grading) & pairwise.run_a.isin(["old-run", "new-run"])].iloc[0]
    sign = 1 if row.run_a == "old-run" else -1
    assert row.n_questions == N_OLD
    assert row.test == "mcnemar_exact"
    assert sign * row.diff_mean == pytest.approx(100 * (old - new).mean())
    assert row.p_value == pytest.approx(binomtest(b, b + c, 0.5).pvalue)  # exact McNemar = binomial on discordant pairs
