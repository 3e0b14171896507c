"""The verdict cache: content-addressed verdicts kept by the store.

A verdict is keyed by the sha256 of (grader name, version, config hash, the
question with its answer key, the response and what else of the prediction a
grader may read). The store keeps them (``Store.load_verdicts`` and
``save_verdicts``; their files are laid out by dualboard.store.verdicts), so
they travel with it (and the Hub dataset) and anyone can rebuild a release
without calling a model. Changing a grader's options or prompt changes its
config hash, which invalidates exactly that grader's verdicts.

Verdicts received during a grade are saved as they come, one part every
:data:`SAVE_EVERY_S` seconds (:meth:`VerdictCache.checkpoint`): a grade that
is killed keeps them, and the next one asks the judge only for the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dualboard.grading.verdict import Grader, Verdict, canonical_json, sha256_text
from dualboard.grading.verdict_keys import KeyIndexes, key_numbers, may_hold

if TYPE_CHECKING:  # the store imports grading (graders are checked when benchmarks load)
    from dualboard.store import Store

SAVE_EVERY_S = 5.0
"""Seconds between two saves of the verdicts a grade receives: what a killed grade can lose at most.
Longer means fewer parts (one per interval per grader), shorter less judge work asked twice."""


@dataclass(frozen=True)
class VerdictFolders:
    """Where a store's verdicts are read and saved, resolved once: a grade's worker processes use it in place
    of the store (it is picklable and asks no network), reading and saving exactly what the store would."""

    read: tuple[Path, ...]
    """Folders read, in order (the store's snapshot, then its verdict root)."""
    save: Path
    """Folder new parts are saved under (the store's verdict root)."""

    @classmethod
    def of(cls, store: Store) -> VerdictFolders:
        """The folders of ``store``'s :meth:`~dualboard.store.Store.load_verdicts` and ``save_verdicts``."""
        return cls((store.snapshot(), store.verdict_root()), store.verdict_root())

    def verdict_parts(self, grader: str, config_hash: str) -> list[Path]:
        """The parts of one grader configuration, in read order (as ``Store.verdict_parts``)."""
        from dualboard.store.verdicts import part_files  # the store imports grading: import when used

        return part_files(self.read, grader, config_hash)

    def save_verdicts(self, grader: str, config_hash: str, frame: pd.DataFrame) -> Path | None:
        """Save new verdicts as one part (as ``Store.save_verdicts``)."""
        from dualboard.store.verdicts import write_part

        return write_part(self.save, grader, config_hash, frame)


def question_digest(question: dict[str, Any]) -> str:
    """Return the sha256 of a question with its answer key (canonical JSON)."""
    return sha256_text(canonical_json(question))


def verdict_key(grader: Grader, question: dict[str, Any], prediction: dict[str, Any], digest: str | None = None) -> str:
    """Return the content address of one grader's verdict on one answer.

    ``digest`` is :func:`question_digest` of ``question``, when the caller has it.
    """
    return keyed(grader_part(grader, digest or question_digest(question)), answer_part(prediction))


def grader_part(grader: Grader, digest: str) -> str:
    """The start of the keys of ``grader``'s verdicts on the question of ``digest`` (see :func:`keyed`)."""
    return canonical_json([grader.name, grader.version, grader.config_hash, digest])[:-1]


def answer_part(prediction: dict[str, Any]) -> str:
    """The end of the keys of every grader's verdict on ``prediction``: computed once per answer, however many
    graders read it (the response is most of a key's bytes)."""
    return canonical_json(
        [str(prediction.get("response") or ""), prediction.get("choice_order"), prediction.get("recorded")]
    )[1:]


def keyed(grader_part: str, answer_part: str) -> str:
    """The sha256 of the canonical JSON of ``[name, version, config hash, question digest, response, choice
    order, recorded]``: canonical JSON writes a list as its items' JSON joined by commas, so the two parts
    joined by one are that text exactly (keys already in caches stay valid)."""
    return sha256_text(f"{grader_part},{answer_part}")


class VerdictCache:
    """The verdicts of every grader that a store holds, read once per grader configuration.

    ``save_every_s`` is the interval of :meth:`checkpoint`'s saves, measured
    by ``clock`` (monotonic seconds; a test may pass its own). ``index`` is the
    folder keeping each part's key index (:mod:`~dualboard.grading.verdict_keys`;
    None: indexes are made in memory, from each part's keys, at the first lookup).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from dualboard.grading.rules import RulesGrader
    >>> from dualboard.store import LocalStore
    >>> cache = VerdictCache(LocalStore(pathlib.Path(tempfile.mkdtemp())))
    >>> grader = RulesGrader()
    >>> _ = cache.store(grader, {"k1": Verdict(100.0, "ok", "equals 'x'")})
    >>> cache.lookup(grader, ["k1", "k2"])
    {'k1': Verdict(score=100.0, verdict_parse='ok', detail="equals 'x'", transient=False)}
    """

    def __init__(
        self,
        store: Store | VerdictFolders,
        *,
        save_every_s: float = SAVE_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
        index: Path | None = None,
    ):
        self._store = store
        self._indexes = KeyIndexes(index)
        self._loaded: dict[tuple[str, str], _Known] = {}
        self._waiting: dict[tuple[str, str], dict[str, Verdict]] = {}  # received since the last save
        self._saved_at: dict[tuple[str, str], float] = {}
        self._save_every_s, self._clock = save_every_s, clock

    @property
    def source(self) -> Store | VerdictFolders:
        """Where the verdicts are read and saved."""
        return self._store

    @property
    def index(self) -> Path | None:
        """The folder keeping the parts' key indexes, if any."""
        return self._indexes.folder

    def _entries(self, grader: Grader) -> _Known:
        slot = (grader.name, grader.config_hash)
        if slot not in self._loaded:
            self._loaded[slot] = _Known(self._store.verdict_parts(grader.name, grader.config_hash), self._indexes)
        return self._loaded[slot]

    def lookup(self, grader: Grader, keys: Sequence[str]) -> dict[str, Verdict]:
        """Return the cached verdicts among ``keys`` (absent keys are left out)."""
        return self._entries(grader).get(keys)

    def checkpoint(self, grader: Grader, verdicts: Mapping[str, Verdict]) -> Path | None:
        """Keep verdicts just received; save all kept as one part when ``save_every_s`` passed since the last save.

        The grading loop calls it after every batch, and :meth:`store` at the
        end: a grade killed in between loses at most the last interval's verdicts.
        Returns the part's path when one was saved.
        """
        slot = (grader.name, grader.config_hash)
        self._waiting.setdefault(slot, {}).update(verdicts)
        saved_at = self._saved_at.setdefault(slot, self._clock())  # the first interval starts with the grade
        return self.store(grader, {}) if self._clock() - saved_at >= self._save_every_s else None

    def store(self, grader: Grader, verdicts: Mapping[str, Verdict]) -> Path | None:
        """Save ``verdicts`` and those kept by :meth:`checkpoint` that are not cached yet, as one part.

        Transient verdicts are skipped. Returns the part's path, or None if nothing was new.
        """
        slot = (grader.name, grader.config_hash)
        verdicts = {**self._waiting.pop(slot, {}), **verdicts}
        self._saved_at[slot] = self._clock()
        entries = self._entries(grader)
        known = entries.holds(list(verdicts))
        new = {k: v for k, v in sorted(verdicts.items()) if not v.transient and k not in known}
        if not new:
            return None
        frame = pd.DataFrame(
            {
                "key": list(new),
                "score": [v.score for v in new.values()],
                "verdict_parse": [v.verdict_parse for v in new.values()],
                "detail": [v.detail for v in new.values()],
                "grader": grader.name,
                "grader_version": grader.version,
                "config_hash": grader.config_hash,
            }
        )
        path = self._store.save_verdicts(grader.name, grader.config_hash, frame)
        entries.add(new, path)
        return path


class _Known:
    """The cached verdicts of one grader configuration, read from the parts that may hold the keys asked.

    The parts listed at the first lookup are indexed together (their key
    numbers in one sorted array, :mod:`~dualboard.grading.verdict_keys`); parts
    this process saves since are indexed one by one; verdicts saved nowhere (a
    store that keeps none, or a part saved before under the same name) wait in
    a dict. A lookup reads only the parts whose index has a key's number, in
    the store's read order, and the first part holding a key gives its verdict
    (as :func:`~dualboard.store.verdicts.read_parts`).
    """

    def __init__(self, parts: list[Path], indexes: KeyIndexes):
        self._indexes = indexes
        listed = [indexes.of(part, _part_keys) for part in parts]
        self._parts = list(parts)
        self._numbers = np.concatenate(listed) if listed else np.zeros(0, dtype=np.uint64)
        self._part_of = np.repeat(np.arange(len(listed)), [len(index) for index in listed])
        order = np.argsort(self._numbers, kind="stable")
        self._numbers, self._part_of = self._numbers[order], self._part_of[order]
        self._mine: list[tuple[Path, np.ndarray]] = []
        self._recent: dict[str, Verdict] = {}

    def get(self, keys: Sequence[str]) -> dict[str, Verdict]:
        """The verdicts of the known ``keys``, in the order asked."""
        found = {key: self._recent[key] for key in keys if key in self._recent}
        rest = [key for key in keys if key not in found]
        if rest:
            numbers = key_numbers(rest)
            for part, asked in self._candidates(numbers):
                wanted = {rest[i] for i in asked if rest[i] not in found}
                if wanted:
                    found.update(_read_verdicts(part, wanted))
        return {key: found[key] for key in keys if key in found}

    def holds(self, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` are known: those :meth:`get` finds, learnt from the key column of the parts that
        may hold them (saving what a grade checkpointed would otherwise read its own parts whole again)."""
        found = {key for key in keys if key in self._recent}
        rest = [key for key in keys if key not in found]
        if rest:
            for part, asked in self._candidates(key_numbers(rest)):
                wanted = {rest[i] for i in asked} - found
                if wanted:
                    found |= wanted.intersection(_part_keys(part))
        return found

    def _candidates(self, numbers: np.ndarray) -> list[tuple[Path, np.ndarray]]:
        """The parts that may hold some key of ``numbers``, in read order, each with the positions it may hold."""
        hits: list[tuple[Path, np.ndarray]] = []
        if len(self._numbers):
            low = np.searchsorted(self._numbers, numbers, side="left")
            high = np.searchsorted(self._numbers, numbers, side="right")
            asked = np.repeat(np.arange(len(numbers)), high - low)
            rows = np.concatenate([np.arange(a, b) for a, b in zip(low, high, strict=True) if b > a] or [[]])
            parts = self._part_of[rows.astype(np.int64)]
            for part in np.unique(parts):
                hits.append((self._parts[part], asked[parts == part]))
        for part, index in self._mine:
            maybe = may_hold(index, numbers)
            if maybe.any():
                hits.append((part, np.flatnonzero(maybe)))
        return hits

    def add(self, verdicts: Mapping[str, Verdict], part: Path | None) -> None:
        """Hold verdicts just saved (none of them known yet) as ``part``, or in memory when it is None."""
        if part is None:
            self._recent.update(verdicts)
            return
        self._indexes.add(part, list(verdicts))
        self._mine.append((part, self._indexes.of(part, _part_keys)))


def _part_keys(part: Path) -> list[str]:
    from dualboard.store.verdicts import read_part

    return read_part(part, ["key"])["key"].tolist()


def _read_verdicts(part: Path, wanted: set[str]) -> dict[str, Verdict]:
    """The verdicts of ``part`` for the keys of ``wanted`` it holds (its first row of a key)."""
    from dualboard.store.verdicts import read_part

    frame = read_part(part)
    rows = frame[frame.key.isin(wanted)].drop_duplicates("key", keep="first")
    return {
        key: Verdict(None if pd.isna(score) else float(score), str(parse), str(detail))
        for key, score, parse, detail in zip(rows.key, rows.score, rows.verdict_parse, rows.detail, strict=True)
    }
