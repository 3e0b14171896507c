"""The text of every answer, as the render reads it: a slice of questions at a time, never all at once.

At a million answers the responses are over a gigabyte of text. The question
pages need all of a question's answers together, but ``build/scored``'s answers
table (:data:`dualboard.scored_files.ANSWERS`) holds them a file per run. So the
table is read once, run by run, and each answer's slot and response
is set aside in a temporary file of its slice of questions (Arrow IPC,
lz4-compressed); then the slices are handed out one after the other, in the
benchmark's question order. Only one run and one slice are in memory at a
time, and the work grows linearly with the answers.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from dualboard.scored_files import ANSWER_SLOT, ANSWERS, ScoredFolder

TEXT_COLUMNS = [*ANSWER_SLOT, "response", "options_shown", "correct_letter"]
"""What the question pages read of the answers table."""
SLICE_ANSWERS = 20_000
"""Answers per slice of questions held at once: what bounds the text the render holds."""
_SPILL = ipc.IpcWriteOptions(compression="lz4")
"""Slices wait on disk compressed: answers repeat each other, and lz4 costs little time."""


def question_slices(questions: Sequence[str], counts: Mapping[str, int], limit: int | None = None) -> list[list[str]]:
    """The questions cut into consecutive slices of at most ``limit`` answers (:data:`SLICE_ANSWERS`), a
    question never cut: one with more answers is a slice of its own.

    Examples
    --------
    >>> question_slices(["a", "b", "c", "d"], {"a": 3, "b": 3, "c": 5, "d": 1}, limit=6)
    [['a', 'b'], ['c', 'd']]
    """
    limit = SLICE_ANSWERS if limit is None else limit
    slices: list[list[str]] = []
    size = limit + 1  # the first question opens a slice
    for qid in questions:
        n = counts.get(qid, 0)
        if size + n > limit and (not slices or slices[-1]):
            slices.append([])
            size = 0
        slices[-1].append(qid)
        size += n
    return slices


def texts_by_slice(
    files: ScoredFolder, slices: Sequence[Sequence[str]], runs: Sequence[str] | None = None
) -> Iterator[pa.Table]:
    """Each slice's answers (columns :data:`TEXT_COLUMNS`, run after run), one slice after the other.

    Answers to questions in no slice are left out, and with ``runs``, answers of other runs (whose files are
    not read).
    """
    slice_of = {qid: i for i, questions in enumerate(slices) for qid in questions}
    known = pa.array(list(slice_of), pa.string())
    slice_by_index = np.array(list(slice_of.values()), dtype=np.int64)
    schema = ANSWERS.schema_of(TEXT_COLUMNS)
    with tempfile.TemporaryDirectory(prefix="dualboard-answers-") as tmp:
        spilled = [Path(tmp) / f"{i}.arrow" for i in range(len(slices))]
        writers: dict[int, ipc.RecordBatchStreamWriter] = {}
        try:
            for path in files.files(ANSWERS, runs):  # a run at a time
                table = pq.read_table(path, columns=TEXT_COLUMNS).replace_schema_metadata(None)
                index = pc.index_in(table["question_id"], value_set=known).to_numpy(zero_copy_only=False)
                present = ~np.isnan(index.astype(np.float64))
                rows = np.flatnonzero(present)
                owner = slice_by_index[index[present].astype(np.int64)]
                order = np.argsort(owner, kind="stable")
                rows, owner = rows[order], owner[order]
                starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(owner) else []
                for start, end in zip(starts, [*starts[1:], len(owner)]):
                    i = int(owner[start])
                    if i not in writers:
                        writers[i] = ipc.new_stream(spilled[i], schema, options=_SPILL)
                    writers[i].write_table(table.take(rows[start:end]))
        finally:
            for writer in writers.values():
                writer.close()
        for i, path in enumerate(spilled):
            if i in writers:
                with ipc.open_stream(path) as stream:
                    yield stream.read_all()
                path.unlink()
            else:
                yield schema.empty_table()


def responses_of(files: ScoredFolder, slots: pd.DataFrame) -> dict[tuple[str, str, int], str]:
    """The response of each answer of ``slots`` (columns :data:`ANSWER_SLOT`) by (run id, question id, round).

    Only the files of the runs of ``slots`` are read, their responses only where a file holds one of them.
    """
    wanted = slots[list(ANSWER_SLOT)].drop_duplicates()
    found: dict[tuple[str, str, int], str] = {}
    for path in files.files(ANSWERS, sorted(set(wanted["run_id"]))):
        keys = pq.read_table(path, columns=list(ANSWER_SLOT)).to_pandas()
        rows = keys.reset_index().merge(wanted, on=list(ANSWER_SLOT))["index"].to_numpy()
        if len(rows):
            texts = pq.read_table(path, columns=["response"])["response"].take(rows).to_pylist()
            picked = keys.iloc[rows]
            found.update(zip(zip(picked["run_id"], picked["question_id"], picked["round"].tolist()), texts))
    return found
