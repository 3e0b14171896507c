"""In-memory forms of the input contracts (docs/architecture.md, "Files that cross a stage boundary").

Questions and predictions stay plain dicts with exactly the fields of
``questions.jsonl`` / ``predictions.jsonl``: their JSON Schemas
(:mod:`dualboard.intake.schemas`) are their single definition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class GraderSpec:
    """A grader chosen by a benchmark: registry name plus options."""

    name: str
    """Registry name, e.g. ``mc_letter``, ``rules``, ``recorded``, ``llm``."""
    options: dict[str, Any] = field(default_factory=dict)
    """Grader options as written in ``benchmark.yaml``; part of the config hash."""


@dataclass(frozen=True)
class Benchmark:
    """A benchmark definition: ``data/benchmarks/<name>/``."""

    name: str
    """Folder name; also the ``benchmark`` field of every run's metadata."""
    version: str
    """``benchmark.yaml`` version; runs name the version they answered."""
    title: str
    """Human-readable title shown on the site."""
    description: str
    """One paragraph shown on the leaderboard page (plain text, escaped)."""
    traditional: dict[str, GraderSpec]
    """Traditional grader per question type (``multiple_choice``, ``open``)."""
    answer_key: tuple[GraderSpec, ...]
    """Answer-key graders in order; which fills the ``answer_key`` column: ``grading.tables.grade_benchmark``."""
    questions: tuple[dict[str, Any], ...]
    """Rows of ``questions.jsonl``, in file order."""
    allow_incomplete: bool = False
    """Whether a run may skip questions or rounds (otherwise an error)."""
    path: Path | None = None
    """Folder it was loaded from, when it came from disk."""
    previous_versions: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Earlier versions a run may name in ``benchmark_version``, each with the ids of the questions it asked: such
    a run stays on the board, graded against the current keys, and only the questions its version did not have
    (added since) are left out of its analyses; any other question it leaves out counts as unanswered."""
    min_answered: float = 0.9
    """Share of the current (question, round) answers a run must give to be ranked; a run under it is listed
    apart, with the reason (``benchmark.yaml`` ``min_answered``)."""
    digests: Mapping[str, str] = field(default_factory=dict)
    """sha256 of the bytes each definition file held when it was loaded, by file name (from disk only): a store
    keeps these bytes, the ones runs were validated against, or refuses (``store.base.expected_files``)."""

    def answers_older_version(self, metadata: dict[str, Any]) -> bool:
        """Whether a run with this ``metadata`` answered one of :attr:`previous_versions`."""
        return str(metadata.get("benchmark_version")) in self.previous_versions

    def asked_ids(self, metadata: Mapping[str, Any]) -> list[str]:
        """The current questions a run with this ``metadata`` was asked, in file order: all of them, or for a run
        of a previous version those its version had. Every other current question is *never run* for it."""
        had = self.previous_versions.get(str(metadata.get("benchmark_version", self.version)))
        return [q["id"] for q in self.questions if had is None or q["id"] in had]

    def question(self, question_id: str) -> dict[str, Any]:
        """Return the question with this id (KeyError if absent)."""
        return self.questions_by_id[question_id]

    @property
    def questions_by_id(self) -> dict[str, dict[str, Any]]:
        """The questions keyed by id (built once per benchmark)."""
        cached = self.__dict__.get("_by_id_cache")
        if cached is None:
            cached = {q["id"]: q for q in self.questions}
            object.__setattr__(self, "_by_id_cache", cached)
        return cached


@dataclass(frozen=True)
class Run:
    """One submitted run: ``submissions/<benchmark>/<run_id>/``."""

    benchmark: str
    """Benchmark name the run answers."""
    run_id: str
    """Folder name, a valid name (:data:`dualboard.names.RUN_ID`)."""
    metadata: dict[str, Any]
    """Parsed ``metadata.yaml`` (model, submitter, date, decoding, rounds, ...)."""
    predictions: Sequence[dict[str, Any]]
    """Rows of ``predictions.jsonl`` with ``round`` filled in (default 0): a tuple, or for a run validated by an
    earlier build a sequence that reads them on first use (``dualboard.intake.validate.DeferredPredictions``)."""
    digests: dict[str, str] = field(default_factory=dict, compare=False)
    """sha256 of each file of the run folder (``predictions.jsonl``…) as validation read it, or as the validation
    cache knew it: ingest stores these bytes and no others (empty for a run that was not read from a folder)."""

    @property
    def model(self) -> str:
        """The model name as submitted."""
        return str(self.metadata.get("model", self.run_id))
