"""What every grader returns, and the identity every grader carries.

A grader is identified by ``name``, ``version`` and ``config_hash``; the hash
covers everything that can change a verdict (options, prompt template text),
so a cached verdict is reused only when it would come out the same.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

PARSE_OUTCOMES = ("ok", "recovered", "none")
"""Values of ``verdict_parse``: how the verdict was read from the grader's input."""


@dataclass(frozen=True)
class Verdict:
    """One grader's judgement of one answer."""

    score: float | None
    """Score on 0–100, or ``None`` when the grader reached no verdict."""
    verdict_parse: str
    """``ok`` (strict form found), ``recovered`` (a fallback found it) or ``none``."""
    detail: str
    """Short text saying why, for people auditing disagreements."""
    transient: bool = False
    """True when the verdict came from a failure that may not repeat (timeout):
    such verdicts are reported but never cached."""


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
"""The encoder of :func:`canonical_json`, made once: ``json.dumps`` with these options makes one per call, a third
of the time of encoding a 2 KB answer for its verdict keys."""


def canonical_json(value: Any) -> str:
    """Serialise ``value`` the same way every time (sorted keys, no spaces)."""
    return _CANONICAL.encode(value)


def sha256_text(text: str) -> str:
    """Return the hex sha256 of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Grader:
    """Base of every grader: identity, config hash and the grading calls.

    Subclasses set ``name``, ``version`` and ``default_role`` as class
    attributes and implement :meth:`grade`. Graders that call a service
    override :meth:`grade_many` to work concurrently.
    """

    name: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    default_role: ClassVar[str] = "answer_key"
    rule: ClassVar[str] = ""
    """The grading rule in full, as the site prints it; empty: the docstring's description stands for it."""
    batch_size: ClassVar[int] = 256
    """Answers the grading loop hands to one :meth:`grade_many` call; it reports progress and saves
    verdicts between calls."""
    cpu_bound: ClassVar[bool] = True
    """Whether grading only computes on this machine's CPU, so that several processes may grade a benchmark's
    runs side by side. False for a grader that calls a service (its concurrency and rate limits hold per
    process) or holds a model in memory (one copy, not one per process)."""
    cached: ClassVar[bool] = True
    """Whether verdicts go through the verdict cache (False for graders that
    only read a value carried by the input, such as ``recorded``)."""

    options: dict[str, Any] = field(default_factory=dict)
    """Options from ``benchmark.yaml``, already checked by the constructor."""

    @property
    def role(self) -> str:
        """The role this grader plays unless the benchmark says otherwise."""
        return self.default_role

    def config_material(self) -> dict[str, Any]:
        """Return everything that can change a verdict; hashed into ``config_hash``."""
        return {"name": self.name, "version": self.version, "options": self.options}

    @functools.cached_property
    def config_hash(self) -> str:
        """sha256 of the canonical JSON of :meth:`config_material` (computed once per grader)."""
        return sha256_text(canonical_json(self.config_material()))

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        """Grade one answer to one question."""
        raise NotImplementedError

    def grade_many(self, items: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> list[Verdict]:
        """Grade ``(question, prediction)`` pairs, returning verdicts in input order."""
        return [self.grade(question, prediction) for question, prediction in items]
