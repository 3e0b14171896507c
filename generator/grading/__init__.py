"""Grading: traditional and answer-key graders, the verdict cache, the scored tables.

Public entry points: :func:`grade_benchmark` (values in, :class:`GradedTables`
out, :data:`Progress` reported as it goes), :func:`write_scored` and :func:`read_scored` (the files of build/scored/,
owned by :mod:`dualboard.scored_files`), :func:`get_grader`, :class:`VerdictCache` and :func:`verdict_parse_rates`
(the no-verdict rate the site reports). Every grader is listed in
:mod:`dualboard.grading.registry`. Human labels are read by :mod:`dualboard.intake.human_labels`.

They are loaded on first use (PEP 562), as :mod:`dualboard.stats` loads its own: the scored tables
import scipy (through :mod:`dualboard.kappa`), which checking a benchmark's grader options
(:mod:`dualboard.grading.registry`, on every ``dualboard validate``) should not pay for at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dualboard.grading.cache import VerdictCache
    from dualboard.grading.parse_rates import verdict_parse_rates
    from dualboard.grading.registry import REGISTRY, get_grader
    from dualboard.grading.tables import GradedTables, Progress, grade_benchmark
    from dualboard.grading.verdict import Grader, Verdict
    from dualboard.scored_files import ANSWER_COLUMNS, SCORED_COLUMNS, VERDICT_COLUMNS, read_scored, write_scored

__all__ = [
    "ANSWER_COLUMNS",
    "REGISTRY",
    "SCORED_COLUMNS",
    "VERDICT_COLUMNS",
    "GradedTables",
    "Grader",
    "Progress",
    "Verdict",
    "VerdictCache",
    "get_grader",
    "grade_benchmark",
    "read_scored",
    "verdict_parse_rates",
    "write_scored",
]
_HOMES = {
    "VerdictCache": "dualboard.grading.cache",
    "verdict_parse_rates": "dualboard.grading.parse_rates",
    **dict.fromkeys(("REGISTRY", "get_grader"), "dualboard.grading.registry"),
    **dict.fromkeys(("GradedTables", "Progress", "grade_benchmark"), "dualboard.grading.tables"),
    **dict.fromkeys(("Grader", "Verdict"), "dualboard.grading.verdict"),
    **dict.fromkeys(
        ("ANSWER_COLUMNS", "SCORED_COLUMNS", "VERDICT_COLUMNS", "read_scored", "write_scored"), "dualboard.scored_files"
    ),
}
"""The module each public name is loaded from."""


def __getattr__(name: str) -> object:
    """Load a public name from its module on first use."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
