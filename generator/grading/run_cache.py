"""Each run's grades kept on disk, keyed by everything that can change them.

A run's key (:func:`run_key`) is the sha256 of the run's id and stored files, the
benchmark's questions and grader configurations (:func:`benchmark_digest`),
the human labels of the run's answers, and the grading code itself
(:func:`code_digest`). The grading stage keeps one *fragment* per key in
``build/graded/<benchmark>/`` (:class:`RunCache`): a run whose key has a
fragment is not loaded or graded again, so adding one run grades that run only,
and a changed question, grader option, label or Dualboard grades every run again.

A fragment is two Parquet files, ``<key>.answers.parquet`` and
``<key>.verdicts.parquet`` (a :class:`~dualboard.grading.run_grades.RunGrades`),
each written atomically, answers last: a fragment is whole when both exist.
Beside them, ``<key>.evidence.parquet`` keeps what the choice of the answer-key
grader needs of the run (:class:`~dualboard.grading.answer_key_choice.RunEvidence`),
so that choosing over every run reads a few rows per run, not its verdicts
(made again from the verdicts when missing), and ``<key>.key-<choice>.parquet``
the run's answer-key columns under the choice last taken.

build/scored/ is joined from these files, their column chunks copied
(``scored_files.join_scored_parts``): so each is written as the tables' files
are, by ``pq.write_table`` with :data:`COMPRESSION`, in the tables' column types.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import BinaryIO

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import dualboard
from dualboard.atomic import atomic_path
from dualboard.grading.answer_key_choice import CHOICE_COLUMNS, AnswerKeyChoice, RunEvidence, choice_id
from dualboard.grading.registry import get_grader
from dualboard.grading.run_grades import RUN_ANSWER_COLUMNS, RunGrades, given_answers
from dualboard.grading.verdict import canonical_json, sha256_text
from dualboard.intake.human_labels import LabelRecords
from dualboard.intake.models import Benchmark
from dualboard.safe_read import open_regular
from dualboard.scored_files import ANSWERS, COMPRESSION, VERDICTS

GRADED_DIR = "graded"
"""The folder of the build holding one folder of fragments per benchmark."""
ONCE = ".once"
"""Ends the key of a fragment holding a verdict that may not repeat (a judge's timeout): written so that this
grade can read it back, never found by a later one (:meth:`RunCache.save`)."""
_CHUNK = 1 << 20


GRADING_TOOLS = ("pyarrow", "google-re2")
"""What besides Dualboard makes a fragment: pyarrow writes the files that build/scored copies chunk for chunk
(:mod:`dualboard.parquet_join`), RE2 reads the answers."""


@functools.cache
def code_digest() -> str:
    """sha256 of Dualboard's version, the source of the grading package, of the modules outside it that decide a
    verdict or the bytes of a kept file, and of :data:`GRADING_TOOLS`' versions.

    Editing a grader without raising its version must not leave grades of the old code behind, and a fragment
    written by another pyarrow must not be joined under this one's footer.
    """
    digest = hashlib.sha256(dualboard.__version__.encode())
    for path in code_sources():
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    for tool in GRADING_TOOLS:
        digest.update(f"\0{tool} {metadata.version(tool)}".encode())
    return digest.hexdigest()


def code_sources() -> list[Path]:
    """The files whose source :func:`code_digest` covers."""
    package = Path(__file__).parent
    outside = ("scored_files.py", "scored_columns.yaml", "linear_regex.py", "parquet_join.py", "thrift_compact.py")
    return [
        *sorted(package.glob("*.py")),
        *sorted(p for p in (package / "prompts").glob("*") if p.is_file()),
        *(package.parent / name for name in outside),
    ]


def benchmark_digest(benchmark: Benchmark) -> str:
    """sha256 of what of a benchmark a grade reads: questions, versions and each grader's configuration."""
    material = {
        "name": benchmark.name,
        "version": benchmark.version,
        "previous_versions": {version: sorted(ids) for version, ids in sorted(benchmark.previous_versions.items())},
        "min_answered": benchmark.min_answered,
        "questions": list(benchmark.questions),
        "traditional": {kind: get_grader(spec).config_hash for kind, spec in sorted(benchmark.traditional.items())},
        "answer_key": [get_grader(spec).config_hash for spec in benchmark.answer_key],
    }
    return sha256_text(canonical_json(material))


def run_key(
    run_dir: Path, benchmark: str, labels: LabelRecords, file_digest: Callable[[Path], str] | None = None
) -> str:
    """The content address of one stored run's grades (``benchmark``: :func:`benchmark_digest`).

    The run id (the folder's name: the rows carry it) counts, and every regular file of the folder, by
    name and sha256; links are refused (:func:`open_regular`). ``file_digest(path)`` gives a file's sha256
    when the caller knows it (the build cache remembers the store's files by stat:
    :meth:`~dualboard.build_cache.BuildCache.file_digest`); else the file is read.
    """
    material = [code_digest(), benchmark, Path(run_dir).name, sorted(labels.items())]
    digest = hashlib.sha256(canonical_json(material).encode())
    for path in sorted(p for p in Path(run_dir).iterdir()):
        with open_regular(path, root=run_dir) as handle:
            sha = file_digest(path) if file_digest is not None else _sha256(handle)
        digest.update(f"\0{path.name}\0{sha}".encode())
    return digest.hexdigest()


def _sha256(handle: BinaryIO) -> str:
    digest = hashlib.sha256()
    while chunk := handle.read(_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


class RunCache:
    """The fragments of one benchmark's runs, in ``folder`` (``build/graded/<benchmark>``)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def _paths(self, name: str) -> tuple[Path, Path]:
        return self.folder / f"{name}.answers.parquet", self.folder / f"{name}.verdicts.parquet"

    def _evidence_path(self, name: str) -> Path:
        return self.folder / f"{name}.evidence.parquet"

    def has(self, name: str) -> bool:
        """Whether the fragment ``name`` is whole on disk."""
        return all(path.is_file() and not path.is_symlink() for path in self._paths(name))

    def save(self, key: str, grades: RunGrades) -> str:
        """Write ``grades`` as the fragment of ``key``; return its name (``key``, or ``key`` + :data:`ONCE`)."""
        name = key + (ONCE if grades.transient else "")
        answers, verdicts = self._paths(name)
        self._drop_answer_keys(name)  # made from the grades this save replaces
        _write(grades.verdicts, verdicts, VERDICTS.schema)
        _write_evidence(RunEvidence.of(given_answers(grades.answers), grades.verdicts), self._evidence_path(name))
        _write(grades.answers, answers, pa.schema([ANSWERS.schema.field(c) for c in RUN_ANSWER_COLUMNS]))
        return name

    def load(self, name: str) -> RunGrades:
        """The grades of fragment ``name``."""
        answers, verdicts = self._paths(name)
        return RunGrades(pq.read_table(answers).to_pandas(), pq.read_table(verdicts).to_pandas(), name.endswith(ONCE))

    def load_arrow(self, name: str) -> tuple[pa.Table, pa.Table]:
        """The answers and verdicts of fragment ``name`` as Arrow tables (to write them on without pandas)."""
        answers, verdicts = self._paths(name)
        return pq.read_table(answers), pq.read_table(verdicts)

    def files(self, name: str) -> tuple[Path, Path]:
        """The answers and verdicts files of fragment ``name`` (written by ``pq.write_table`` with
        :data:`COMPRESSION` in the tables' column types: ``scored_files.join_scored_parts`` copies them)."""
        return self._paths(name)

    def answer_key(self, name: str, choice: AnswerKeyChoice | None, make: Callable[[], pa.Table]) -> Path:
        """The file of the answer-key columns of fragment ``name`` under ``choice``: kept, or made by ``make()``
        and kept (in place of those kept under another choice)."""
        path = self.folder / f"{name}.key-{choice_id(choice)}.parquet"
        if path.is_file() and not path.is_symlink():
            return path
        columns = make()
        self._drop_answer_keys(name)
        with atomic_path(path) as tmp:
            pq.write_table(columns, tmp, compression=COMPRESSION)
        return path

    def _drop_answer_keys(self, name: str) -> None:
        """Delete the answer-key columns kept for fragment ``name``, under any choice."""
        for old in self.folder.glob(f"{name}.key-*.parquet"):
            old.unlink()

    def evidence(self, name: str) -> RunEvidence:
        """What the answer-key choice needs of fragment ``name``: kept beside it, or made (and kept) when missing."""
        path = self._evidence_path(name)
        if path.is_file() and not path.is_symlink():
            return _read_evidence(path)
        answers, verdicts = self._paths(name)
        count = given_answers(pq.read_table(answers, columns=["unanswered"]).to_pandas())
        evidence = RunEvidence.of(count, pq.read_table(verdicts, columns=CHOICE_COLUMNS).to_pandas())
        _write_evidence(evidence, path)
        return evidence

    def keep_only(self, names: set[str]) -> None:
        """Delete every file of the folder that is not part of a fragment in ``names`` (runs gone or changed)."""
        wanted = {path.name for name in names for path in (*self._paths(name), self._evidence_path(name))}
        keys = tuple(f"{name}.key-" for name in names)  # a fragment's answer-key columns, under any choice
        for path in self.folder.iterdir() if self.folder.is_dir() else ():
            if path.name not in wanted and not path.name.startswith(keys) and (path.is_file() or path.is_symlink()):
                path.unlink()


def _write(frame: pd.DataFrame, path: Path, schema: pa.Schema) -> None:
    arrow = pa.Table.from_pandas(frame[schema.names], schema=schema, preserve_index=False)
    with atomic_path(path) as tmp:
        pq.write_table(arrow, tmp, compression=COMPRESSION)


_EVIDENCE_SCHEMA = pa.schema([VERDICTS.schema.field(c) for c in CHOICE_COLUMNS])
"""The labelled rows of a run's evidence (their counts ride in the file's metadata)."""


def _write_evidence(evidence: RunEvidence, path: Path) -> None:
    labelled = evidence.labelled if evidence.labelled is not None else pd.DataFrame(columns=CHOICE_COLUMNS)
    counts = {"answers": evidence.answers, "labelled": evidence.labelled is not None}
    arrow = pa.Table.from_pandas(labelled[CHOICE_COLUMNS], schema=_EVIDENCE_SCHEMA, preserve_index=False)
    arrow = arrow.replace_schema_metadata({b"counts": json.dumps(counts, sort_keys=True).encode()})
    with atomic_path(path) as tmp:
        pq.write_table(arrow, tmp, compression=COMPRESSION)


def _read_evidence(path: Path) -> RunEvidence:
    table = pq.read_table(path)
    counts = json.loads(table.schema.metadata[b"counts"])
    labelled = table.to_pandas() if counts["labelled"] else None
    return RunEvidence(int(counts["answers"]), labelled)
