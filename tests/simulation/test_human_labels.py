"""Simulated human labels: the true answer-key verdict of the labelled runs, written deterministically."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from generator.errors import DualboardError
from generator.grading import load_human_labels
from generator.simulation.runs import human_labels, load_labelled_runs, simulate_demo

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "benchmarks" / "demo"


def test_committed_labels_are_seed_7_output(tmp_path: Path) -> None:
    shutil.copytree(DEMO, tmp_path / "data" / "benchmarks" / "demo")
    (tmp_path / "data" / "benchmarks" / "demo" / "human_labels.csv").unlink()
    simulate_demo(tmp_path, seed=7)
    written = (tmp_path / "data" / "benchmarks" / "demo" / "human_labels.csv").read_bytes()
    assert written == (DEMO / "human_labels.csv").read_bytes(), "regenerate with `dualboard simulate`"


def test_labels_cover_every_answer_of_the_labelled_runs() -> None:
    runs = load_labelled_runs(DEMO / "simulated_models.yaml")
    labels = pd.read_csv(DEMO / "human_labels.csv")
    assert list(labels.columns) == ["run", "question", "round", "label"]
    assert tuple(labels["run"].unique()) == runs and len(runs) == 2
    assert set(labels["label"]) <= {0, 1}
    assert len(load_human_labels(DEMO / "human_labels.csv")) == len(labels)


def test_unknown_labelled_run_is_an_error() -> None:
    with pytest.raises(DualboardError, match="human_labelled_runs"):
        human_labels([], ["nope"])
