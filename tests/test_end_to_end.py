"""The whole pipe, as a user runs it: `dualboard build` as a subprocess on the demo data."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dualboard.scored_files import SCORED_COLUMNS, read_scored
from dualboard.stats import COLUMNS
from tests.conftest import REPO, tree_bytes
from tests.render.html_tables import tables


def dualboard(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dualboard", *args], capture_output=True, text=True, cwd=cwd or REPO)


def copy_leaderboard(dest: Path) -> Path:
    """A private copy of this repository's leaderboard folder (data, submissions, site sources)."""
    for name in ("data", "submissions", "site_src"):
        shutil.copytree(REPO / name, dest / name)
    shutil.copyfile(REPO / "mkdocs.yml", dest / "mkdocs.yml")
    return dest


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = copy_leaderboard(tmp_path_factory.mktemp("demo"))
    proc = dualboard("build", "--root", str(root), "--no-progress")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


def _answers(root: Path) -> int:
    return sum(
        1 for p in (root / "submissions" / "demo").glob("*/predictions.jsonl") for line in p.open() if line.strip()
    )


def test_scored_parquet_has_one_row_per_answer(built):
    scored = read_scored(built / "build" / "scored", "demo")
    assert list(scored.columns) == list(SCORED_COLUMNS)
    assert len(scored) == _answers(built)
    assert not scored.duplicated(["run_id", "question_id", "round"]).any()
    assert scored["traditional"].between(0, 100).all()
    assert set(scored["answer_key"].dropna().unique()) <= {0.0, 100.0}
    assert set(scored["verdict_parse"].unique()) <= {"ok", "recovered", "none"}


def test_models_csv_has_one_row_per_run(built):
    models = pd.read_csv(built / "build" / "stats" / "demo" / "models.csv")
    runs = sorted(p.name for p in (built / "submissions" / "demo").iterdir() if p.is_dir())
    assert sorted(models["run_id"]) == runs
    assert list(models.columns) == list(COLUMNS["models"])
    assert (models["traditional_ci_low"] <= models["traditional_mean"]).all()
    assert (models["answer_key_mean"] <= models["answer_key_ci_high"]).all()


def test_site_has_home_and_a_leaderboard_row_per_run(built):
    assert (built / "site" / "index.html").is_file()
    page = (built / "site" / "benchmarks" / "demo" / "index.html").read_text("utf-8")
    tbody = re.search(r"<tbody>(.*?)</tbody>", page, re.S).group(1)
    runs = [p.name for p in (built / "submissions" / "demo").iterdir() if p.is_dir()]
    assert tbody.count("<tr>") == len(runs)
    assert json.loads((built / "site" / "benchmarks" / "demo" / "charts" / "scores.json").read_text())["data"]
    assert (built / "site" / "javascripts" / "plotly.min.js").stat().st_size > 1_000_000


def test_the_home_page_names_every_run_tied_for_first(built):
    """The demo has runs the data cannot separate from the leader: the home page names them all, as tied 1st."""
    models = pd.read_csv(built / "build" / "stats" / "demo" / "models.csv")
    row = tables((built / "site" / "index.html").read_text("utf-8"))[0].rows[0]
    for grading, cell in (("traditional", row[3]), ("answer_key", row[4])):
        tied = models[models[f"tied_first_{grading}"].fillna(False).astype(bool) & models[f"ranked_{grading}"]]
        assert len(tied) >= 1
        if len(tied) > 1:
            named = cell.text.removeprefix("tied 1st: ").split(", ")
            assert cell.text.startswith("tied 1st: ") and sorted(n.split(" (")[0] for n in named) == sorted(tied.model)
        else:
            assert cell.text.startswith(f"{tied.model.iloc[0]} (")
    assert (models.tied_first_answer_key.fillna(False).astype(bool)).sum() > 1, "the demo has a tie to show"


@pytest.mark.slow
def test_rebuild_gives_identical_scored_data_and_pages(built, tmp_path):
    again = copy_leaderboard(tmp_path / "again")
    proc = dualboard("build", "--root", str(again), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    for rel in (
        "build/stats/demo/models.csv",
        "site/benchmarks/demo/index.html",
        "build/docs/benchmarks/demo/charts/scores.json",
        "site/benchmarks/demo/questions/question/index.html",
        "site/benchmarks/demo/questions/data-files.json",
        "site/benchmarks/demo/runs/data-files.json",
    ):
        assert (again / rel).read_bytes() == (built / rel).read_bytes(), rel
    assert sorted(p.name for p in (again / "site/shared").iterdir()) == sorted(
        p.name for p in (built / "site/shared").iterdir()
    )
    a = read_scored(again / "build/scored", "demo")
    b = read_scored(built / "build/scored", "demo")
    pd.testing.assert_frame_equal(a, b)


def test_bad_submission_names_file_and_line_and_leaves_store_unchanged(built):
    store = built / ".dualboard" / "store"
    before = tree_bytes(store)
    bad = built / "submissions" / "demo" / "zz-bad-run"
    shutil.copytree(next(p for p in sorted((built / "submissions" / "demo").iterdir()) if p.is_dir()), bad)
    lines = (bad / "predictions.jsonl").read_text("utf-8").splitlines()
    lines[2] = "{not json"
    lines[4] = json.dumps({**json.loads(lines[4]), "question_id": "no-such-question"})
    (bad / "predictions.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    try:
        proc = dualboard("build", "--root", str(built), "--no-progress")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "zz-bad-run/predictions.jsonl:3: -: invalid JSON" in proc.stderr
        assert "zz-bad-run/predictions.jsonl:5: question_id: unknown question id 'no-such-question'" in proc.stderr
        assert "Traceback" not in proc.stderr
        assert tree_bytes(store) == before
    finally:
        shutil.rmtree(bad)


@pytest.mark.slow
def test_every_command_has_help():
    proc = dualboard("--help")
    assert proc.returncode == 0
    commands = re.findall(r"^  (\w[\w-]*)\s", proc.stdout.split("Commands:")[1], re.M)
    assert {"build", "validate", "ingest", "grade", "stats", "render", "serve"} <= set(commands)
    for command in commands:
        sub = dualboard(command, "--help")
        assert sub.returncode == 0 and "Usage:" in sub.stdout, command
