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

if TYPE_CHECKING:  # the store imports grading (graders are checked when benchmarks load)
    from dualboard.store import Store

FOLD_AT = 50_000
"""Verdicts saved during a grade that one grader configuration holds in a dict before they join its columns."""
_VERDICT_FIELDS = ("score", "verdict_parse", "detail")
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

    def load_verdicts(self, grader: str, config_hash: str) -> pd.DataFrame:
        """Every cached verdict of one grader configuration (as ``Store.load_verdicts``)."""
        from dualboard.store.verdicts import read_parts  # the store imports grading: import when used

        return read_parts(self.read, grader, config_hash)

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
    by ``clock`` (monotonic seconds; a test may pass its own).

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
    ):
        self._store = store
        self._loaded: dict[tuple[str, str], _Known] = {}
        self._waiting: dict[tuple[str, str], dict[str, Verdict]] = {}  # received since the last save
        self._saved_at: dict[tuple[str, str], float] = {}
        self._save_every_s, self._clock = save_every_s, clock

    @property
    def source(self) -> Store | VerdictFolders:
        """Where the verdicts are read and saved."""
        return self._store

    def _entries(self, grader: Grader) -> _Known:
        slot = (grader.name, grader.config_hash)
        if slot not in self._loaded:
            self._loaded[slot] = _Known(self._store.load_verdicts(grader.name, grader.config_hash))
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
        known = entries.get(list(verdicts))
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
        entries.add(new)
        return path


class _Known:
    """The cached verdicts of one grader configuration, compact: a grade of 10⁶ answers holds millions.

    Those read from the store are columns indexed by key (a few times smaller
    than one Verdict object per key); those saved since wait in a dict until
    there are :data:`FOLD_AT` of them, or as many as the columns hold, then are
    folded into the columns (a copy, so done geometrically rarely).
    """

    def __init__(self, frame: pd.DataFrame):
        self._columns = frame[["key", *_VERDICT_FIELDS]].set_index("key")
        self._recent: dict[str, Verdict] = {}

    def get(self, keys: Sequence[str]) -> dict[str, Verdict]:
        """The verdicts of the known ``keys``, in the order asked."""
        found = {key: self._recent[key] for key in keys if key in self._recent}
        rest = [key for key in keys if key not in found]
        if rest and len(self._columns):
            at = self._columns.index.get_indexer(rest)
            hits = at >= 0
            rows = self._columns.iloc[at[hits]]
            for key, score, parse, detail in zip(
                np.asarray(rest, dtype=object)[hits], rows.score, rows.verdict_parse, rows.detail, strict=True
            ):
                found[key] = Verdict(None if pd.isna(score) else float(score), str(parse), str(detail))
        return {key: found[key] for key in keys if key in found}

    def add(self, verdicts: Mapping[str, Verdict]) -> None:
        """Hold verdicts just saved (none of them known yet)."""
        self._recent.update(verdicts)
        if len(self._recent) >= max(FOLD_AT, len(self._columns)):
            recent = self._recent.values()
            added = pd.DataFrame(
                {
                    "score": np.array([np.nan if v.score is None else v.score for v in recent], dtype=float),
                    "verdict_parse": [v.verdict_parse for v in recent],
                    "detail": [v.detail for v in recent],
                },
                index=pd.Index(list(self._recent), name="key"),
            )
            self._columns = pd.concat([self._columns, added]) if len(self._columns) else added
            self._recent = {}
