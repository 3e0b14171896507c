"""The verdict cache: content-addressed verdicts stored beside the runs.

A verdict is keyed by the sha256 of (grader name, version, config hash, the
question with its answer key, the response and what else of the prediction a
grader may read). Verdicts live in ``<root>/<grader>/<config_hash>/part-*.parquet``
so they travel with the store (and the Hub dataset) and anyone can rebuild a
release without calling a model. Changing a grader's options or prompt changes
its config hash, which invalidates exactly that grader's verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from generator.atomic import atomic_write_parquet
from generator.grading.verdict import Grader, Verdict, canonical_json, sha256_text


def question_digest(question: dict[str, Any]) -> str:
    """Return the sha256 of a question with its answer key (canonical JSON)."""
    return sha256_text(canonical_json(question))


def verdict_key(grader: Grader, question: dict[str, Any], prediction: dict[str, Any], digest: str | None = None) -> str:
    """Return the content address of one grader's verdict on one answer.

    ``digest`` is :func:`question_digest` of ``question``, when the caller has it.
    """
    material = [
        grader.name,
        grader.version,
        grader.config_hash,
        digest or question_digest(question),
        str(prediction.get("response") or ""),
        prediction.get("choice_order"),
        prediction.get("recorded"),
    ]
    return sha256_text(canonical_json(material))


class VerdictCache:
    """Verdicts on disk under ``root`` (normally ``<store>/verdicts``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from generator.grading.rules import RulesGrader
    >>> cache = VerdictCache(pathlib.Path(tempfile.mkdtemp()))
    >>> grader = RulesGrader()
    >>> _ = cache.store(grader, {"k1": Verdict(100.0, "ok", "equals 'x'")})
    >>> cache.lookup(grader, ["k1", "k2"])
    {'k1': Verdict(score=100.0, verdict_parse='ok', detail="equals 'x'", transient=False)}
    """

    def __init__(self, root: Path):
        self.root = Path(root)
        self._loaded: dict[tuple[str, str], dict[str, Verdict]] = {}

    def folder(self, grader: Grader) -> Path:
        """Return the folder holding this grader configuration's verdicts."""
        return self.root / grader.name / grader.config_hash

    def _entries(self, grader: Grader) -> dict[str, Verdict]:
        slot = (grader.name, grader.config_hash)
        if slot not in self._loaded:
            entries: dict[str, Verdict] = {}
            for part in sorted(self.folder(grader).glob("part-*.parquet")):
                frame = pd.read_parquet(part, columns=["key", "score", "verdict_parse", "detail"])
                for key, score, parse, detail in frame.itertuples(index=False, name=None):
                    entries[key] = Verdict(None if pd.isna(score) else float(score), str(parse), str(detail))
            self._loaded[slot] = entries
        return self._loaded[slot]

    def lookup(self, grader: Grader, keys: Sequence[str]) -> dict[str, Verdict]:
        """Return the cached verdicts among ``keys`` (absent keys are left out)."""
        entries = self._entries(grader)
        return {key: entries[key] for key in keys if key in entries}

    def store(self, grader: Grader, verdicts: Mapping[str, Verdict]) -> Path | None:
        """Add verdicts as one new part file; transient verdicts are skipped.

        The part's name is the hash of its keys, so storing the same verdicts
        twice writes the same file. Returns its path, or None if nothing new.
        """
        entries = self._entries(grader)
        new = {k: v for k, v in sorted(verdicts.items()) if not v.transient and k not in entries}
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
        ).astype({"score": "float64"})
        path = self.folder(grader) / f"part-{sha256_text(''.join(new))[:32]}.parquet"
        atomic_write_parquet(path, frame)
        entries.update(new)
        return path

