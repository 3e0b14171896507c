"""Grade one run: every grader the benchmark names, on every answer of the run.

Grading works run by run (:func:`plan_run`, then :func:`grade_run`, or
:func:`grade_runs` for several runs whose answers a judge should see together): a verdict
depends on the question, the grader and the answer alone, so a run's verdicts
come out the same whichever runs are graded with it. What does depend on the
other runs (which grader fills the ``answer_key`` column, notes on human
labels) is decided afterwards, over every run's :class:`RunGrades`
(:mod:`dualboard.grading.answer_key_choice`, :mod:`dualboard.grading.tables`).
Grading one run at a time lets the grading stage cache each run's grades by
content, hold one run in memory (a judge's few runs: :func:`grade_runs`), and
spread runs over processes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from dualboard.grading.cache import VerdictCache, answer_part, grader_part, keyed, question_digest
from dualboard.grading.choices import options_as_shown
from dualboard.grading.errors import GraderConfigError, GradingInputError
from dualboard.grading.human import HumanGrader
from dualboard.grading.matching import key_answer
from dualboard.grading.registry import get_grader
from dualboard.grading.verdict import Grader, Verdict
from dualboard.intake.human_labels import AnswerSlot, HumanLabels, LabelRecords, response_sha256
from dualboard.intake.models import Benchmark, Run
from dualboard.scored_files import ANSWERS, VERDICTS, typed

ALL_TYPES = "*"
"""Key of ``Benchmark.traditional`` whose grader serves every question type without its own."""

RUN_ANSWER_COLUMNS = ANSWERS.stored_names
"""The columns of :attr:`RunGrades.answers`: the answers table without the answer-key columns."""

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)``: verdicts done so far (cache hits included) of the ``total`` that
:func:`~dualboard.grading.grade_benchmark` produces, one per row of its ``verdicts`` table."""


@dataclass(frozen=True)
class RunGrades:
    """One run's grades, before the benchmark-wide choice of the ``answer_key`` column."""

    answers: pd.DataFrame
    """One row per answer in question order, then round; columns :data:`RUN_ANSWER_COLUMNS`."""
    verdicts: pd.DataFrame
    """One row per (answer, grader), grader by grader; columns ``scored_files.VERDICTS``."""
    transient: bool = False
    """Whether a verdict came from a failure that may not repeat (a judge's timeout): such grades are
    used once, never cached, so the next grade asks again."""


@dataclass(frozen=True)
class _Answer:
    """One prediction with the question it answers."""

    question: dict[str, Any]
    prediction: dict[str, Any]
    round: int
    """The prediction's round (0 when it names none), read once: sorting and every table's rows ask for it."""
    unanswered: bool = False
    """Whether the run gave no line for this question and round although its version asked it (a run let in by
    ``allow_incomplete``): no grader reads it and it has no verdict rows (which would count in the graders'
    agreement), and it scores 0 under both gradings (:data:`UNANSWERED`)."""

    @classmethod
    def of(cls, question: dict[str, Any], prediction: dict[str, Any]) -> _Answer:
        return cls(question, prediction, int(prediction.get("round", 0) or 0))

    @classmethod
    def gap(cls, question: dict[str, Any], round_: int) -> _Answer:
        """The place of an answer the run did not give."""
        return cls(question, {"question_id": question["id"], "round": round_, "response": None}, round_, True)


UNANSWERED = Verdict(0.0, "none", "no answer: the run left this question out, so it counts as wrong")
"""The score of an answer the run did not give, under both gradings: a run must not raise its score by leaving out
the questions it would fail."""


def given_answers(answers: pd.DataFrame) -> int:
    """How many rows of a run's answers table the run gave (not :attr:`_Answer.unanswered`)."""
    return int((~answers["unanswered"].astype(bool)).sum())


@dataclass(frozen=True)
class _Assignment:
    """A grader, the role it plays, and the answers it grades (by position)."""

    grader: Grader
    role: str
    positions: tuple[int, ...]


@dataclass(frozen=True)
class RunPlan:
    """A run's answers paired with their questions, and which grader grades which of them."""

    benchmark: Benchmark
    run: Run
    answers: tuple[_Answer, ...]
    assignments: tuple[_Assignment, ...]
    labels: LabelRecords
    """The human labels naming this run's answers, each with the digest of the response it judged."""

    @functools.cached_property
    def applied(self) -> HumanLabels:
        """The labels that judged the response the run holds now: a label of another response is not applied."""
        responses = {self.slot(a): a.prediction.get("response", "") for a in self.answers}
        return {
            slot: score
            for slot, (score, digest) in self.labels.items()
            if slot in responses and response_sha256(responses[slot]) == digest
        }

    @property
    def verdict_rows(self) -> int:
        """How many verdicts grading this plan gives: one per assignment per position."""
        return sum(len(a.positions) for a in self.assignments)

    @functools.cached_property
    def answer_parts(self) -> list[str]:
        """Each answer's end of its verdict keys (:func:`~dualboard.grading.cache.answer_part`), shared by
        every cached grader of the run."""
        return [answer_part(answer.prediction) for answer in self.answers]

    @functools.cached_property
    def question_digests(self) -> dict[str, str]:
        """:func:`~dualboard.grading.cache.question_digest` of each question the run answers, by id (one digest
        per question, not one per round: the question's canonical JSON is a fifth of a run's key time)."""
        questions = {a.question["id"]: a.question for a in self.answers}
        return {question_id: question_digest(question) for question_id, question in questions.items()}

    def slot(self, answer: _Answer) -> AnswerSlot:
        """``(run_id, question_id, round)``: the answer's place, which no other answer of the benchmark shares."""
        return self.run.run_id, answer.question["id"], answer.round


def _collect_answers(benchmark: Benchmark, run: Run) -> list[_Answer]:
    """Pair each prediction with its question, refusing unknown questions (except in a run of an earlier
    version, which may answer questions dropped since), questions its version did not have, and duplicates;
    add a gap (:meth:`_Answer.gap`) for each question and round its version asked that it did not answer; sort by
    question order, then round."""
    asked = benchmark.asked_ids(run.metadata)
    answers, seen, had = [], set(), set(asked)
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
        if question_id not in had:
            raise GradingInputError(
                f"run {run.run_id!r} answers question {question_id!r}, which its version "
                f"{run.metadata.get('benchmark_version')!r} did not have — remove the line (run `dualboard validate`)"
            )
        answer = _Answer.of(question, prediction)
        if (question_id, answer.round) in seen:
            raise GradingInputError(
                f"run {run.run_id!r} answers question {question_id!r} round {answer.round} twice — keep one line"
            )
        seen.add((question_id, answer.round))
        answers.append(answer)
    rounds = range(_rounds(run))  # none for a run that states no rounds: validation refuses it
    answers += [_Answer.gap(benchmark.question(q), r) for q in asked for r in rounds if (q, r) not in seen]
    order = {q["id"]: i for i, q in enumerate(benchmark.questions)}
    return sorted(answers, key=lambda a: (order[a.question["id"]], a.round))


def _traditional_assignments(
    benchmark: Benchmark, answers: Sequence[_Answer], positions: Sequence[int]
) -> list[_Assignment]:
    """Give each answer at ``positions`` the traditional grader chosen for its question type."""
    graders: dict[str, Grader] = {}
    by_hash: dict[str, tuple[Grader, list[int]]] = {}
    for position in positions:
        kind = answers[position].question.get("type", "open")
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


def plan_run(benchmark: Benchmark, run: Run, labels: LabelRecords) -> RunPlan:
    """List every (grader, role, answers) the benchmark asks for on ``run``, answer-key graders in listed order.

    People's labels play the role ``human`` wherever they are listed, so that
    every grader is compared with them; ``human`` grades the labelled answers
    only: those whose label judged the response the run holds
    (:attr:`RunPlan.applied`). ``labels`` are the labels naming this run's answers.
    """
    answers = _collect_answers(benchmark, run)
    plan = RunPlan(benchmark, run, tuple(answers), (), labels)
    # an answer not given is no grader's to judge: it has no verdict rows, and scores 0 (UNANSWERED)
    given = [i for i, a in enumerate(answers) if not a.unanswered]
    everyone = tuple(given)
    labelled = tuple(i for i in given if plan.slot(answers[i]) in plan.applied)
    assignments = _traditional_assignments(benchmark, answers, everyone)
    for spec in benchmark.answer_key:
        grader = get_grader(spec)
        human = isinstance(grader, HumanGrader)
        assignments.append(_Assignment(grader, "human" if human else "answer_key", labelled if human else everyone))
    if labelled and not any(a.role == "human" for a in assignments):
        assignments.append(_Assignment(HumanGrader(), "human", labelled))
    return replace(plan, assignments=tuple(assignments))


@dataclass
class Tally:
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


def grade_run(plan: RunPlan, cache: VerdictCache | None = None, tally: Tally | None = None) -> RunGrades:
    """Grade every assignment of ``plan``: the run's answers rows and verdict rows.

    Verdicts found in ``cache`` are not graded again, new ones are added;
    ``tally`` counts every verdict done.
    """
    return grade_runs([plan], cache, tally)[0]


def grade_runs(
    plans: Sequence[RunPlan], cache: VerdictCache | None = None, tally: Tally | None = None
) -> list[RunGrades]:
    """:func:`grade_run` of each plan, with each grader's answers of every plan graded as one stream.

    A judge keeps ``max_concurrency`` requests in flight only when it has that
    many answers to ask about: graded run by run, a run of 100 answers would cap
    it at 100. Each run's grades are those :func:`grade_run` gives it alone, but
    that with a cache an answer several runs gave is asked about once: a
    verdict that may not repeat (a judge's timeout) is then each such run's.
    """
    tally = tally or Tally(sum(plan.verdict_rows for plan in plans), None)
    done: dict[tuple[int, int], list[Verdict]] = {}
    for group in _same_grader(plans):
        done.update(_grade_group(plans, group, cache, tally))
    grades = []
    for i, plan in enumerate(plans):
        graded = [(a, done[i, j]) for j, a in enumerate(plan.assignments)]
        transient = any(v.transient for _, verdicts in graded for v in verdicts)
        grades.append(RunGrades(_answer_rows(plan, graded), _verdict_rows(plan, graded), transient))
    return grades


def _same_grader(plans: Sequence[RunPlan]) -> list[list[tuple[int, int]]]:
    """The (plan, assignment) positions grouped by role and grader configuration, in order of first use."""
    groups: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for i, plan in enumerate(plans):
        for j, assignment in enumerate(plan.assignments):
            groups.setdefault((assignment.role, assignment.grader.config_hash), []).append((i, j))
    return list(groups.values())


def _grade_group(
    plans: Sequence[RunPlan], group: list[tuple[int, int]], cache: VerdictCache | None, tally: Tally
) -> dict[tuple[int, int], list[Verdict]]:
    """One verdict per answer of each assignment of ``group`` (all of one grader), by (plan, assignment)."""
    grader = plans[group[0][0]].assignments[group[0][1]].grader
    if isinstance(grader, HumanGrader):  # people judged these answers already: their labels are read, not graded
        found = {}
        for i, j in group:
            plan, assignment = plans[i], plans[i].assignments[j]
            slots = [plan.slot(plan.answers[p]) for p in assignment.positions]
            found[i, j] = assignment.grader.grade_labels(plan.applied, slots)
            tally.advance(len(found[i, j]))
        return found
    use_cache = cache is not None and grader.cached
    items, keys, sizes = [], [], []
    for i, j in group:
        plan, positions = plans[i], plans[i].assignments[j].positions
        items += [(plan.answers[p].question, plan.answers[p].prediction) for p in positions]
        keys += _keys(grader, plan, positions) if use_cache else []
        sizes.append(len(positions))
    verdicts = _grade_items(grader, items, keys, cache if use_cache else None, tally)
    found, start = {}, 0
    for position, size in zip(group, sizes, strict=True):
        found[position] = verdicts[start : start + size]
        start += size
    return found


def _grade_items(
    grader: Grader, items: list[tuple[dict, dict]], keys: list[str], cache: VerdictCache | None, tally: Tally
) -> list[Verdict]:
    """Grade ``items`` with ``grader``, reading and filling ``cache`` (under ``keys``) when given; with a cache,
    an answer is graded once however many runs gave it."""
    known = cache.lookup(grader, keys) if cache is not None else {}
    first: dict[str, int] = {}  # with a cache: the first item of each key it does not hold
    for i, key in enumerate(keys):
        if key not in known:
            first.setdefault(key, i)
    todo = sorted(first.values()) if cache is not None else list(range(len(items)))
    tally.advance(len(items) - len(todo))
    fresh: dict[int, Verdict] = {}
    try:
        for start in range(0, len(todo), grader.batch_size):
            batch = todo[start : start + grader.batch_size]
            fresh.update(zip(batch, grader.grade_many([items[i] for i in batch]), strict=True))
            if cache is not None:  # saved every few seconds, so a killed grade keeps what the grader returned
                cache.checkpoint(grader, {keys[i]: fresh[i] for i in batch})
            tally.advance(len(batch))
    finally:  # keep what was graded, so a build stopped by a failing endpoint resumes where it stopped
        if cache is not None:
            cache.store(grader, {keys[i]: verdict for i, verdict in fresh.items()})
    if cache is None:
        return [fresh[i] for i in range(len(items))]
    return [known[key] if key in known else fresh[first[key]] for key in keys]


def _keys(grader: Grader, plan: RunPlan, positions: Sequence[int]) -> list[str]:
    """The verdict keys of ``grader`` on the answers at ``positions`` (each equal to
    :func:`~dualboard.grading.cache.verdict_key`'s)."""
    starts = {qid: grader_part(grader, digest) for qid, digest in plan.question_digests.items()}
    ends = plan.answer_parts
    return [keyed(starts[plan.answers[p].question["id"]], ends[p]) for p in positions]


def _slot_columns(plan: RunPlan, positions: Sequence[int]) -> dict[str, list]:
    """The question id, round and category of the answers at ``positions``, as columns."""
    answers = [plan.answers[p] for p in positions]
    return {
        "question_id": [a.question["id"] for a in answers],
        "round": [a.round for a in answers],
        "category": [a.question.get("category", "") for a in answers],
    }


def _verdict_rows(plan: RunPlan, graded: list[tuple[_Assignment, list[Verdict]]]) -> pd.DataFrame:
    """One row per (answer, grader), grader by grader: columns ``scored_files.VERDICTS``.

    Built column by column: a frame made of one dict per row costs several times more."""
    columns: dict[str, list] = {name: [] for name in VERDICTS.names}
    for assignment, verdicts in graded:
        grader, n = assignment.grader, len(verdicts)
        constant = {
            "run_id": plan.run.run_id,
            "grader": grader.name,
            "grader_version": grader.version,
            "config_hash": grader.config_hash,
            "role": assignment.role,
        }
        for name, value in constant.items():
            columns[name] += [value] * n
        for name, values in _slot_columns(plan, assignment.positions).items():
            columns[name] += values
        columns["score"] += [v.score for v in verdicts]
        columns["verdict_parse"] += [v.verdict_parse for v in verdicts]
        columns["detail"] += [v.detail for v in verdicts]
    return typed(VERDICTS, columns)


def _rounds(run: Run) -> int:
    """The rounds ``metadata.yaml`` states (0 when it states none)."""
    rounds = run.metadata.get("rounds")
    return rounds if isinstance(rounds, int) and not isinstance(rounds, bool) else 0


def answered_share(plan: RunPlan) -> float:
    """The share of the current version's answers (questions × the run's rounds) the run gave; for a run that
    states no rounds, the share of the current questions it answered."""
    questions = len(plan.benchmark.questions)
    if not questions:
        return 1.0
    given = [answer for answer in plan.answers if not answer.unanswered]
    rounds = _rounds(plan.run)
    return len(given) / (questions * rounds) if rounds else len({a.question["id"] for a in given}) / questions


def distinct_answers(answers: Sequence[_Answer]) -> tuple[bool, int]:
    """Say whether a run's rounds re-judge one answer per question, and count its distinct responses.

    A run whose every question answered in several rounds holds one response in all of them (identical after
    trimming whitespace) gave one answer per question that was judged several times: its rounds are not samples
    of the model. Repeats in a run that did sample (a short answer or an option letter given again on some
    questions) leave it a sampled run: the flag is the run's, never a question's.

    Returns
    -------
    tuple
        ``(rejudged, n_distinct)``: the flag, and the distinct responses per question over the answers given.
    """
    responses: dict[str, list[str]] = {}
    for answer in answers:
        if not answer.unanswered:
            responses.setdefault(answer.question["id"], []).append(str(answer.prediction.get("response") or "").strip())
    repeated = [set(texts) for texts in responses.values() if len(texts) > 1]
    rejudged = bool(repeated) and all(len(texts) == 1 for texts in repeated)
    return rejudged, sum(len(set(texts)) for texts in responses.values())


def _shown_columns(plan: RunPlan) -> dict[str, list[str]]:
    """How each answer's options were shown (:func:`~dualboard.grading.choices.options_as_shown`): the
    columns ``choice_order``, ``options_shown`` and ``correct_letter``; a question's distinct orders are worked
    out once."""
    made: dict[tuple[str, str], tuple[str, str, str]] = {}
    rows = []
    for answer in plan.answers:
        order = answer.prediction.get("choice_order")
        key = (answer.question["id"], repr(order))
        if key not in made:
            made[key] = options_as_shown(answer.question, {"choice_order": order})
        rows.append(made[key])
    names = ("choice_order", "options_shown", "correct_letter")
    return {name: [row[i] for row in rows] for i, name in enumerate(names)}


def _answer_rows(plan: RunPlan, graded: list[tuple[_Assignment, list[Verdict]]]) -> pd.DataFrame:
    """One row per answer: the traditional verdict, with the text it judged (columns :data:`RUN_ANSWER_COLUMNS`)."""
    traditional: dict[int, tuple[str, Verdict]] = {}
    for assignment, verdicts in graded:
        if assignment.role == "traditional":
            traditional.update(
                (p, (assignment.grader.name, v)) for p, v in zip(assignment.positions, verdicts, strict=True)
            )
    run, benchmark = plan.run, plan.benchmark
    n = len(plan.answers)
    trads = [traditional.get(position, ("", UNANSWERED)) for position in range(n)]
    questions = [answer.question for answer in plan.answers]
    responses = [answer.prediction.get("response") for answer in plan.answers]
    rejudged, n_distinct = distinct_answers(plan.answers)
    columns = {
        "benchmark": [benchmark.name] * n,
        "run_id": [run.run_id] * n,
        "model": [run.model] * n,
        **_slot_columns(plan, range(n)),
        "question_type": [q.get("type", "open") for q in questions],
        "traditional": [verdict.score for _, verdict in trads],
        "traditional_grader": [name for name, _ in trads],
        "verdict_parse": [verdict.verdict_parse for _, verdict in trads],
        "missing": [not str(response or "").strip() for response in responses],
        "unanswered": [answer.unanswered for answer in plan.answers],
        "answered_share": [answered_share(plan)] * n,
        "min_answered": [benchmark.min_answered] * n,
        "benchmark_version": [str(run.metadata.get("benchmark_version", benchmark.version))] * n,
        "rejudged": [rejudged] * n,
        "n_distinct_answers": [n_distinct] * n,
        "prompt": [q.get("prompt", "") for q in questions],
        "key_answer": [key_answer(q) for q in questions],
        "response": [response if isinstance(response, str) else None for response in responses],
        **_shown_columns(plan),
    }
    return typed(ANSWERS, columns, RUN_ANSWER_COLUMNS)
