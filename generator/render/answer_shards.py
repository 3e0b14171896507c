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
verdicts. :class:`ShardCache` remembers, in ``build/``, the files each shard's
key gave; a shard whose key is unchanged and whose files are still in the docs
folder is kept as it is, without reading any of its answers. The site is the
same as a render from scratch (``tests/render/test_answer_shards.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dualboard.atomic import atomic_write_text
from dualboard.build_cache import BuildCache, code_digest, digest
from dualboard.render.shared_files import SharedFiles
from dualboard.scored_files import ANSWER_SLOT

SHARDS = 8
"""Shards of each question's answers. Adding a run remakes 1/SHARDS of the answers' data (about 12 of 100 runs);
a question page loads at most this many files, and the site holds up to this many per question (each file costs
the render, MkDocs and git a little, whatever its size: 16 shards made a full render slower than one file)."""
CACHE_DIR = "answer-shards"
"""The folder of ``build/`` where :class:`ShardCache` keeps one manifest per benchmark."""
_MANIFEST_FORMAT = 1
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
    folders: Mapping[str, Path],
    models: Mapping[str, str],
    questions: Sequence[Mapping],
    graders: Mapping[str, Sequence[str]],
    verdicts: pd.DataFrame,
    cache: BuildCache,
) -> dict[int, str]:
    """The key of each shard of ``groups`` whose every run has a stored folder.

    ``folders``: each stored run's folder by run id (its files are hashed through ``cache``, which remembers
    digests by file status); ``models``: the model name shown for each run; ``graders``: the graders each
    question shows (:func:`dualboard.render.question_pages.question_graders`). A shard with a run that has no
    folder has no key: it is always made anew.
    """
    common = digest("answer-shards", code_digest(), json.dumps([list(questions), dict(graders)], sort_keys=True))
    by_verdicts = verdict_digests(verdicts)
    keys = {}
    for shard, run_ids in groups.items():
        if not all(run_id in folders for run_id in run_ids):
            continue
        parts = [
            f"{run_id}\0{models.get(run_id, run_id)}\0{cache.tree_digest([folders[run_id]], folders[run_id].parent)}"
            for run_id in run_ids
        ]
        keys[shard] = digest(common, by_verdicts.get(shard, ""), *parts)
    return keys


class ShardCache:
    """The data files each shard's key gave in an earlier render: ``build/answer-shards/<benchmark>.json``.

    A manifest, rewritten whole after each render: ``{"format": 1, "shards": {"<n>": {"key": ..., "files":
    {question id: [docs path, bytes]}}}}``. A missing or unreadable manifest is an empty one.
    """

    def __init__(self, path: Path, cache: BuildCache, folders: Mapping[str, Path]) -> None:
        """``path``: the manifest; ``cache``: hashes the runs' stored ``folders`` (by run id) for the keys."""
        self.path = path
        self.build_cache = cache
        self.folders = dict(folders)
        self._shards: dict[str, dict] = {}
        try:
            document = json.loads(path.read_text("utf-8"))
            if document.get("format") == _MANIFEST_FORMAT and isinstance(document.get("shards"), dict):
                self._shards = document["shards"]
        except (OSError, ValueError, AttributeError):
            pass  # made anew: a lost manifest costs one full render, never a wrong page
        self._used: dict[str, dict] = {}

    def reuse(self, shard: int, key: str, shared: SharedFiles) -> dict[str, str] | None:
        """The data file of each question of ``shard`` made under ``key``, kept in ``shared``; None (nothing
        kept) when another key made them or a file is gone."""
        entry = self._shards.get(str(shard))
        if not entry or entry.get("key") != key:
            return None
        files = entry.get("files", {})
        if not all(shared.keep(path, size) for path, size in files.values()):
            return None
        self._used[str(shard)] = entry
        return {qid: path for qid, (path, _size) in files.items()}

    def record(self, shard: int, key: str, files: Mapping[str, tuple[str, int]]) -> None:
        """Remember that ``key`` gave ``files`` (question id → (docs path, bytes)) for ``shard``."""
        self._used[str(shard)] = {"key": key, "files": {qid: list(value) for qid, value in files.items()}}

    def save(self) -> None:
        """Write the manifest of the shards this render used (the others are forgotten)."""
        document = {"format": _MANIFEST_FORMAT, "shards": dict(sorted(self._used.items(), key=lambda p: int(p[0])))}
        atomic_write_text(self.path, json.dumps(document, separators=(",", ":")))
