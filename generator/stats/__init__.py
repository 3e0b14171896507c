"""Statistics stage: paired, question-level, clustered analysis of scored answers.

Public API: :func:`analyse`, :class:`StatsTables`, :func:`write_tables`,
:func:`read_tables` and :data:`COLUMNS` (table → column → meaning).

They are loaded on first use (PEP 562): the analysis imports scipy,
statsmodels and pingouin, which a build that skips the stage, or a module
that needs only a constant such as :data:`dualboard.stats.tables.SEED`, should
not pay for at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dualboard.stats.analysis import analyse
    from dualboard.stats.tables import COLUMNS, StatsTables, StatsTablesError, read_tables, write_tables

__all__ = ["COLUMNS", "StatsTables", "StatsTablesError", "analyse", "read_tables", "write_tables"]
_HOMES = {
    "analyse": "dualboard.stats.analysis",
    **dict.fromkeys(
        ("COLUMNS", "StatsTables", "StatsTablesError", "read_tables", "write_tables"), "dualboard.stats.tables"
    ),
}
"""The module each public name is loaded from."""


def __getattr__(name: str) -> object:
    """Load a public name from its module on first use."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
