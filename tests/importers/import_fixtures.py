"""Helpers of the importer tests: the shared real data and a loader for imported folders."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from dualboard.cli import main
from dualboard.intake.human_labels import LABELS_FILE, load_human_labels
from dualboard.intake.models import Benchmark, GraderSpec, Run

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "easy-problems"
MC_RELEASE = "2024-09-13-Multi-Benchmark"
OPEN_RELEASE = "2024-04-28-Paper-Benchmark"


def real_data() -> Path:
    """Return the shared easy-problems folder or skip the test with the reason."""
    if not DATA.is_dir():
        pytest.skip(f"real data absent: {DATA.resolve()} (the shared/ folder beside the repository)")
    return DATA.resolve()


def _spec(entry: dict) -> GraderSpec:
    return GraderSpec(entry["name"], entry.get("options") or {})


def load_imported(dest: Path, name: str) -> tuple[Benchmark, list[Run]]:
    """Read an imported benchmark and its runs (a minimal stand-in for the intake loader)."""
    folder = dest / "data" / "benchmarks" / name
    header = yaml.safe_load((folder / "benchmark.yaml").read_text(encoding="utf-8"))
    questions = tuple(
        json.loads(line) for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    )
    benchmark = Benchmark(
        name=header["name"],
        version=str(header["version"]),
        title=header["title"],
        description=header["description"],
        traditional={kind: _spec(entry) for kind, entry in header["graders"]["traditional"].items()},
        answer_key=tuple(_spec(entry) for entry in header["graders"]["answer_key"]),
        questions=questions,
    )
    runs = []
    for run_folder in sorted((dest / "submissions" / name).iterdir()):
        metadata = yaml.safe_load((run_folder / "metadata.yaml").read_text(encoding="utf-8"))
        lines = (run_folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
        runs.append(Run(name, run_folder.name, metadata, tuple(json.loads(line) for line in lines)))
    return benchmark, runs


def load_labels(dest: Path, name: str) -> pd.DataFrame | None:
    """Read an imported benchmark's human labels as the grading stage does (None without the file)."""
    path = dest / "data" / "benchmarks" / name / LABELS_FILE
    return load_human_labels(path) if path.is_file() else None


def import_and_analyse_paper(dest: Path) -> None:
    """Import the paper release as benchmark ``paper`` under ``dest`` and run ingest, grade and stats there."""
    runner = CliRunner()
    args = ["import", "autogenai", str(real_data() / OPEN_RELEASE), "--benchmark", "paper", "--dest", str(dest)]
    assert runner.invoke(main, args).exit_code == 0
    for stage in ("ingest", "grade", "stats"):
        result = runner.invoke(main, [stage, "--root", str(dest)])
        assert result.exit_code == 0, result.output
