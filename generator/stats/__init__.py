"""Statistics stage: paired, question-level, clustered analysis of scored answers.

Public API: :func:`analyse`, :class:`StatsTables`, :func:`write_tables`,
:func:`read_tables` and :data:`COLUMNS` (table → column → meaning).
"""

from dualboard.stats.analysis import analyse
from dualboard.stats.tables import COLUMNS, StatsTables, StatsTablesError, read_tables, write_tables

__all__ = ["COLUMNS", "StatsTables", "StatsTablesError", "analyse", "read_tables", "write_tables"]
