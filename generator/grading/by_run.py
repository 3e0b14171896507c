"""Grade a stored benchmark run by run: each run's grades cached by content, one run in memory at a time.

:func:`grade_stored` is what ``dualboard grade`` does for one benchmark. For
each stored run folder it computes the run's key
(:func:`~dualboard.grading.run_cache.run_key`); a run whose fragment is in the
:class:`~dualboard.grading.run_cache.RunCache` is neither loaded nor graded,
the others are loaded, graded and saved one at a time, spread over ``jobs``
worker processes when there are several. Then the benchmark-wide choice of
the ``answer_key`` grader is taken over every fragment, and
:meth:`GradedRuns.parts` names each run's files, which ``scored_files.join_scored_parts``
copies into build/scored/ without reading them. The tables they make are those
:func:`~dualboard.grading.grade_benchmark` returns for the same runs
(tests/grading/test_by_run.py compares them frame for frame).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pandas as pd
import pyarrow as pa

from dualboard.grading.answer_key_choice import (
    AnswerKeyChoice,
    ChoiceEvidence,
    answer_key_columns,
    choose_answer_key,
)
from dualboard.grading.cache import VerdictCache, VerdictFolders
from dualboard.grading.registry import get_grader
from dualboard.grading.run_cache import RunCache, benchmark_digest, run_key
from dualboard.grading.run_grades import RunGrades, grade_run, plan_run
from dualboard.grading.tables import benchmark_labels, check_run_labels, label_notes, run_labels
from dualboard.intake.human_labels import LabelRecords
from dualboard.intake.models import Benchmark
from dualboard.intake.validate import load_runs
from dualboard.workers import worker_context


@dataclass(frozen=True)
class GradedRuns:
    """One benchmark's runs, graded into a :class:`RunCache`, and the benchmark-wide decisions."""

    cache: RunCache
    fragments: tuple[str, ...]
    """One fragment name per run, in run id order."""
    choice: AnswerKeyChoice | None
    """The grader that fills the ``answer_key`` column."""
    notes: tuple[str, ...]
    """What the grading set aside (human labels of runs not graded)."""
    graded: int
    """Runs graded by this call (the others' fragments were kept)."""
    answers: int
    """Answers of every run."""

    def parts(self) -> Iterator[RunFiles]:
        """Each run's files of the three tables, run after run (the answer-key columns of a run are kept under
        the choice, so a new run does not fill the others' again; a run's are made when missing)."""
        for name in self.fragments:
            answers, verdicts = self.cache.files(name)
            key = self.cache.answer_key(name, self.choice, partial(self._answer_key_columns, name))
            yield RunFiles((answers, key), (answers, key), (verdicts,))

    def _answer_key_columns(self, name: str) -> pa.Table:
        """The answer-key columns of fragment ``name`` under the choice, from its answers and verdicts."""
        return answer_key_columns(*self.cache.load_arrow(name), self.choice)


@dataclass(frozen=True)
class RunFiles:
    """One run's Parquet files of each table (what ``scored_files.join_scored_parts`` copies): the scored and
    answers tables take their columns from the run's answers and its answer-key columns."""

    scored: tuple[Path, ...]
    answers: tuple[Path, ...]
    verdicts: tuple[Path, ...]


def grade_stored(
    benchmark: Benchmark,
    run_dirs: Sequence[Path],
    cache: RunCache,
    verdicts: VerdictCache,
    *,
    human_labels: pd.DataFrame | None = None,
    jobs: int = 1,
    on_run: Callable[[int], None] | None = None,
    file_digest: Callable[[Path], str] | None = None,
) -> GradedRuns:
    """Grade the runs of ``run_dirs`` (stored run folders of ``benchmark``) that ``cache`` lacks; keep the rest.

    ``verdicts`` is the store's verdict cache, used as
    :func:`~dualboard.grading.grade_benchmark` uses it; workers read and save
    the same folders (:class:`VerdictFolders`). ``jobs`` is the most worker
    processes to use (1: grade in this process); a benchmark with a grader that
    is not :attr:`~dualboard.grading.verdict.Grader.cpu_bound` (an LLM judge) is
    graded in this process. ``on_run(n)`` reports ``n`` more runs done, graded
    or found. Fragments of runs no longer stored are deleted. ``file_digest`` gives the sha256 of a stored
    file when the caller knows it (see :func:`~dualboard.grading.run_cache.run_key`).
    """
    labels = benchmark_labels(benchmark, human_labels)
    digest = benchmark_digest(benchmark)
    dirs = sorted(run_dirs, key=lambda d: d.name)
    names = [run_key(d, digest, run_labels(labels, d.name), file_digest) for d in dirs]
    todo = [i for i, key in enumerate(names) if not cache.has(key)]
    _report(on_run, len(dirs) - len(todo))
    tasks = [_Task(benchmark, dirs[i], run_labels(labels, dirs[i].name), cache.folder, names[i]) for i in todo]
    for i, name in zip(todo, _grade_all(tasks, verdicts, _jobs(benchmark, jobs), on_run), strict=True):
        names[i] = name  # a run with a verdict that may not repeat has a fragment of its own
    cache.keep_only(set(names))
    evidence, graded = _evidence(cache, dirs, names)
    choice = choose_answer_key(benchmark, evidence)
    return GradedRuns(cache, tuple(names), choice, label_notes(labels, graded), len(todo), evidence.answers)


def _jobs(benchmark: Benchmark, jobs: int) -> int:
    """``jobs``, or 1 when a grader of ``benchmark`` is not cpu_bound: a judge's limits and a model's memory
    hold per process."""
    specs = [*benchmark.traditional.values(), *benchmark.answer_key]
    return jobs if all(get_grader(spec).cpu_bound for spec in specs) else 1


def _evidence(cache: RunCache, dirs: Sequence[Path], names: Sequence[str]) -> tuple[ChoiceEvidence, set[str]]:
    """What the choice of the answer-key grader needs, from every run's fragment; and the runs with an answer."""
    evidence, graded = ChoiceEvidence(), set()
    for directory, name in zip(dirs, names, strict=True):
        run = cache.evidence(name)
        evidence.add_run(run)
        if run.answers:
            graded.add(directory.name)
    return evidence, graded


@dataclass(frozen=True)
class _Task:
    """One run to grade: everything a worker process needs (picklable)."""

    benchmark: Benchmark
    run_dir: Path
    labels: LabelRecords
    cache_folder: Path
    key: str

    def run(self, verdicts: VerdictCache) -> str:
        """Load, check, grade and save the run; return its fragment's name."""
        run = load_runs([self.run_dir], {self.benchmark.name: self.benchmark})[0]
        plan = plan_run(self.benchmark, run, self.labels)
        check_run_labels(plan)
        grades: RunGrades = grade_run(plan, verdicts)
        return RunCache(self.cache_folder).save(self.key, grades)


def _grade_all(
    tasks: list[_Task], verdicts: VerdictCache, jobs: int, on_run: Callable[[int], None] | None
) -> list[str]:
    """Grade every task, in this process or over ``jobs`` workers; return the fragment names in task order.

    A run whose worker failed is graded again here, so its error reaches the
    user as raised (exceptions do not all survive the trip between processes).
    """
    workers = min(jobs, len(tasks))
    if workers <= 1:
        return [_done(task.run(verdicts), on_run) for task in tasks]
    names: list[str | None] = [None] * len(tasks)
    context = worker_context(__name__, workers)
    folders = verdicts.source if isinstance(verdicts.source, VerdictFolders) else VerdictFolders.of(verdicts.source)
    start = (folders, verdicts.index)
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker, initargs=start) as pool:
        futures = [pool.submit(_run_in_worker, task) for task in tasks]
        for i, future in enumerate(futures):
            try:
                names[i] = _done(future.result(), on_run)
            except Exception:  # graded again below, where the error is raised whole
                names[i] = None
    return [name if name is not None else _done(task.run(verdicts), on_run) for name, task in zip(names, tasks)]


_WORKER_VERDICTS: VerdictCache | None = None
"""A worker process's verdict cache, made once by :func:`_start_worker` and kept for every run it grades
(reading a grader's verdicts once per process, not once per run)."""


def _start_worker(folders: VerdictFolders, index: Path | None) -> None:
    global _WORKER_VERDICTS
    _WORKER_VERDICTS = VerdictCache(folders, index=index)


def _run_in_worker(task: _Task) -> str:
    if _WORKER_VERDICTS is None:
        raise RuntimeError("a grading worker ran a task before _start_worker made its verdict cache")
    return task.run(_WORKER_VERDICTS)


def _done(name: str, on_run: Callable[[int], None] | None) -> str:
    _report(on_run, 1)
    return name


def _report(on_run: Callable[[int], None] | None, runs: int) -> None:
    if on_run is not None and runs:
        on_run(runs)
