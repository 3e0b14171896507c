"""Real data: the Multi-Benchmark easy-problems run (13 models × 30 questions × 10 rounds).

Reads the source's ``auto_eval_outputs/*.json`` directly, reproduces its
published ``final_stats.csv`` (``mean_score`` and the naive
``z_interval_error``) to 1e-9 and prints the question-clustered interval beside
it (run ``pytest -s`` to see the table).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from generator.stats import analyse

SOURCE = Path(__file__).resolve().parents[2] / "../shared/data/easy-problems/2024-09-13-Multi-Benchmark"
pytestmark = pytest.mark.skipif(
    not (SOURCE / "auto_eval_outputs").is_dir(),
    reason=f"real data not found at {SOURCE.resolve()} (shared data checkout absent)")


def load_run(path: Path) -> pd.DataFrame:
    """Return one auto_eval file as scored rows; the k-th answer to a question is round k."""
    raw = pd.DataFrame.from_dict(json.loads(path.read_text(encoding="utf-8")), orient="index")
    raw = raw.assign(order=raw.index.astype(int)).sort_values("order")
    run_id = path.stem.removeprefix("auto_eval-")
    score = raw["score"].astype(float)
    return pd.DataFrame({
        "run_id": run_id, "model": run_id, "question_id": raw["index"].astype(str),
        "category": raw["category"], "round": raw.groupby("index").cumcount(),
        "traditional": score, "answer_key": score,  # the source has no answer-key grading
    })


@pytest.fixture(scope="module")
def comparison() -> pd.DataFrame:
    scored = pd.concat([load_run(p) for p in sorted((SOURCE / "auto_eval_outputs").glob("*.json"))],
                       ignore_index=True)
    models = analyse(scored, n_boot=500).models.set_index("run_id")
    published = pd.read_csv(SOURCE / "tables_and_charts/final_stats.csv").set_index("model")
    out = pd.DataFrame({
        "published_mean": published["mean_score"], "mean": models["traditional_mean"],
        "published_half": published["z_interval_error"],
        "naive_half": models["traditional_naive_ci_high"] - models["traditional_naive_mean"],
        "clustered_low": models["traditional_ci_low"],
        "clustered_high": models["traditional_ci_high"],
        "n_questions": models["n_questions"], "n_answers": models["n_answers"],
    })
    out["clustered_half"] = (out["clustered_high"] - out["clustered_low"]) / 2
    out["ratio"] = out["clustered_half"] / out["naive_half"]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("\n", out.round(3).to_string())
        print("median clustered/naive half-width ratio:", round(float(out["ratio"].median()), 3))
    return out


def test_all_thirteen_models_are_matched(comparison):
    assert len(comparison) == 13
    assert not comparison.isna().any().any()
    assert (comparison["n_questions"] == 30).all() and (comparison["n_answers"] == 300).all()


def test_published_means_are_reproduced(comparison):
    np.testing.assert_allclose(comparison["mean"], comparison["published_mean"], rtol=0, atol=1e-9)


def test_published_naive_half_widths_are_reproduced(comparison):
    np.testing.assert_allclose(comparison["naive_half"], comparison["published_half"],
                               rtol=0, atol=1e-9)


def test_clustered_interval_is_much_wider_than_the_naive_one(comparison):
    # 10 rounds of the same 30 questions are not 300 independent answers.
    assert (comparison["ratio"] > 2).all()
    assert (comparison["clustered_low"] <= comparison["mean"]).all()
    assert (comparison["mean"] <= comparison["clustered_high"]).all()
