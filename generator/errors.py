"""Errors raised by Dualboard's library code.

Library code raises :class:`DualboardError` subclasses; only ``cli.py`` turns
them into ``click.ClickException`` so that users see a message, not a traceback.
Every message names what is wrong, the bad value, and what to do about it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace


class DualboardError(ValueError):
    """Base class of every error that should reach the user as a message."""


@dataclass(frozen=True)
class Finding:
    """One problem found while checking an input file.

    Rendered as ``file:line: field: problem — fix``, the form editors and CI
    annotations understand.
    """

    file: str
    """Path of the offending file, as the user would type it (see :meth:`relative_to`)."""
    line: int | None
    """1-based line number, or ``None`` when the problem concerns the whole file."""
    field: str
    """Dotted name of the offending field (``response``, ``decoding.seed``), or ``-``."""
    problem: str
    """What is wrong, including the bad value where it is short enough to show."""
    fix: str
    """What the user should do about it."""
    severity: str = "error"
    """``error`` (the input is rejected) or ``warning`` (reported, accepted)."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.field}: {self.problem} — {self.fix}"

    def relative_to(self, root: str | os.PathLike[str]) -> Finding:
        """The finding with an absolute ``file`` written relative to ``root`` (the leaderboard folder).

        Submitters read findings in a pull-request comment or a CI log, where
        the build machine's absolute paths mean nothing and leak its layout.
        A file outside ``root`` reads ``../…``; a relative file is kept as is.

        Examples
        --------
        >>> str(Finding("/lb/submissions/demo/x/metadata.yaml", 3, "rounds", "missing", "add it").relative_to("/lb"))
        'submissions/demo/x/metadata.yaml:3: rounds: missing — add it'
        """
        if not os.path.isabs(self.file):
            return self
        return replace(self, file=os.path.relpath(self.file, root).replace(os.sep, "/"))


class InvalidInputError(DualboardError):
    """Raised once, after collecting every :class:`Finding` of a check."""

    def __init__(self, findings: list[Finding]):
        self.findings = list(findings)
        errors = [f for f in self.findings if f.severity == "error"]
        head = f"{len(errors)} problem(s) found; nothing was changed."
        super().__init__("\n".join([head, *(str(f) for f in self.findings)]))


class StoreConflictError(DualboardError):
    """The store changed under us (a concurrent ingest); nothing was overwritten."""
