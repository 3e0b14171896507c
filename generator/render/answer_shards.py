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
verdicts. A :class:`~dualboard.render.kept_files.KeptFiles` remembers, in ``build/``, the files each
shard's key gave; a shard whose key is unchanged and whose files are still in the docs
folder is kept as it is, without reading any of its answers. The site is the
same as a render from scratch (``tests/render/test_answer_shards.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from dualboard.build_cache import code_digest, digest
from dualboard.render.kept_files import KeptFiles
from dualboard.scored_files import ANSWER_SLOT

SHARDS = 8
"""Shards of each question's answers. Adding a run remakes 1/SHARDS of the answers' data (about 12 of 100 runs);
a question page loads at most this many files, and the site holds up to this many per question (each file costs
the render, MkDocs and git a little, whatever its size: 16 shards made a full render slower than one file)."""
CACHE_DIR = "answer-shards"
"""The folder of ``build/`` where the shards' :class:`~dualboard.render.kept_files.KeptFiles` keep one manifest per
benchmark."""
_VERDICT_COLUMNS = [*ANSWER_SLOT, "grader", "role", "score", "detail"]
"""What of the verdicts table a shard's data files show (and so its key hashes)."""


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


def verdict_digests(verdicts: pd.DataFrame) -> dict[int, str]:
    """A digest of each shard's verdict rows (those columns the pages show), by shard number.

    Rows are hashed one by one and summed within a shard, so the digest does not depend on the rows' order
    (each answer has one row per grader) and hashing is one vectorised pass over the table.
    """
    if verdicts.empty:
        return {}
    hashes = pd.util.hash_pandas_object(verdicts[_VERDICT_COLUMNS], index=False).to_numpy(dtype=np.uint64)
    run_ids = verdicts["run_id"].astype(str)
    shard_by_run = {run_id: shard_of(run_id) for run_id in run_ids.unique()}
    shards = run_ids.map(shard_by_run).to_numpy(dtype=np.int64)
    sums = np.zeros(SHARDS, dtype=np.uint64)
    np.add.at(sums, shards, hashes)  # wraps modulo 2**64, as a sum of hashes should
    counts = np.bincount(shards, minlength=SHARDS)
    return {int(s): f"{int(counts[s])}:{int(sums[s]):016x}" for s in np.flatnonzero(counts)}


def shard_keys(
    groups: Mapping[int, Sequence[str]],
    models: Mapping[str, str],
    questions: Sequence[Mapping],
    graders: Mapping[str, Sequence[str]],
    verdicts: pd.DataFrame,
    kept: KeptFiles,
) -> dict[int, str]:
    """The key of each shard of ``groups`` whose every run has a stored folder.

    ``kept``: hashes each run's stored folder (:meth:`~dualboard.render.kept_files.KeptFiles.run_digest`);
    ``models``: the model name shown for each run; ``graders``: the graders each question shows
    (:func:`dualboard.render.question_pages.question_graders`). A shard with a run that has no folder has no
    key: it is always made anew.
    """
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
