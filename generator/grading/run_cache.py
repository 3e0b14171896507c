"""Each run's grades kept in build/scored/, keyed by everything that can change them.

A run's key (:func:`run_key`) is the sha256 of the run's id and stored files, the
benchmark's questions and grader configurations (:func:`benchmark_digest`),
the human labels of the run's answers, and the grading code itself
(:func:`code_digest`). The grade stage writes each run's files of build/scored
(:class:`~dualboard.scored_files.ScoredFolder`) and records its key in the
folder's ``about.json``: a run whose key is recorded and whose files are there is
not loaded or graded again, so adding one run grades that run only, and a
changed question, grader option, label or Dualboard grades every run again.

:class:`RunCache` writes a run's verdicts, answers (without the answer-key
columns) and, under ``evidence/``, what the choice of the answer-key grader
needs of it (:class:`~dualboard.grading.answer_key_choice.RunEvidence`), so that
choosing over every run reads a few rows per run, not its verdicts. The scored
file, which holds the answer-key columns, is written once the choice is taken
(:meth:`RunCache.write_scored`).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import dualboard
from dualboard.atomic import atomic_path
from dualboard.build_cache import file_sha256
from dualboard.grading.answer_key_choice import (
    CHOICE_COLUMNS,
    AnswerKeyChoice,
    RunEvidence,
    answer_key_columns,
)
from dualboard.grading.registry import get_grader
from dualboard.grading.run_grades import RunGrades, given_answers
from dualboard.grading.verdict import canonical_json, sha256_text
from dualboard.intake.human_labels import LabelRecords
from dualboard.intake.models import Benchmark
from dualboard.safe_read import open_regular
from dualboard.scored_files import ANSWERS, COMPRESSION, EVIDENCE, SCORED, VERDICTS, ScoredFolder

ONCE = ".once-"
"""Marks the key recorded for a run holding a verdict that may not repeat (a judge's timeout): followed by the
digest of its verdicts, it is never found by a later grade, and names what this grade wrote (:meth:`RunCache.save`)."""
GRADING_TOOLS = ("google-re2",)
"""What besides Dualboard decides a verdict: RE2 reads the answers."""


@functools.cache
def code_digest() -> str:
    """sha256 of Dualboard's version, the source of the grading package, of the modules outside it that decide a
    verdict or the bytes of a kept file, and of :data:`GRADING_TOOLS`' versions.

    Editing a grader without raising its version must not leave grades of the old code behind.
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
    outside = ("scored_files.py", "scored_columns.yaml", "linear_regex.py")
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
            sha = file_digest(path) if file_digest is not None else hashlib.file_digest(handle, "sha256").hexdigest()
        digest.update(f"\0{path.name}\0{sha}".encode())
    return digest.hexdigest()


class RunCache:
    """The graded runs of one benchmark, in its folder of build/scored."""

    def __init__(self, folder: ScoredFolder):
        self.folder = folder

    def has(self, run_id: str, key: str, recorded: dict[str, str]) -> bool:
        """Whether run ``run_id`` was graded under ``key`` (as ``recorded`` in ``about.json``) and its files read."""
        return recorded.get(run_id) == key and all(
            self.folder.readable(t, run_id) for t in (ANSWERS, VERDICTS, EVIDENCE)
        )

    def save(self, run_id: str, key: str, grades: RunGrades) -> str:
        """Write ``grades`` as run ``run_id``'s files; return the key to record (``key``, or ``key`` + :data:`ONCE`
        + the digest of its verdicts file when a verdict may not repeat)."""
        verdicts = self.folder.write_run(VERDICTS, run_id, grades.verdicts)
        evidence = RunEvidence.of(given_answers(grades.answers), grades.verdicts)
        _write_evidence(evidence, self.folder.run_file(EVIDENCE, run_id))
        self.folder.write_run(ANSWERS, run_id, grades.answers)
        return key + (ONCE + file_sha256(verdicts) if grades.transient else "")

    def evidence(self, run_id: str) -> RunEvidence:
        """What the answer-key choice needs of run ``run_id`` (:meth:`has` found it readable)."""
        return _read_evidence(self.folder.run_file(EVIDENCE, run_id))

    def write_scored(self, run_id: str, choice: AnswerKeyChoice | None) -> None:
        """Write run ``run_id``'s scored file: its answers' scored columns and the answer-key columns under
        ``choice``, made from its verdicts (no text is read)."""
        columns = [c for c in SCORED.names if c in ANSWERS.stored_names]
        answers = pq.read_table(self.folder.run_file(ANSWERS, run_id), columns=columns)
        verdicts = pq.read_table(self.folder.run_file(VERDICTS, run_id), columns=[*CHOICE_COLUMNS, "verdict_parse"])
        keys = answer_key_columns(answers, verdicts, choice)
        for name in keys.column_names:
            answers = answers.append_column(name, keys[name])
        self.folder.write_run(SCORED, run_id, answers)


_EVIDENCE_SCHEMA = pa.schema([VERDICTS.schema.field(c) for c in CHOICE_COLUMNS])
"""The labelled rows of a run's evidence (their counts ride in the file's metadata)."""


def _write_evidence(evidence: RunEvidence, path: Path) -> None:
    labelled = evidence.labelled if evidence.labelled is not None else pd.DataFrame(columns=CHOICE_COLUMNS)
    counts = {"answers": evidence.answers, "labelled": evidence.labelled is not None}
    arrow = pa.Table.from_pandas(labelled[CHOICE_COLUMNS], schema=_EVIDENCE_SCHEMA, preserve_index=False)
    arrow = arrow.replace_schema_metadata({b"counts": json.dumps(counts, sort_keys=True).encode()})
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        pq.write_table(arrow, tmp, compression=COMPRESSION)


def _read_evidence(path: Path) -> RunEvidence:
    table = pq.read_table(path)
    counts = json.loads(table.schema.metadata[b"counts"])
    labelled = table.to_pandas() if counts["labelled"] else None
    return RunEvidence(int(counts["answers"]), labelled)
