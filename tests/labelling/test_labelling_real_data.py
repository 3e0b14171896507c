"""The labelling design on the paper release (2024-04-28), whose answers the authors marked by hand.

With the authors' marks moved aside, a labeller who gives each drawn answer the authors' mark labels a sample;
the design's κ of the judge (``recorded``, the traditional grading) against people must cover the κ of all
210 marks, which the design never saw whole.
"""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from dualboard.intake.human_labels import LABELS_FILE
from dualboard.kappa import PASS_MARK, kappa_from_counts
from dualboard.labelling.session import open_session
from dualboard.scored_files import VERDICTS, read_table
from tests.importers.import_fixtures import OPEN_RELEASE, real_data
from tests.labelling.boards import dualboard

LABELS = 60


@pytest.mark.slow
def test_labelling_a_sample_reproduces_the_authors_marks_kappa(tmp_path) -> None:
    dualboard_import = ["import", "autogenai", str(real_data() / OPEN_RELEASE), "--benchmark", "paper", "--dest"]
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "dualboard", *dualboard_import, str(tmp_path)], check=True, capture_output=True
    )
    folder = tmp_path / "data" / "benchmarks" / "paper"
    marks = pd.read_csv(folder / LABELS_FILE, dtype=str)
    (folder / LABELS_FILE).unlink()
    config = yaml.safe_load((folder / "benchmark.yaml").read_text(encoding="utf-8"))
    config["graders"]["answer_key"] = [{"name": "rules"}]  # people's grading waits for their first labels
    (folder / "benchmark.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    dualboard(tmp_path, "ingest")
    dualboard(tmp_path, "grade", "--no-progress")

    oracle = dict(zip(zip(marks["question"], marks["response_sha256"]), marks["label"].astype(float), strict=True))
    session, _ = open_session(tmp_path / "data", tmp_path / "build" / "scored", "paper", "authors")
    for _ in range(LABELS):
        item = session.next()
        mark = oracle[(item["question_id"], item["response_sha256"])]
        session.label(item["question_id"], item["response_sha256"], "pass" if mark >= PASS_MARK else "fail")
    judge = next(row for row in session.progress()["agreement"] if row["grader"] == "recorded")

    verdicts = read_table(VERDICTS, tmp_path / "build" / "scored", "paper")
    recorded = verdicts[verdicts["grader"].eq("recorded")].merge(
        marks.rename(columns={"run": "run_id", "question": "question_id"}).assign(
            round=lambda f: f["round"].astype(int)
        ),
        on=["run_id", "question_id", "round"],
    )
    judge_pass, people_pass = recorded["score"] >= PASS_MARK, recorded["label"].astype(float) >= PASS_MARK
    counts = [(judge_pass & people_pass).sum(), (judge_pass & ~people_pass).sum()]
    counts += [(~judge_pass & people_pass).sum(), (~judge_pass & ~people_pass).sum()]
    every_mark = float(kappa_from_counts(counts))
    assert len(recorded) == 210 and 0.3 < every_mark < 0.9
    assert judge["n_labels"] == LABELS and judge["estimable"]
    assert judge["kappa_ci_low"] <= every_mark <= judge["kappa_ci_high"], (judge, every_mark)
    assert judge["kappa_ci_high"] - judge["kappa_ci_low"] < 0.5
