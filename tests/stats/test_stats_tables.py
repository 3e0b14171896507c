"""The output contract: fixed, documented columns; atomic writes; strict reads."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import dualboard.render
from dualboard.kappa import MIN_QUESTIONS as KAPPA_MIN_QUESTIONS
from dualboard.stats import COLUMNS, StatsTablesError, analyse, read_tables, write_tables
from dualboard.stats import tables as stats_tables
from dualboard.stats.agreement import agreement_table
from dualboard.stats.equator import equator_table
from dualboard.stats.models_table import models_table
from dualboard.stats.paired import TOO_FEW_QUESTIONS
from dualboard.stats.pairwise import pairwise_table
from dualboard.stats.power_table import power_table
from dualboard.stats.tables import LIMITS, N_BOOT, SEED, TABLES, fill_limits
from tests.stats.stats_builders import scored_run

METHODOLOGY = Path(dualboard.render.__file__).with_name("site_default") / "site_src" / "methodology.md"

DESIGN_MODELS = [
    "run_id",
    "model",
    "n_questions",
    "n_answers",
    "traditional_mean",
    "traditional_ci_low",
    "traditional_ci_high",
    "answer_key_mean",
    "answer_key_ci_low",
    "answer_key_ci_high",
    "diff_mean",
    "diff_ci_low",
    "diff_ci_high",
    "test",
    "p_value",
    "p_holm",
    "effect_dz",
    "effect_dz_ci_low",
    "effect_dz_ci_high",
    "n_discordant_up",
    "n_discordant_down",
    "rank_traditional",
    "rank_answer_key",
    "rank_ci_low",
    "rank_ci_high",
]
BRIEF_MODELS = [
    "traditional_naive_ci_low",
    "traditional_naive_ci_high",
    "answer_key_naive_ci_low",
    "answer_key_naive_ci_high",
    "traditional_coverage",
    "answer_key_coverage",
    "ranked_traditional",
    "ranked_answer_key",
    "n_questions_paired",
    "n_answers_paired",
    "n_answers_agree",
    "diff_se",
    "corr_question",
    "effect_dz_hedges",
    "ci_method_traditional",
    "ci_method_answer_key",
    "mde_points",
    "rank_ci_low_traditional",
    "rank_ci_high_traditional",
    "rank_ci_low_answer_key",
    "rank_ci_high_answer_key",
    "tied_first_traditional",
    "tied_first_answer_key",
    "bootstrap_rank_traditional",
    "bootstrap_rank_answer_key",
]
MAKERS = {
    "models": models_table,
    "pairwise": pairwise_table,
    "agreement": agreement_table,
    "power": power_table,
    "equator": equator_table,
}


@pytest.fixture(scope="module")
def tables(request):
    rng = np.random.default_rng(11)
    runs = []
    for i, p in enumerate([0.8, 0.6, 0.4]):
        x = 100.0 * (rng.random((24, 2)) < p)
        k = np.where(rng.random((24, 2)) < 0.85, x, 100 - x)
        runs.append(scored_run(f"run-{i}", x, k, categories=["A", "B"] * 12))
    scored = pd.concat(runs)
    verdicts = pd.concat(
        [
            scored.assign(grader="mc", role="traditional", score=scored["traditional"]),
            scored.assign(grader="rules", role="answer_key", score=scored["answer_key"]),
            scored.assign(grader="human", role="human", score=scored["answer_key"]),
        ]
    )
    return analyse(scored, verdicts=verdicts, n_boot=200)


@pytest.mark.parametrize("name", TABLES)
def test_every_column_is_documented_and_every_documented_column_exists(tables, name):
    assert list(getattr(tables, name).columns) == list(COLUMNS[name])
    assert all(isinstance(v, str) and len(v) > 10 for v in COLUMNS[name].values())


def test_column_meanings_state_the_limits_the_code_applies(monkeypatch):
    raw = yaml.safe_load(Path(stats_tables.__file__).with_name("columns.yaml").read_text(encoding="utf-8"))
    text = "\n".join(meaning for columns in raw.values() for meaning in columns.values())
    assert re.findall(r"[<≥] ?\d+ questions|n < \d+", text) == [], "write the limit as a {NAME} of LIMITS"
    assert set(re.findall(r"\{(\w+)\}", text)) == set(LIMITS)
    assert not [m for columns in COLUMNS.values() for m in columns.values() if "{" in m]
    assert f"permutation_exact (n < {TOO_FEW_QUESTIONS})" in COLUMNS["models"]["test"]
    assert f"empty with < {TOO_FEW_QUESTIONS} questions judged" in COLUMNS["models"]["tied_first_traditional"]
    assert f"(≥ {KAPPA_MIN_QUESTIONS} questions" in COLUMNS["agreement"]["estimable"]
    monkeypatch.setitem(LIMITS, "TOO_FEW_QUESTIONS", 12)
    assert "(n < 12)" in fill_limits(raw["models"]["test"])


def test_the_methodology_page_states_the_limits_the_code_applies():
    """The page is prose a reader trusts: each limit it states is the one the statistics use."""
    page = " ".join(METHODOLOGY.read_text(encoding="utf-8").split())
    for sentence in (
        f"Under **{TOO_FEW_QUESTIONS} questions**, estimates and intervals are still shown",
        f"With under {TOO_FEW_QUESTIONS} questions there are no rank intervals",
        f"κ is reported only on at least {KAPPA_MIN_QUESTIONS} questions",
        f"Every bootstrap uses B = {N_BOOT:,} resamples of questions",
    ):
        assert sentence in page, f"methodology.md should say: {sentence}"


def test_models_has_design_columns_first_then_the_briefs(tables):
    cols = list(tables.models.columns)
    assert cols[: len(DESIGN_MODELS)] == DESIGN_MODELS
    assert set(BRIEF_MODELS) <= set(cols)


@pytest.mark.parametrize("name", MAKERS)
def test_the_making_function_names_its_columns_in_its_docstring(name):
    doc = inspect.getdoc(MAKERS[name])
    assert f'COLUMNS["{name}"]' in doc
    missing = [c for c in COLUMNS[name] if f"``{c}``" not in doc]
    assert missing == []


def test_write_then_read_round_trips(tables, tmp_path):
    paths = write_tables(tables, tmp_path)
    assert sorted(p.name for p in paths) == sorted([f"{t}.csv" for t in TABLES] + ["notes.json"])
    back = read_tables(tmp_path)
    assert back.notes == tables.notes
    for name in TABLES:
        a, b = getattr(tables, name), getattr(back, name)
        assert list(a.columns) == list(b.columns)
        for col in a.columns:
            if pd.api.types.is_numeric_dtype(a[col]) and not pd.api.types.is_bool_dtype(a[col]):
                np.testing.assert_allclose(a[col].astype(float), b[col].astype(float), rtol=1e-15)
            else:
                left = a[col].astype("string").fillna("").str.replace("nan", "")
                right = b[col].astype("string").fillna("")
                assert left.tolist() == right.tolist(), col
    assert not list(tmp_path.glob("*.tmp"))


def test_read_names_the_missing_file_and_the_fix(tmp_path):
    with pytest.raises(StatsTablesError, match=r"models.csv.*run `dualboard stats` \(or `dualboard build`\)"):
        read_tables(tmp_path)


def test_read_refuses_another_format_and_names_the_command(tables, tmp_path):
    write_tables(tables, tmp_path)
    (tmp_path / "notes.json").write_text('{"format_version": 0, "notes": []}', encoding="utf-8")
    with pytest.raises(StatsTablesError, match=r"notes.json: format_version 0, .* run `dualboard stats` again"):
        read_tables(tmp_path)


def test_same_seed_same_tables_and_the_seed_is_published(tables):
    assert tables.notes[0] == f"Bootstrap: B = 200 resamples of questions, seed {SEED}."
    scored = scored_run(
        "r", 100.0 * (np.arange(60).reshape(30, 2) % 3 == 0), 100.0 * (np.arange(60).reshape(30, 2) % 2 == 0)
    )
    verdicts = pd.concat([scored.assign(grader=g, role=g, score=scored[g]) for g in ("traditional", "answer_key")])
    first, second = (analyse(scored, verdicts=verdicts, n_boot=300) for _ in range(2))
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(first, name), getattr(second, name))


def test_names_that_pandas_reads_as_missing_are_read_back_as_written(tmp_path):
    """A model called "NA" or a run called "null" keeps its name through models.csv and pairwise.csv (pandas
    reads such words as missing by default); the pages and the answers' data files then show the same name."""
    rng = np.random.default_rng(3)
    runs = []
    for run_id, model in (("nan", "NA"), ("null", "None"), ("r3", "n/a")):
        x = 100.0 * (rng.random((12, 1)) < 0.6)
        runs.append(scored_run(run_id, x, 100 - x).assign(model=model))
    write_tables(analyse(pd.concat(runs, ignore_index=True), n_boot=50, seed=1), tmp_path)
    back = read_tables(tmp_path)
    assert back.models.set_index("run_id")["model"].to_dict() == {"nan": "NA", "null": "None", "r3": "n/a"}
    assert set(back.pairwise["run_a"]) | set(back.pairwise["run_b"]) == {"nan", "null", "r3"}
