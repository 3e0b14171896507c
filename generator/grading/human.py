"""``human``: labels written by people, the gold standard graders are checked against.

``human_labels.csv`` has columns ``run``, ``question``, ``round`` and
``label``; a label is 0/1, 0/100 or pass/fail (any case).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from generator.grading.errors import GradingInputError
from generator.grading.verdict import Grader, Verdict

LABEL_COLUMNS = ("run", "question", "round", "label")
_LABEL_SCORES = {"1": 100.0, "100": 100.0, "pass": 100.0, "0": 0.0, "fail": 0.0}


@dataclass(frozen=True)
class HumanGrader(Grader):
    """Turn a human label carried by the prediction (``human_label``) into a verdict.

    :func:`generator.grading.tables.grade_benchmark` attaches the labels from
    ``human_labels.csv``; answers without a label get no human verdict row.
    """

    name: ClassVar[str] = "human"
    version: ClassVar[str] = "1"
    default_role: ClassVar[str] = "human"
    cached: ClassVar[bool] = False

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        score = prediction.get("human_label")
        if score is None:
            return Verdict(None, "none", "no human label")
        return Verdict(float(score), "ok", f"human label {score:g}")


def _label_score(value: object, line: int, path: str) -> float:
    text = str(value).strip().lower()
    if text.endswith(".0"):
        text = text[:-2]
    if text not in _LABEL_SCORES:
        raise GradingInputError(f"{path}:{line}: label {value!r} is not one of 0/1, 0/100 or pass/fail — fix the label")
    return _LABEL_SCORES[text]


def parse_human_labels(frame: pd.DataFrame, source: str = "human_labels.csv") -> pd.DataFrame:
    """Check a raw labels table and return ``run_id, question_id, round, score``.

    Raises
    ------
    GradingInputError
        On missing columns, bad labels or rounds, or a duplicate (run, question, round).
    """
    missing = [c for c in LABEL_COLUMNS if c not in frame.columns]
    if missing:
        raise GradingInputError(f"{source}: missing column(s) {missing} — the header must be run,question,round,label")
    rounds = pd.to_numeric(frame["round"], errors="coerce")
    if rounds.isna().any() or (rounds < 0).any() or (rounds % 1 != 0).any():
        line = int(rounds.isna().idxmax() if rounds.isna().any() else (rounds < 0).idxmax()) + 2
        raise GradingInputError(f"{source}:{line}: round must be an integer ≥ 0 — fix the round")
    out = pd.DataFrame(
        {
            "run_id": frame["run"].astype(str).to_numpy(),
            "question_id": frame["question"].astype(str).to_numpy(),
            "round": rounds.astype("int64").to_numpy(),
            "score": [_label_score(v, i + 2, source) for i, v in enumerate(frame["label"])],
        }
    )
    duplicated = out.duplicated(["run_id", "question_id", "round"])
    if duplicated.any():
        line = int(duplicated.to_numpy().argmax()) + 2
        raise GradingInputError(f"{source}:{line}: a second label for the same run, question and round — keep one")
    return out


def load_human_labels(path: Path) -> pd.DataFrame:
    """Read ``human_labels.csv`` into ``run_id, question_id, round, score`` (0 or 100).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "human_labels.csv"
    >>> _ = p.write_text("run,question,round,label\\nr1,q1,0,pass\\nr1,q2,0,0\\n")
    >>> load_human_labels(p)["score"].tolist()
    [100.0, 0.0]
    """
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return parse_human_labels(frame, str(path))
