"""One labeller's session: the queue of answers to label, their labels appended to the labeller's own file.

Reads what the grading stage wrote (``build/scored/``: every answer, its response and each grader's
verdict) and the benchmark's labels (:func:`~dualboard.intake.human_labels.load_labels`); writes only
``data/benchmarks/<benchmark>/human_labels/<labeller>.csv``. Each label is one ``os.write`` of whole
lines in append mode, synced to disk, so a crash loses at most the label being written; an unfinished
last line left by one is cut off when the next session opens the file. Undo rewrites the file
atomically without the labeller's last label.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dualboard.atomic import atomic_write_text
from dualboard.errors import DualboardError
from dualboard.intake.human_labels import (
    DESIGN_COLUMNS,
    LABEL_COLUMNS,
    LABELLER_DIR,
    LABELLER_RULE,
    MAX_MARK,
    is_labeller,
    load_labels,
)
from dualboard.intake.models import Benchmark
from dualboard.labelling.design import (
    HUMAN,
    ITEM,
    SLOT,
    agreement_with_people,
    answer_items,
    draw_order,
    graded_answers,
    kappa_sentence,
    next_item,
    primary_labels,
)
from dualboard.names import is_name

OVERLAP = 0.1
"""The share of items a second labeller also labels, by default: people-vs-people agreement is measured there."""
FILE_COLUMNS = (*LABEL_COLUMNS, *DESIGN_COLUMNS)


class LabellingError(DualboardError):
    """The session cannot start or a label cannot be taken; the message says what to do."""


class BadLabelError(LabellingError):
    """A label that is not pass, fail or a mark this benchmark takes."""


def labeller_file(folder: Path, labeller: str) -> Path:
    """``<folder>/human_labels/<labeller>.csv`` of a benchmark folder, for a labeller name that is safe as a file."""
    if not is_labeller(labeller):
        raise LabellingError(f"labeller {labeller[:60]!r} is not a usable name — use {LABELLER_RULE}, e.g. ada")
    return folder / LABELLER_DIR / f"{labeller}.csv"


def repair_tail(path: Path) -> int:
    """Cut an unfinished last line (a crash while writing) off ``path``; return the bytes cut."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise LabellingError(f"{path} is a link or not a file — remove it; labels are written to a plain file only")
    if not path.is_file():
        return 0
    data = path.read_bytes()
    keep = data.rfind(b"\n") + 1
    if keep == len(data):
        return 0
    atomic_write_text(path, data[:keep].decode("utf-8"))
    return len(data) - keep


def csv_lines(rows: list[dict[str, Any]], header: bool) -> str:
    """``rows`` as CSV text in :data:`FILE_COLUMNS` order, with the header first when asked."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=FILE_COLUMNS, lineterminator="\n")
    if header:
        writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def append_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """Append ``rows`` to ``path`` in one write, synced; a new file is written whole, header first."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, csv_lines(rows, header=True))
        return
    data = csv_lines(rows, header=False).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def label_text(verdict: object, partial: bool = True) -> str:
    """What a label is written as: ``pass``, ``fail``, or a whole mark on 0–100 where the benchmark gives
    ``partial`` credit (a 1 could read as a pass: refused).

    Examples
    --------
    >>> label_text("pass"), label_text(60), label_text(100.0), label_text(0, partial=False)
    ('pass', '60', 'pass', 'fail')
    """
    if verdict in ("pass", "fail") and isinstance(verdict, str):
        return verdict
    if isinstance(verdict, bool) or not isinstance(verdict, int | float):
        raise BadLabelError(f"label {str(verdict)[:40]!r} is not pass, fail or a mark on 0–100")
    if not (0 <= verdict <= MAX_MARK and float(verdict).is_integer()) or verdict == 1:
        raise BadLabelError(
            f"mark {str(verdict)[:20]} is not a whole mark on 0–100 other than 1 (which would read as a pass) — "
            "give 0, 2…100"
        )
    if not partial and verdict not in (0, MAX_MARK):
        raise BadLabelError("this benchmark gives no partial credit — label pass or fail")
    return "pass" if verdict == MAX_MARK else "fail" if verdict == 0 else str(int(verdict))


@dataclass
class Session:
    """The state of one labeller's session over one benchmark."""

    benchmark: Benchmark
    labeller: str
    answers: pd.DataFrame
    """One row per answer: ``run_id, question_id, round, response, response_sha256``."""
    verdicts: pd.DataFrame
    """The verdicts table of the grading stage."""
    seed: int = 0
    overlap: float = OVERLAP
    skipped: set[tuple[str, str]] = field(default_factory=set)
    items: pd.DataFrame = field(init=False)
    order: np.ndarray = field(init=False)
    shared: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.items = answer_items(self.answers[[*SLOT, "response_sha256"]], self.verdicts)
        self.order = draw_order(self.items, self.seed)
        self.shared = draw_order(self.items, self.seed, "overlap") < self.overlap
        assert self.benchmark.path is not None
        self.path = labeller_file(self.benchmark.path, self.labeller)

    @property
    def partial(self) -> bool:
        """Whether the benchmark gives partial credit (a grader's or a label's score strictly between 0 and 100):
        then the page offers a mark on 0–100 beside Pass and Fail."""
        scores = pd.to_numeric(self.verdicts["score"], errors="coerce").dropna()
        return bool(((scores > 0) & (scores < MAX_MARK)).any())

    def labels(self) -> pd.DataFrame:
        """Every label of the benchmark, one row per item and labeller: ``question_id, response_sha256, score,
        labeller, time``; labels of ``human_labels.csv`` count as the labeller "" at the earliest time."""
        assert self.benchmark.path is not None
        rows = load_labels(self.benchmark.path)
        if rows is None:
            return pd.DataFrame(columns=[*ITEM, "score", "labeller", "time"])
        return rows.drop_duplicates([*ITEM, "labeller"])[[*ITEM, "score", "labeller", "time"]]

    def next(self, labels: pd.DataFrame | None = None) -> dict[str, Any] | None:
        """The next answer to label, as the page shows it (graders' verdicts withheld), or None when done.

        ``labels``: :meth:`labels`, when the caller has read them already."""
        labels = self.labels() if labels is None else labels
        position = next_item(self.items, labels, self.labeller, self.order, self.shared, self.skipped)
        return None if position is None else self.shown(position)

    def shown(self, position: int) -> dict[str, Any]:
        """What the page shows of the item at ``position``: question, key, response, how many answers it covers.

        Not which runs gave it: a labeller who knows the model may favour it."""
        item = self.items.iloc[position]
        question = self.benchmark.question(str(item["question_id"]))
        key = question.get("answer_key") or {}
        slots = self._slots(item)
        return {
            "question_id": str(item["question_id"]),
            "response_sha256": str(item["response_sha256"]),
            "prompt": str(question.get("prompt", "")),
            "choices": [str(c) for c in question.get("choices") or []],
            "answer": str(key.get("answer") or ""),
            "aliases": [str(a) for a in key.get("aliases") or []],
            "reference": str(key.get("reference") or ""),
            "response": str(slots["response"].iloc[0]),
            "answers": len(slots),
            "stratum": str(item["stratum"]),
        }

    def _slots(self, item: pd.Series) -> pd.DataFrame:
        match = self.answers["question_id"].eq(item["question_id"]) & self.answers["response_sha256"].eq(
            item["response_sha256"]
        )
        return self.answers[match]

    def _position(self, question_id: str, digest: str) -> int:
        match = np.flatnonzero(
            self.items["question_id"].eq(question_id).to_numpy() & self.items["response_sha256"].eq(digest).to_numpy()
        )
        if not len(match):
            raise LabellingError("that answer is no longer on the board — reload the page")
        return int(match[0])

    def label(self, question_id: str, digest: str, verdict: str | float) -> dict[str, Any]:
        """Append the label of one item (every answer holding it) and return the graders' verdicts on it.

        An item this labeller labelled already (from another tab, say) is refused: a second label of one answer
        would make the file unreadable."""
        text = label_text(verdict, self.partial)
        item = self.items.iloc[self._position(question_id, digest)]
        labels = self.labels()
        mine = labels["labeller"].eq(self.labeller) & labels["question_id"].eq(question_id)
        if (mine & labels["response_sha256"].eq(digest)).any():
            raise LabellingError("you labelled this answer already (in another tab?) — reload the page")
        slots = self._slots(item)
        when = datetime.now(UTC).isoformat(timespec="microseconds")
        versions = " · ".join(
            f"{g} {v}" for g, v in self.verdicts.groupby("grader", sort=True)["grader_version"].first().items()
        )
        rows = [
            {
                "run": r.run_id,
                "question": r.question_id,
                "round": int(r.round),
                "label": text,
                "response_sha256": digest,
                "time": when,
                "stratum": item["stratum"],
                "grader_versions": versions,
            }
            for r in slots.itertuples(index=False)
        ]
        append_rows(self.path, rows)
        self.skipped.discard((question_id, digest))
        return self.revealed(slots)

    def revealed(self, slots: pd.DataFrame) -> dict[str, Any]:
        """Each automatic grader's verdicts on ``slots`` (shown once the labeller has chosen)."""
        keys = slots[SLOT]
        mine = self.verdicts.merge(keys, on=SLOT)
        mine = mine[~mine["role"].astype(str).eq(HUMAN)]
        out = {}
        for grader, rows in mine.groupby("grader", sort=True):
            scores = pd.to_numeric(rows["score"], errors="coerce")
            shown = sorted({"no verdict" if np.isnan(s) else f"{s:g}" for s in scores})
            out[str(grader)] = {"scores": shown, "detail": str(rows["detail"].iloc[0])[:300]}
        return out

    def skip(self, question_id: str, digest: str) -> None:
        """Pass over an item for the rest of this session (it comes back in the next one)."""
        self._position(question_id, digest)
        self.skipped.add((question_id, digest))

    def undo(self) -> dict[str, Any] | None:
        """Remove this labeller's last label from the file (rewritten atomically); return that item, or None."""
        if not self.path.is_file():
            return None
        frame = pd.read_csv(self.path, dtype=str, keep_default_na=False)
        if frame.empty:
            return None
        last = frame["time"].iloc[-1]
        kept = frame[frame["time"].ne(last)]
        gone = frame[frame["time"].eq(last)].iloc[0]
        atomic_write_text(self.path, csv_lines(kept.to_dict("records"), header=True))
        return self.shown(self._position(gone["question"], gone["response_sha256"]))

    def progress(self, labels: pd.DataFrame | None = None) -> dict[str, Any]:
        """How far the labelling is, and each automatic grader's design-weighted agreement with people so far."""
        labels = self.labels() if labels is None else labels
        primary = primary_labels(labels)
        graders = sorted({c.split(":", 1)[1] for c in self.items.columns if c.startswith("pass:")})
        return {
            "partial": self.partial,
            "mine": int(labels["labeller"].eq(self.labeller).sum()),
            "labelled": len(primary),
            "items": len(self.items),
            "answers": len(self.answers),
            "agreement": [_summary(agreement_with_people(self.items, primary, g)) for g in graders],
        }


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    """One grader's line for the page, in JSON (no NaN), with its sentence."""
    finite = {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
    keys = ("grader", "n_labels", "kappa", "kappa_ci_low", "kappa_ci_high", "reason")
    interval = f"{row['kappa']:.2f} [{row['kappa_ci_low']:.2f}, {row['kappa_ci_high']:.2f}]" if row["estimable"] else ""
    return {k: finite[k] for k in keys} | {
        "estimable": bool(row["estimable"]),
        "sentence": kappa_sentence(row, interval),
    }


def open_session(
    data_dir: Path, scored_dir: Path, benchmark: str, labeller: str, *, seed: int = 0, overlap: float = OVERLAP
) -> tuple[Session, int]:
    """Start ``labeller``'s session over ``benchmark``: its definition from ``data_dir``, its graded answers from
    ``scored_dir`` (``build/scored``). Returns the session and the bytes of an unfinished last line cut off the
    labeller's file (a crash while writing)."""
    from dualboard.intake.benchmark import load_benchmark
    from dualboard.scored_files import ANSWERS, VERDICTS, benchmark_names, read_table

    folder = data_dir / "benchmarks" / benchmark
    if not is_name(benchmark) or not (folder / "benchmark.yaml").is_file():
        raise LabellingError(f"no benchmark {benchmark[:60]!r} in {data_dir / 'benchmarks'} — name one of its folders")
    cut = repair_tail(labeller_file(folder, labeller))  # before the folder is read: the cut line would not parse
    definition = load_benchmark(folder, root=data_dir)
    if benchmark not in benchmark_names(scored_dir):
        raise LabellingError(
            f"no graded answers of {benchmark} in {scored_dir} — run `dualboard build` (or `dualboard grade`) first"
        )
    answers = read_table(ANSWERS, scored_dir, benchmark, columns=[*SLOT, "response", "unanswered"])
    answers = answers[~answers["unanswered"].astype(bool)]
    verdicts = read_table(VERDICTS, scored_dir, benchmark)
    session = Session(definition, labeller, graded_answers(answers), verdicts, seed=seed, overlap=overlap)
    return session, cut
