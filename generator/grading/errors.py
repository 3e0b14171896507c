"""Errors raised by the grading stage; each message says what to do."""

from __future__ import annotations

from dualboard.errors import DualboardError


class GraderConfigError(DualboardError):
    """A grader named in ``benchmark.yaml`` is unknown or has bad options."""


class GraderUnavailableError(DualboardError):
    """A grader's service (an LLM endpoint, an optional package) cannot be used."""


class GradingInputError(DualboardError):
    """The runs or labels handed to grading do not fit the benchmark."""
