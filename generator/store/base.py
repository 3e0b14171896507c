"""The interface every store implements, and the logical layout they share."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import TYPE_CHECKING, NamedTuple

from dualboard.build_cache import BuildCache
from dualboard.errors import DualboardError
from dualboard.intake.benchmark import LABELS_FILE, MAX_QUESTIONS_BYTES, definition_files
from dualboard.intake.models import Benchmark, Run
from dualboard.intake.validate import METADATA, PREDICTIONS, PROVENANCE, RUN_FILES, Limits
from dualboard.intake.yaml_mapping import MAX_CONFIG_BYTES
from dualboard.names import is_run_name
from dualboard.safe_read import open_regular, read_regular

if TYPE_CHECKING:
    import pandas as pd

BENCHMARKS = "benchmarks"
RUNS = "runs"
REMOVED = "removed"
"""Folder of the removal records: ``removed/<benchmark>/<run_id>.json`` (see :class:`Removal`)."""
REMOVAL_FORMAT = 1
MAX_REASON_CHARS = 500
"""Longest removal reason: one or two sentences on the changelog."""


@dataclass(frozen=True)
class IngestResult:
    """What one ingest changed."""

    revision: str
    """Store revision after the ingest (unchanged when nothing was new)."""
    added: tuple[str, ...]
    """``benchmark/run_id`` of runs new to the store."""
    replaced: tuple[str, ...]
    """Runs whose files changed."""
    unchanged: tuple[str, ...]
    """Runs already stored byte for byte."""
    removed: tuple[str, ...] = ()
    """Runs that left the store (their folder is gone from ``submissions/``)."""
    skipped: bool = False
    """True when the store held every file already, compared by content hash: nothing was copied or written."""


@dataclass(frozen=True)
class StagedFile:
    """One file an ingest wants in the store: logical path and bytes."""

    path: str
    """Path inside the logical tree, with forward slashes."""
    data: bytes
    """Exact bytes to store."""


class Expected(NamedTuple):
    """What a file an ingest stores must hold: the bytes validation read, within the limit it applied."""

    digest: str
    """sha256 of the bytes validated."""
    limit: int
    """Largest size validation accepts for the file, in bytes."""


@dataclass(frozen=True)
class CopiedFile:
    """One file an ingest copies into the store from the folder it was validated in, never held in memory."""

    path: str
    """Path inside the logical tree, with forward slashes."""
    source: Path
    """The file to copy (links refused, as :func:`read_sources` refuses them)."""
    expected: Expected
    """What validation read: the copy must hash to its digest, and is refused past its limit."""


class SourceChangedError(DualboardError):
    """A file changed between its validation and its copy into the store; the store is as it was."""


def changed_since_validated(source: Path) -> SourceChangedError:
    """The error for a file whose bytes are not those validation read (rewritten, added or deleted since)."""
    return SourceChangedError(
        f"{source}: changed after it was validated (its bytes are not those checked); nothing "
        "was stored — do not edit submissions while a build runs, and run the command again"
    )


def expected_files(runs: list[Run], benchmarks: dict[str, Benchmark]) -> dict[str, Expected]:
    """What each file of :func:`staged_sources` must hold, by logical path, for ``runs`` as validation returned
    them (:attr:`Run.digests`, the bytes it read, under the default :class:`Limits` it applied).

    The definitions of the runs' benchmarks are pinned by the bytes they were loaded from
    (:attr:`Benchmark.digests`), those the runs were checked against: an ingest reads them again only to copy
    them, and stores these bytes or nothing.
    """
    limits = Limits()
    sizes = {
        METADATA: limits.metadata_bytes,
        PREDICTIONS: limits.predictions_bytes,
        PROVENANCE: limits.provenance_bytes,
        "benchmark.yaml": MAX_CONFIG_BYTES,
        "questions.jsonl": MAX_QUESTIONS_BYTES,
        LABELS_FILE: MAX_QUESTIONS_BYTES,
    }
    expected = {
        f"{RUNS}/{run.benchmark}/{run.run_id}/{name}": Expected(value, sizes[name])
        for run in runs
        for name, value in run.digests.items()
    }
    for name in sorted({run.benchmark for run in runs}):
        for file, value in benchmarks[name].digests.items():
            expected[f"{BENCHMARKS}/{name}/{file}"] = Expected(value, sizes.get(file, MAX_QUESTIONS_BYTES))
    return expected


def check_sources(sources: list[tuple[str, Path]], expected: dict[str, Expected]) -> None:
    """Raise SourceChangedError unless ``sources`` are the very files ``expected`` names (none added or
    deleted since validation); UnsafeFileError for a link or special file put there since."""
    listed = dict(sources)
    for logical, source in sources:
        if logical not in expected:
            open_regular(source, root=source_root(source)).close()  # a link or a special file: says so
            raise changed_since_validated(source)
    for logical in expected.keys() - listed.keys():
        raise changed_since_validated(Path(logical))


@dataclass(frozen=True)
class Removal:
    """Why and when a run left the store; kept in the store at ``removed/<benchmark>/<run_id>.json``.

    The record stays after the run's files are gone, so the release manifest
    and the changelog can say why a run is missing; a run that comes back
    drops its record.
    """

    run: str
    """``benchmark/run_id`` of the run that left."""
    date: str
    """Day it left, ``YYYY-MM-DD`` (given, or the date of the commit that deleted it)."""
    reason: str = ""
    """Why, as given to ``dualboard remove --reason`` (empty: the folder was deleted without one)."""
    format: int = REMOVAL_FORMAT
    """Version of this record's layout."""

    def file(self) -> StagedFile:
        """The record as the store file it is kept in."""
        text = json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        return StagedFile(removal_path(self.run), text.encode("utf-8"))


def removal_path(run: str) -> str:
    """Logical path of the removal record of ``benchmark/run_id``."""
    return f"{REMOVED}/{run}.json"


def read_removals(base: Path) -> list[Removal]:
    """The removal records of the tree at ``base``, sorted by run; unreadable ones are skipped.

    The store writes these files itself, but a Hub dataset can be edited by
    hand: a record that is not one is ignored rather than failing a release.
    """
    records = []
    for path in sorted((base / REMOVED).glob("*/*.json")):
        try:
            record = Removal(**json.loads(path.read_text("utf-8")))
        except (ValueError, TypeError, OSError):
            continue
        if (
            record.format == REMOVAL_FORMAT
            and all(isinstance(v, str) for v in (record.run, record.date, record.reason))
            and is_run_name(record.run)
            and len(record.reason) <= MAX_REASON_CHARS
            and len(record.date) <= 10
        ):
            records.append(record)
    return records


def stored_runs(base: Path) -> set[str]:
    """``benchmark/run_id`` of every run in the tree at ``base``."""
    return {f"{p.parent.name}/{p.name}" for p in (base / RUNS).glob("*/*") if p.is_dir()}


def departures(base: Path, run_dirs: list[Path], removal_date: Callable[[str], str]) -> list[Removal]:
    """The runs stored at ``base`` that ``run_dirs`` (every run there is) lacks, as removals dated by
    ``removal_date(benchmark/run_id)``."""
    present = {f"{d.parent.name}/{d.name}" for d in run_dirs}
    return [Removal(run, removal_date(run)) for run in sorted(stored_runs(base) - present)]


def leaving_paths(base: Path, leaving: list[str], arriving: list[str]) -> list[str]:
    """Logical paths to delete: the folders of ``leaving`` runs, the removal records of ``arriving`` ones,
    and the definition of a benchmark none of whose runs stay (it comes back with its next run)."""
    paths = [f"{RUNS}/{run}" for run in leaving]
    paths += [removal_path(run) for run in arriving if (base / removal_path(run)).is_file()]
    staying = {r.split("/")[0] for r in (stored_runs(base) - set(leaving)) | set(arriving)}
    paths += [
        f"{BENCHMARKS}/{b}"
        for b in sorted({r.split("/")[0] for r in leaving} - staying)
        if (base / BENCHMARKS / b).is_dir()
    ]
    return paths


def files_under(base: Path, paths: list[str]) -> list[str]:
    """The logical paths of every file of the tree at ``base`` that is, or lies in, one of ``paths``.

    A Hub commit deletes files one by one; this turns the folders of
    :func:`leaving_paths` into those files.
    """
    out = []
    for logical in paths:
        path = base / logical
        found = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        out += [p.relative_to(base).as_posix() for p in found]
    return out


class UnsafeStorePathError(DualboardError):
    """A file name in the store that could escape the folder it is read into."""


def staged_files(
    run_dirs: list[Path], benchmarks: dict[str, Benchmark], expected: dict[str, Expected]
) -> list[StagedFile]:
    """List the files an ingest of these (already validated) runs writes: the bytes of ``expected``
    (:func:`expected_files`), or SourceChangedError.

    Benchmark definitions travel with their runs so that a store is a
    self-contained dataset: anyone can rebuild a release from it alone.
    Every file is read with :func:`dualboard.safe_read.read_regular` from the
    folder above ``benchmarks/<name>/`` or ``<benchmark>/<run>/``, so a link
    anywhere on the way (``human_labels.csv -> /proc/self/environ``) raises
    instead of putting what it points at into the store.
    """
    sources = staged_sources(run_dirs, benchmarks)
    check_sources(sources, expected)
    return read_sources(sources, expected)


def read_sources(sources: list[tuple[str, Path]], expected: dict[str, Expected]) -> list[StagedFile]:
    """Read (logical path, file) pairs of :func:`staged_sources` as :class:`StagedFile` (links refused), each
    the bytes ``expected`` names, within its limit, or SourceChangedError."""
    files = []
    for logical, source in sources:
        want = expected[logical]
        data = read_regular(source, root=source_root(source), limit=want.limit)
        if hashlib.sha256(data).hexdigest() != want.digest:
            raise changed_since_validated(source)
        files.append(StagedFile(logical, data))
    return files


def source_root(source: Path) -> Path:
    """The folder a file of :func:`staged_sources` is read from, with no link allowed below it: ``data/`` for
    ``benchmarks/<name>/<file>``, ``submissions/`` for ``<benchmark>/<run>/<file>``."""
    return source.parent.parent.parent


def staged_sources(run_dirs: list[Path], benchmarks: dict[str, Benchmark]) -> list[tuple[str, Path]]:
    """The files of :func:`staged_files` as (logical path, file to read), read nothing.

    A file that exists counts, a link included (reading it is refused).
    """
    sources: list[tuple[str, Path]] = []
    for name in sorted({d.parent.name for d in run_dirs}):
        folder = benchmarks[name].path
        if folder is not None:
            sources += _present(folder, tuple(definition_files(folder)), f"{BENCHMARKS}/{name}")
    for run_dir in run_dirs:
        sources += _present(run_dir, RUN_FILES, f"{RUNS}/{run_dir.parent.name}/{run_dir.name}")
    return sources


def _present(folder: Path, names: tuple[str, ...], logical: str) -> list[tuple[str, Path]]:
    return [(f"{logical}/{name}", folder / name) for name in names if os.path.lexists(folder / name)]


def check_logical_path(path: str, where: str) -> str:
    """Return ``path`` if it is a safe relative path of the logical tree; raise otherwise.

    Refused: absolute paths, empty, ``.`` or ``..`` parts, drive letters,
    backslashes, control characters. Such a name could make ``folder / path``
    point outside the folder a snapshot is read into (or, on Windows, onto
    another drive).

    Raises
    ------
    UnsafeStorePathError
        Naming the file, where it was found, and how to fix it.
    """
    segments = path.split("/")
    if (
        path.startswith("/")
        or "\\" in path
        or not path.isprintable()
        or any(s in ("", ".", "..") or PureWindowsPath(s).drive for s in segments)
    ):
        raise UnsafeStorePathError(
            f"{where}: file name {path!r} could escape the store folder (an absolute path, "
            "empty, '.' or '..' parts, a drive, backslashes or control characters); nothing "
            "was downloaded or written — rename or delete that file in the dataset"
        )
    return path


def classify(base: Path, wanted: list[StagedFile]) -> tuple[list[str], list[str], list[str]]:
    """Sort the runs of ``wanted`` into added, replaced and unchanged against the tree at ``base``."""
    added, replaced, unchanged = [], [], []
    by_run: dict[str, list[StagedFile]] = {}
    for f in wanted:
        if f.path.startswith(f"{RUNS}/"):
            by_run.setdefault("/".join(f.path.split("/")[1:3]), []).append(f)
    for run, files in sorted(by_run.items()):
        if not (base / RUNS / run).exists():
            added.append(run)
        elif all(same_bytes(base, f) for f in files):
            unchanged.append(run)
        else:
            replaced.append(run)
    return added, replaced, unchanged


def compare_sources(
    base: Path, sources: list[tuple[str, Path]], cache: BuildCache, expected: dict[str, Expected]
) -> tuple[list[tuple[str, Path]], dict[str, str]]:
    """Split the pairs of :func:`staged_sources` into those whose file the tree at ``base`` lacks or holds
    with bytes other than validated (``expected``), and the logical paths of the others with their sha256.

    The tree's files are compared by content hash, remembered by stat (:class:`BuildCache`); the sources
    are not read at all: what they must hold is what validation read.
    """
    changed, same = [], {}
    for logical, source in sources:
        try:
            stored = cache.file_digest(base / logical)
            if stored == expected[logical].digest:
                same[logical] = stored
                continue
        except OSError:
            pass
        changed.append((logical, source))
    return changed, same


def classify_runs(base: Path, run_dirs: list[Path], changed: list[tuple[str, Path]]) -> tuple[list, list, list]:
    """Sort ``run_dirs`` into added, replaced and unchanged against the tree at ``base``, given the
    changed files of :func:`compare_sources` (the others are stored byte for byte)."""
    touched = {"/".join(logical.split("/")[1:3]) for logical, _source in changed if logical.startswith(f"{RUNS}/")}
    added, replaced, unchanged = [], [], []
    for run in sorted(f"{d.parent.name}/{d.name}" for d in run_dirs):
        if not (base / RUNS / run).exists():
            added.append(run)
        else:
            (replaced if run in touched else unchanged).append(run)
    return added, replaced, unchanged


def same_bytes(base: Path, f: StagedFile) -> bool:
    """Whether the tree at ``base`` already holds ``f`` byte for byte."""
    path = base / f.path
    return path.is_file() and path.read_bytes() == f.data


class RunNotStoredError(DualboardError):
    """``dualboard remove`` named a run the store does not hold."""


def check_stored(base: Path, run: str, where: str) -> None:
    """Raise RunNotStoredError unless the tree at ``base`` holds ``run``, listing what it does hold."""
    runs = stored_runs(base)
    if run not in runs:
        benchmark = run.split("/")[0]
        same = sorted(r for r in runs if r.startswith(f"{benchmark}/"))
        shown = ", ".join(same[:10]) + (" …" if len(same) > 10 else "") if same else "none"
        raise RunNotStoredError(
            f"{where}: holds no run {run!r} (runs of {benchmark!r}: {shown}); nothing was "
            "changed — name the run as BENCHMARK/RUN_ID, as listed"
        )


class HubDataset(NamedTuple):
    """Where a Hub store lives: the dataset ``ORG/NAME`` and the Hub's address."""

    repo_id: str
    endpoint: str


class Store(ABC):
    """A place that holds accepted runs, readable as a local folder."""

    @abstractmethod
    def describe(self) -> str:
        """Which store this is, in words (recorded in build/ so that publish pushes to the store the build read)."""

    @abstractmethod
    def revision(self) -> str:
        """The current revision (a snapshot name or a commit hash)."""

    @abstractmethod
    def snapshot(self, revision: str | None = None) -> Path:
        """A local folder holding the logical tree at ``revision`` (default: current)."""

    @abstractmethod
    def ingest(
        self,
        run_dirs: list[Path],
        benchmarks: dict[str, Benchmark],
        *,
        removal_date: Callable[[str], str] | None = None,
        cache: BuildCache | None = None,
    ) -> IngestResult:
        """Validate and add runs in one atomic step; raise and change nothing on any problem.

        With ``removal_date``, ``run_dirs`` is every run there is
        (``submissions/`` is the source of truth): stored runs not among them
        leave in the same step, recorded as removed on
        ``removal_date("benchmark/run_id")`` (``YYYY-MM-DD``). With a ``cache``,
        runs validated before are not read again (:func:`dualboard.intake.validate.check_runs`).
        """

    @abstractmethod
    def remove(self, removal: Removal) -> str:
        """Take ``removal.run`` out of the store in one atomic step, keeping the record; return the new revision.

        Raises
        ------
        RunNotStoredError
            When the store does not hold that run (nothing is changed).
        """

    def hub_dataset(self) -> HubDataset | None:
        """The Hugging Face Hub dataset this store reads, which a release names; None for a local store."""
        return None

    def retried_calls(self) -> list[str]:
        """One line per call to the store that failed and then passed on a retry, for the command's report.

        A local store never retries; a Hub store lists its calls since it was made.
        """
        return []

    def run_dirs(self, benchmark: str | None = None) -> list[Path]:
        """Stored run folders (of one benchmark, or all), sorted."""
        root = self.snapshot() / RUNS
        pattern = f"{benchmark}/*" if benchmark else "*/*"
        return sorted(p for p in root.glob(pattern) if p.is_dir())

    # -- the verdict cache -------------------------------------------------
    # Verdicts are content-addressed, so they hold whatever the revision: they
    # never go into a snapshot (snapshots stay as they were read) and saving
    # them never changes the revision a build read.

    @abstractmethod
    def verdict_root(self) -> Path:
        """The local folder whose ``verdicts/`` receives the verdicts saved through this store."""

    def load_verdicts(self, grader: str, config_hash: str) -> pd.DataFrame:
        """Every cached verdict of one grader configuration: the read tree's, then those saved since.

        Columns: :data:`dualboard.store.verdicts.PART_COLUMNS`, one row per key.
        """
        from dualboard.store.verdicts import read_parts  # pandas and pyarrow: loaded when grading needs them

        return read_parts([self.snapshot(), self.verdict_root()], grader, config_hash)

    def verdict_parts(self, grader: str, config_hash: str) -> list[Path]:
        """The parts :meth:`load_verdicts` reads, in its order (a grade reads only those that may hold a key)."""
        from dualboard.store.verdicts import part_files

        return part_files([self.snapshot(), self.verdict_root()], grader, config_hash)

    def save_verdicts(self, grader: str, config_hash: str, frame: pd.DataFrame) -> Path | None:
        """Save new verdicts as one part under :meth:`verdict_root` (see dualboard.store.verdicts)."""
        from dualboard.store.verdicts import write_part

        return write_part(self.verdict_root(), grader, config_hash, frame)

    def waiting_verdicts(self) -> list[Path]:
        """Saved verdict parts that have not reached the store itself yet (a Hub store's, until
        ``dualboard publish``); none for a store that keeps them where it saves them."""
        return []
