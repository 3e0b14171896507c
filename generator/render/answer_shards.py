"""A question's answers split into shards by run, so that adding a run remakes one shard of each question.

A question page loads its answers from data files (:mod:`dualboard.render.lazy_tables`).
One file per question held every run's answers, so adding a run changed all
of them: at a million answers every render read and compressed a gigabyte of
text again, and every release carried a new copy. Here each run belongs to one
of :data:`SHARDS` shards by a hash of its id (:func:`shard_of`: the same run
always lands in the same shard, whatever the other runs), and each question has
one data file per shard that holds answers to it.

Each shard has a key (:func:`shard_keys`): the digest of everything its files
are made from: the code, the questions, which graders each question shows, and
for each of its runs the run id, the model name, the stored files and the
verdicts (the bytes of their row groups in the verdicts file, :func:`verdict_digests`).
A :class:`~dualboard.render.kept_files.KeptFiles` remembers, in ``build/``, the files each
shard's key gave; a shard whose key is unchanged and whose files are still in the docs
folder is kept as it is, without reading any of its answers. The site is the
same as a render from scratch (``tests/render/test_answer_shards.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

import pyarrow.parquet as pq

from dualboard.build_cache import CHUNK, code_digest, digest
from dualboard.render.kept_files import KeptFiles
from dualboard.scored_files import ANSWER_SLOT, run_id_bounds

SHARDS = 8
"""Shards of each question's answers. Adding a run remakes 1/SHARDS of the answers' data (about 12 of 100 runs);
a question page loads at most this many files, and the site holds up to this many per question (each file costs
the render, MkDocs and git a little, whatever its size: 16 shards made a full render slower than one file)."""
CACHE_DIR = "answer-shards"
"""The folder of ``build/`` where the shards' :class:`~dualboard.render.kept_files.KeptFiles` keep one manifest per
benchmark."""
SHARD_VERDICT_COLUMNS = [*ANSWER_SLOT, "grader", "role", "score", "detail"]
"""What of the verdicts table a shard's data files show (and so what its key hashes and a worker reads)."""


def shard_of(run_id: str) -> int:
    """The shard of a run's answers: a hash of its id, so it never depends on the other runs.

    Examples
    --------
    >>> shard_of("a"), shard_of("b"), shard_of("d")
    (2, 2, 1)
    """
    return int.from_bytes(hashlib.sha256(run_id.encode("utf-8")).digest()[:8], "big") % SHARDS


def shard_groups(run_ids: Iterable[str]) -> dict[int, list[str]]:
    """The runs of each shard that holds any, sorted by id, by shard number (ascending).

    Examples
    --------
    >>> shard_groups(["d", "b", "a"])
    {1: ['d'], 2: ['a', 'b']}
    """
    groups: dict[int, list[str]] = {}
    for run_id in sorted(set(run_ids)):
        groups.setdefault(shard_of(run_id), []).append(run_id)
    return dict(sorted(groups.items()))


def verdict_digests(path: Path) -> dict[int, str]:
    """A digest of each shard's verdicts (the columns the pages show), by shard number, from the verdicts file's bytes.

    The bytes of those columns' chunks in each row group are hashed as stored, compressed, never decoded: equal
    bytes (under the same codec and type) hold equal values, so a shown verdict that changes changes its chunk.
    A row group goes to the shard of its run when its run id statistics name one run (the grade stage writes a
    row group per run, copied byte for byte when the run is not graded again: adding a run leaves the others'
    bytes as they were); a row group whose runs the statistics do not pin down goes to every shard. Hashing
    the decoded rows took a second per render at a million answers; this reads a few MB.
    """
    reader = pq.ParquetFile(path)
    meta = reader.metadata
    names = [meta.schema.column(i).path for i in range(meta.num_columns)]
    columns = [names.index(c) for c in SHARD_VERDICT_COLUMNS]
    hashes: dict[int, list[str]] = {}
    with open(path, "rb") as handle:
        for group in range(meta.num_row_groups):
            row_group = meta.row_group(group)
            digests = [_chunk_digest(handle, row_group.column(c)) for c in columns]
            for shard in _row_group_shards(row_group.column(names.index("run_id"))):
                hashes.setdefault(shard, []).append(f"{row_group.num_rows}:{':'.join(digests)}")
    # the schema's types and names, not pyarrow's text of it, which shows the start of the file's metadata
    # (the store revision: a new one would change every shard's key)
    schema = str(reader.schema_arrow.remove_metadata())
    return {shard: digest(schema, *parts) for shard, parts in sorted(hashes.items())}


def _chunk_digest(handle: BinaryIO, chunk: pq.ColumnChunkMetaData) -> str:
    """SHA-256 of a column chunk's stored bytes (its pages, dictionary included) with its codec and type."""
    start = chunk.dictionary_page_offset if chunk.has_dictionary_page and chunk.dictionary_page_offset else None
    handle.seek(start or chunk.data_page_offset)
    sha = hashlib.sha256(f"{chunk.compression}\0{chunk.physical_type}\0{chunk.num_values}\0".encode())
    left = chunk.total_compressed_size
    while left > 0:  # a block at a time: a large run's detail chunk need not be in memory whole
        block = handle.read(min(left, CHUNK))
        if not block:
            raise ValueError(f"{handle.name}: a column chunk runs past the end of the file")
        sha.update(block)
        left -= len(block)
    return sha.hexdigest()


def _row_group_shards(run_ids: pq.ColumnChunkMetaData) -> list[int]:
    """The shards a row group may hold verdicts of: its run's, when the statistics say it holds one run; else all."""
    bounds, stats = run_id_bounds(run_ids), run_ids.statistics
    if bounds is not None and bounds[0] == bounds[1] and stats.has_null_count and stats.null_count == 0:
        return [shard_of(bounds[0])]
    return list(range(SHARDS))


def shard_keys(
    groups: Mapping[int, Sequence[str]],
    models: Mapping[str, str],
    questions: Sequence[Mapping],
    graders: Mapping[str, Sequence[str]],
    verdicts: Path | None,
    kept: KeptFiles,
) -> dict[int, str]:
    """The key of each shard of ``groups`` whose every run has a stored folder.

    ``kept``: hashes each run's stored folder (:meth:`~dualboard.render.kept_files.KeptFiles.run_digest`);
    ``models``: the model name shown for each run; ``graders``: the graders each question shows
    (:func:`dualboard.render.question_pages.question_graders`); ``verdicts``: the file the pages' verdicts were
    read from (:func:`verdict_digests`). A shard with a run that has no folder has no key, and without the
    verdicts file no shard has one: it is always made anew.
    """
    if verdicts is None:
        return {}
    common = digest("answer-shards", code_digest(), json.dumps([list(questions), dict(graders)], sort_keys=True))
    by_verdicts = verdict_digests(verdicts)
    keys = {}
    for shard, run_ids in groups.items():
        stored = {run_id: kept.run_digest(run_id) for run_id in run_ids}
        if None in stored.values():
            continue
        parts = [f"{run_id}\0{models.get(run_id, run_id)}\0{stored[run_id]}" for run_id in run_ids]
        keys[shard] = digest(common, by_verdicts.get(shard, ""), *parts)
    return keys
