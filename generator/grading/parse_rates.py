"""How often each grader read a clean verdict, recovered one, or found none."""

from __future__ import annotations

import pandas as pd

PARSE_RATE_COLUMNS = (
    "grader", "config_hash", "role", "n", "n_ok", "n_recovered", "n_none", "recovered_rate", "no_verdict_rate",
)  # fmt: skip
"""Columns returned by :func:`verdict_parse_rates`, in order."""


def verdict_parse_rates(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Count verdict parse outcomes per grader configuration and role.

    Parameters
    ----------
    verdicts
        The verdicts table of :func:`dualboard.grading.grade_benchmark`
        (needs ``grader``, ``config_hash``, ``role``, ``verdict_parse``).

    Returns
    -------
    pandas.DataFrame
        One row per (grader, config_hash, role): ``n`` verdicts, ``n_ok``,
        ``n_recovered``, ``n_none``, ``recovered_rate`` = n_recovered / n and
        ``no_verdict_rate`` = n_none / n (both 0–1), sorted by grader.

    Examples
    --------
    >>> table = pd.DataFrame({"grader": ["llm"] * 4, "config_hash": ["h"] * 4, "role": ["answer_key"] * 4,
    ...                       "verdict_parse": ["ok", "ok", "recovered", "none"]})
    >>> verdict_parse_rates(table)[["n", "n_none", "no_verdict_rate"]].to_dict("records")
    [{'n': 4, 'n_none': 1, 'no_verdict_rate': 0.25}]
    """
    keys = ["grader", "config_hash", "role"]
    counts = pd.crosstab([verdicts[k] for k in keys], verdicts["verdict_parse"])
    counts = counts.reindex(columns=["ok", "recovered", "none"], fill_value=0).add_prefix("n_")
    table = counts.reset_index()
    table.columns.name = None
    table.insert(3, "n", table[["n_ok", "n_recovered", "n_none"]].sum(axis=1))
    table["recovered_rate"] = table["n_recovered"] / table["n"]
    table["no_verdict_rate"] = table["n_none"] / table["n"]
    table = table.astype({c: "int64" for c in ("n", "n_ok", "n_recovered", "n_none")})
    return table.sort_values(keys, ignore_index=True)[list(PARSE_RATE_COLUMNS)]
