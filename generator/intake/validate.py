"""Validate submitted runs: every problem found in one pass, then one verdict.

A run folder is ``submissions/<benchmark>/<run_id>/`` holding
``predictions.jsonl`` and ``metadata.yaml``. :func:`check_run` returns the
parsed :class:`~dualboard.intake.models.Run` (or ``None``) and the list of
findings; :func:`check_runs` collects the findings of every run (what
``dualboard validate`` prints) and :func:`load_runs` raises one
:class:`InvalidInputError` carrying them all, so a submitter sees all problems
at once.

Submissions are untrusted: a run folder must sit inside ``submissions/``, hold
no symbolic links (they could point at any file of the build machine), and its
YAML may use neither aliases (a "billion laughs" bomb expands a few KB into
gigabytes) nor deep nesting.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import product
from operator import attrgetter, itemgetter
from pathlib import Path
from types import MappingProxyType
from typing import Any, BinaryIO

from dualboard.build_cache import BuildCache, code_digest, digest, stat_key
from dualboard.errors import Finding, InvalidInputError
from dualboard.intake.benchmark import definition_files, load_benchmarks
from dualboard.intake.human_labels import label_files, stale_label_findings
from dualboard.intake.model_names import NamedRun, clash_findings, hidden_character_findings
from dualboard.intake.models import Benchmark, Run
from dualboard.intake.prediction_decoder import LEAD, Prediction, answer_keys, as_row, confirmed_framed, confirmed_row
from dualboard.intake.schemas import schema_findings
from dualboard.intake.untrusted import decode_utf8, iter_json_lines, parse_json_line, parse_yaml, yaml_field_lines
from dualboard.names import RUN_ID_RULE, colliding, is_git_file, is_name
from dualboard.safe_read import UnsafeFileError, open_regular, untrusted_findings
from dualboard.workers import default_jobs, process_pool

PREDICTIONS = "predictions.jsonl"
METADATA = "metadata.yaml"
PROVENANCE = "provenance.jsonl"
"""Optional: where each answer came from (e.g. an importer's source fields); stored, never graded."""
RUN_FILES = (METADATA, PREDICTIONS, PROVENANCE)
"""Files a run folder may hold; everything else is reported."""
MAX_REPORTED_PER_FILE = 50
FAST_PATH_PATIENCE = 64
"""After this many lines in a row the fast decoder could not confirm, it is tried on one line in this many
only, until it confirms one again: a refused line costs it a raised exception, and a file broken on every
line would be slower than without it. Results never depend on it (a line it skips takes the exact path)."""
POOL_MIN_BYTES = 128 * 1024 * 1024
"""Predictions (bytes, all runs to read together) below which validation reads them in its own process: the
first pool of a process starts a server that imports the validator, and below this size workers do not repay
it (bench/README.md)."""


@dataclass(frozen=True)
class Limits:
    """Size limits that protect the build from oversized submissions."""

    predictions_bytes: int = 50 * 1024 * 1024
    """Largest accepted predictions.jsonl."""
    response_bytes: int = 100 * 1024
    """Largest accepted single response (UTF-8 bytes)."""
    metadata_bytes: int = 64 * 1024
    """Largest accepted metadata.yaml (also bounds YAML alias expansion)."""
    provenance_bytes: int = 50 * 1024 * 1024
    """Largest accepted provenance.jsonl (it is stored and published like the predictions)."""


def find_run_dirs(paths: list[Path]) -> list[Path]:
    """Expand submission paths to run folders.

    A path may be a run folder (holding predictions.jsonl), a benchmark folder
    (``submissions/<benchmark>``) or the submissions root; folders are sorted so
    every build sees runs in the same order.
    """
    found: list[Path] = []
    for path in paths:
        if (path / PREDICTIONS).exists() or (path / METADATA).exists():
            found.append(path)
            continue
        for depth in ("*", "*/*"):
            found += sorted(p.parent for p in path.glob(f"{depth}/{METADATA}"))
            found += sorted(p.parent for p in path.glob(f"{depth}/{PREDICTIONS}"))
    return sorted(set(found))


@dataclass(frozen=True)
class ValidationReport:
    """Everything one validation pass found: the valid runs and every finding."""

    runs: tuple[Run, ...]
    """Runs without errors (warnings allowed), in folder order."""
    findings: tuple[Finding, ...] = field(default=())
    """Every problem of every run, errors and warnings."""

    @property
    def errors(self) -> list[Finding]:
        """The findings that reject the submission."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        """True when nothing is rejected (warnings may remain)."""
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        """The report as ``dualboard validate --format json`` prints it."""
        return {
            "valid": self.ok,
            "runs": [{"benchmark": r.benchmark, "run_id": r.run_id, "answers": len(r.predictions)} for r in self.runs],
            "findings": [
                {
                    "file": f.file,
                    "line": f.line,
                    "field": f.field,
                    "problem": f.problem,
                    "fix": f.fix,
                    "severity": f.severity,
                }
                for f in self.findings
            ],
        }

    def relative_to(self, root: Path) -> ValidationReport:
        """The same report with every finding's file relative to ``root``, the leaderboard folder."""
        return ValidationReport(self.runs, tuple(dict.fromkeys(f.relative_to(root) for f in self.findings)))


@dataclass(frozen=True)
class _RunCheck:
    """What checking one run folder found."""

    run_dir: Path
    run: Run | None
    """The run, when it has no errors."""
    benchmark: str | None
    """The benchmark it answers (its metadata's, else its folder's), when that benchmark exists."""
    findings: tuple[Finding, ...]


def check_runs(
    run_dirs: list[Path],
    benchmarks: dict[str, Benchmark],
    limits: Limits = Limits(),
    *,
    submissions_root: Path | None = None,
    cache: BuildCache | None = None,
    jobs: int | None = None,
    keep_rows: bool = True,
    meanwhile: Callable[[], None] = lambda: None,
    new: Collection[Path] = (),
    board: Collection[Path] = (),
) -> ValidationReport:
    """Check every run folder in one pass; never raises for bad input.

    ``submissions_root``, when given, is the folder every run must sit inside
    (``<benchmark>/<run_id>/`` directly under it). Runs are compared with each
    other whether or not they have errors of their own, so a clash of run ids
    is reported together with everything else.

    With a ``cache``, a run whose files, benchmark definitions, limits and
    validating code are those of a run that passed before without a finding
    is not read again (:func:`_run_key`; its files' digests are known by their
    stat): its predictions are read on first use (:class:`DeferredPredictions`),
    and the checks of its folder's place and of clashing ids still run. Any
    other run is read once: its bytes are hashed as they are checked, and a
    clean run's digests are remembered.

    ``jobs``: the most processes that read predictions files side by side
    (default: one per core; see :func:`_read_all`). The report is the same for any number.
    ``meanwhile``: the caller's own work, done in this process while they read.

    ``new``: the run folders a pull request adds or changes, where a clash of run ids is reported
    (:func:`_duplicate_findings`). ``board``: other run folders, not checked, whose ids the runs must not clash with.

    ``keep_rows=False``: the runs' predictions are counted, not kept, and read
    again on first use (:class:`DeferredPredictions`): for a check that only
    reports, a million answers never sit in memory.
    """
    benchmarks_key = _benchmarks_key(benchmarks, cache) if cache is not None else None
    started = [_start_check(d, benchmarks, limits, submissions_root, cache, benchmarks_key) for d in run_dirs]
    to_read = [check for check in started if isinstance(check, _ToRead)]
    validated = cache.validated_runs() if cache is not None else {}
    answers = dict(
        zip(map(id, to_read), _read_all(to_read, limits, jobs, keep_rows, validated, meanwhile), strict=True)
    )
    checks = [
        check
        if isinstance(check, _RunCheck)
        else _finish_check(check, answers[id(check)], limits, cache, benchmarks_key)
        for check in started
    ]
    others = [_RunCheck(d, None, d.parent.name, ()) for d in board if d.parent.name in benchmarks]
    findings = [f for check in checks for f in check.findings] + _duplicate_findings([*checks, *others], new)
    findings += _model_findings([*checks, *others], new, limits)
    return ValidationReport(tuple(c.run for c in checks if c.run is not None), tuple(findings))


def validate_submissions(
    data_dir: Path,
    paths: list[Path],
    submissions_root: Path,
    limits: Limits = Limits(),
    *,
    cache: BuildCache | None = None,
    benchmarks: dict[str, Benchmark] | None = None,
    meanwhile: Callable[[], None] = lambda: None,
    new: Collection[Path] | None = None,
) -> ValidationReport:
    """Check everything a pull request can change that the build reads; never raises for bad input.

    That is the runs under ``paths`` and the whole of ``data/`` and
    ``submissions/``: a link anywhere in them is a finding, and so is a run
    folder at the wrong depth (it would be silently skipped). A broken
    benchmark definition comes back as findings too, so ``--format json``
    always prints one JSON document. ``cache``: see :func:`check_runs`. The
    runs' predictions are read again on first use (:class:`DeferredPredictions`).
    ``benchmarks``: those of ``data_dir``, when the caller has loaded them already.
    ``meanwhile``: the caller's own work, done while worker processes read the predictions (as the
    checks of the folders are).

    ``new``: the run folders the pull request adds or changes (default: the runs under ``paths``, unless that
    is all of ``submissions/``): a clash of run ids is reported there, and the ids of the runs under
    ``paths`` are compared with those of every other run folder.
    """
    findings: list[Finding] = []

    def folder_checks() -> None:
        findings.extend(
            [
                *untrusted_findings(data_dir),
                *untrusted_findings(submissions_root),
                *_submissions_tree_findings(submissions_root),
            ]
        )
        meanwhile()

    try:
        benchmarks = benchmarks if benchmarks is not None else load_benchmarks(data_dir)
    except InvalidInputError as exc:
        folder_checks()
        return ValidationReport((), tuple(dict.fromkeys([*findings, *exc.findings])))
    run_dirs = find_run_dirs(paths)
    checked = {_resolved(d) for d in run_dirs}
    board = [d for d in find_run_dirs([submissions_root]) if _resolved(d) not in checked]
    report = check_runs(
        run_dirs,
        benchmarks,
        limits,
        submissions_root=submissions_root,
        cache=cache,
        keep_rows=False,
        meanwhile=folder_checks,
        new=(run_dirs if board else ()) if new is None else new,
        board=board,
    )
    findings += _label_findings(benchmarks, report.runs)
    return ValidationReport(report.runs, tuple(dict.fromkeys([*findings, *report.findings])))


def _label_findings(benchmarks: Mapping[str, Benchmark], runs: Sequence[Run]) -> list[Finding]:
    """Human labels naming an answer of ``runs`` whose response is not the one the label judged."""
    findings = []
    for name, benchmark in sorted(benchmarks.items()):
        for file in label_files(benchmark.path) if benchmark.path else ():
            if (benchmark.path / file).is_file():
                findings += stale_label_findings(benchmark.path / file, [run for run in runs if run.benchmark == name])
    return findings


def _submissions_tree_findings(submissions_root: Path) -> list[Finding]:
    """Run files deeper than ``submissions/<benchmark>/<run_id>/`` (the build would never see them), and git files
    above the run folders (a run folder's own are its checks' findings)."""
    findings = []
    for folder, dirs, files in os.walk(submissions_root):  # links are not followed (and reported above)
        depth = len(Path(folder).relative_to(submissions_root).parts)
        if depth < 2:
            findings += [_git_file_finding(Path(folder) / name) for name in sorted(files) if is_git_file(name)]
        if depth > 2 and ({METADATA, PREDICTIONS} & set(files)):
            findings.append(
                Finding(
                    folder,
                    None,
                    "path",
                    "run folder is nested too deep: the build only reads submissions/<benchmark>/<run_id>/",
                    "move the run folder up to submissions/<benchmark>/<run_id>/",
                )
            )
        dirs.sort()
    return findings


def load_runs(
    run_dirs: list[Path],
    benchmarks: dict[str, Benchmark],
    limits: Limits = Limits(),
    *,
    submissions_root: Path | None = None,
    cache: BuildCache | None = None,
) -> list[Run]:
    """Check every run folder; return the runs, or raise once with every finding (``cache``: see check_runs)."""
    report = check_runs(run_dirs, benchmarks, limits, submissions_root=submissions_root, cache=cache)
    if not report.ok:
        raise InvalidInputError(list(report.findings))
    return list(report.runs)


def _duplicate_findings(checks: list[_RunCheck], new: Collection[Path] = ()) -> list[Finding]:
    """Runs submitted twice, and distinct run ids that would share a page (``fjord_3b``, ``fjord-3b``).

    A clash of ids is reported at each folder of ``new`` (the pull request's runs) among those sharing the page,
    naming the others, which may be on the board already; a clash among runs none of which is new is left
    alone when some run is new (it is not the pull request's to fix), else reported at the id that sorts last.
    """
    folders: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for check in checks:
        if check.benchmark is not None:
            folders[(check.benchmark, check.run_dir.name)].append(check.run_dir)
    findings = [
        Finding(
            str(again),
            None,
            "run_id",
            f"run {b}/{r} is submitted twice: also in {_short(dirs[0])}",
            "keep one folder per run id",
        )
        for (b, r), dirs in folders.items()
        for again in dirs[1:]
    ]
    new = {_resolved(d) for d in find_run_dirs(list(new))}  # a benchmark folder stands for its runs
    for benchmark in sorted({b for b, _ in folders}):
        for group in colliding({r for b, r in folders if b == benchmark}):
            added = [r for r in group if _resolved(folders[(benchmark, r)][0]) in new]
            if not added and new:
                continue  # a clash among runs the pull request did not touch is not its to fix
            added = added or group[-1:]
            for run in added:
                others = ", ".join(other for other in group if other != run)
                findings.append(
                    Finding(
                        str(folders[(benchmark, run)][0]),
                        None,
                        "run_id",
                        f"run id {run} of {benchmark} names the same run page as {others} "
                        "(ids are compared ignoring case, '.', '_' and '-')",
                        f"rename this run so its id differs from {others} in letters or digits",
                    )
                )
    return findings


def _model_findings(checks: list[_RunCheck], new: Collection[Path], limits: Limits) -> list[Finding]:
    """Model names a reader could not tell apart among a benchmark's runs, the pull request's and the board's
    (:func:`~dualboard.intake.model_names.clash_findings`; ``new`` as for :func:`_duplicate_findings`)."""
    resolved = {_resolved(d) for d in find_run_dirs(list(new))}
    named: dict[str, list[NamedRun]] = defaultdict(list)
    for check in checks:
        metadata = _read_metadata(check.run_dir / METADATA, limits) if check.benchmark is not None else None
        if metadata is not None and isinstance(metadata.fields.get("model"), str):
            model, revision = metadata.fields["model"], metadata.fields.get("model_revision")
            named[check.benchmark].append(NamedRun(check.run_dir, model, revision, metadata.line("model")))
    at = {run.run_dir for runs in named.values() for run in runs if _resolved(run.run_dir) in resolved}
    return [f for runs in named.values() for f in clash_findings(runs, at)] if not new or at else []


def _resolved(run_dir: Path) -> Path:
    """``run_dir`` as an absolute path without links, to tell the same folder named two ways."""
    try:
        return run_dir.resolve()
    except OSError:
        return run_dir


def _short(run_dir: Path) -> str:
    """``<benchmark>/<run_id>/``: a run folder named without the machine's path."""
    return f"{run_dir.parent.name}/{run_dir.name}/"


def check_run(
    run_dir: Path, benchmarks: dict[str, Benchmark], limits: Limits = Limits(), *, submissions_root: Path | None = None
) -> tuple[Run | None, list[Finding]]:
    """Check one run folder; return the Run when it has no errors, and all findings.

    Bad input never raises: every problem, however the file is broken, comes
    back as a Finding naming the file, the field and the fix.
    """
    check = _check_run(run_dir, benchmarks, limits, submissions_root, None, None)
    return check.run, list(check.findings)


def _check_run(
    run_dir: Path,
    benchmarks: dict[str, Benchmark],
    limits: Limits,
    submissions_root: Path | None,
    cache: BuildCache | None,
    benchmarks_key: str | None,
) -> _RunCheck:
    """Every check of one run in one pass: a wrong field never hides the checks that do not depend on it.

    Metadata fields that are fine are used even when others are wrong (a valid
    ``rounds`` still bounds the rounds of the predictions), and every
    prediction line whose question and round can be read counts for the
    duplicate and coverage checks, whatever else is wrong with it.
    """
    started = _start_check(run_dir, benchmarks, limits, submissions_root, cache, benchmarks_key)
    if isinstance(started, _RunCheck):
        return started
    return _finish_check(started, started.read(limits), limits, cache, benchmarks_key)


@dataclass(frozen=True)
class _ToRead:
    """A run checked up to its predictions.jsonl: what reading that file (and provenance.jsonl) needs, and
    what was found so far.

    Reading is the one costly step of a run's check, and it depends on nothing
    but these fields, so :func:`check_runs` can read the files of several runs
    in worker processes (:func:`_read_all`) between :func:`_start_check` and
    :func:`_finish_check`.
    """

    run_dir: Path
    metadata: _Metadata
    benchmark: Benchmark | None
    older: bool
    findings: tuple[Finding, ...]
    benchmarks_key: str | None
    """What the run's validation key takes from the benchmarks (:func:`_run_key`), when a cache is kept."""

    @property
    def rounds(self) -> int | None:
        return self.metadata.fields.get("rounds")

    def deferred(self, limits: Limits, count: int, *, from_cache: bool = False) -> DeferredPredictions:
        """The rows of a valid predictions.jsonl of ``count`` rows, read again when first used."""
        path = self.run_dir / PREDICTIONS
        return DeferredPredictions(path, self.benchmark, self.rounds, limits, self.older, count, from_cache)

    def read(
        self, limits: Limits, *, keep_rows: bool = True, validated: Mapping[str, int] = MappingProxyType({})
    ) -> _Answers:
        """Read and check predictions.jsonl (:func:`_read_predictions`), whether it answers everything, and
        provenance.jsonl.

        ``validated``: answers by run key of the runs that passed before (:meth:`BuildCache.validated_runs`).
        A run whose bytes, hashed as they are read, make one of those keys is counted, not checked again
        (``vouched``): a file rewritten with the same bytes, whose stat the cache does not know.
        """
        provenance, seen, problems = _read_provenance(self.run_dir / PROVENANCE, limits)
        path = self.run_dir / PREDICTIONS
        vouched = None
        if validated and self.benchmarks_key is not None and self.benchmark is not None and not self.findings:

            def vouched(read: dict[str, _Seen]) -> int | None:
                digests = {file: r.digest for file, r in {**self.metadata.seen, **seen, **read}.items()}
                return validated.get(_run_key(self.run_dir, self.benchmarks_key, limits, digests))

        answers = _read_predictions(
            path, self.benchmark, self.rounds, limits, older=self.older, keep_rows=keep_rows, vouched=vouched
        )
        answers.seen.update(seen)
        if answers.vouched:
            return answers
        if self.benchmark is not None and self.rounds is not None:
            answers.coverage = _coverage_findings(path, answers, self.benchmark, self.rounds, self.metadata.fields)
        answers.provenance = (
            problems if provenance is None else _provenance_findings(path.parent / PROVENANCE, provenance)
        )
        return answers


def _start_check(
    run_dir: Path,
    benchmarks: dict[str, Benchmark],
    limits: Limits,
    submissions_root: Path | None,
    cache: BuildCache | None,
    benchmarks_key: str | None,
) -> _RunCheck | _ToRead:
    """The checks of a run before its predictions: the finished check, or what is left to read."""
    findings = _check_run_id(run_dir) + _location_findings(run_dir, submissions_root)
    if any(f.field == "path" and f.severity == "error" for f in findings):
        return _RunCheck(run_dir, None, None, tuple(findings))  # never read through a link or outside submissions/
    # a run is looked up only when every file's digest is known by its stat: a file to hash is read once, below
    digests = {} if cache is None or benchmarks_key is None else _known_digests(run_dir, limits, cache)
    key = _run_key(run_dir, benchmarks_key, limits, digests) if digests else None
    metadata = _read_metadata(run_dir / METADATA, limits)
    findings += metadata.findings
    benchmark = _resolve_benchmark(run_dir, metadata, benchmarks, findings)
    rounds = metadata.fields.get("rounds")
    older = benchmark is not None and benchmark.answers_older_version(metadata.fields)
    known = cache.validated(key) if cache is not None and key is not None else None
    read = metadata.seen.get(METADATA)  # the bytes parsed are those the key vouches for, or the run is read
    if known is not None and benchmark is not None and not findings and read and read.digest == digests[METADATA]:
        predictions = DeferredPredictions(run_dir / PREDICTIONS, benchmark, rounds, limits, older, known, True)
        run = Run(benchmark.name, run_dir.name, metadata.fields, predictions, digests)
        return _RunCheck(run_dir, run, benchmark.name, ())
    return _ToRead(run_dir, metadata, benchmark, older, tuple(findings), benchmarks_key if cache is not None else None)


def _finish_check(
    started: _ToRead, answers: _Answers, limits: Limits, cache: BuildCache | None, benchmarks_key: str | None
) -> _RunCheck:
    """The checks of a run once its predictions.jsonl is read (``answers``); remember a clean run in ``cache``."""
    run_dir, benchmark, metadata = started.run_dir, started.benchmark, started.metadata
    findings = [*started.findings, *answers.findings, *answers.provenance, *answers.coverage]
    name = benchmark.name if benchmark is not None else None
    if any(f.severity == "error" for f in findings) or benchmark is None or metadata.findings:
        return _RunCheck(run_dir, None, name, tuple(findings))
    kept = len(answers.rows) == answers.count  # else the rows were counted, not kept
    rows = (
        tuple(answers.rows)
        if kept and not answers.vouched
        else started.deferred(limits, answers.count, from_cache=answers.vouched)
    )
    seen = {**metadata.seen, **answers.seen}
    digests = {file: read.digest for file, read in seen.items()}
    run = Run(benchmark.name, run_dir.name, metadata.fields, rows, digests)
    key = _run_key(run_dir, benchmarks_key, limits, digests) if cache is not None and benchmarks_key else None
    if cache is not None and key is not None and not findings:
        if answers.vouched:
            cache.validated(key)  # used again: kept among the most recent
        else:
            cache.add_validated(key, answers.count)  # the key is made of the digests of the bytes checked
        for file, read in seen.items():  # the next build finds them by stat (unless rewritten since)
            cache.remember(run_dir / file, read.digest, read=read.stat)
    return _RunCheck(run_dir, run, name, tuple(findings))


def _read_all(
    runs: list[_ToRead],
    limits: Limits,
    jobs: int | None,
    keep_rows: bool,
    validated: Mapping[str, int],
    meanwhile: Callable[[], None],
) -> list[_Answers]:
    """Read the predictions of ``runs``, in order, here or over worker processes, and call ``meanwhile``.

    Workers are used when there are several runs and enough bytes to repay
    starting them (:data:`POOL_MIN_BYTES`). Each file is read by the same
    function either way, so findings and their order are those of one process
    (tests/intake/test_validate_parallel.py). A worker sends back no rows, nor
    the answers it saw (its coverage finding comes back instead): shipping a
    million answers between processes costs more than reading them. Rows not
    kept are read (and checked again) on first use; ``dualboard validate``
    and ingest never use them.

    The largest files are handed out first, so that no worker is left with a large one while the others
    are done. ``meanwhile`` runs in this process while the workers read (here, before reading).
    """
    sizes = [_predictions_bytes(run) for run in runs]
    workers = min(jobs or default_jobs(), len(runs))
    if workers <= 1 or sum(sizes) < POOL_MIN_BYTES:
        meanwhile()
        return [run.read(limits, keep_rows=keep_rows, validated=validated) for run in runs]
    order = sorted(range(len(runs)), key=lambda index: -sizes[index])
    shared = (runs, limits, validated)
    with process_pool(__name__, workers, _receive_runs, shared) as pool:
        read = pool.map(_read_in_worker, order)  # the workers start at once, and this process is free
        meanwhile()
        answers = dict(zip(order, read, strict=True))
    return [answers[index] for index in range(len(runs))]


_WORKER_RUNS: tuple[list[_ToRead], Limits, Mapping[str, int]] | None = None
"""In a worker process only: the runs :func:`_read_all` hands out by index (sent once per worker), so that no
task carries a benchmark's questions."""


def _receive_runs(runs: list[_ToRead], limits: Limits, validated: Mapping[str, int]) -> None:
    """A worker's start: keep what it reads by index."""
    global _WORKER_RUNS
    _WORKER_RUNS = (runs, limits, validated)


def _read_in_worker(index: int) -> _Answers:
    """In a worker: check run ``index``'s predictions; the findings come back, without rows or answers seen."""
    runs, limits, validated = _WORKER_RUNS
    answers = runs[index].read(limits, keep_rows=False, validated=validated)
    answers.answered = set()
    return answers


def _predictions_bytes(run: _ToRead) -> int:
    """The size of the run's predictions file (one that cannot be sized counts 0: reading reports it)."""
    try:
        return (run.run_dir / PREDICTIONS).lstat().st_size
    except OSError:
        return 0


def _benchmarks_key(benchmarks: dict[str, Benchmark], cache: BuildCache) -> str | None:
    """Digest of every benchmark's definition files (runs are checked against them); None when one has no folder."""
    if any(b.path is None for b in benchmarks.values()):
        return None
    try:
        return digest(
            *(
                f"{name}\0{cache.tree_digest([b.path / file for file in definition_files(b.path)], b.path)}"
                for name, b in sorted(benchmarks.items())
            )
        )
    except OSError:
        return None


def _known_digests(run_dir: Path, limits: Limits, cache: BuildCache) -> dict[str, str]:
    """The digest of every file of a run folder that the cache knows by its stat (nothing is read); empty when
    one is unknown (the run is then read, hashed as it is checked), or :func:`_run_key` would give no key."""
    digests = {}
    try:
        with os.scandir(run_dir) as found:
            for entry in found:
                known = cache.known_digest(Path(entry.path)) if _storable(entry, limits) else None
                if known is None:
                    return {}
                digests[entry.name] = known
    except OSError:
        return {}
    return digests


def _storable(entry: os.DirEntry, limits: Limits) -> bool:
    """Whether a run folder's entry is a file of :data:`RUN_FILES`, regular, within its size limit."""
    sizes = {
        METADATA: limits.metadata_bytes,
        PREDICTIONS: limits.predictions_bytes,
        PROVENANCE: limits.provenance_bytes,
    }
    return entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_size <= sizes.get(
        entry.name, -1
    )


def _run_key(run_dir: Path, benchmarks_key: str, limits: Limits, digests: dict[str, str]) -> str | None:
    """What a run's validation depends on: the code, the benchmarks, the limits, the folder's names and bytes
    (``digests``, by file name: known by stat, or of the bytes just checked).

    None — validate in full, and remember nothing — for any folder the full
    check could refuse without reading (an entry that is not a regular file:
    a link could point at a FIFO; a file it does not expect; one over its size
    limit), or holding a file without a digest in ``digests``.
    """
    parts = [code_digest(), benchmarks_key, repr(limits), run_dir.parent.name, run_dir.name]
    try:
        with os.scandir(run_dir) as found:
            entries = sorted(found, key=lambda e: e.name)
        for entry in entries:
            if not _storable(entry, limits) or entry.name not in digests:
                return None
            parts += [entry.name, digests[entry.name]]
    except OSError:
        return None
    return digest(*parts)


@dataclass(frozen=True, eq=False)
class DeferredPredictions(Sequence):
    """The rows of a predictions.jsonl that passed validation, read when first used.

    A no-change build never needs them (its stages are skipped), so a run
    found in the validation cache costs a hash, not a parse; a check that only
    reports (``dualboard validate``) counts rows without keeping them. Reading checks
    the file again, every check, and raises if it no longer passes (it was
    changed after the build hashed it).
    """

    path: Path
    benchmark: Benchmark
    rounds: int
    limits: Limits
    older: bool
    count: int
    """Answers the file held when it was validated: ``len()`` without reading it."""
    from_cache: bool = False
    """True when this build did not check the file: the validation cache knew its bytes as valid."""

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index):
        return self.rows[index]

    def __iter__(self):
        return iter(self.rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    @cached_property
    def rows(self) -> tuple[dict[str, Any], ...]:
        """The rows, as a full validation returns them."""
        answers = _read_predictions(self.path, self.benchmark, self.rounds, self.limits, older=self.older)
        errors = [f for f in answers.findings if f.severity == "error"]
        if errors or len(answers.rows) != self.count:
            raise InvalidInputError(
                errors
                or [
                    Finding(
                        str(self.path),
                        None,
                        "-",
                        f"holds {len(answers.rows)} answers, {self.count} when it was validated in this build",
                        "do not edit submissions while a build runs; build again",
                    )
                ]
            )
        return tuple(answers.rows)


def _location_findings(run_dir: Path, submissions_root: Path | None) -> list[Finding]:
    """Refuse symbolic links and run folders outside ``submissions/<benchmark>/``."""
    findings = []
    if submissions_root is not None:
        root = Path(submissions_root).resolve()
        if run_dir.resolve().parent.parent != root:
            findings.append(
                Finding(
                    str(run_dir),
                    None,
                    "path",
                    f"run folder is not at {root.name}/<benchmark>/<run_id>/",
                    "move the run to submissions/<benchmark>/<run_id>/",
                )
            )
    links = [p for p in (run_dir.parent, run_dir) if p.is_symlink()]
    entries = sorted(run_dir.iterdir()) if run_dir.is_dir() and not run_dir.is_symlink() else []
    links += [p for p in entries if p.is_symlink()]
    findings += [
        Finding(str(p), None, "path", "is a symbolic link", "commit the real file or folder, not a link") for p in links
    ]
    findings += [
        Finding(
            str(p),
            None,
            "path",
            f"unexpected entry: only {', '.join(RUN_FILES)} are stored",
            "remove it from the run folder",
            "warning",
        )
        for p in entries
        if p.name not in RUN_FILES and not p.is_symlink() and not is_git_file(p.name)
    ]
    findings += [_git_file_finding(p) for p in entries if is_git_file(p.name) and not p.is_symlink()]
    return findings


def _git_file_finding(path: Path) -> Finding:
    """A git attribute, ignore or config file: it would change how git checks out every other run (an error)."""
    return Finding(
        str(path),
        None,
        "path",
        "a git attribute, ignore or configuration file: it changes how git checks out other runs' files",
        "remove it; submissions/ holds only run folders, and a run folder only " + ", ".join(RUN_FILES),
    )


def _check_run_id(run_dir: Path) -> list[Finding]:
    if is_name(run_dir.name):
        return []
    return [
        Finding(
            str(run_dir),
            None,
            "run_id",
            f"folder name {run_dir.name[:120]!r} is not a valid run id",
            f"rename the folder to {RUN_ID_RULE}",
        )
    ]


@dataclass(frozen=True)
class _Seen:
    """One file as validation read it: the sha256 of the bytes checked, and the file's stat once read."""

    digest: str
    stat: os.stat_result


def _read_hashed(path: Path, limit: int, *, lead: bytes = b"") -> tuple[bytearray, _Seen]:
    """The bytes of a run's file behind ``lead``, read once (no link, nothing but a regular file, at most
    ``limit`` bytes), and what was read (:class:`_Seen`: the digest of the file's bytes alone), so that
    ingest stores these bytes and no others.

    ``lead``: bytes the caller wants in front of the file's in one buffer (:data:`LEAD` for
    predictions.jsonl), so that none has to be copied to put them there.

    Raises
    ------
    UnsafeFileError
        For a link, a special file, or a file over ``limit`` (also one grown past it since it was sized).
    """
    with open_regular(path, root=path.parent, limit=limit) as handle:
        before = os.fstat(handle.fileno())
        # one buffer of the size the file has (and a byte more, to see it grew), then what it grew by
        buffer = bytearray(len(lead) + before.st_size + 1)
        buffer[: len(lead)] = lead
        with memoryview(buffer) as view:
            size = handle.readinto(view[len(lead) :])
        del buffer[len(lead) + size :]
        if size > before.st_size:
            buffer += handle.read(limit + 1 - size)
        info = os.fstat(handle.fileno())
    if len(buffer) - len(lead) > limit:
        raise UnsafeFileError(path, f"over the {limit}-byte limit", "shorten the file")
    with memoryview(buffer) as view:
        sha256 = hashlib.sha256(view[len(lead) :]).hexdigest()
    # Written while it was read (even with its old mtime put back: the ctime moved), the bytes read may be no one
    # version of the file: their digest is kept under the stat from before, which the file no longer has, so the
    # build cache never vouches for it (BuildCache.remember) and ingest refuses the file as changed.
    return buffer, _Seen(sha256, info if stat_key(before) == stat_key(info) else before)


@dataclass(frozen=True)
class _Metadata:
    """What metadata.yaml gave: the fields that passed, where each field sits, and the findings."""

    fields: dict[str, Any]
    """Every top-level field without a finding (all of them when ``findings`` is empty)."""
    lines: dict[str, int]
    """Line of each field by dotted name (see :func:`~dualboard.intake.untrusted.yaml_field_lines`)."""
    findings: tuple[Finding, ...]
    seen: dict[str, _Seen] = field(default_factory=dict)
    """``{"metadata.yaml": …}`` once the file could be read."""

    def line(self, field: str) -> int | None:
        """The line that sets ``field``, if the file sets it."""
        return self.lines.get(field)


def _read_metadata(path: Path, limits: Limits) -> _Metadata:
    if not path.is_file() or path.is_symlink():
        return _Metadata(
            {},
            {},
            (
                Finding(
                    str(path),
                    None,
                    "-",
                    "metadata.yaml is missing",
                    "add metadata.yaml (model, submitter, date, benchmark, benchmark_version, rounds)",
                ),
            ),
        )
    try:
        raw, seen = _read_hashed(path, limits.metadata_bytes)
    except UnsafeFileError as exc:
        return _Metadata({}, {}, (exc.finding(),))
    text, problem = decode_utf8(raw, str(path))
    data, problem = (None, problem) if problem else parse_yaml(text, str(path))
    if problem is not None:
        return _Metadata({}, {}, (problem,))
    if not isinstance(data, dict):
        return _Metadata(
            {}, {}, (Finding(str(path), 1, "-", "expected a mapping of fields", "write key: value pairs"),)
        )
    data, lines = _stringify_dates(data), yaml_field_lines(text)
    findings = _schema_findings(data, "metadata", str(path), lines=lines)
    findings += hidden_character_findings(data, str(path), lines)
    wrong = _wrong_fields(findings)
    usable = {} if "-" in wrong else {k: v for k, v in data.items() if k not in wrong}
    return _Metadata(usable, lines, tuple(findings), {METADATA: seen})


def _wrong_fields(findings: list[Finding]) -> set[str]:
    """Top-level fields with a finding; ``-`` when the whole value is wrong (nothing of it can be trusted)."""
    return {f.field.split(".")[0] for f in findings}


def _schema_findings(
    instance: Any, name: str, file: str, line: int | None = None, *, lines: dict[str, int] | None = None
) -> list[Finding]:
    """Schema findings; values too big or too deep even to describe become a finding too."""
    try:
        return schema_findings(instance, name, file=file, line=line, lines=lines)
    except RecursionError:
        return [Finding(file, line, "-", "nested too deeply to check", "flatten the structure")]
    except ValueError:  # an integer too long to print in the message (0xfff… in YAML)
        return [Finding(file, line, "-", "a number has thousands of digits", "write numbers of ordinary size")]


def _stringify_dates(data: dict[str, Any]) -> dict[str, Any]:
    """YAML reads 2024-05-01 as a date; the contract stores the ISO string."""
    if "date" in data and hasattr(data["date"], "isoformat"):
        return {**data, "date": data["date"].isoformat()}
    return data


def _resolve_benchmark(
    run_dir: Path, metadata: _Metadata, benchmarks: dict[str, Benchmark], findings: list[Finding]
) -> Benchmark | None:
    """The benchmark the run answers: its metadata's when readable, else its folder's."""
    folder_benchmark = run_dir.parent.name
    name = metadata.fields.get("benchmark", folder_benchmark)
    meta_file = str(run_dir / METADATA)
    if name not in benchmarks:
        known = ", ".join(sorted(benchmarks)) or "none"
        where = "" if "benchmark" in metadata.fields else f" (the folder submissions/{folder_benchmark[:100]}/)"
        findings.append(
            Finding(
                meta_file,
                metadata.line("benchmark"),
                "benchmark",
                f"unknown benchmark {name[:100]!r}{where}",
                f"use one of: {known}",
            )
        )
        return None
    if name != folder_benchmark:
        findings.append(
            Finding(
                meta_file,
                metadata.line("benchmark"),
                "benchmark",
                f"{name!r} but the run sits in submissions/{folder_benchmark[:100]}/",
                f"move the run to submissions/{name}/",
            )
        )
    benchmark = benchmarks[name]
    version = metadata.fields.get("benchmark_version", benchmark.version)
    if str(version) != benchmark.version and not benchmark.answers_older_version(metadata.fields):
        findings.append(
            Finding(
                meta_file,
                metadata.line("benchmark_version"),
                "benchmark_version",
                f"{str(version)[:50]!r} does not exist",
                f"answer version {benchmark.version!r} of {name} (a run of an earlier version stays "
                f"on the board once data/benchmarks/{name}/benchmark.yaml lists it under previous_versions)",
            )
        )
    return benchmark


@dataclass
class _Answers:
    """What predictions.jsonl gave: rows while it is valid, the answers it covers, and the findings."""

    rows: list[dict[str, Any]] | DeferredPredictions = field(default_factory=list)
    """Every row with its round filled in, when kept; emptied at the first finding (a rejected file keeps no
    rows). Rows not kept (a worker process's, or a check that only counts them) are read again on first use
    (:class:`DeferredPredictions`)."""
    count: int = 0
    """How many rows the file gave while it was valid: ``len(rows)`` whether or not they were kept."""
    answered: set[tuple[str, int]] = field(default_factory=set)
    """(question_id, round) of every line that names both readably, errors elsewhere or not."""
    covered: int = 0
    """How many of ``answered`` the benchmark asks for (a known question, a round below ``rounds``)."""
    unreadable: int = 0
    """Lines whose question or round could not be read."""
    read: bool = False
    """Whether the file could be opened at all (coverage means nothing otherwise)."""
    findings: list[Finding] = field(default_factory=list)
    coverage: list[Finding] = field(default_factory=list)
    """The finding about answers missing from the whole file (:func:`_coverage_findings`), when checked."""
    provenance: list[Finding] = field(default_factory=list)
    """The findings of provenance.jsonl (:func:`_provenance_findings`), when checked."""
    seen: dict[str, _Seen] = field(default_factory=dict)
    """The files read, by name (predictions.jsonl, provenance.jsonl), as validation read them."""
    vouched: bool = False
    """True when the bytes read are those of a run that passed before: counted (``count``), not checked."""


def _read_predictions(
    path: Path,
    benchmark: Benchmark | None,
    rounds: int | None,
    limits: Limits,
    *,
    older: bool = False,
    keep_rows: bool = True,
    vouched: Callable[[dict[str, _Seen]], int | None] | None = None,
) -> _Answers:
    """Check predictions.jsonl, every check on every line; keep its rows only if ``keep_rows``.

    ``vouched``: given what was read, the answers of the file if it passed before, byte for byte; it is
    then counted, not checked (:attr:`_Answers.vouched`).

    The whole file is tried first (:func:`_read_confirmed`): decoded in one
    C call and checked column by column. At the first doubt, or for a file
    that has a finding, it is read again line by line (:func:`_read_lines`),
    which words every finding. So a finding, its line and its order never
    depend on the fast path.

    The file is held in memory once (it is at most ``limits.predictions_bytes``);
    after the first error the line-by-line read only counts findings, so a
    rejected million-line file never costs a million parsed rows.
    """
    answers = _Answers()
    if not path.is_file() or path.is_symlink():
        answers.findings.append(
            Finding(str(path), None, "-", "predictions.jsonl is missing", "add one JSON answer per line")
        )
        return answers
    try:
        framed, answers.seen[PREDICTIONS] = _read_hashed(path, limits.predictions_bytes, lead=LEAD)
    except UnsafeFileError as exc:
        answers.findings.append(exc.finding())
        return answers
    answers.read = True
    if vouched is not None and (count := vouched(answers.seen)) is not None:
        answers.count, answers.vouched = count, True
        return answers
    rules = _AnswerRules(str(path), benchmark, rounds, limits.response_bytes, older, answers.answered)
    if not _read_confirmed(framed, rules, answers, keep_rows):
        handle = io.BytesIO(framed)
        handle.seek(len(LEAD))
        _read_lines(handle, rules, answers, keep_rows)
    return answers


def _read_confirmed(framed: bytearray, rules: _AnswerRules, answers: _Answers, keep_rows: bool) -> bool:
    """Take every line of the file read behind :data:`LEAD` into ``framed`` at once when the fast decoder
    confirms them all and none has a finding; False (nothing taken) otherwise."""
    lines = confirmed_framed(framed)
    if lines is None or not rules.take_all(lines):
        return False
    answers.count, answers.covered = len(lines), rules.covered
    if keep_rows:
        answers.rows = [as_row(line) for line in lines]
    return True


def _read_lines(handle: BinaryIO, rules: _AnswerRules, answers: _Answers, keep_rows: bool) -> None:
    """Check predictions.jsonl line by line into ``answers``: the exact path, which words every finding.

    A line the fast decoder confirms (:mod:`~dualboard.intake.prediction_decoder`)
    skips the strict parser and the schema; any other line goes through them.
    The checks beyond the schema run on every line either way.
    """
    findings, misses = _FindingCap(rules.file), 0
    for number, raw in enumerate(handle, start=1):
        tried = misses < FAST_PATH_PATIENCE or number % FAST_PATH_PATIENCE == 0
        row = confirmed_row(raw) if tried else None  # the fast path: schema-valid for sure, or None
        misses = 0 if row is not None else misses + 1
        if row is not None:
            problems = rules.findings(row, number)
        elif not raw.strip():
            continue  # blank lines are allowed, as iter_json_lines skips them
        else:  # the exact path words what is wrong
            value, problem = parse_json_line(raw, rules.file, number)
            row, problems = (None, [problem]) if problem else _check_prediction(value, number, rules)
            answers.unreadable += row is None
        if problems:
            findings.extend(problems)
        if findings.errors == 0:
            answers.count += 1
            if keep_rows:
                answers.rows.append(row)
    if findings.errors:
        answers.rows.clear()
    answers.findings, answers.covered = findings.list(), rules.covered


def _check_prediction(row: Any, number: int, rules: _AnswerRules) -> tuple[dict[str, Any] | None, list[Finding]]:
    """The row with its round filled in (the contract's default 0), and its findings.

    The row is None when its question or round cannot be read. The checks
    of the other fields still run on a row with a wrong field.
    """
    problems = _schema_findings(row, "prediction", rules.file, number)
    wrong = _wrong_fields(problems) if problems else set()
    if "-" in wrong or not isinstance(row, dict):
        return None, problems
    if wrong:
        row = {k: v for k, v in row.items() if k not in wrong}
    if "round" not in wrong:
        row = {**row, "round": row.get("round", 0)}
    problems += rules.findings(row, number)
    return (row if "question_id" in row and "round" in row else None), problems


@dataclass
class _AnswerRules:
    """The checks beyond the schema for one predictions.jsonl, run on every line that can be read.

    They look at the fields of a row that passed the schema; what they need
    (the benchmark's question ids, the rounds) is set once per file, so a
    line costs a few lookups.
    """

    file: str
    benchmark: Benchmark | None
    rounds: int | None
    """``rounds`` of metadata.yaml, when it is valid."""
    response_bytes: int
    older: bool
    """Whether the run answered one of the benchmark's previous versions."""
    seen: set[tuple[str, int]]
    """(question_id, round) of every line so far: the duplicate check adds to it."""
    known: dict[str, Any] | None = field(init=False)
    """The benchmark's questions by id."""
    covered: int = field(init=False, default=0)
    """How many of :attr:`seen` are a question of the benchmark and a round below ``rounds``: the coverage
    check compares it with questions × rounds instead of building the million pairs expected."""

    def __post_init__(self) -> None:
        self.known = None if self.benchmark is None else self.benchmark.questions_by_id

    def take_all(self, lines: list[Prediction]) -> bool:
        """Whether no line of a whole file has a finding here; if so, count them all as :meth:`findings` would.

        The checks of :meth:`findings` over columns: a file failing any of them is
        read again line by line, which words the findings, so this only says yes or no.
        """
        keys = answer_keys(lines)
        answered = set(keys)
        if len(answered) < len(keys) or not answered.isdisjoint(self.seen):
            return False  # an answer given twice
        if self.known is not None and not set(map(itemgetter(0), keys)) <= self.known.keys():
            return False  # an unknown question: an error, or a warning for a run of an earlier version
        if self.rounds is not None and keys and max(map(itemgetter(1), keys)) >= self.rounds:
            return False
        if lines and max(map(len, map(attrgetter("response"), lines))) > self.response_bytes // 4:
            if any(_utf8_longer_than(line.response, self.response_bytes) for line in lines):
                return False
        self.seen.update(answered)
        self.covered += len(answered)
        return True

    def findings(self, row: dict[str, Any], number: int) -> list[Finding]:
        """The findings of one row (only the fields that passed the schema are in it)."""
        problems = []
        question, round_, response = row.get("question_id"), row.get("round"), row.get("response")
        if response is not None and _utf8_longer_than(response, self.response_bytes):
            problems.append(
                Finding(
                    self.file,
                    number,
                    "response",
                    f"response is over the {self.response_bytes}-byte limit",
                    f"truncate the response to at most {self.response_bytes} bytes of UTF-8 (the build and the "
                    "pull-request check take no larger one)",
                )
            )
        unknown = question is not None and self.known is not None and question not in self.known
        if unknown:
            problems.append(_unknown_question(row, number, self.file, self.benchmark, self.older))
        beyond = round_ is not None and self.rounds is not None and round_ >= self.rounds
        if beyond:
            problems.append(
                Finding(
                    self.file,
                    number,
                    "round",
                    f"round {round_} but metadata.yaml says rounds: {self.rounds}",
                    "number rounds from 0 to rounds-1, or correct rounds in metadata.yaml",
                )
            )
        if question is None or round_ is None:
            return problems
        if (question, round_) in self.seen:
            problems.append(
                Finding(
                    self.file,
                    number,
                    "question_id",
                    f"duplicate answer for question {question[:100]!r} round {round_}",
                    "keep one answer per (question_id, round)",
                )
            )
        else:
            self.seen.add((question, round_))
            self.covered += not (unknown or beyond)
        return problems


def _utf8_longer_than(text: str, limit: int) -> bool:
    """Whether ``text`` takes more than ``limit`` bytes in UTF-8; encodes only when its length leaves doubt.

    A character takes 1 to 4 bytes, so a text of at most ``limit // 4``
    characters fits whatever it holds: most responses are decided without
    a copy.
    """
    return len(text) > limit // 4 and len(text.encode("utf-8")) > limit


def _unknown_question(row: dict[str, Any], number: int, file: str, benchmark: Benchmark, older: bool) -> Finding:
    """An answer to a question the benchmark lacks: an error, or for a run of an earlier version
    (the question was dropped since) a warning, and the answer is left out of grading."""
    if older:
        return Finding(
            file,
            number,
            "question_id",
            f"question {row['question_id'][:100]!r} is not in version {benchmark.version!r} of {benchmark.name}",
            "nothing to do: this answer of an earlier version is left out of grading",
            "warning",
        )
    return Finding(
        file,
        number,
        "question_id",
        f"unknown question id {row['question_id'][:100]!r}",
        f"use an id from data/benchmarks/{benchmark.name}/questions.jsonl",
    )


def _read_provenance(path: Path, limits: Limits) -> tuple[bytearray | None, dict[str, _Seen], list[Finding]]:
    """The bytes of provenance.jsonl (None when absent or refused), what was read, and why it was refused."""
    if not path.exists() or path.is_symlink():
        return None, {}, []  # optional; a link is reported by _location_findings
    try:
        data, seen = _read_hashed(path, limits.provenance_bytes)
    except UnsafeFileError as exc:
        return None, {}, [exc.finding()]
    return data, {PROVENANCE: seen}, []


def _provenance_findings(path: Path, data: bytes) -> list[Finding]:
    """provenance.jsonl is stored and published: check it is JSON lines of flat records."""
    findings = _FindingCap(str(path))
    for number, row, problem in iter_json_lines(io.BytesIO(data), str(path)):
        findings.extend([problem] if problem else _schema_findings(row, "provenance", str(path), number))
    return findings.list()


def _coverage_findings(
    path: Path, answers: _Answers, benchmark: Benchmark, rounds: int, metadata: Mapping[str, Any]
) -> list[Finding]:
    """Questions and rounds its version asked that no line answers (lines that could not be read may hold some
    of them), and answers to questions its version did not have (added since: a run of an earlier version that
    picked some of them would choose its own questions)."""
    if not answers.read or (answers.unreadable and not answers.answered):
        return []  # nothing readable to compare: the findings about the file say what to fix first
    asked = benchmark.asked_ids(metadata)
    expected = len(asked) * rounds
    older = len(asked) < len(benchmark.questions_by_id)
    if answers.covered == expected and not older:
        return []
    chosen = sorted({q for q, _ in answers.answered} & (benchmark.questions_by_id.keys() - set(asked)))
    missing = sorted(set(product(asked, range(rounds))) - answers.answered)
    return _added_findings(path, chosen, metadata) + _missing_findings(path, answers, benchmark, missing, expected)


def _added_findings(path: Path, chosen: list[str], metadata: Mapping[str, Any]) -> list[Finding]:
    """One error for the answers of a run of an earlier version to questions added since."""
    if not chosen:
        return []
    version = str(metadata.get("benchmark_version"))[:50]
    return [
        Finding(
            str(path),
            None,
            "question_id",
            f"{len(chosen)} answer(s) to questions version {version!r} did not have, e.g. {chosen[0][:100]!r}",
            "remove them, or answer the current version (every question) and say so in benchmark_version",
        )
    ]


def _missing_findings(
    path: Path, answers: _Answers, benchmark: Benchmark, missing: list[tuple[str, int]], expected: int
) -> list[Finding]:
    """One finding for the answers the run's version asked and no line gives: an error, or with allow_incomplete
    a warning (each is then scored wrong)."""
    if not missing:
        return []
    shown = ", ".join(f"{q} round {r}" for q, r in missing[:10]) + (" …" if len(missing) > 10 else "")
    unread = (
        f" ({answers.unreadable} line(s) above name no readable question and round: they may be some of these)"
        if answers.unreadable
        else ""
    )
    fix = (
        "answer every question in every round: each missing answer is scored wrong (0) under both gradings and "
        f"shown as missing, and a run that answers under {100 * benchmark.min_answered:g}% of them is not ranked"
        if benchmark.allow_incomplete
        else "answer every question in every round (its version asked them all)"
    )
    return [
        Finding(
            str(path),
            None,
            "coverage",
            f"{len(missing)} of {expected} answers (question, round) missing: {shown}{unread}",
            fix,
            "warning" if benchmark.allow_incomplete else "error",
        )
    ]


class _FindingCap:
    """Keep reports readable and memory flat: at most MAX_REPORTED_PER_FILE findings, the rest counted."""

    def __init__(self, file: str):
        self.file, self.count, self.errors, self._kept = file, 0, 0, []

    def extend(self, findings: list[Finding]) -> None:
        """Count ``findings`` (and, apart, the errors) and keep them while under the cap."""
        self.count += len(findings)
        self.errors += sum(f.severity == "error" for f in findings)
        if len(self._kept) < MAX_REPORTED_PER_FILE:
            self._kept += findings[: MAX_REPORTED_PER_FILE - len(self._kept)]

    def list(self) -> list[Finding]:
        """The kept findings, and one more saying how many were not shown."""
        rest = self.count - len(self._kept)
        if rest == 0:
            return list(self._kept)
        return self._kept + [
            Finding(self.file, None, "-", f"{rest} more problems not shown", "fix the ones above and validate again")
        ]
