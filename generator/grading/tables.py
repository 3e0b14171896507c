"""Grade every answer of a benchmark's runs into the scored, answers and verdicts tables.

This is the grading stage's entry point: values in (a :class:`Benchmark`, its
:class:`Run` objects, optional human labels), three tidy tables out, whose
columns :mod:`dualboard.scored_files` defines. Only the
:class:`VerdictCache` touches the disk here; ``scored_files`` writes the tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dualboard import kappa
from dualboard.grading.cache import VerdictCache, question_digest, verdict_key
from dualboard.grading.errors import GraderConfigError, GradingInputError
from dualboard.grading.human import HumanGrader
from dualboard.grading.registry import get_grader
from dualboard.grading.verdict import Grader, Verdict
from dualboard.intake.human_labels import AnswerSlot, HumanLabels, labels_by_slot
from dualboard.intake.models import Benchmark, Run
from dualboard.scored_files import ANSWERS, MIN_COVERAGE, SCORED, VERDICTS, typed

ALL_TYPES = "*"
"""Key of ``Benchmark.traditional`` whose grader serves every question type without its own."""

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)``: verdicts done so far (cache hits included) of the ``total`` that
:func:`grade_benchmark` produces, one per row of its ``verdicts`` table."""


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


@dataclass(frozen=True)
class _Answer:
    """One prediction with the run and question it belongs to."""

    run: Run
    question: dict[str, Any]
    prediction: dict[str, Any]

    @property
    def round(self) -> int:
        return int(self.prediction.get("round", 0) or 0)

    @property
    def slot(self) -> AnswerSlot:
        """``(run_id, question_id, round)``: the answer's place, which no other answer of the benchmark shares."""
        return self.run.run_id, self.question["id"], self.round


@dataclass(frozen=True)
class _Assignment:
    """A grader, the role it plays, and the answers it grades (by position)."""

    grader: Grader
    role: str
    positions: tuple[int, ...]
    listed: int | None = None
    """Its place under ``graders.answer_key`` in benchmark.yaml (None: traditional, or unlisted human labels)."""


def _collect_answers(benchmark: Benchmark, runs: Sequence[Run]) -> list[_Answer]:
    """Pair each prediction with its question, refusing unknown questions (except in a run of an earlier
    version, which may answer questions dropped since) and duplicates."""
    answers, seen = [], set()
    for run in sorted(runs, key=lambda r: r.run_id):
        for prediction in run.predictions:
            question_id = str(prediction.get("question_id"))
            try:
                question = benchmark.question(question_id)
            except KeyError:
                if benchmark.answers_older_version(run.metadata):
                    continue  # a question its version had and the current one dropped: nothing to grade it against
                raise GradingInputError(
                    f"run {run.run_id!r} answers question {question_id!r}, which benchmark {benchmark.name!r} "
                    "does not have — fix question_id in predictions.jsonl (run `dualboard validate` first)"
                ) from None
            answer = _Answer(run, question, prediction)
            if answer.slot in seen:
                raise GradingInputError(
                    f"run {run.run_id!r} answers question {question_id!r} round {answer.round} twice — keep one line"
                )
            seen.add(answer.slot)
            answers.append(answer)
    order = {q["id"]: i for i, q in enumerate(benchmark.questions)}
    return sorted(answers, key=lambda a: (a.run.run_id, order[a.question["id"]], a.round))


def _traditional_assignments(benchmark: Benchmark, answers: Sequence[_Answer]) -> list[_Assignment]:
    """Give each answer the traditional grader chosen for its question type."""
    graders: dict[str, Grader] = {}
    by_hash: dict[str, tuple[Grader, list[int]]] = {}
    for position, answer in enumerate(answers):
        kind = answer.question.get("type", "open")
        if kind not in graders:
            spec = benchmark.traditional.get(kind) or benchmark.traditional.get(ALL_TYPES)
            if spec is None:
                raise GraderConfigError(
                    f"benchmark {benchmark.name!r} has {kind!r} questions but no traditional grader for them — "
                    f"add graders.traditional.{kind} to benchmark.yaml"
                )
            graders[kind] = get_grader(spec)
        grader = graders[kind]
        by_hash.setdefault(grader.config_hash, (grader, []))[1].append(position)
    return [_Assignment(g, "traditional", tuple(p)) for g, p in by_hash.values()]


def _assignments(benchmark: Benchmark, answers: Sequence[_Answer], labels: HumanLabels) -> list[_Assignment]:
    """List every (grader, role, answers) the benchmark asks for, answer-key graders in listed order.

    People's labels play the role ``human`` wherever they are listed, so that
    every grader is compared with them; ``human`` grades the labelled answers only.
    """
    everyone = tuple(range(len(answers)))
    labelled = tuple(i for i, a in enumerate(answers) if a.slot in labels)
    assignments = _traditional_assignments(benchmark, answers)
    for index, spec in enumerate(benchmark.answer_key):
        grader = get_grader(spec)
        human = isinstance(grader, HumanGrader)
        role, positions = ("human", labelled) if human else ("answer_key", everyone)
        assignments.append(_Assignment(grader, role, positions, listed=index))
    if labelled and not any(a.role == "human" for a in assignments):
        assignments.append(_Assignment(HumanGrader(), "human", labelled))
    return assignments


Graded = tuple[_Assignment, list[Verdict]]


def _scores(verdicts: Sequence[Verdict]) -> np.ndarray:
    """Return the verdicts' scores as floats, NaN where the grader gave no verdict."""
    return np.array([np.nan if v.score is None else v.score for v in verdicts], dtype=float)


def _kappa_against(candidate: Graded, human: Graded, answers: Sequence[_Answer]) -> float:
    """Return κ of the candidate's pass/fail verdicts against the human marks; NaN if not estimable.

    Estimable as in agreement.csv (Methodology, §Grader agreement): the answers both judged
    span at least :data:`~dualboard.kappa.MIN_QUESTIONS` questions and both raters used both verdicts.
    """
    mine = dict(zip(candidate[0].positions, _scores(candidate[1]), strict=True))
    theirs, marks = np.array([mine.get(p, np.nan) for p in human[0].positions]), _scores(human[1])
    both = ~(np.isnan(theirs) | np.isnan(marks))
    questions = {answers[p].question["id"] for p, judged in zip(human[0].positions, both, strict=True) if judged}
    counts = kappa.pass_fail_counts(theirs, marks)
    return (
        float("nan") if kappa.not_estimable_reason(counts, len(questions)) else float(kappa.kappa_from_counts(counts))
    )


def _choose_answer_key(graded: Sequence[Graded], answers: Sequence[_Answer]) -> Graded | None:
    """Return the grader whose verdicts fill the ``answer_key`` column (rule: :func:`grade_benchmark`)."""
    listed = sorted((g for g in graded if g[0].listed is not None), key=lambda g: g[0].listed)
    human = next((g for g in graded if g[0].role == "human"), None)
    n_labels = int(np.sum(~np.isnan(_scores(human[1])))) if human else 0
    if n_labels and n_labels == len(answers):
        return human
    if n_labels:
        eligible = [
            (round(k, 12), g)
            for g in listed
            if g[0].role == "answer_key"
            and np.mean(~np.isnan(_scores(g[1]))) >= MIN_COVERAGE
            and np.isfinite(k := _kappa_against(g, human, answers))
        ]
        if eligible:  # max keeps the first of equal κ: ties go to the benchmark's order
            return max(eligible, key=lambda e: e[0])[1]
    return listed[0] if listed else None


@dataclass
class _Tally:
    """Counts the verdicts done and reports each step as ``(done, total)``."""

    total: int
    report: Progress | None
    done: int = 0

    def start(self) -> None:
        """Report the total before any work, so that a progress bar knows its length."""
        if self.report is not None:
            self.report(self.done, self.total)

    def advance(self, n: int) -> None:
        """Count ``n`` more verdicts done (computed or read from the cache) and report."""
        self.done += n
        if self.report is not None and n:
            self.report(self.done, self.total)


def _verdicts(
    assignment: _Assignment, answers: Sequence[_Answer], labels: HumanLabels, cache: VerdictCache | None, tally: _Tally
) -> list[Verdict]:
    """Return one verdict per answer of the assignment, counting them on ``tally``."""
    grader = assignment.grader
    if not isinstance(grader, HumanGrader):
        return _grade_assignment(assignment, answers, cache, tally)
    # people judged these answers already: their labels are read, not graded or cached
    verdicts = grader.grade_labels(labels, [answers[p].slot for p in assignment.positions])
    tally.advance(len(verdicts))
    return verdicts


def _grade_assignment(
    assignment: _Assignment, answers: Sequence[_Answer], cache: VerdictCache | None, tally: _Tally
) -> list[Verdict]:
    """Grade one assignment's answers, reading and filling the cache."""
    grader = assignment.grader
    items = [(answers[p].question, answers[p].prediction) for p in assignment.positions]
    use_cache = cache is not None and grader.cached
    unique = {q["id"]: q for q, _ in items} if use_cache else {}
    digests = {question_id: question_digest(q) for question_id, q in unique.items()}
    keys = [verdict_key(grader, q, pred, digests[q["id"]]) for q, pred in items] if use_cache else []
    known = cache.lookup(grader, keys) if use_cache else {}
    todo = [i for i in range(len(items)) if not use_cache or keys[i] not in known]
    tally.advance(len(items) - len(todo))
    fresh: dict[int, Verdict] = {}
    try:
        for start in range(0, len(todo), grader.batch_size):
            batch = todo[start : start + grader.batch_size]
            fresh.update(zip(batch, grader.grade_many([items[i] for i in batch]), strict=True))
            if use_cache:  # saved every few seconds, so a killed grade keeps what the grader returned
                cache.checkpoint(grader, {keys[i]: fresh[i] for i in batch})
            tally.advance(len(batch))
    finally:  # keep what was graded, so a build stopped by a failing endpoint resumes where it stopped
        if use_cache:
            cache.store(grader, {keys[i]: verdict for i, verdict in fresh.items()})
    return [fresh[i] if i in fresh else known[keys[i]] for i in range(len(items))]


def _verdict_rows(assignment: _Assignment, answers: Sequence[_Answer], verdicts: Sequence[Verdict]) -> list[dict]:
    grader = assignment.grader
    rows = []
    for position, verdict in zip(assignment.positions, verdicts, strict=True):
        answer = answers[position]
        rows.append(
            {
                "run_id": answer.run.run_id,
                "question_id": answer.question["id"],
                "round": answer.round,
                "category": answer.question.get("category", ""),
                "grader": grader.name,
                "grader_version": grader.version,
                "config_hash": grader.config_hash,
                "role": assignment.role,
                "score": verdict.score,
                "verdict_parse": verdict.verdict_parse,
                "detail": verdict.detail,
            }
        )
    return rows


def _answer_rows(
    benchmark: Benchmark, answers: Sequence[_Answer], graded: list[tuple[_Assignment, list[Verdict]]]
) -> list[dict[str, Any]]:
    """One row per answer: the traditional and the chosen answer-key verdict, with the text they judged.

    The rows carry every column of the answers table; the scored table is
    the same rows without the text.
    """
    traditional: dict[int, tuple[str, Verdict]] = {}
    for assignment, verdicts in graded:
        if assignment.role == "traditional":
            traditional.update(
                (p, (assignment.grader.name, v)) for p, v in zip(assignment.positions, verdicts, strict=True)
            )
    primary = _choose_answer_key(graded, answers)
    keys = dict(zip(primary[0].positions, primary[1], strict=True)) if primary else {}
    # Only ``human`` grades a subset: the answers nobody labelled have no verdict.
    missing = Verdict(None, "none", "no human label" if primary else "no answer-key grader")
    rows = []
    for position, answer in enumerate(answers):
        trad_name, trad = traditional[position]
        key = keys.get(position, missing)
        response = answer.prediction.get("response")
        rows.append(
            {
                "benchmark": benchmark.name,
                "run_id": answer.run.run_id,
                "model": answer.run.model,
                "question_id": answer.question["id"],
                "category": answer.question.get("category", ""),
                "question_type": answer.question.get("type", "open"),
                "round": answer.round,
                "traditional": trad.score,
                "answer_key": key.score,
                "traditional_grader": trad_name,
                "answer_key_grader": primary[0].grader.name if primary else "",
                "verdict_parse": trad.verdict_parse,
                "missing": not str(response or "").strip(),
                "answer_key_parse": key.verdict_parse,
                "benchmark_version": str(answer.run.metadata.get("benchmark_version", benchmark.version)),
                "prompt": answer.question.get("prompt", ""),
                "key_answer": str(answer.question.get("answer_key", {}).get("answer", "")),
                "response": response if isinstance(response, str) else None,
            }
        )
    return rows


def _graded_labels(
    benchmark: Benchmark, answers: Sequence[_Answer], labels: pd.DataFrame | None
) -> tuple[HumanLabels, tuple[str, ...]]:
    """Return the labels of the graded answers, keyed by answer, and notes on the labels set aside.

    Labels of a run that is not graded (it left the store, or a preview left
    it out) stay in the file and are set aside with a note: the run may come
    back. A label naming a graded run's answer that does not exist is a typo,
    and refused.
    """
    if labels is None:
        if any(spec.name == HumanGrader.name for spec in benchmark.answer_key):
            raise GraderConfigError(
                f"benchmark {benchmark.name!r} lists grader 'human' under graders.answer_key but has no human labels "
                f"— add data/benchmarks/{benchmark.name}/human_labels.csv or remove 'human' from benchmark.yaml"
            )
        return {}, ()
    lookup = labels_by_slot(labels)
    graded = {a.run.run_id for a in answers}
    known = {a.slot for a in answers}
    stray = sorted(k for k in set(lookup) - known if k[0] in graded)
    if stray:
        raise GradingInputError(
            f"human_labels.csv labels {len(stray)} answer(s) that no run has, first {stray[0]} — "
            "fix the run/question/round or remove those lines"
        )
    absent = sorted({k[0] for k in lookup} - graded)
    notes = (
        ()
        if not absent
        else (
            f"human_labels.csv: {sum(k[0] in absent for k in lookup)} label(s) of {len(absent)} run(s) not graded "
            f"({', '.join(repr(r[:60]) for r in absent[:5])}{' …' if len(absent) > 5 else ''}) set aside; they stay "
            "in the file",
        )
    )
    return {slot: score for slot, score in lookup.items() if slot[0] in graded}, notes


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

        - human labels on every answer: ``human``, listed or not;
        - human labels on a sample: the automatic answer-key grader with the
          highest Cohen's κ against them (pass/fail reading, score ≥ 50, over
          the labelled answers it judged) among those that give a verdict on
          at least :data:`MIN_COVERAGE` (80 %) of all the benchmark's answers;
          equal κ goes to the one listed first. κ must be estimable as in
          ``agreement.csv``: at least 10 labelled questions, both verdicts
          used by both raters. When no grader qualifies, the first listed;
        - no human labels: the first listed answer-key grader.
    runs
        Validated runs of this benchmark. Predictions are graded as they are:
        an empty or unreadable response scores 0 (``verdict_parse = none``) and
        is counted; absent questions get no row (validation checks coverage).
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
        ``response``; ``verdicts``: one row per grader per answer (``human``:
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
    answers = _collect_answers(benchmark, runs)
    labels, notes = _graded_labels(benchmark, answers, human_labels)
    assignments = _assignments(benchmark, answers, labels)
    tally = _Tally(sum(len(a.positions) for a in assignments), progress)  # one verdict row per graded position
    tally.start()
    graded = [(a, _verdicts(a, answers, labels, cache, tally)) for a in assignments]
    rows = [row for assignment, verdicts in graded for row in _verdict_rows(assignment, answers, verdicts)]
    per_answer = _answer_rows(benchmark, answers, graded)
    return GradedTables(
        scored=typed(SCORED, per_answer),
        answers=typed(ANSWERS, per_answer),
        verdicts=typed(VERDICTS, rows),
        notes=notes,
    )
