"""`dualboard import autogenai` through the CLI: the imported folder validates and builds."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

from dualboard.cli import main
from tests.importers.import_fixtures import OPEN_RELEASE, import_and_analyse_paper, real_data


def test_import_then_validate_accepts_every_run(tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        main,
        ["import", "autogenai", str(real_data() / OPEN_RELEASE), "--benchmark", "easy-open", "--dest", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    assert "30 questions, 7 runs, 210 answers, 210 human labels into" in result.output
    assert (
        "warning: question 6 of gpt-4-turbo (round 0): the answer in auto_eval-gpt-4-turbo.json differs"
        in result.stderr
    )
    result = runner.invoke(main, ["validate", "--root", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output == "valid: 7 runs, 210 answers\n", "no warnings: provenance.jsonl is an expected run file"


def test_import_refuses_to_overwrite_without_the_flag(tmp_path):
    runner = CliRunner()
    args = ["import", "autogenai", str(real_data() / OPEN_RELEASE), "--benchmark", "easy-open", "--dest", str(tmp_path)]
    assert runner.invoke(main, args).exit_code == 0
    again = runner.invoke(main, args)
    assert again.exit_code == 1
    assert "--overwrite" in again.output


def test_imported_paper_release_grades_and_analyses_per_model(tmp_path):
    """ingest → grade → stats on the paper release: the authors' marks are the answer key, one paired test per run."""
    import_and_analyse_paper(tmp_path)
    stats = tmp_path / "build" / "stats" / "paper"
    models = pd.read_csv(stats / "models.csv").set_index("model")
    assert len(models) == 7 and set(models.test) == {"paired_t"} and (models.n_questions == 30).all()
    assert models.loc["gpt-4-turbo", ["traditional_mean", "answer_key_mean"]].tolist() == pytest.approx(
        [57.333, 38.0], abs=1e-3
    )
    assert (models.diff_ci_high < 0).all() and (models.p_holm < 0.05).all()
    agreement = pd.read_csv(stats / "agreement.csv")
    assert {("recorded", "human"), ("rules", "human")} <= set(zip(agreement.grader_a, agreement.grader_b))
