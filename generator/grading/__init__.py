"""Grading: traditional and answer-key graders, the verdict cache, the scored tables.

Public entry points: :func:`grade_benchmark` (values in, :class:`GradedTables`
out, :data:`Progress` reported as it goes), :func:`write_scored` and :func:`read_scored` (the files of build/scored/,
owned by :mod:`dualboard.scored_files`), :func:`get_grader`, :class:`VerdictCache` and
:func:`load_human_labels` and :func:`verdict_parse_rates`
(the no-verdict rate the site reports). Every grader is listed in
:mod:`dualboard.grading.registry`.
"""

from dualboard.grading.cache import VerdictCache
from dualboard.grading.human import load_human_labels
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
    "load_human_labels",
    "read_scored",
    "verdict_parse_rates",
    "write_scored",
]
