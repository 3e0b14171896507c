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
for each of its runs the run id, the model name and the key its graded files
were made under (``about.json`` of build/scored).
A :class:`~dualboard.render.kept_files.KeptFiles` remembers, in ``build/``, the files each
shard's key gave; a shard whose key is unchanged and whose files are still in the docs
folder is kept as it is, without reading any of its answers. The site is the
same as a render from scratch (``tests/render/test_answer_shards.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence

from dualboard.build_cache import code_digest, digest
from dualboard.scored_files import ANSWER_SLOT, ScoredFolder

SHARDS = 8
"""Shards of each question's answers. Adding a run remakes 1/SHARDS of the answers' data; a question page loads at
most this many files, and the site holds up to this many per question (each file costs the render, MkDocs and
git a little, whatever its size)."""
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


def shard_keys(
    groups: Mapping[int, Sequence[str]],
    models: Mapping[str, str],
    questions: Sequence[Mapping],
    graders: Mapping[str, Sequence[str]],
    files: ScoredFolder | None,
) -> dict[int, str]:
    """The key of each shard of ``groups`` whose every run has graded files.

    ``models``: the model name shown for each run; ``graders``: the graders each question shows
    (:func:`dualboard.render.question_pages.question_graders`); ``files``: the graded files the pages' answers
    and verdicts are read from, whose ``about.json`` holds each run's key (a digest of all its files are made
    from). Without the files no shard has a key: it is always made anew.
    """
    if files is None:
        return {}
    common = digest("answer-shards", code_digest(), json.dumps([list(questions), dict(graders)], sort_keys=True))
    graded = files.about().runs
    return {
        shard: digest(common, *(f"{r}\0{models.get(r, r)}\0{graded[r]}" for r in run_ids))
        for shard, run_ids in groups.items()
        if all(r in graded for r in run_ids)
    }
