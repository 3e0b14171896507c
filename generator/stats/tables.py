"""The statistics stage's output contract: six CSV tables plus notes.

Written to ``build/stats/<benchmark>/``: ``models.csv``, ``pairwise.csv``,
``agreement.csv``, ``power.csv``, ``equator.csv``, ``labelling.csv`` and ``notes.json`` (the
caveats, the seed, B and the format version). Column meanings live in
``columns.yaml`` beside this module and are exposed as :data:`COLUMNS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

import pandas as pd
import yaml

from dualboard.atomic import atomic_write_text
from dualboard.errors import DualboardError
from dualboard.kappa import MIN_QUESTIONS as KAPPA_MIN_QUESTIONS
from dualboard.stats.defaults import N_BOOT as N_BOOT  # where the statistics have always read them
from dualboard.stats.defaults import SEED as SEED
from dualboard.stats.defaults import TOO_FEW_QUESTIONS

FORMAT_VERSION = 9
LIMITS = {"TOO_FEW_QUESTIONS": TOO_FEW_QUESTIONS, "KAPPA_MIN_QUESTIONS": KAPPA_MIN_QUESTIONS}
"""Limits that column meanings name as ``{NAME}``: filled in from the code, so the text states the limit in force."""


def fill_limits(text: str) -> str:
    """Replace each ``{NAME}`` of :data:`LIMITS` in ``text`` by its value.

    Examples
    --------
    >>> fill_limits("exact tests only (n < {TOO_FEW_QUESTIONS})")
    'exact tests only (n < 10)'
    """
    for name, value in LIMITS.items():
        text = text.replace(f"{{{name}}}", str(value))
    return text


COLUMNS: dict[str, dict[str, str]] = {
    table: {name: fill_limits(text) for name, text in columns.items()}
    for table, columns in yaml.safe_load(Path(__file__).with_name("columns.yaml").read_text(encoding="utf-8")).items()
}


def documents(table: str):
    """Append the column list of ``table`` (from columns.yaml) to a function's docstring.

    The making function of each table thereby documents every column it
    returns, from the same source the site's methodology page prints.
    """

    def decorate(func):
        lines = [f"    ``{name}``: {text}" for name, text in COLUMNS[table].items()]
        func.__doc__ = (func.__doc__ or "").rstrip() + (
            f'\n\n    Columns of ``{table}.csv`` (``COLUMNS["{table}"]``)\n    '
            + "-" * (len(table) + 33)
            + "\n"
            + "\n".join(lines)
            + "\n"
        )
        return func

    return decorate


class StatsTablesError(DualboardError):
    """A stats folder is missing a table or has a format this version cannot read."""


@dataclass(frozen=True)
class StatsTables:
    """Everything the statistics stage produces for one benchmark."""

    models: pd.DataFrame
    """One row per run: both gradings' means and CIs, their paired difference, ranks."""
    pairwise: pd.DataFrame
    """Run vs run within each grading over shared questions, Holm-adjusted."""
    agreement: pd.DataFrame
    """Grader vs grader and grader vs human: accuracy, κ with bootstrap CI, labels."""
    power: pd.DataFrame
    """Minimum detectable effect (points) at 80 % power for every comparison type."""
    equator: pd.DataFrame
    """One row: the flawed run-means paired t beside the question-clustered pooled effect."""
    labelling: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(COLUMNS["labelling"])))
    """Each grader against people weighted by the labelling design, and labellers against each other (empty
    when no labeller's file has labels: ``dualboard label``)."""
    notes: tuple[str, ...] = ()
    """Human-readable caveats (too few questions, missing verdicts, seed and B)."""


TABLES = tuple(f.name for f in fields(StatsTables) if f.name != "notes")


def write_tables(tables: StatsTables, out_dir: Path) -> list[Path]:
    """Write every table as CSV (full precision, no rounding) plus notes.json; return the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in TABLES:
        path = out_dir / f"{name}.csv"
        atomic_write_text(path, getattr(tables, name).to_csv(index=False, float_format="%.17g"))
        paths.append(path)
    notes = out_dir / "notes.json"
    atomic_write_text(
        notes, json.dumps({"format_version": FORMAT_VERSION, "notes": list(tables.notes)}, indent=2, ensure_ascii=False)
    )
    return [*paths, notes]


def read_tables(out_dir: Path) -> StatsTables:
    """Read the tables written by :func:`write_tables` (strict: every file must exist)."""
    out_dir = Path(out_dir)
    missing = [n for n in (*[f"{t}.csv" for t in TABLES], "notes.json") if not (out_dir / n).is_file()]
    if missing:
        raise StatsTablesError(
            f"{out_dir}: missing {', '.join(missing)} — run `dualboard stats` (or `dualboard build`) "
            "to write the statistics tables"
        )
    meta = json.loads((out_dir / "notes.json").read_text(encoding="utf-8"))
    if meta.get("format_version") != FORMAT_VERSION:
        raise StatsTablesError(
            f"{out_dir}/notes.json: format_version "
            f"{meta.get('format_version')!r}, expected {FORMAT_VERSION} — "
            "run `dualboard stats` again to rewrite the tables in this format"
        )
    frames = {t: _read_csv(out_dir / f"{t}.csv") for t in TABLES}
    return StatsTables(**frames, notes=tuple(meta["notes"]))


NAME_COLUMNS = ("run_id", "run_a", "run_b", "model", "benchmark_version")
"""Columns of names a submission chose, read back as written."""


def _read_csv(path: Path) -> pd.DataFrame:
    """One table as :func:`write_tables` wrote it: a name (:data:`NAME_COLUMNS`) is read back as it is written, so
    a model or run called "NA", "nan" or "null" keeps its name (pandas reads those as missing); only an empty
    field, where a missing name was written, is missing."""
    frame = pd.read_csv(path, dtype=dict.fromkeys(NAME_COLUMNS, str))
    names = [c for c in NAME_COLUMNS if c in frame.columns]
    if names:
        written = pd.read_csv(path, usecols=names, dtype=str, keep_default_na=False)
        frame[names] = written[names].mask(written[names] == "")
    return frame
