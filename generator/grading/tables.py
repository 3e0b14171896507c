"""Grade every answer of a benchmark's runs into the scored, answers and verdicts tables.

This is the grading stage's entry point: values in (a :class:`Benchmark`, its
:class:`Run` objects, optional human labels), three tidy tables out, whose
columns :mod:`dualboard.scored_files` defines. Runs are graded one at a time
(:mod:`dualboard.grading.run_grades`), then the benchmark-wide decisions are
taken over all of them: which grader fills the ``answer_key`` column
(:mod:`dualboard.grading.answer_key_choice`) and what becomes of the human
labels of runs not graded (:func:`graded_labels`). Only the
:class:`VerdictCache` touches the disk here; ``scored_files`` writes the tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from dualboard.grading.answer_key_choice import ChoiceEvidence, choose_answer_key, with_answer_key
from dualboard.grading.cache import VerdictCache
from dualboard.grading.errors import GraderConfigError, GradingInputError
from dualboard.grading.human import HumanGrader
from dualboard.grading.run_grades import Progress, RunGrades, RunPlan, Tally, given_answers, grade_runs, plan_run
from dualboard.intake.human_labels import AnswerSlot, LabelRecords, labels_by_slot
from dualboard.intake.models import Benchmark, Run
from dualboard.scored_files import ANSWERS, SCORED, VERDICTS, typed


@dataclass(frozen=True)
class GradedTables:
    """The grading stage's output."""

    scored: pd.DataFrame
    """One row per (run, question, round); columns ``scored_files.SCORED``."""
    answers: pd.DataFrame
    """The same rows with prompt, key answer and response; columns ``scored_files.ANSWERS``."""
    verdicts: pd.DataFrame
    """One row per (run, question, round, grader); columns ``scored_files.VERDICTS``."""
    notes: tuple[str, ...] = ()
    """What the grading set aside, for a warning line (e.g. human labels of runs not graded)."""


def benchmark_labels(benchmark: Benchmark, labels: pd.DataFrame | None) -> dict[AnswerSlot, tuple[float, str]]:
    """Key ``human_labels.csv`` by answer; refuse a benchmark that lists ``human`` without labels."""
    if labels is None:
        if any(spec.name == HumanGrader.name for spec in benchmark.answer_key):
            raise GraderConfigError(
                f"benchmark {benchmark.name!r} lists grader 'human' under graders.answer_key but has no human labels "
                f"— remove 'human' from benchmark.yaml until the first labels exist (`dualboard label` labels the "
                f"answers of a built board), or add data/benchmarks/{benchmark.name}/human_labels.csv"
            )
        return {}
    return labels_by_slot(labels)


def run_labels(labels: LabelRecords, run_id: str) -> dict[AnswerSlot, tuple[float, str]]:
    """The labels of one run's answers."""
    return {slot: score for slot, score in labels.items() if slot[0] == run_id}


def check_run_labels(plan: RunPlan) -> None:
    """Refuse labels naming an answer the run does not have: a typo (run, question or round)."""
    known = {plan.slot(answer) for answer in plan.answers if not answer.unanswered}
    stray = sorted(set(plan.labels) - known)
    if stray and plan.answers:
        raise GradingInputError(
            f"human_labels.csv labels {len(stray)} answer(s) that no run has, first {stray[0]} — "
            "fix the run/question/round or remove those lines"
        )


def label_notes(labels: LabelRecords, graded: set[str]) -> tuple[str, ...]:
    """Say which labels were set aside: those of runs not graded (``graded``: run ids with an answer graded).

    Labels of a run that is not graded (it left the store, or a preview left
    it out) stay in the file: the run may come back.
    """
    absent = sorted({k[0] for k in labels} - graded)
    if not absent:
        return ()
    return (
        f"human_labels.csv: {sum(k[0] in absent for k in labels)} label(s) of {len(absent)} run(s) not graded "
        f"({', '.join(repr(r[:60]) for r in absent[:5])}{' …' if len(absent) > 5 else ''}) set aside; they stay "
        "in the file",
    )


def assemble(benchmark: Benchmark, runs: Sequence[RunGrades], notes: tuple[str, ...] = ()) -> GradedTables:
    """Choose the ``answer_key`` grader over ``runs`` and put their grades together, run after run."""
    evidence = ChoiceEvidence()
    for grades in runs:
        evidence.add(given_answers(grades.answers), grades.verdicts)
    choice = choose_answer_key(benchmark, evidence)
    answers = [with_answer_key(grades, choice) for grades in runs]
    answers_frame = pd.concat(answers, ignore_index=True) if answers else typed(ANSWERS, [])
    verdicts = pd.concat([g.verdicts for g in runs], ignore_index=True) if runs else typed(VERDICTS, [])
    return GradedTables(answers_frame[list(SCORED.names)], answers_frame, verdicts, notes)


def grade_benchmark(
    benchmark: Benchmark,
    runs: list[Run],
    *,
    cache: VerdictCache | None = None,
    progress: Progress | None = None,
    human_labels: pd.DataFrame | None = None,
) -> GradedTables:
    """Grade every answer of ``runs`` with the benchmark's graders.

    Parameters
    ----------
    benchmark
        The benchmark; ``traditional`` picks a grader per question type and
        ``answer_key`` lists answer-key graders. Which of them fills the scored
        table's ``answer_key`` column (and ``answer_key_grader``):

        - ``human`` listed first: people's labels, whichever runs there are.
          An answer without a label (or whose label judged another response,
          ``response_sha256``) has no verdict: its run awaits labels and is
          not ranked under answer-key grading (the stats stage);
        - otherwise, with human labels: the automatic answer-key grader with
          the highest Cohen's κ against them (pass/fail reading, score ≥ 50,
          over the labelled answers it judged) among those that give a verdict
          on at least :data:`MIN_COVERAGE` (80 %) of the labelled answers;
          equal κ goes to the one listed first. κ must be estimable as in
          ``agreement.csv`` (:func:`~dualboard.kappa.not_estimable_reason`): at
          least 10 labelled questions, and at most 1 % of question resamples
          leave a rater one verdict. When no grader qualifies, the first listed;
        - no human labels: the first listed answer-key grader.

        Only the benchmark (``benchmark.yaml``, ``human_labels.csv``) and the
        verdicts at labelled answers decide: adding a run never changes it.
    runs
        Validated runs of this benchmark. Predictions are graded as they are:
        an empty or unreadable response scores 0 (``verdict_parse = none``) and
        is counted; so does a question (and round) its version asked that the run
        did not answer (``unanswered``: no grader reads it); a question its
        version did not have (added since) gets no row: never run.
    cache
        Verdict cache; verdicts found there are not graded again, new ones are added.
    progress
        Called as ``progress(done, total)`` (:data:`Progress`): first with
        ``done = 0``, then after each step; ``done`` grows to ``total``, the
        number of rows of ``verdicts`` (cache hits count as done).
    human_labels
        Output of :func:`~dualboard.intake.human_labels.load_human_labels`; the ``human`` grader turns each
        label of a graded answer into a row with role ``human``. Required when
        ``answer_key`` lists ``human``. Labels of runs not in ``runs`` are set
        aside, with a line in ``notes``.

    Returns
    -------
    GradedTables
        ``scored``: one row per answer with ``traditional`` (0–100, from the
        traditional grader) and ``answer_key`` (0–100, NaN without a verdict,
        from the answer-key grader chosen above), their graders and how each
        verdict was read (``verdict_parse``, ``answer_key_parse``);
        ``answers``: the same rows with ``prompt``, ``key_answer`` and
        ``response``; ``verdicts``: one row per grader per answer, run after
        run (in run id order), grader by grader within a run (``human``:
        per labelled answer). Every column, with its type and meaning, is
        listed in ``generator/scored_columns.yaml``.

    Examples
    --------
    >>> from dualboard.intake.models import Benchmark, GraderSpec, Run
    >>> question = {"id": "q1", "category": "Geo", "type": "open", "prompt": "Capital of France?",
    ...             "answer_key": {"answer": "Paris", "aliases": [], "patterns": [], "numeric": None}}
    >>> bench = Benchmark("geo", "1", "Geo", "", {"open": GraderSpec("exact")}, (GraderSpec("rules"),), (question,))
    >>> run = Run("geo", "r1", {"model": "m"}, ({"question_id": "q1", "round": 0, "response": "Final answer: Paris"},))
    >>> grade_benchmark(bench, [run]).scored[["run_id", "traditional", "answer_key", "verdict_parse"]]
      run_id  traditional  answer_key verdict_parse
    0     r1        100.0       100.0            ok

    See also
    --------
    dualboard.scored_files.write_scored : write the three tables as Parquet.
    dualboard.intake.human_labels.load_human_labels : read ``human_labels.csv`` for ``human_labels``.
    verdict_parse_rates : the no-verdict rate per grader.
    """
    labels = benchmark_labels(benchmark, human_labels)
    plans = [plan_run(benchmark, run, run_labels(labels, run.run_id)) for run in sorted(runs, key=lambda r: r.run_id)]
    for plan in plans:
        check_run_labels(plan)
    tally = Tally(sum(plan.verdict_rows for plan in plans), progress)  # one verdict row per graded position
    tally.start()
    graded = grade_runs(plans, cache, tally)
    return assemble(benchmark, graded, label_notes(labels, {p.run.run_id for p in plans if p.answers}))
