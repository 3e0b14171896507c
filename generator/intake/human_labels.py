"""``human_labels.csv``: the labels people gave answers, read and checked as an input.

The file has columns ``run``, ``question``, ``round`` and ``label``. A label is
``pass``/``fail`` (any case) or a number. A file whose numbers are all 0 or 1 is
read as pass/fail (1 = pass = 100); in any other file numbers are marks on
0–100, with partial credit between (e.g. 60), as people mark open answers. A
``1`` in such a file is refused: it could mean a pass or one point.

Validation reads the file here, so a broken file fails review; the ``human``
grader (:mod:`dualboard.grading.human`) turns the parsed labels into verdicts.
pandas is imported where a file is read: most benchmarks have no labels, and
checking submissions should not pay its start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from dualboard.errors import DualboardError

if TYPE_CHECKING:
    import pandas as pd

LABELS_FILE = "human_labels.csv"
"""File name of the labels, in ``data/benchmarks/<benchmark>/``."""
LABEL_COLUMNS = ("run", "question", "round", "label")
_WORDS = {"pass": 100.0, "fail": 0.0}
_BINARY = {0.0, 1.0}
"""Numbers of a pass/fail file, where 1 means a pass."""
MAX_MARK = 100.0
"""Top of the 0–100 scale that marks, and every score, are on."""

AnswerSlot = tuple[str, str, int]
"""Where an answer sits: ``(run_id, question_id, round)``, the key of a human label."""
HumanLabels = Mapping[AnswerSlot, float]
"""People's scores on 0–100 by answer: what the ``human`` grader reads."""


class HumanLabelsError(DualboardError):
    """``human_labels.csv`` cannot be read as labels; the message names the line and the fix."""


def _first(mask: pd.Series) -> int:
    """Return the position of the first True in ``mask``."""
    return int(mask.to_numpy().argmax())


def _check_labels(words: pd.Series, numbers: pd.Series, labels: pd.Series, source: str) -> None:
    """Refuse a label that is neither pass/fail nor a number on 0–100."""
    bad = ~words.isin(list(_WORDS)) & ~numbers.between(0.0, MAX_MARK)
    if bad.any():
        line = _first(bad)
        raise HumanLabelsError(
            f"{source}:{line + 2}: label {labels.iloc[line]!r} is not pass/fail, 0/1 or a mark on 0–100 — fix the label"
        )


def _check_no_ambiguous_one(numbers: pd.Series, labels: pd.Series, source: str) -> None:
    """Refuse a 1 in a file of marks on 0–100: it could mean a pass or one point."""
    ones = numbers.eq(1.0)
    if ones.any():
        mark = _first(numbers.notna() & ~numbers.isin(list(_BINARY)))
        raise HumanLabelsError(
            f"{source}:{_first(ones) + 2}: label 1 is ambiguous in a file of marks on 0–100 (line {mark + 2}: "
            f"{labels.iloc[mark]!r}) — write 100 or pass for a pass"
        )


def _label_scores(labels: pd.Series, source: str) -> list[float]:
    """Turn the ``label`` column into scores on 0–100, reading the file's scale from its numbers."""
    import pandas as pd

    words = labels.astype(str).str.strip().str.lower().reset_index(drop=True)
    numbers = pd.to_numeric(words.where(~words.isin(list(_WORDS))), errors="coerce")
    _check_labels(words, numbers, labels, source)
    binary = set(numbers.dropna()) <= _BINARY
    if not binary:
        _check_no_ambiguous_one(numbers, labels, source)
    scores = numbers * (MAX_MARK if binary else 1.0)
    return words.map(_WORDS).fillna(scores).astype(float).tolist()


def parse_human_labels(frame: pd.DataFrame, source: str = "human_labels.csv") -> pd.DataFrame:
    """Check a raw labels table and return ``run_id, question_id, round, score``.

    Raises
    ------
    HumanLabelsError
        On missing columns, bad labels or rounds, or a duplicate (run, question, round).
    """
    import pandas as pd

    from dualboard.scored_files import ANSWER_SLOT

    missing = [c for c in LABEL_COLUMNS if c not in frame.columns]
    if missing:
        raise HumanLabelsError(f"{source}: missing column(s) {missing} — the header must be run,question,round,label")
    rounds = pd.to_numeric(frame["round"], errors="coerce")
    if rounds.isna().any() or (rounds < 0).any() or (rounds % 1 != 0).any():
        line = int(rounds.isna().idxmax() if rounds.isna().any() else (rounds < 0).idxmax()) + 2
        raise HumanLabelsError(f"{source}:{line}: round must be an integer ≥ 0 — fix the round")
    out = pd.DataFrame(
        {
            "run_id": frame["run"].astype(str).to_numpy(),
            "question_id": frame["question"].astype(str).to_numpy(),
            "round": rounds.astype("int64").to_numpy(),
            "score": _label_scores(frame["label"], source),
        }
    )
    duplicated = out.duplicated(list(ANSWER_SLOT))
    if duplicated.any():
        line = int(duplicated.to_numpy().argmax()) + 2
        raise HumanLabelsError(f"{source}:{line}: a second label for the same run, question and round — keep one")
    return out


def load_human_labels(path: Path) -> pd.DataFrame:
    """Read ``human_labels.csv`` into ``run_id, question_id, round, score`` (0–100).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "human_labels.csv"
    >>> _ = p.write_text("run,question,round,label\\nr1,q1,0,pass\\nr1,q2,0,0\\nr1,q3,0,60\\n")
    >>> load_human_labels(p)["score"].tolist()
    [100.0, 0.0, 60.0]
    """
    import pandas as pd

    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return parse_human_labels(frame, str(path))


def labels_by_slot(labels: pd.DataFrame) -> dict[AnswerSlot, float]:
    """Key the scores of :func:`load_human_labels` by the answer they label.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"run_id": ["r1"], "question_id": ["q1"], "round": [0], "score": [100.0]})
    >>> labels_by_slot(frame)
    {('r1', 'q1', 0): 100.0}
    """
    from dualboard.scored_files import ANSWER_SLOT

    columns = labels[[*ANSWER_SLOT, "score"]]
    return {(str(r), str(q), int(n)): float(s) for r, q, n, s in columns.itertuples(index=False, name=None)}
