"""The stages of a build, each a function from files to files.

``dualboard build`` calls them in order; each CLI stage command calls one.
Every stage reads what the previous one wrote (the store, build/scored,
build/stats), never reaches back, and reports a one-line summary. This module
sits above the stage packages (:data:`dualboard.LAYERS`): it calls them, and
none of them calls it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from dualboard.atomic import atomic_write_text
from dualboard.build_cache import BuildCache, code_digest, digest, listing_digest, short
from dualboard.errors import DualboardError, Finding, InvalidInputError
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.models import Benchmark
from dualboard.intake.validate import (
    DeferredPredictions,
    Limits,
    ValidationReport,
    find_run_dirs,
    load_runs,
    validate_submissions,
)
from dualboard.project import CONFIG_FILE, Project
from dualboard.render.site_config import SITE_SOURCES, site_source_findings, tool_versions
from dualboard.stats.defaults import SEED
from dualboard.store import IngestResult, Store
from dualboard.store.base import MAX_REASON_CHARS, Removal
from dualboard.store.records import SOURCE_FILE, read_source, record_source
from dualboard.workers import default_jobs

# Grading, statistics, rendering and releasing import scipy, statsmodels, plotly, MkDocs…: seconds of
# start-up that a build finding every stage done must not pay. Each is imported in the function that
# runs it; these names are for type hints only.
if TYPE_CHECKING:
    import pandas as pd
    from tqdm import tqdm

    from dualboard.grading import GradedTables, Progress, VerdictCache
    from dualboard.release import freeze
    from dualboard.render.kept_files import KeptFiles
    from dualboard.render.pages import BenchmarkResults, GradedBenchmark
    from dualboard.render.question_pages import AnswerFiles
    from dualboard.render.shared_files import SharedFiles


LABELS_DIR = "labels"
"""``build/labels/<benchmark>.csv``: every human label, each labeller's apart, as the grade stage read them, for the
statistics of the labelling design (columns of :func:`dualboard.intake.human_labels.load_labels`)."""
SOURCES_CHECKED = "validate-sources"
"""Build-cache entry of the last grader and site-source checks that passed (:func:`_source_findings`)."""


@dataclass(frozen=True)
class StageSummary:
    """The one line a stage prints when it is done."""

    stage: str
    """Stage name (validate, ingest, grade, stats, render)."""
    line: str
    """What it did, in numbers."""
    warnings: tuple[str, ...] = ()
    """What it set aside or could not do, one line each (printed after the summary)."""
    skipped: bool = False
    """Whether the build cache found the stage's work already done (:func:`unless_done`)."""

    def __str__(self) -> str:
        return "\n".join([f"{self.stage:>8}: {self.line}", *(f"{'warning':>8}: {w}" for w in self.warnings)])


def open_cache(project: Project, *, force: bool = False) -> BuildCache:
    """The build cache of ``project`` (:mod:`dualboard.build_cache`); ``force``: an empty one, every stage redone."""
    path = project.build_cache_file
    return BuildCache.empty(path) if force else BuildCache.load(path)


def check_pull_request(
    project: Project,
    paths: list[Path] | None = None,
    limits: Limits = Limits(),
    *,
    cache: BuildCache | None = None,
    new: list[Path] | None = None,
) -> ValidationReport:
    """Check everything a pull request can change that the build reads; never raises for bad input.

    That is what ``dualboard validate`` reports: the runs under ``paths``, all
    of ``data/`` and ``submissions/``, the site sources the render would read
    (``site_src/``, ``mkdocs.yml``, ``releases/``), ``dualboard.yaml``, and any
    generated file (build/, site/, .dualboard/) committed to the repository.
    Findings name files relative to the leaderboard folder. With a ``cache``,
    runs validated before, byte for byte, are not read again. ``new``: the run folders the pull request adds
    or changes, where a clash of run ids is reported (default: those under ``paths``).
    """
    try:  # once for both checks below (a benchmark of 10⁴ questions takes a second to load)
        benchmarks = load_benchmarks(project.data_dir)
    except DualboardError:
        benchmarks = None  # validating says why
    project_findings: list[Finding] = []

    def project_checks() -> None:  # run while validation's workers read the predictions, not after them
        project_findings.extend(
            [
                *_source_findings(project, cache, benchmarks),
                *_settings_findings(project),
                *_committed_output_findings(project),
            ]
        )

    report = validate_submissions(
        project.data_dir,
        paths or [project.submissions_dir],
        project.submissions_dir,
        limits,
        cache=cache,
        benchmarks=benchmarks,
        meanwhile=project_checks,
        new=new,
    )
    return ValidationReport(report.runs, (*report.findings, *project_findings)).relative_to(project.root)


def _source_findings(
    project: Project, cache: BuildCache | None, benchmarks: dict[str, Benchmark] | None
) -> list[Finding]:
    """Check the graders benchmark.yaml names and the site sources; skipped while the code, data/ and
    the site sources are those that last passed (``cache``).

    The grader check imports every grader, start-up that a build with nothing changed must not pay;
    the site sources are checked without importing the render.
    """
    sources = [project.data_dir, *(project.root / name for name in SITE_SOURCES)]
    key = digest(SOURCES_CHECKED, code_digest(), cache.tree_digest(sources, project.root)) if cache else ""
    if cache is not None and cache.stage_done(SOURCES_CHECKED, key, ""):
        return []
    findings = [*_grader_findings(benchmarks), *site_source_findings(project.root)]
    if cache is not None and not findings:
        cache.record_stage(SOURCES_CHECKED, key, "")
    return findings


def _grader_findings(benchmarks: dict[str, Benchmark] | None) -> list[Finding]:
    """Check every grader option benchmark.yaml names by building the grader.

    While a benchmark is broken (``None``), validating it already reports why; its graders are checked
    once it loads.
    """
    if benchmarks is None:
        return []
    from dualboard.grading.registry import grader_findings

    return [f for b in benchmarks.values() for f in grader_findings(b)]


def _settings_findings(project: Project) -> list[Finding]:
    """dualboard.yaml is read by every Hub command: a broken one must fail review, not the publish."""
    for field, read, section in (
        ("store", project.store_settings, "Store"),
        ("pull_requests", project.pull_request_settings, "Pull requests are untrusted"),
    ):
        try:
            read()
        except InvalidInputError as exc:
            return exc.findings
        except DualboardError as exc:
            return [
                Finding(
                    CONFIG_FILE, None, field, str(exc), f"correct dualboard.yaml (see the README's '{section}' section)"
                )
            ]
    return []


def _committed_output_findings(project: Project) -> list[Finding]:
    return [
        Finding(
            name,
            None,
            "path",
            "is a generated file committed to the repository: the build writes build/, site/ "
            "and .dualboard/ itself, and trusts what it finds there",
            f"remove it from the pull request (git rm -r --cached {name.split('/')[0]})",
        )
        for name in project.committed_generated_files()
    ]


def validate(project: Project, paths: list[Path] | None = None, *, cache: BuildCache | None = None) -> StageSummary:
    """Check what :func:`check_pull_request` checks; raise InvalidInputError on any problem.

    Runs that passed before with the same bytes (``cache``) are counted, not read again, and the line says so.
    """
    cache = cache or open_cache(project)
    report = check_pull_request(project, paths, cache=cache)
    cache.save()
    if not report.ok:
        raise InvalidInputError(list(report.findings))
    answers = sum(len(r.predictions) for r in report.runs)
    benchmarks = len({r.benchmark for r in report.runs})
    line = f"{len(report.runs)} runs, {answers} answers valid across {benchmarks} benchmarks"
    known = [r for r in report.runs if isinstance(r.predictions, DeferredPredictions) and r.predictions.from_cache]
    if known:
        hashed = cache.tree_digest([r.predictions.path.parent for r in known], project.root)
        line += f"; {len(known)} of them unchanged, skipped (hash {short(hashed)})"
    return StageSummary("validate", line)


def ingest(
    project: Project, store: Store, *, today: str | None = None, cache: BuildCache | None = None
) -> tuple[StageSummary, IngestResult]:
    """Make the store hold exactly the runs of ``submissions/``, in one atomic step.

    Every submission is validated and added; a stored run whose folder is
    gone leaves the store, recorded as removed on the date of the commit that
    deleted the folder (while that is not committed: ``today``, ``YYYY-MM-DD``,
    default the current UTC date). When the store already holds every
    file (compared by content hash, ``cache``), nothing is copied or written.
    """
    cache = cache or open_cache(project)
    benchmarks = load_benchmarks(project.data_dir)
    today = today or dt.datetime.now(dt.UTC).date().isoformat()
    run_dirs = find_run_dirs([project.submissions_dir])
    result = store.ingest(
        run_dirs, benchmarks, removal_date=lambda run: project.deletion_date(run) or today, cache=cache
    )
    cache.save()
    line = (
        f"store revision {result.revision}: {len(result.added)} added, "
        f"{len(result.replaced)} replaced, {len(result.unchanged)} unchanged, {len(result.removed)} removed"
    )
    if result.skipped:
        line = f"unchanged, skipped (hash {short(cache.tree_digest(run_dirs, project.root))}): {line}"
    return StageSummary("ingest", line), result


def remove(project: Project, store: Store, run: str, *, reason: str, date: str) -> StageSummary:
    """Take ``benchmark/run_id`` out of the store, recording ``reason`` and ``date`` for the changelog.

    For a store fed without a checkout (a Hub dataset). In a leaderboard
    repository ``submissions/`` is the source of truth, so a run whose folder
    is still there is refused: the next ingest would only put it back.
    """
    if not reason.strip() or len(reason) > MAX_REASON_CHARS or not reason.isprintable():
        raise DualboardError(
            f"--reason: {len(reason)} characters{'' if reason.isprintable() else ' with control characters'}"
            f" — say in 1 to {MAX_REASON_CHARS} printable characters, on one line, why the run leaves "
            "(readers see it on the changelog)"
        )
    folder = project.submissions_dir / run
    if os.path.lexists(folder):
        raise DualboardError(
            f"{folder} still exists: in a leaderboard repository submissions/ decides which runs "
            f"the store holds — delete the folder (git rm -r {project.submissions_dir.name}/{run}), "
            "then run this command again to record the reason (or just build: the run leaves "
            "without one)"
        )
    revision = store.remove(Removal(run, date, reason))
    return StageSummary("remove", f"store revision {revision}: {run} removed ({reason})")


def stored_benchmarks(store: Store, cache: BuildCache | None = None) -> dict[str, tuple[Benchmark, list]]:
    """Benchmarks in the store with their runs, loaded and checked (every run in memory; ``cache``: see load_runs)."""
    stored = stored_run_dirs(store)
    benchmarks = {name: benchmark for name, (benchmark, _dirs) in stored.items()}
    return {name: (b, load_runs(dirs, benchmarks, cache=cache)) for name, (b, dirs) in stored.items()}


def stored_run_dirs(store: Store) -> dict[str, tuple[Benchmark, list[Path]]]:
    """Benchmarks in the store with their run folders, as the grading stage reads them (one run at a time)."""
    snapshot = store.snapshot()
    if not (snapshot / "benchmarks").is_dir():
        return {}
    benchmarks = load_benchmarks(snapshot)
    return {name: (b, store.run_dirs(name)) for name, b in benchmarks.items()}


def unless_done(
    cache: BuildCache, stage: str, key: str, outputs: Callable[[], str], work: Callable[[], StageSummary]
) -> StageSummary:
    """Run ``work`` unless ``stage`` last succeeded with ``key`` and its outputs (digest ``outputs()``) are intact.

    A stage that warned is not remembered: what it could not do (a judge
    that did not answer) is tried again next time.
    """
    if cache.stage_done(stage, key, outputs()):
        return StageSummary(stage, f"unchanged, skipped (hash {short(key)})", skipped=True)
    summary = work()
    if not summary.warnings:
        cache.record_stage(stage, key, outputs())
    return summary


def grade_stage(
    project: Project,
    store: Store,
    *,
    progress: bool = True,
    jobs: int | None = None,
    cache: BuildCache | None = None,
    fresh: bool = False,
) -> StageSummary:
    """:func:`grade`, skipped when the code, the store and the snapshot's content are those it last graded
    (``fresh``: grade every run anew, as :func:`grade` does)."""
    cache = cache or open_cache(project)
    snapshot = store.snapshot()
    key = digest("grade", code_digest(), store.describe(), store.revision(), cache.tree_digest([snapshot], snapshot))
    outputs = [project.scored_dir(), project.build_dir / SOURCE_FILE]
    summary = unless_done(
        cache,
        "grade",
        key,
        lambda: cache.tree_digest(outputs, project.root),
        lambda: grade(project, store, progress=progress, jobs=jobs, file_digest=cache.file_digest, fresh=fresh),
    )
    return StageSummary("grade", summary.line + _waiting(store), skipped=True) if summary.skipped else summary


def grade(
    project: Project,
    store: Store,
    *,
    progress: bool = True,
    jobs: int | None = None,
    file_digest: Callable[[Path], str] | None = None,
    fresh: bool = False,
) -> StageSummary:
    """Grade every stored run under both gradings into build/scored/<benchmark>/ (a Parquet file per run).

    Each run's files are kept under a hash of everything that can change them
    (dualboard.grading.run_cache): only runs without one are loaded and
    graded, over ``jobs`` processes (default: one per core). Verdicts are read
    from and saved through the store, never into the snapshot it reads, and never change its revision.
    Records in build/ which store revision it read: publish commits on exactly that one. ``file_digest``: the
    stored files' sha256 when known (the build cache's, which hashed the snapshot to decide whether to grade),
    so runs are keyed without reading them. ``fresh``: grade every run anew, whatever its files.
    """
    from tqdm import tqdm

    from dualboard.grading import VerdictCache
    from dualboard.grading.by_run import grade_stored
    from dualboard.grading.cache import VerdictFolders
    from dualboard.grading.verdict_keys import VERDICT_KEYS_DIR
    from dualboard.scored_files import ScoredFolder

    revision = store.revision()
    verdicts = VerdictCache(VerdictFolders.of(store), index=project.build_dir / VERDICT_KEYS_DIR)
    total, regraded, runs, warnings = 0, 0, 0, []
    benchmarks = stored_run_dirs(store)
    if project.scored_dir().is_symlink():  # grading writes and deletes only inside the build folder
        project.scored_dir().unlink()
    _remove_stale_benchmarks(project.scored_dir(), set(benchmarks))  # a link in a benchmark's place goes first
    for name, (benchmark, run_dirs) in benchmarks.items():
        with tqdm(desc=f"grade {name}", total=len(run_dirs), unit="run", disable=not progress, leave=False) as bar:
            graded = grade_stored(
                benchmark,
                run_dirs,
                ScoredFolder.of(project.scored_dir(), name),
                verdicts,
                revision,
                human_labels=human_labels(benchmark, labels_out=project.build_dir / LABELS_DIR / f"{name}.csv"),
                jobs=jobs or default_jobs(),
                on_run=bar.update,
                file_digest=file_digest,
                fresh=fresh,
            )
        warnings += [f"{name}: {note}" for note in graded.notes]
        total, regraded, runs = total + graded.answers, regraded + graded.graded, runs + len(run_dirs)
    shutil.rmtree(project.build_dir / "graded", ignore_errors=True)  # where earlier versions kept run grades
    record_source(project.build_dir, store.describe(), revision)
    line = f"{total} answers graded into {project.scored_dir()} ({regraded} of {runs} runs graded again)"
    return StageSummary("grade", line + _waiting(store), tuple(warnings))


def _waiting(store: Store) -> str:
    """The end of the grade line: how many saved verdict parts still wait for publish, if any."""
    waiting = len(store.waiting_verdicts())
    return f"; {waiting} verdict part(s) wait in {store.verdict_root()} for `dualboard publish`" if waiting else ""


def _remove_stale(folder: Path, kept: set[Path]) -> None:
    """Drop the files of ``folder`` not in ``kept``."""
    for path in folder.glob("*") if folder.is_dir() else ():
        if path not in kept and (path.is_symlink() or path.is_file()):
            path.unlink()


def _remove_stale_benchmarks(scored_dir: Path, benchmarks: set[str]) -> None:
    """Drop what of build/scored is not the folder of a benchmark of ``benchmarks``: stats and publish read every
    folder there, and grading writes only into real folders."""
    for path in scored_dir.iterdir() if scored_dir.is_dir() else ():
        if path.name in benchmarks and path.is_dir() and not path.is_symlink():
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def grade_with_bar(benchmark: Benchmark, runs: list, cache: VerdictCache, *, progress: bool) -> GradedTables:
    """Grade one benchmark's runs with its human labels; with ``progress``, a bar counts the verdicts.

    Grading and the preview both grade this way.
    """
    from tqdm import tqdm

    from dualboard.grading import grade_benchmark

    with tqdm(desc=f"grade {benchmark.name}", unit="verdict", disable=not progress, leave=False) as bar:
        return grade_benchmark(
            benchmark, runs, cache=cache, progress=bar_progress(bar), human_labels=human_labels(benchmark)
        )


def bar_progress(bar: tqdm) -> Progress:
    """Let ``bar`` show the ``(done, total)`` grading reports: grading counts its verdicts, the bar only draws."""

    def show(done: int, total: int) -> None:
        if bar.total != total:  # the first report: draw the length at once, not at the first verdict
            bar.total = total
            bar.refresh()
        bar.update(done - bar.n)

    return show


def human_labels(benchmark: Benchmark, labels_out: Path | None = None) -> pd.DataFrame | None:
    """The benchmark's labels, one per answer (human_labels.csv and the labellers' files), or None when it has none.

    ``labels_out``: where to write every label, each labeller's apart (:data:`LABELS_DIR`), for the statistics of
    the labelling design; removed when the benchmark has no labeller's file.
    """
    from dualboard.intake.human_labels import first_labels, load_labels

    labels = load_labels(benchmark.path) if benchmark.path else None
    if labels_out is not None:
        if labels is not None and labels["labeller"].ne("").any():
            labels_out.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(labels_out, labels.to_csv(index=False, lineterminator="\n"))
        else:
            labels_out.unlink(missing_ok=True)
    return first_labels(labels) if labels is not None else None


def stats(project: Project, *, seed: int = SEED, cache: BuildCache | None = None, force: bool = False) -> StageSummary:
    """Analyse every scored benchmark into build/stats/<benchmark>/*.csv.

    Each stats folder also records (``store-source.json``) the store revision
    its scored table was graded from, so that a release can tell stale tables.
    Skipped when the scored and verdict tables, the seed and the code are
    those of the last stats and its tables are as it left them (``cache``).
    ``force``: analyse from scratch, neither skipping nor reusing any piece.
    """
    cache = cache or open_cache(project, force=force)
    inputs = [project.scored_dir(), project.build_dir / SOURCE_FILE, project.build_dir / LABELS_DIR]
    key = digest("stats", code_digest(), str(seed), cache.tree_digest(inputs, project.root))
    outputs = project.stats_root()
    return unless_done(
        cache,
        "stats",
        key,
        lambda: cache.tree_digest([outputs], project.root),
        lambda: _analyse_all(project, seed, fresh=force),
    )


def _analyse_all(project: Project, seed: int, *, fresh: bool = False) -> StageSummary:
    """Analyse every scored benchmark, computing again only the pieces of new or changed runs and their pairs.

    ``fresh``: compute every piece (the pieces kept are then replaced by these).
    """
    from dualboard.scored_files import SCORED, VERDICTS, benchmark_names, read_table, store_revision
    from dualboard.stats import agreement, analyse, scores, write_tables
    from dualboard.stats.pieces import PIECES_DIR, Pieces

    names, reused, asked, pairs = [], 0, 0, [0, 0]  # pairs: [reused, asked]
    scored_dir, graded = project.scored_dir(), read_source(project.build_dir)
    pieces_dir = project.build_dir / PIECES_DIR
    benchmarks = benchmark_names(scored_dir)
    for name in benchmarks:
        pieces = Pieces(pieces_dir / f"{name}.json") if fresh else Pieces.load(pieces_dir / f"{name}.json")
        scored = read_table(SCORED, scored_dir, name, columns=list(scores.READ), categories=scores.CATEGORIES)
        verdicts = read_table(VERDICTS, scored_dir, name, columns=list(agreement.READ), categories=agreement.CATEGORIES)
        tables = analyse(scored, verdicts=verdicts, seed=seed, pieces=pieces)
        labels_file = project.build_dir / LABELS_DIR / f"{name}.csv"
        if labels_file.is_file():
            tables = replace(tables, labelling=_labelling(scored_dir, name, labels_file, seed))
        write_tables(tables, project.stats_dir(name))
        pieces.save()
        reused, asked = reused + pieces.reused, asked + pieces.asked
        pair_asked, pair_computed = pieces.tally.get("pairwise", (0, 0))
        pairs = [pairs[0] + pair_asked - pair_computed, pairs[1] + pair_asked]
        record_source(
            project.stats_dir(name),
            graded.store if graded else "an unknown store",
            store_revision(scored_dir, name),
        )
        names.append(f"{name} ({len(tables.models)} runs)")
    _remove_stale(pieces_dir, {pieces_dir / f"{name}.json" for name in benchmarks})
    line = f"tables for {', '.join(names) or 'no benchmarks'} (seed {seed})"
    if reused:
        line += f"; {reused} of {asked} per-run results reused"
    if pairs[0]:
        line += f"; {pairs[0]} of {pairs[1]} run pairs reused"
    return StageSummary("stats", line)


def _labelling(scored_dir: Path, name: str, labels_file: Path, seed: int) -> pd.DataFrame:
    """The labelling design's table of one benchmark (:func:`dualboard.stats.labelling.labelling_table`)."""
    import pandas as pd

    from dualboard.labelling.design import graded_answers
    from dualboard.scored_files import ANSWERS, VERDICTS, read_table
    from dualboard.stats.labelling import labelling_table

    answers = read_table(
        ANSWERS, scored_dir, name, columns=["run_id", "question_id", "round", "response", "unanswered"]
    )
    verdicts = read_table(
        VERDICTS, scored_dir, name, columns=["run_id", "question_id", "round", "grader", "role", "score"]
    )
    labels = pd.read_csv(
        labels_file, dtype={"run_id": str, "question_id": str, "labeller": str, "time": str}, keep_default_na=False
    )
    return labelling_table(graded_answers(answers[~answers["unanswered"].astype(bool)]), verdicts, labels, seed=seed)


def check_current(project: Project, store: Store, names: list[str]) -> None:
    """Refuse to go on when build/scored or build/stats of a benchmark in ``names`` is not from the store's revision.

    Grading records the revision it read in each benchmark's about.json, and the stats
    stage copies it beside its tables; a run ingested since (or a grade not
    followed by stats) would otherwise be published under the wrong revision.
    """
    from dualboard.scored_files import ScoredFolder, store_revision

    revision, scored_dir = store.revision(), project.scored_dir()
    stale = []
    for name in names:
        graded = store_revision(scored_dir, name)
        analysed = read_source(project.stats_dir(name))
        if graded != revision:
            stale.append(
                f"{_shown(project, ScoredFolder.of(scored_dir, name).path)} was graded from store revision {graded}"
            )
        elif analysed is None or analysed.revision != graded:
            stale.append(
                f"{_shown(project, project.stats_dir(name))} was computed from "
                f"{'an unknown revision' if analysed is None else f'store revision {analysed.revision}'}"
            )
    if stale:
        raise DualboardError(
            f"the build does not match the store, which is at revision {revision}: "
            f"{'; '.join(stale)} — run `dualboard build` (or `dualboard grade` then "
            "`dualboard stats`) first"
        )


def _shown(project: Project, path: Path) -> str:
    """``path`` relative to the leaderboard folder, as the user knows it."""
    return path.relative_to(project.root).as_posix() if path.is_relative_to(project.root) else str(path)


def render(
    project: Project,
    store: Store,
    *,
    release: str | None = None,
    cache: BuildCache | None = None,
    ahead: AnswersAhead | None = None,
) -> StageSummary:
    """Write the pages and charts, then build the static site into site/.

    ``release`` (set by ``dualboard release``) names the version being
    deployed: its Downloads page carries that release's files, and the mike
    version selector is on. Skipped when every input (build/stats,
    build/scored, the site sources, the store's snapshot, the code and
    MkDocs' version) is what the last render read and site/ is as it left it
    (``cache``).

    Otherwise MkDocs builds the site's fixed pages anew; the data files of
    the questions and runs that did not change are kept as they are.
    ``ahead``: the answers' data files begun before the statistics
    (:func:`answers_ahead`), which this render finishes.
    """
    cache = cache or open_cache(project)
    snapshot = store.snapshot()
    inputs = [
        project.stats_root(),
        project.scored_dir(),
        *(project.root / name for name in SITE_SOURCES),
        *published_tables(project),
    ]
    key = digest(
        "render",
        code_digest(),
        *tool_versions(),
        release or "",
        store.describe(),
        store.revision(),
        cache.tree_digest(inputs, project.root),
        cache.tree_digest([snapshot], snapshot),
    )
    site = project.site_dir
    return unless_done(
        cache, "render", key, lambda: listing_digest(site), lambda: _render(project, store, release, cache, ahead)
    )


def published_tables(project: Project) -> list[Path]:
    """The benchmarks' published tables (``published.csv``), which the leaderboards show beside ours."""
    from dualboard.stats.published import PUBLISHED_FILE

    return sorted((project.data_dir / "benchmarks").glob(f"*/{PUBLISHED_FILE}"))


def _render(
    project: Project, store: Store, release: str | None, cache: BuildCache, ahead: AnswersAhead | None
) -> StageSummary:
    from dualboard.release_files import load_releases
    from dualboard.render.answer_shards import CACHE_DIR
    from dualboard.render.run_pages import RUN_CACHE_DIR
    from dualboard.render.shared_files import SharedFiles
    from dualboard.render.site import build_site, compose_docs, docs_folder
    from dualboard.render.site_content import site_content
    from dualboard.store.base import read_removals

    results = analysed_results(project, store, cache)
    kept = {  # the data files of earlier renders, by folder of build/ and benchmark
        where: {r.name: kept_files(project, where, r.name) for r in results} for where in (CACHE_DIR, RUN_CACHE_DIR)
    }
    content = site_content(
        results,
        load_releases(project.root),
        read_removals(store.snapshot()),
        release=release,
        # data files go to the docs folder as they are made
        shared=ahead.shared if ahead is not None else SharedFiles(docs_folder(project.build_dir)),
        shards=kept[CACHE_DIR],
        run_tables=kept[RUN_CACHE_DIR],
        started=ahead.answers if ahead is not None else {},
    )
    docs = compose_docs(project.root, project.build_dir, content, versioned=release is not None)
    build_site(docs.config, project.site_dir)
    for old in ("mkdocs-site", "mkdocs-templates"):  # where earlier versions kept MkDocs' output for --dirty builds
        shutil.rmtree(project.build_dir / old, ignore_errors=True)
    return StageSummary("render", f"{docs.pages} pages, {len(results)} leaderboards built into {project.site_dir}")


def analysed_results(project: Project, store: Store, cache: BuildCache | None = None) -> list[BenchmarkResults]:
    """What the render shows of each stored benchmark that has statistics, refusing any built from another revision."""
    stored = stored_benchmarks(store, cache)
    shown = {name: entry for name, entry in stored.items() if project.stats_dir(name).is_dir()}
    check_current(project, store, list(shown))
    return [benchmark_results(project, b, runs) for b, runs in shown.values()]


def benchmark_results(project: Project, benchmark: Benchmark, runs: list) -> BenchmarkResults:
    """Gather what the render stage shows about one benchmark (stats tables, scored answers, runs)."""
    from dualboard.render.pages import BenchmarkResults
    from dualboard.stats import read_tables
    from dualboard.stats.published import PUBLISHED_FILE, load_published, reconcile

    graded = graded_benchmark(project, benchmark, runs)
    published = load_published(project.data_dir / "benchmarks" / benchmark.name / PUBLISHED_FILE, project.data_dir)
    return BenchmarkResults(
        **vars(graded),
        stats=read_tables(project.stats_dir(benchmark.name)),
        published=None if published is None else reconcile(published, graded.scored),
    )


def graded_benchmark(
    project: Project,
    benchmark: Benchmark,
    runs: list,
    scored_columns: list[str] | None = None,
    verdict_categories: Sequence[str] = (),
) -> GradedBenchmark:
    """What the grade stage made of one benchmark, as the render reads it (of the scored table, only
    ``scored_columns`` when given; ``verdict_categories``: verdict columns read as categoricals)."""
    from dualboard.build_cache import stat_key
    from dualboard.render.pages import READ_VERDICT_COLUMNS, GradedBenchmark
    from dualboard.scored_files import ABOUT, SCORED, VERDICTS, ScoredFolder

    files = ScoredFolder.of(project.scored_dir(), benchmark.name)
    files.about()  # a whole folder of this format, or the error that says to grade
    status = stat_key((files.path / ABOUT).stat())  # before reading: a grade meanwhile changes it
    return GradedBenchmark(
        benchmark=benchmark,
        scored=files.read(SCORED, scored_columns).to_pandas(),
        verdicts=files.read(VERDICTS, READ_VERDICT_COLUMNS, categories=verdict_categories).to_pandas(),
        runs=tuple(runs),
        files=files,
        files_status=status,
    )


def kept_files(project: Project, where: str, name: str) -> KeptFiles:
    """The data files that earlier renders made for benchmark ``name``'s pages, as ``build/<where>/`` keeps them."""
    from dualboard.render.kept_files import KeptFiles

    return KeptFiles(project.build_dir / where / f"{name}.json")


@dataclass(frozen=True)
class AnswersAhead:
    """The answers' data files whose making began before the statistics (:func:`answers_ahead`)."""

    shared: SharedFiles
    """Where they go (the docs folder): the render hands its other data files to the same one."""
    answers: dict[str, AnswerFiles]
    """Each benchmark's, by name."""


@contextlib.contextmanager
def answers_ahead(project: Project, store: Store, cache: BuildCache) -> Iterator[AnswersAhead]:
    """Begin making the answers' data files of every graded benchmark (the largest part of a render) in a worker
    process, while the caller computes the statistics, which they do not depend on; the render then finishes
    them (:func:`render` with ``ahead``). Leaving the block cancels what no worker has begun and waits for the
    rest; what is made and not rendered is removed from the docs folder by the next render.

    Worth it only when the grade changed something: else their keys are unchanged, and reading the tables to
    tell so is all this would do.
    """
    from dualboard.render.answer_shards import CACHE_DIR
    from dualboard.render.question_pages import SHARD_SCORED_COLUMNS, SHARD_VERDICT_CATEGORIES, started_answer_files
    from dualboard.render.shared_files import SharedFiles
    from dualboard.render.site import docs_folder
    from dualboard.scored_files import benchmark_names

    shared = SharedFiles(docs_folder(project.build_dir))
    scored = set(benchmark_names(project.scored_dir()))
    graded = [
        graded_benchmark(project, benchmark, runs, list(SHARD_SCORED_COLUMNS), SHARD_VERDICT_CATEGORIES)
        for name, (benchmark, runs) in stored_benchmarks(store, cache).items()
        if name in scored
    ]
    kept = {g.name: kept_files(project, CACHE_DIR, g.name) for g in graded}
    with started_answer_files(graded, shared, kept) as answers:
        del graded  # the workers read what they need from files; the statistics need the memory
        yield AnswersAhead(shared, answers)


def release(project: Project, store: Store, version: str, *, released: str, push: bool = False) -> freeze.ReleaseResult:
    """Freeze the current build as ``version``, render the site for it and deploy it with mike.

    Refuses, before writing anything, a version name that is taken or
    malformed, a folder outside git, and a build that is missing or was not
    made from the store's current revision (:func:`check_current`), so a
    manifest never names runs its scored data lacks. ``push`` pushes the
    ``gh-pages`` branch to the remote.
    """
    from dualboard.release import freeze
    from dualboard.render.site import check_deployable, deploy_site

    freeze.check_release(project.root, version)
    check_deployable(project.root)
    stored = {name: benchmark for name, (benchmark, _runs) in stored_benchmarks(store).items()}
    freeze.check_built(project, list(stored))
    check_current(project, store, list(stored))
    folder = freeze.freeze(project, store, version, stored, released=released)
    render(project, store, release=version, cache=BuildCache.empty(None))  # mike deploys what it writes: always write
    deploy_site(project.build_dir / "mkdocs.yml", project.root, version, push=push)
    return freeze.ReleaseResult(version, folder, sum(1 for p in folder.rglob("*") if p.is_file()), push)
