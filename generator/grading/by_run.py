"""Grade a stored benchmark run by run into build/scored: each run's files kept under its key, few runs in memory.

:func:`grade_stored` is what ``dualboard grade`` does for one benchmark. For
each stored run folder it computes the run's key
(:func:`~dualboard.grading.run_cache.run_key`); a run graded under that key
before (its files are there) is neither loaded nor graded, the others are
loaded, graded and written one at a time, spread over ``jobs`` worker processes
when there are several. With a judge (a grader that is not cpu_bound) they are
graded in this process, as many runs together as fill a judge's batch, so that
it keeps its requests in flight. Then the benchmark-wide choice of the ``answer_key``
grader is taken over every run, and each run's scored file is written where it
is new or the choice changed. The tables are those
:func:`~dualboard.grading.grade_benchmark` returns for the same runs
(tests/grading/test_by_run.py compares them frame for frame).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dualboard.grading.answer_key_choice import ChoiceEvidence, choice_id, choose_answer_key
from dualboard.grading.cache import VerdictCache, VerdictFolders
from dualboard.grading.registry import get_grader
from dualboard.grading.run_cache import RunCache, benchmark_digest, run_key
from dualboard.grading.run_grades import RunGrades, RunPlan, grade_run, grade_runs, plan_run
from dualboard.grading.tables import benchmark_labels, check_run_labels, label_notes, run_labels
from dualboard.grading.verdict import Grader
from dualboard.intake.human_labels import LabelRecords
from dualboard.intake.models import Benchmark
from dualboard.intake.validate import load_runs
from dualboard.scored_files import SCORED, About, ScoredFolder
from dualboard.workers import process_pool


@dataclass(frozen=True)
class GradedRuns:
    """What grading one benchmark's runs into its folder of build/scored did."""

    notes: tuple[str, ...]
    """What the grading set aside (human labels of runs not graded)."""
    graded: int
    """Runs graded by this call (the others' files were kept)."""
    answers: int
    """Answers of every run."""


def grade_stored(
    benchmark: Benchmark,
    run_dirs: Sequence[Path],
    folder: ScoredFolder,
    verdicts: VerdictCache,
    revision: str,
    *,
    human_labels: pd.DataFrame | None = None,
    jobs: int = 1,
    on_run: Callable[[int], None] | None = None,
    file_digest: Callable[[Path], str] | None = None,
    fresh: bool = False,
) -> GradedRuns:
    """Grade the runs of ``run_dirs`` (stored run folders of ``benchmark``, at store ``revision``) into
    ``folder``, keeping the files of runs graded before under the same key.

    ``verdicts`` is the store's verdict cache, used as
    :func:`~dualboard.grading.grade_benchmark` uses it; workers read and save
    the same folders (:class:`VerdictFolders`). ``jobs`` is the most worker
    processes to use (1: grade in this process); a benchmark with a grader that
    is not :attr:`~dualboard.grading.verdict.Grader.cpu_bound` (an LLM judge) is
    graded in this process. ``on_run(n)`` reports ``n`` more runs done, graded
    or found. The files of runs no longer stored are deleted. While this writes, ``about.json`` says the folder
    is incomplete, so no reader takes a half-written folder. ``file_digest`` gives the sha256 of a stored file
    when the caller knows it (see :func:`~dualboard.grading.run_cache.run_key`). ``fresh``: grade every run,
    keeping none of the files.
    """
    labels = benchmark_labels(benchmark, human_labels)
    digest = benchmark_digest(benchmark)
    dirs = sorted(run_dirs, key=lambda d: d.name)
    runs = [d.name for d in dirs]
    keys = [run_key(d, digest, run_labels(labels, d.name), file_digest) for d in dirs]
    folder.make_real()
    cache, recorded = RunCache(folder), (None if fresh else folder.recorded()) or About(benchmark.name, revision)
    todo = [i for i, key in enumerate(keys) if not cache.has(runs[i], key, recorded.runs)]
    regraded = {runs[i] for i in todo}
    # about.json lists only runs whose files were made under their key: the others are about to be rewritten
    kept = {run_id: key for run_id, key in zip(runs, keys, strict=True) if run_id not in regraded}
    folder.write_about(About(benchmark.name, revision, kept, recorded.choice, complete=False))
    _report(on_run, len(dirs) - len(todo))
    tasks = [_Task(benchmark, dirs[i], run_labels(labels, runs[i]), folder, keys[i]) for i in todo]
    for i, key in zip(todo, _grade_all(tasks, verdicts, _jobs(benchmark, jobs), on_run), strict=True):
        keys[i] = key  # a run with a verdict that may not repeat is recorded under a key no grade finds
    folder.keep_only(set(runs))
    evidence, graded = _evidence(cache, runs)
    choice = choose_answer_key(benchmark, evidence)
    new_choice = choice_id(choice) != recorded.choice
    if new_choice:  # should this stop halfway, the next grade must write every scored file again
        folder.write_about(About(benchmark.name, revision, kept, "", complete=False))
    for run_id in runs:
        if new_choice or run_id in regraded or not folder.readable(SCORED, run_id):
            cache.write_scored(run_id, choice)
    folder.write_about(About(benchmark.name, revision, dict(zip(runs, keys, strict=True)), choice_id(choice)))
    return GradedRuns(label_notes(labels, graded), len(todo), evidence.answers)


def _jobs(benchmark: Benchmark, jobs: int) -> int:
    """``jobs``, or 1 when a grader of ``benchmark`` is not cpu_bound: a judge's limits and a model's memory
    hold per process."""
    return jobs if all(grader.cpu_bound for grader in _graders(benchmark)) else 1


def _graders(benchmark: Benchmark) -> list[Grader]:
    return [get_grader(spec) for spec in [*benchmark.traditional.values(), *benchmark.answer_key]]


def _evidence(cache: RunCache, runs: Sequence[str]) -> tuple[ChoiceEvidence, set[str]]:
    """What the choice of the answer-key grader needs, from every run's files; and the runs with an answer."""
    evidence, graded = ChoiceEvidence(), set()
    for run_id in runs:
        run = cache.evidence(run_id)
        evidence.add_run(run)
        if run.answers:
            graded.add(run_id)
    return evidence, graded


@dataclass(frozen=True)
class _Task:
    """One run to grade: everything a worker process needs (picklable)."""

    benchmark: Benchmark
    run_dir: Path
    labels: LabelRecords
    folder: ScoredFolder
    key: str

    def run(self, verdicts: VerdictCache) -> str:
        """Load, check, grade and save the run; return the key to record."""
        return self.save(grade_run(self.plan(), verdicts))

    def plan(self) -> RunPlan:
        """Load and check the run; plan its grading."""
        run = load_runs([self.run_dir], {self.benchmark.name: self.benchmark})[0]
        plan = plan_run(self.benchmark, run, self.labels)
        check_run_labels(plan)
        return plan

    def save(self, grades: RunGrades) -> str:
        """Write the run's files; return the key to record."""
        return RunCache(self.folder).save(self.run_dir.name, self.key, grades)


def _grade_all(
    tasks: list[_Task], verdicts: VerdictCache, jobs: int, on_run: Callable[[int], None] | None
) -> list[str]:
    """Grade every task, in this process or over ``jobs`` workers; return the keys to record, in task order.

    A run whose worker failed is graded again here, so its error reaches the
    user as raised (exceptions do not all survive the trip between processes).
    """
    workers = min(jobs, len(tasks))
    if workers <= 1:
        return _grade_here(tasks, verdicts, on_run)
    names: list[str | None] = [None] * len(tasks)
    folders = verdicts.source if isinstance(verdicts.source, VerdictFolders) else VerdictFolders.of(verdicts.source)
    with process_pool(__name__, workers, _start_worker, (folders, verdicts.index)) as pool:
        futures = [pool.submit(_run_in_worker, task) for task in tasks]
        for i, future in enumerate(futures):
            try:
                names[i] = _done(future.result(), on_run)
            except Exception:  # graded again below, where the error is raised whole
                names[i] = None
    return [name if name is not None else _done(task.run(verdicts), on_run) for name, task in zip(names, tasks)]


def _grade_here(tasks: list[_Task], verdicts: VerdictCache, on_run: Callable[[int], None] | None) -> list[str]:
    """Grade the tasks in this process, as many runs at a time as fill a batch of the slowest grader
    (:func:`_chunks`), each chunk's answers as one stream
    (:func:`~dualboard.grading.run_grades.grade_runs`); return the keys to record, in task order."""
    keys = []
    for chunk in _chunks(tasks):
        keys += _grade_together(chunk, verdicts, on_run)
        chunk.clear()  # the runs' plans go before the next chunk's runs are loaded
    return keys


def _grade_together(chunk: list[tuple[_Task, RunPlan]], verdicts: VerdictCache, on_run) -> list[str]:
    grades = grade_runs([plan for _, plan in chunk], verdicts)
    return [_done(task.save(run_grades), on_run) for (task, _), run_grades in zip(chunk, grades, strict=True)]


def _chunks(tasks: list[_Task]) -> Iterator[list[tuple[_Task, RunPlan]]]:
    """The tasks with their plans, in groups that together hold a batch of the slowest grader's answers
    (:func:`_batch`): one task a group when every grader is cpu_bound."""
    batch = _batch(tasks[0].benchmark) if tasks else 1
    chunk: list[tuple[_Task, RunPlan]] = []
    given = 0  # answers the chunk's runs gave: a gap (an answer left out) is no grader's to ask about
    for task in tasks:
        plan = task.plan()
        chunk.append((task, plan))
        given += sum(not answer.unanswered for answer in plan.answers)
        if given >= batch:
            yield chunk
            chunk, given = [], 0
    if chunk:
        yield chunk


def _batch(benchmark: Benchmark) -> int:
    """How many answers to grade together: a batch of each grader that is not cpu_bound (a judge keeps that many
    requests in flight only when it has that many answers), else 1."""
    return max([g.batch_size for g in _graders(benchmark) if not g.cpu_bound], default=1)


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
