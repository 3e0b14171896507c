"""The files of ``build/scored/``: three tables per benchmark, a Parquet file per run each; their columns and readers.

::

    build/scored/<benchmark>/
        about.json               what the folder holds: format, store revision, each run's key (:class:`About`)
        scored/<run>.parquet     one row per question × round: both scores, no text (:data:`SCORED`)
        answers/<run>.parquet    the same rows with prompt, key answer and response (:data:`ANSWERS`)
        verdicts/<run>.parquet   one row per answer × grader: every verdict, for audits (:data:`VERDICTS`)
        evidence/<run>.parquet   what the choice of the answer-key grader needs of the run (the grade stage's own)

A run's files are rewritten only when what they are made from changes, so
adding a run writes that run's files and no other. A table is read as one
dataset of its runs' files (:class:`ScoredFolder`, through ``pyarrow.dataset``),
in run id order; DuckDB reads it too
(``SELECT * FROM 'build/scored/demo/scored/*.parquet'``).

The answer-key columns (:data:`ANSWER_KEY_COLUMNS`) depend on a choice taken
over every run, so they are stored in the small scored files only: a new
choice rewrites those, never the text. The answers table as published
(:meth:`ScoredFolder.published`) adds them back.

This module is the only place that names these files or lists their columns
(names, Arrow types and meanings come from ``scored_columns.yaml`` beside it).
It imports no stage, so grading, statistics, rendering and releases can all
depend on it. The response text lives in the answers table alone, so the
statistics and the site, which read the scored table, never load it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import yaml

from dualboard.atomic import atomic_path, atomic_write_text
from dualboard.build_cache import digest, file_sha256
from dualboard.errors import DualboardError
from dualboard.names import RUN_ID_RULE, is_name

FORMAT_VERSION = 4
"""Layout of ``build/scored``; a folder of another version is refused with the command that rewrites it."""
ABOUT = "about.json"
METADATA_KEY = b"dualboard"
"""Parquet key-value metadata key of the JSON that says what a published file is and where it came from."""
ARROW_TYPES = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
"""The ``dtype`` names of scored_columns.yaml and the Arrow types they stand for."""
COMPRESSION = "zstd"
"""About half the size of pyarrow's default (snappy) on model text; pandas, DuckDB, datasets and the Hub read it."""
REGRADE = "run `dualboard grade` (or `dualboard build`) to write build/scored again"
ANSWER_KEY_COLUMNS = ("answer_key", "answer_key_grader", "answer_key_parse")
"""The columns filled by the benchmark-wide choice of the answer-key grader: stored in the scored files only."""


class ScoredFileError(DualboardError):
    """A folder of build/scored/ cannot be named, is missing, incomplete, or of another format."""


@dataclass(frozen=True)
class Column:
    """One column of a scored table."""

    name: str
    dtype: str
    """A key of :data:`ARROW_TYPES`."""
    meaning: str
    """One or two sentences for readers of the data (the dataset card prints them)."""


@dataclass(frozen=True)
class Table:
    """One of the three tables: its name (also its folder, release folder and dataset config) and columns."""

    name: str
    rows: str
    """What one row is, in words."""
    columns: tuple[Column, ...]
    stored: tuple[str, ...] = ()
    """The columns its files in build/scored hold, when not all (the answers leave the answer-key ones out)."""

    @property
    def names(self) -> tuple[str, ...]:
        """The column names, in order."""
        return tuple(c.name for c in self.columns)

    @property
    def stored_names(self) -> tuple[str, ...]:
        """The columns of its files in build/scored, in order."""
        return self.stored or self.names

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the table as published (fixed even for an empty table)."""
        return self.schema_of(self.names)

    def schema_of(self, names: Sequence[str], categories: Sequence[str] = ()) -> pa.Schema:
        """The Arrow schema of the columns ``names``; those of ``categories`` as dictionaries (pandas categoricals)."""
        types = {c.name: ARROW_TYPES[c.dtype] for c in self.columns}
        return pa.schema(
            [pa.field(n, pa.dictionary(pa.int32(), types[n]) if n in categories else types[n]) for n in names]
        )


def _load_columns() -> dict[str, tuple[Column, ...]]:
    spec = yaml.safe_load(Path(__file__).with_name("scored_columns.yaml").read_text("utf-8"))
    return {
        table: tuple(Column(name, c["dtype"], c["meaning"]) for name, c in columns.items())
        for table, columns in spec.items()
    }


_COLUMNS = _load_columns()
SCORED = Table("scored", "one row per run × question × round", _COLUMNS["scored"])
ANSWERS = Table(
    "answers",
    "one row per run × question × round, with the text",
    _COLUMNS["scored"] + _COLUMNS["answers"],
    tuple(c.name for c in _COLUMNS["scored"] + _COLUMNS["answers"] if c.name not in ANSWER_KEY_COLUMNS),
)
VERDICTS = Table("verdicts", "one row per answer × grader", _COLUMNS["verdicts"])
TABLES = (SCORED, ANSWERS, VERDICTS)
"""Every table, in the order they are written and documented."""
EVIDENCE = "evidence"
"""The folder of the grade stage's own per-run files beside the tables'."""

SCORED_COLUMNS = SCORED.names
ANSWER_COLUMNS = ANSWERS.names
VERDICT_COLUMNS = VERDICTS.names
GRADINGS = ("traditional", "answer_key")
"""The two gradings: the score columns of :data:`SCORED` (and grader roles), in the order every stage lists them."""
ANSWER_SLOT = ("run_id", "question_id", "round")
"""The columns that name one answer: a row of the scored table, a human label, a key of the verdicts."""
MIN_COVERAGE = 0.8
"""Least share of answers with a verdict: a grading under it does not rank the run (stats), and an automatic
answer-key grader under it (over the benchmark) cannot be chosen as the answer-key column (grading)."""


def typed(table: Table, rows: list[dict] | Mapping[str, list], names: Sequence[str] | None = None) -> pd.DataFrame:
    """A DataFrame of ``rows`` (row dicts, or lists by column name) with the table's columns (or those of
    ``names``) in order, numbers and flags in their dtypes.

    Text columns keep pandas' default dtype; the Arrow schema fixes them on write.
    """
    names = table.names if names is None else tuple(names)
    frame = pd.DataFrame(rows, columns=list(names))
    return frame.astype({c.name: c.dtype for c in table.columns if c.name in names and c.dtype != "string"})


def arrow(frame: pd.DataFrame | pa.Table, schema: pa.Schema) -> pa.Table:
    """``frame``'s columns of ``schema`` as an Arrow table of that schema."""
    if isinstance(frame, pa.Table):
        return frame.select(schema.names).cast(schema)
    return pa.Table.from_pandas(frame[schema.names], schema=schema, preserve_index=False)


@dataclass
class About:
    """What a benchmark's folder holds (its ``about.json``)."""

    benchmark: str
    store_revision: str
    """The store revision the runs were graded from."""
    runs: dict[str, str] = field(default_factory=dict)
    """Each run's key: a digest of everything its files are made from (the grade stage's)."""
    choice: str = "none"
    """What filled the answer-key columns of the scored files (the grade stage's choice id)."""
    complete: bool = True
    """False while a grade is writing the folder: it is then refused."""
    format_version: int = FORMAT_VERSION


def _about(text: str) -> About | None:
    """The :class:`About` that ``text`` holds, its fields of the right types; else None."""
    try:
        data = json.loads(text)
        about = About(**data)
    except (ValueError, TypeError):
        return None
    fields = (about.benchmark, about.store_revision, about.choice)
    runs = about.runs
    well_typed = (
        all(isinstance(f, str) for f in fields)
        and isinstance(about.complete, bool)
        and isinstance(about.format_version, int)
        and isinstance(runs, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in runs.items())
    )
    return about if well_typed else None


def checked_name(benchmark: str) -> str:
    """Return ``benchmark`` if it can name a folder of build/scored; else raise.

    Examples
    --------
    >>> checked_name("easy-problems.v2")
    'easy-problems.v2'
    >>> checked_name("../x")
    Traceback (most recent call last):
    ...
    dualboard.scored_files.ScoredFileError: benchmark name '../x' cannot name a folder in build/scored — ...
    """
    if not is_name(benchmark):
        raise ScoredFileError(
            f"benchmark name {benchmark!r} cannot name a folder in build/scored — use {RUN_ID_RULE} "
            f"(rename the folder data/benchmarks/{benchmark})"
        )
    return benchmark


@dataclass(frozen=True)
class ScoredFolder:
    """One benchmark's folder of build/scored: a Parquet file per run of each table, and ``about.json``."""

    path: Path

    @classmethod
    def of(cls, scored_dir: Path, benchmark: str) -> ScoredFolder:
        """The folder of ``benchmark`` in ``scored_dir`` (``build/scored``)."""
        return cls(Path(scored_dir) / checked_name(benchmark))

    @property
    def benchmark(self) -> str:
        return self.path.name

    def run_file(self, table: Table | str, run_id: str) -> Path:
        """Where run ``run_id``'s file of ``table`` (a :class:`Table`, or :data:`EVIDENCE`) lies."""
        if not is_name(run_id):
            raise ScoredFileError(f"run id {run_id!r} cannot name a file in {self.path} — use {RUN_ID_RULE}")
        return self.path / getattr(table, "name", table) / f"{run_id}.parquet"

    def about(self) -> About:
        """What the folder holds, checked: a whole folder of this format; else :class:`ScoredFileError`."""
        path = self.path / ABOUT
        if self.path.is_symlink() or path.is_symlink() or not path.is_file():
            raise ScoredFileError(f"{self.path}: no graded benchmark there — {REGRADE}")
        about = _about(path.read_text("utf-8"))
        if about is None or about.benchmark != self.benchmark:
            raise ScoredFileError(f"{path}: not what a grade writes there — {REGRADE}")
        if about.format_version != FORMAT_VERSION:
            raise ScoredFileError(
                f"{self.path}: format version {about.format_version!r}, this Dualboard reads {FORMAT_VERSION}"
                f" — {REGRADE}"
            )
        if not about.complete:
            raise ScoredFileError(f"{self.path}: a grade stopped while writing it — {REGRADE}")
        return about

    def recorded(self) -> About | None:
        """The folder's ``about.json`` whatever its state (a grade's starting point), or None when unreadable."""
        path = self.path / ABOUT
        try:
            about = None if path.is_symlink() else _about(path.read_text("utf-8"))
        except OSError:
            return None
        return about if about is not None and about.format_version == FORMAT_VERSION else None

    def make_real(self) -> None:
        """Make the folder and its tables' folders real folders, removing a link or file in their place (so that
        a grade writes and deletes only inside build/scored)."""
        for folder in [self.path, *(self.path / name for name in (*(t.name for t in TABLES), EVIDENCE))]:
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                folder.unlink()
            folder.mkdir(parents=True, exist_ok=True)

    def write_about(self, about: About) -> None:
        """Record ``about`` (atomically)."""
        self.path.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.path / ABOUT, json.dumps(asdict(about), sort_keys=True, indent=1) + "\n")

    def write_run(self, table: Table, run_id: str, rows: pd.DataFrame | pa.Table) -> Path:
        """Write run ``run_id``'s ``rows`` of ``table`` (its stored columns), atomically."""
        path = self.run_file(table, run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            pq.write_table(arrow(rows, table.schema_of(table.stored_names)), tmp, compression=COMPRESSION)
        return path

    def readable(self, table: Table | str, run_id: str) -> bool:
        """Whether run ``run_id``'s file of ``table`` is a regular file that reads as Parquet (a grade makes a
        missing or damaged one anew)."""
        path = self.run_file(table, run_id)
        try:
            return not path.is_symlink() and pq.read_metadata(path).num_columns > 0
        except (OSError, pa.ArrowException):
            return False

    def runs(self) -> list[str]:
        """The runs of the folder, in id order."""
        return sorted(self.about().runs)

    def files(self, table: Table, runs: Sequence[str] | None = None) -> list[Path]:
        """The files of ``table`` of every run (or of ``runs``), in run id order; each checked to be there."""
        known = self.runs()
        unknown = sorted(set(runs or ()) - set(known))
        if unknown:
            raise ScoredFileError(f"{self.path}: no graded run {unknown[0]!r} — {REGRADE}")
        if (self.path / table.name).is_symlink():
            raise ScoredFileError(f"{self.path / table.name}: a link, not the folder a grade writes — {REGRADE}")
        paths = [self.run_file(table, run_id) for run_id in (known if runs is None else sorted(set(runs)))]
        for path in paths:
            if path.is_symlink() or not path.is_file():
                raise ScoredFileError(f"{path}: missing, or not a regular file — {REGRADE}")
        return paths

    def read(
        self,
        table: Table,
        columns: Sequence[str] | None = None,
        *,
        categories: Sequence[str] = (),
        runs: Sequence[str] | None = None,
    ) -> pa.Table:
        """``table``'s rows of every run (or of ``runs``), run after run; only ``columns`` of its stored ones.

        ``categories``: columns read as dictionaries (pandas categoricals), straight from the files'
        dictionary pages: a string repeated on many rows (a run or question id) is decoded once.
        """
        names = list(table.stored_names if columns is None else columns)
        unknown = sorted(set(names).union(categories) - set(table.stored_names))
        if unknown:
            raise ValueError(
                f"build/scored's {table.name} files have no column {unknown[0]!r}; "
                f"they have {', '.join(table.stored_names)}"
            )
        options = ds.ParquetReadOptions(dictionary_columns=list(categories))
        dataset = ds.dataset(
            [str(p) for p in self.files(table, runs)],
            schema=table.schema_of(table.stored_names, categories),
            format=ds.ParquetFileFormat(read_options=options),
        )
        try:
            return dataset.to_table(columns=names)
        except (OSError, pa.ArrowException) as exc:  # a file damaged after the grade that wrote it
            raise ScoredFileError(
                f"{self.path / table.name}: a file cannot be read ({' '.join(str(exc).split())}) — run "
                "`dualboard build --force` to grade "
                "every run anew"
            ) from exc

    def published(self, table: Table) -> pa.Table:
        """The whole of ``table`` as a release publishes it: the answers with their answer-key columns."""
        rows = self.read(table)
        if table is ANSWERS:
            keys = self.read(SCORED, [*ANSWER_SLOT, *ANSWER_KEY_COLUMNS])
            if not rows.select(list(ANSWER_SLOT)).equals(keys.select(list(ANSWER_SLOT))):
                raise ScoredFileError(f"{self.path}: the answers and scored files hold other rows — {REGRADE}")
            for name in ANSWER_KEY_COLUMNS:
                rows = rows.append_column(name, keys[name])
        about = {
            "table": table.name,
            "format_version": FORMAT_VERSION,
            "benchmark": self.benchmark,
            "store_revision": self.about().store_revision,
        }
        return rows.select(list(table.names)).replace_schema_metadata(
            {METADATA_KEY: json.dumps(about, sort_keys=True).encode()}
        )

    def keep_only(self, runs: set[str]) -> None:
        """Delete every run file whose run is not one of ``runs`` (runs gone from the store)."""
        for folder in [*(self.path / t.name for t in TABLES), self.path / EVIDENCE]:
            for path in folder.iterdir() if folder.is_dir() else ():
                if path.stem not in runs and (path.is_file() or path.is_symlink()):
                    path.unlink()


def write_scored(tables: object, scored_dir: Path, benchmark: str, revision: str) -> ScoredFolder:
    """Write the three tables of ``benchmark`` (graded in one go) into ``scored_dir``, a file per run each.

    ``tables`` has one DataFrame attribute per table, named like it (``scored``, ``answers``, ``verdicts``), as
    the grading stage's ``GradedTables`` has: this module comes before grading in the flow, so it names no
    grading type. ``revision`` is the store revision graded. Each run's key is the digest of its files, which no
    grade's key equals: a grade makes them anew.
    """
    folder = ScoredFolder.of(scored_dir, benchmark)
    runs = sorted(set(getattr(tables, SCORED.name)["run_id"].astype(str)))
    folder.write_about(About(benchmark, revision, complete=False))
    for table in TABLES:
        frame = getattr(tables, table.name)
        for run_id in runs:
            folder.write_run(table, run_id, frame[frame["run_id"] == run_id])
    folder.keep_only(set(runs))
    keys = {r: "written-" + digest(*(file_sha256(folder.run_file(t, r)) for t in TABLES)) for r in runs}
    folder.write_about(About(benchmark, revision, runs=keys))
    return folder


def benchmark_names(scored_dir: Path) -> list[str]:
    """The benchmarks with a folder in ``scored_dir``, sorted (files and links there are ignored; reading a folder
    a grade did not finish says so)."""
    scored_dir = Path(scored_dir)
    if not scored_dir.is_dir():
        return []
    return sorted(p.name for p in scored_dir.iterdir() if is_name(p.name) and p.is_dir() and not p.is_symlink())


def read_table(
    table: Table,
    scored_dir: Path,
    benchmark: str,
    *,
    columns: list[str] | None = None,
    categories: Sequence[str] = (),
) -> pd.DataFrame:
    """``benchmark``'s ``table`` (only ``columns``, if given) as a DataFrame (:meth:`ScoredFolder.read`)."""
    return ScoredFolder.of(scored_dir, benchmark).read(table, columns, categories=categories).to_pandas()


def store_revision(scored_dir: Path, benchmark: str) -> str:
    """The store revision ``benchmark``'s folder was graded from."""
    return ScoredFolder.of(scored_dir, benchmark).about().store_revision


def read_scored(scored_dir: Path, benchmark: str) -> pd.DataFrame:
    """The scored table of ``benchmark``: one row per run × question × round, columns :data:`SCORED_COLUMNS`."""
    return read_table(SCORED, scored_dir, benchmark)


def read_verdicts(scored_dir: Path, benchmark: str) -> pd.DataFrame:
    """The verdicts table of ``benchmark``: one row per answer × grader, columns :data:`VERDICT_COLUMNS`."""
    return read_table(VERDICTS, scored_dir, benchmark)
