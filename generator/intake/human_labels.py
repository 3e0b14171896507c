"""``human_labels.csv``: the labels people gave answers, read and checked as an input.

The file has columns ``run``, ``question``, ``round``, ``label`` and
``response_sha256``: the digest of the response the label judged
(:func:`response_sha256`), so a label applies to that response only. An answer
whose response differs (a run replaced under the same id) keeps no label: it
awaits one. A file without the column is refused, with the command that adds
it (``dualboard label-digests``). A label is
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

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dualboard.errors import DualboardError, Finding

if TYPE_CHECKING:
    import pandas as pd

    from dualboard.intake.models import Run

LABELS_FILE = "human_labels.csv"
"""File name of the labels, in ``data/benchmarks/<benchmark>/``."""
LABELLER_DIR = "human_labels"
"""The folder of ``data/benchmarks/<benchmark>/`` holding one file per labeller, ``<labeller>.csv``, which
``dualboard label`` appends to: two labellers never edit one file, so their pull requests never conflict."""
DESIGN_COLUMNS = ("time", "stratum", "grader_versions")
"""What a labeller's file records beside :data:`LABEL_COLUMNS`: when (UTC, ISO 8601), the sampling stratum the
answer was drawn from, and the versions of the graders whose verdicts made the strata."""
DIGEST = "response_sha256"
"""The column holding the digest of the response a label judged (:func:`response_sha256`)."""
LABEL_COLUMNS = ("run", "question", "round", "label", DIGEST)
_WORDS = {"pass": 100.0, "fail": 0.0}
_BINARY = {0.0, 1.0}
"""Numbers of a pass/fail file, where 1 means a pass."""
MAX_MARK = 100.0
"""Top of the 0–100 scale that marks, and every score, are on."""

AnswerSlot = tuple[str, str, int]
"""Where an answer sits: ``(run_id, question_id, round)``, the key of a human label."""
HumanLabels = Mapping[AnswerSlot, float]
"""People's scores on 0–100 by answer: what the ``human`` grader reads."""
LabelRecords = Mapping[AnswerSlot, tuple[float, str]]
"""People's scores by answer, each with the :func:`response_sha256` of the response it judged."""
_HEX64 = r"[0-9a-f]{64}"


def response_sha256(response: str) -> str:
    """The digest a label stores of the response it judged: SHA-256 of the ``response`` text of
    predictions.jsonl (as JSON decodes it, nothing trimmed or normalised), UTF-8 encoded, in lower-case hex.

    Examples
    --------
    >>> response_sha256("Final answer: 4")[:16]
    '9b1504e8eafb7f6c'
    """
    import hashlib

    return hashlib.sha256(str(response).encode("utf-8", "surrogatepass")).hexdigest()


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
    """Check a raw labels table and return ``run_id, question_id, round, score, response_sha256``.

    Raises
    ------
    HumanLabelsError
        On missing columns, bad labels or rounds, or a duplicate (run, question, round).
    """
    import pandas as pd

    from dualboard.scored_files import ANSWER_SLOT

    missing = [c for c in LABEL_COLUMNS if c not in frame.columns]
    if missing == [DIGEST]:
        raise HumanLabelsError(
            f"{source}: no {DIGEST} column: a label must name the response it judged, or it would pass to whatever "
            "response later takes that run id — run `dualboard label-digests BENCHMARK` once, after checking that "
            "the runs are those people labelled"
        )
    if missing:
        raise HumanLabelsError(f"{source}: missing column(s) {missing} — the header must be {','.join(LABEL_COLUMNS)}")
    rounds = pd.to_numeric(frame["round"], errors="coerce")
    if rounds.isna().any() or (rounds < 0).any() or (rounds % 1 != 0).any():
        line = int(rounds.isna().idxmax() if rounds.isna().any() else (rounds < 0).idxmax()) + 2
        raise HumanLabelsError(f"{source}:{line}: round must be an integer ≥ 0 — fix the round")
    digests = frame[DIGEST].astype(str)
    bad = ~digests.str.fullmatch(_HEX64)
    if bad.any():
        raise HumanLabelsError(
            f"{source}:{_first(bad) + 2}: {DIGEST} {digests[bad].iloc[0][:80]!r} is not a SHA-256 in lower-case hex — "
            "write the digest of the labelled response (`dualboard label-digests BENCHMARK`)"
        )
    out = pd.DataFrame(
        {
            "run_id": frame["run"].astype(str).to_numpy(),
            "question_id": frame["question"].astype(str).to_numpy(),
            "round": rounds.astype("int64").to_numpy(),
            "score": _label_scores(frame["label"], source),
            DIGEST: digests.to_numpy(),
        }
    )
    duplicated = out.duplicated(list(ANSWER_SLOT))
    if duplicated.any():
        line = int(duplicated.to_numpy().argmax()) + 2
        raise HumanLabelsError(f"{source}:{line}: a second label for the same run, question and round — keep one")
    return out


def load_human_labels(path: Path) -> pd.DataFrame:
    """Read ``human_labels.csv`` into ``run_id, question_id, round, score`` (0–100) ``, response_sha256``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "human_labels.csv"
    >>> sha = response_sha256("Final answer: 4")
    >>> _ = p.write_text(f"run,question,round,label,response_sha256\\nr1,q1,0,pass,{sha}\\nr1,q2,0,0,{sha}\\n"
    ...                  f"r1,q3,0,60,{sha}\\n")
    >>> load_human_labels(p)["score"].tolist()
    [100.0, 0.0, 60.0]
    """
    import pandas as pd

    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return parse_human_labels(frame, str(path))


LABELLER_RULE = "lower-case letters, digits, '_' or '-' (at most 64, starting with a letter or digit)"
_LABELLER = r"[a-z0-9][a-z0-9_-]{0,63}"


def is_labeller(name: str) -> bool:
    """Whether ``name`` is a labeller's name (:data:`LABELLER_RULE`): one that is safe, and plain, as a file name.

    Examples
    --------
    >>> is_labeller("ada"), is_labeller("eve.csv"), is_labeller("../x"), is_labeller("Eve")
    (True, False, False, False)
    """
    import re

    return re.fullmatch(_LABELLER, name) is not None


def label_files(folder: Path) -> list[str]:
    """The label files of a benchmark folder, relative to it: ``human_labels.csv``, then each labeller's file.

    Every entry of the labellers' folder is listed, a link or a wrongly named file included, so that reading it
    refuses it with a finding (:func:`labeller_of`) rather than skipping it unseen; only hidden entries
    (``.gitkeep``) are left out, which nothing reads.
    """
    import os

    names = [LABELS_FILE] if os.path.lexists(folder / LABELS_FILE) else []
    labellers = folder / LABELLER_DIR
    if labellers.is_dir() and not labellers.is_symlink():
        names += sorted(f"{LABELLER_DIR}/{e.name}" for e in labellers.iterdir() if not e.name.startswith("."))
    return names


def labeller_of(name: str, source: str | None = None) -> str:
    """The labeller a label file belongs to ("" for ``human_labels.csv``); raise for a name that is none.

    Examples
    --------
    >>> labeller_of("human_labels/ada.csv"), labeller_of("human_labels.csv")
    ('ada', '')
    """
    if name == LABELS_FILE:
        return ""
    stem = name.removeprefix(f"{LABELLER_DIR}/").removesuffix(".csv")
    if not name.endswith(".csv") or not is_labeller(stem):
        raise HumanLabelsError(
            f"{source or name}: not a labeller's file — name it {LABELLER_DIR}/<labeller>.csv, the labeller's name in "
            f"{LABELLER_RULE}"
        )
    return stem


def read_label_file(text: str, name: str, source: str) -> pd.DataFrame:
    """Parse one label file's text (``name`` relative to the benchmark folder, ``source`` for messages) into
    :func:`parse_human_labels`' columns plus ``labeller``, ``time`` and ``stratum``."""
    import pandas as pd

    labeller = labeller_of(name, source)
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    parsed = parse_human_labels(frame, source)
    design = {c: frame[c].to_numpy() if c in frame.columns else "" for c in ("time", "stratum")}
    return parsed.assign(labeller=labeller, **design)


def load_labels(folder: Path) -> pd.DataFrame | None:
    """Every label of a benchmark folder (:func:`label_files`), one row per label and answer, or None if none.

    Columns: those of :func:`parse_human_labels`, ``labeller`` ("" for ``human_labels.csv``), ``time`` and
    ``stratum`` (empty where the file does not record them). Links are refused (:mod:`dualboard.safe_read`).
    """
    import pandas as pd

    from dualboard.safe_read import read_regular

    frames = [
        read_label_file(read_regular(folder / name, root=folder).decode("utf-8"), name, str(folder / name))
        for name in label_files(folder)
    ]
    return pd.concat(frames, ignore_index=True) if frames else None


def first_labels(labels: pd.DataFrame) -> pd.DataFrame:
    """One label per answer, what the ``human`` grader reads: ``human_labels.csv``'s, else the earliest by time
    (a second labeller's label of the same answer measures people against people, and is not the verdict)."""
    from dualboard.scored_files import ANSWER_SLOT

    ordered = labels.assign(_file=labels["labeller"].ne("")).sort_values(["_file", "time", "labeller"], kind="stable")
    return ordered.drop_duplicates(list(ANSWER_SLOT), keep="first").drop(columns="_file").sort_index()


def labels_by_slot(labels: pd.DataFrame) -> dict[AnswerSlot, tuple[float, str]]:
    """Key the scores of :func:`load_human_labels`, with the digest of the response each judged, by answer.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"run_id": ["r1"], "question_id": ["q1"], "round": [0], "score": [100.0],
    ...                       "response_sha256": ["ab" * 32]})
    >>> labels_by_slot(frame)[("r1", "q1", 0)][0]
    100.0
    """
    from dualboard.scored_files import ANSWER_SLOT

    columns = labels[[*ANSWER_SLOT, "score", DIGEST]]
    return {
        (str(r), str(q), int(n)): (float(s), str(d)) for r, q, n, s, d in columns.itertuples(index=False, name=None)
    }


def stale_label_findings(path: Path, runs: Sequence[Run]) -> list[Finding]:
    """One finding per label of ``path`` (``human_labels.csv``) naming an answer of ``runs`` whose response is not
    the one it judged: the grading does not apply it, and the answer awaits a label."""
    import pandas as pd

    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    labels = parse_human_labels(frame, str(path))
    by_run = {run.run_id: run for run in runs}
    mine = labels[labels["run_id"].isin(list(by_run))]
    findings = []
    for run_id, rows in mine.groupby("run_id", sort=True):
        held = {
            (str(p.get("question_id")), int(p.get("round", 0) or 0)): response_sha256(p.get("response", ""))
            for p in by_run[run_id].predictions
        }
        for line, question, round_, digest in zip(rows.index + 2, rows["question_id"], rows["round"], rows[DIGEST]):
            if held.get((question, int(round_)), digest) != digest:
                findings.append(_stale_finding(str(path), int(line), run_id, question, int(round_)))
    return findings


def _stale_finding(file: str, line: int, run_id: str, question: str, round_: int) -> Finding:
    return Finding(
        file,
        line,
        DIGEST,
        f"run {run_id[:100]!r} question {question[:100]!r} round {round_}: the run's response is not the one "
        "this label judged, so the label is not applied (the answer awaits a label)",
        "a changed run takes a new run id (a maintainer runs `dualboard remove`); or label the new response "
        "and write its digest here",
    )


def add_digests(path: Path, submissions: Path) -> int:
    """Give every label of ``path`` (a ``human_labels.csv`` without :data:`DIGEST`) the digest of the response its
    run holds now, read from ``submissions`` (``submissions/<benchmark>/``); rewrite the file; return the labels.

    For a file written before labels named their response: whoever runs it vouches that each labelled run is
    still the one people labelled. A label whose answer no run holds stops it, and nothing is written.
    """
    import pandas as pd

    from dualboard.atomic import atomic_write_text
    from dualboard.intake.untrusted import iter_json_lines
    from dualboard.safe_read import read_regular

    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if DIGEST in frame.columns:
        raise HumanLabelsError(f"{path}: already has a {DIGEST} column — nothing to add")
    responses: dict[tuple[str, str, str], str] = {}
    for run_id in sorted(set(frame.get("run", ()))):
        data = read_regular(submissions / run_id / "predictions.jsonl", root=submissions)
        for _, row, _problem in iter_json_lines(io.BytesIO(data), run_id):
            if isinstance(row, dict):
                key = (run_id, str(row.get("question_id")), str(int(row.get("round", 0) or 0)))
                responses[key] = response_sha256(row.get("response", ""))
    keys = list(zip(frame["run"], frame["question"], frame["round"].str.strip(), strict=True))
    missing = [i for i, key in enumerate(keys) if key not in responses]
    if missing:
        run, question, round_ = keys[missing[0]]
        raise HumanLabelsError(
            f"{path}:{missing[0] + 2}: run {run!r} has no answer to question {question!r} round {round_} — "
            "remove the line, or restore the run people labelled"
        )
    frame[DIGEST] = [responses[key] for key in keys]
    parse_human_labels(frame, str(path))
    atomic_write_text(path, frame.to_csv(index=False, lineterminator="\n"))
    return len(frame)
