"""Simulated human labels: fallible people labelling the labelled runs, written deterministically."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from dualboard.errors import DualboardError
from dualboard.intake.benchmark import load_benchmark
from dualboard.intake.human_labels import load_human_labels
from dualboard.simulation import (
    DEMO_SEED,
    human_labels,
    load_answer_texts,
    load_labelled_runs,
    load_simulated_models,
    simulate_demo,
    simulate_run,
)
from dualboard.simulation.models import MODELS_FILE
from tests.conftest import DEMO

MODELS = DEMO / MODELS_FILE


def test_committed_labels_are_the_demo_seed_output(tmp_path: Path) -> None:
    shutil.copytree(DEMO, tmp_path / "data" / "benchmarks" / "demo")
    (tmp_path / "data" / "benchmarks" / "demo" / "human_labels.csv").unlink()
    simulate_demo(tmp_path)
    written = (tmp_path / "data" / "benchmarks" / "demo" / "human_labels.csv").read_bytes()
    assert written == (DEMO / "human_labels.csv").read_bytes(), "regenerate with `dualboard simulate`"


def test_labels_cover_every_answer_of_the_labelled_runs() -> None:
    runs = load_labelled_runs(MODELS)
    labels = pd.read_csv(DEMO / "human_labels.csv")
    assert list(labels.columns) == ["run", "question", "round", "label", "response_sha256"]
    assert tuple(labels["run"].unique()) == runs and len(runs) == 2
    assert set(labels["label"]) <= {0, 1}
    assert len(load_human_labels(DEMO / "human_labels.csv")) == len(labels)


def test_labels_disagree_with_the_key_at_the_labellers_error_rate() -> None:
    """The committed labels contradict the ideal verdict on readable answers at ``human_error_rate``, no more."""
    benchmark = load_benchmark(DEMO)
    models = {m.run_id: m for m in load_simulated_models(MODELS)}
    labels = pd.read_csv(DEMO / "human_labels.csv")
    for run_id, written in labels.groupby("run", sort=False):
        truth = simulate_run(benchmark, models[run_id], seed=DEMO_SEED, answer_texts=load_answer_texts(MODELS)).truth
        assert written["label"].tolist() == (truth["human"] == 100).astype(int).tolist()
        readable = truth[~truth["malformed"]]
        wrong = int((readable["human"] != readable["ideal_answer_key"]).sum())
        assert (truth.loc[truth["malformed"], "human"] == 0).all()  # nobody passes an empty answer
        assert wrong > 0, run_id
        assert stats.binomtest(wrong, len(readable), models[run_id].human_error_rate).pvalue > 0.001, (run_id, wrong)


def test_unknown_labelled_run_is_an_error() -> None:
    with pytest.raises(DualboardError, match="human_labelled_runs"):
        human_labels([], ["nope"])
