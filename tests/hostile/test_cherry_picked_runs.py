"""A run that leaves out the answers it would fail must not rank, nor be named leader (issue 25, item 2).

The demo board is copied and attacked as a pull request would: the weakest run, fjord-3b, submitted again with
only the answers both gradings passed, as a run of an earlier version ("0.9", which the old plain
``previous_versions: ["0.9"]`` let leave out any question as "never run") and on the current version under
``allow_incomplete``; and a run of one right answer. Before the fix each of them ranked 1st under both gradings
and the home page named it leader. (A run of an earlier version let in by ``allow_incomplete`` is scored the
same way: tests/stats/test_left_out_answers.py.)
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dualboard.grading import grade_benchmark
from dualboard.intake.benchmark import load_benchmark
from dualboard.intake.validate import load_runs
from dualboard.scored_files import read_scored
from tests.conftest import REPO
from tests.render.html_tables import item_page

pytestmark = pytest.mark.slow  # builds a board for the module: only make test-all runs it

WEAKEST = "fjord-3b"
LEADER = {"traditional": "aurora-lm-70b", "answer_key": "aurora-lm-70b"}


def dualboard(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dualboard", *args], capture_output=True, text=True, cwd=REPO, timeout=900
    )


def _passed_lines() -> list[dict]:
    """fjord-3b's answers that both gradings pass, as its predictions.jsonl wrote them."""
    benchmark = load_benchmark(REPO / "data" / "benchmarks" / "demo", root=REPO / "data")
    (run,) = load_runs([REPO / "submissions" / "demo" / WEAKEST], {"demo": benchmark})
    scored = grade_benchmark(benchmark, [run]).scored
    passed = scored[(scored["traditional"] == 100) & (scored["answer_key"] == 100)]
    keep = set(zip(passed["question_id"], passed["round"], strict=True))
    return [p for p in run.predictions if (p["question_id"], p["round"]) in keep]


def _copy_board(dest: Path) -> Path:
    for name in ("data", "submissions", "site_src"):
        shutil.copytree(REPO / name, dest / name)
    shutil.copyfile(REPO / "mkdocs.yml", dest / "mkdocs.yml")
    return dest


def _add_run(root: Path, run_id: str, lines: list[dict], version: str = "1.0") -> None:
    folder = root / "submissions" / "demo" / run_id
    folder.mkdir()
    meta = yaml.safe_load((REPO / "submissions" / "demo" / WEAKEST / "metadata.yaml").read_text("utf-8"))
    meta.update(model=run_id, benchmark_version=version)
    (folder / "metadata.yaml").write_text(yaml.safe_dump(meta), "utf-8")
    (folder / "predictions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")


def _set_benchmark(root: Path, **fields) -> None:
    path = root / "data" / "benchmarks" / "demo" / "benchmark.yaml"
    config = yaml.safe_load(path.read_text("utf-8"))
    path.write_text(yaml.safe_dump({**config, **fields}, sort_keys=False), "utf-8")


def _question_ids() -> list[str]:
    lines = (REPO / "data" / "benchmarks" / "demo" / "questions.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line)["id"] for line in lines if line.strip()]


@pytest.fixture(scope="module")
def picked() -> list[dict]:
    lines = _passed_lines()
    assert 0 < len(lines) < 144 / 2, "fjord-3b fails most of its answers: the cherry-pick leaves most out"
    return lines


@pytest.fixture(scope="module")
def board(tmp_path_factory, picked) -> Path:
    """The demo with the cherry-picked runs let in by allow_incomplete."""
    root = _copy_board(tmp_path_factory.mktemp("cherry"))
    _set_benchmark(root, allow_incomplete=True)
    _add_run(root, "fjord-3b-picked", picked)
    _add_run(root, "one-answer", [picked[0]])
    proc = dualboard("build", "--root", str(root), "--no-progress")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


def test_the_plain_previous_version_is_refused_with_the_fix(tmp_path, picked):
    root = _copy_board(tmp_path)
    _set_benchmark(root, previous_versions=["0.9"])
    _add_run(root, "fjord-3b-picked-09", picked, version="0.9")
    proc = dualboard("validate", "--root", str(root))
    assert proc.returncode == 1, proc.stdout
    assert (
        "benchmark.yaml:20: previous_versions: version '0.9' is a plain name: each previous version must now list "
        "the ids of the questions it asked"
    ) in proc.stdout
    assert 'write it as - {version: "0.9", questions: [<every question id version 0.9 had>]}' in proc.stdout


@pytest.mark.parametrize("version", ["0.9", "1.0"])
def test_a_run_leaving_out_questions_its_version_asked_is_refused(tmp_path, picked, version):
    root = _copy_board(tmp_path)
    _set_benchmark(root, previous_versions=[{"version": "0.9", "questions": _question_ids()}])
    _add_run(root, "fjord-3b-picked", picked, version=version)
    proc = dualboard("validate", "--root", str(root))
    assert proc.returncode == 1, proc.stdout
    assert f"coverage: {144 - len(picked)} of 144 answers (question, round) missing" in proc.stdout
    assert "silently lower" not in proc.stdout


@pytest.mark.parametrize("run_id", ["fjord-3b-picked", "one-answer"])
def test_the_cherry_picked_run_is_listed_apart_not_ranked(board, picked, run_id):
    models = pd.read_csv(board / "build" / "stats" / "demo" / "models.csv").set_index("run_id")
    row = models.loc[run_id]
    assert not row.ranked_traditional and not row.ranked_answer_key
    assert pd.isna(row.rank_traditional) and pd.isna(row.rank_answer_key)
    assert pd.isna(row.rank_ci_low_answer_key) and pd.isna(row.rank_ci_high_answer_key)
    given = 1 if run_id == "one-answer" else len(picked)
    assert row.n_unanswered == 144 - given and row.answered_share == pytest.approx(given / 144)
    assert row.apart_reason.startswith(f"answered {int(100 * given / 144)}% of the current questions")
    assert row.traditional_mean < models.loc[WEAKEST, "traditional_mean"] + 1e-9, "a left-out answer scores 0"
    assert row.answer_key_mean < models.loc[WEAKEST, "answer_key_mean"] + 1e-9
    ranked = models[models.ranked_answer_key.astype(bool)]
    assert len(ranked) == 7 and ranked.rank_ci_high_answer_key.max() <= 7, "left out of the others' intervals"
    pairwise = pd.read_csv(board / "build" / "stats" / "demo" / "pairwise.csv")
    theirs = pairwise[(pairwise.run_a == run_id) | (pairwise.run_b == run_id)]
    assert theirs.p_holm.isna().all() and not theirs.significant.any(), "out of every Holm family"


def test_the_home_page_names_the_real_leader(board):
    home = html.unescape((board / "site" / "index.html").read_text("utf-8"))
    for leader in LEADER.values():
        assert f"{leader} (" in home
    assert "picked" not in home and "one-answer" not in home


def test_the_leaderboard_lists_them_apart_with_the_reason(board):
    page = html.unescape((board / "site" / "benchmarks" / "demo" / "index.html").read_text("utf-8"))
    ranked, _, apart = page.partition('<h2 id="listed-apart">')
    assert apart, "no section of runs listed apart"
    for run_id in ("fjord-3b-picked", "one-answer"):
        assert f">{run_id}<" in apart
    assert "answered 0% of the current questions (min_answered: 90%)" in apart  # the one-answer run
    tbodies = re.findall(r"<tbody>(.*?)</tbody>", ranked, re.S)
    assert tbodies and all("picked" not in body and "one-answer" not in body for body in tbodies)


def test_the_run_page_shows_each_left_out_answer_as_missing(board):
    run_page = html.unescape(item_page(board / "site", "benchmarks/demo/runs", "one-answer"))
    assert "not ranked, listed apart: answered 0% of the current questions" in run_page
    assert "143 answer(s) not given: scored wrong (0) under both gradings" in run_page
    scored = read_scored(board / "build" / "scored", "demo")
    mine = scored[scored.run_id == "one-answer"]
    assert len(mine) == 144 and mine.unanswered.sum() == 143
    assert (mine.loc[mine.unanswered, ["traditional", "answer_key"]] == 0).all().all()


def test_the_preview_says_the_run_would_not_be_ranked(board, picked):
    _add_run(board, "fjord-3b-picked-again", picked)
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", "preview", "--no-progress", "submissions/demo/fjord-3b-picked-again"],
        capture_output=True,
        text=True,
        cwd=board,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| answer-key | " in proc.stdout and "| not ranked (of 7): see the note |" in proc.stdout
    assert "note: 116 answer(s) not given: scored wrong (0) under both gradings; not ranked, listed apart: " in (
        proc.stdout
    )
