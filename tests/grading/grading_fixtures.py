"""Helpers shared by the grading tests: small benchmarks and runs, the real-data folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from dualboard.intake.human_labels import response_sha256
from dualboard.intake.models import Benchmark, GraderSpec, Run

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "easy-problems"


def make_benchmark(
    questions: list[dict[str, Any]],
    *,
    traditional: dict[str, GraderSpec] | None = None,
    answer_key: tuple[GraderSpec, ...] = (GraderSpec("rules"),),
) -> Benchmark:
    """Build a small benchmark; traditional defaults to mc_letter / recorded(judge)."""
    traditional = traditional or {
        "multiple_choice": GraderSpec("mc_letter"),
        "open": GraderSpec("recorded", {"field": "judge"}),
    }
    return Benchmark(
        name="demo",
        version="1",
        title="Demo",
        description="",
        traditional=traditional,
        answer_key=answer_key,
        questions=tuple(questions),
    )


def make_run(run_id: str, predictions: list[dict[str, Any]], model: str | None = None) -> Run:
    return Run(
        benchmark="demo",
        run_id=run_id,
        metadata={"model": model or run_id.upper()},
        predictions=tuple({"round": 0, **p} for p in predictions),
    )


def real_data() -> Path:
    """Return the shared easy-problems folder or skip the test with the reason."""
    if not DATA.is_dir():
        pytest.skip(f"real data absent: {DATA.resolve()} (the shared/ folder beside the repository)")
    return DATA


def labels_of(runs: list[Run], rows: dict[str, list]) -> pd.DataFrame:
    """A raw human_labels.csv table of ``rows`` (columns run, question, round, label), each label with the digest
    of the response its run holds (a label of an answer no run has gets a digest of the empty response)."""
    held = {(r.run_id, p["question_id"], int(p.get("round", 0))): p["response"] for r in runs for p in r.predictions}
    frame = pd.DataFrame(rows)
    slots = zip(frame["run"], frame["question"], frame["round"].astype(int), strict=True)
    return frame.assign(response_sha256=[response_sha256(held.get(slot, "")) for slot in slots])
