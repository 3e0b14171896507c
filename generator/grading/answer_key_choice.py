"""Which grader fills the scored table's ``answer_key`` column, chosen over every run of a benchmark.

The rule is :func:`~dualboard.grading.grade_benchmark`'s, and it is the benchmark's: what
``benchmark.yaml`` lists and, for an automatic grader, how each agrees with the human labels on
the answers people labelled. Answers nobody labelled never weigh in, so adding a run (labelled or
not) never changes the choice: a run without labels under ``human`` grading awaits them instead.
Runs are graded one at a time, so :class:`ChoiceEvidence` gathers the verdicts at the labelled
answers from each run (:meth:`ChoiceEvidence.add`), and :func:`choose_answer_key` decides once
every run is in. :func:`with_answer_key`
then fills the column of each run's answers from the chosen grader's verdicts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from dualboard.grading.human import HumanGrader
from dualboard.grading.registry import get_grader
from dualboard.grading.run_grades import RunGrades
from dualboard.intake.models import Benchmark
from dualboard.scored_files import ANSWER_KEY_COLUMNS, ANSWER_SLOT, ANSWERS, MIN_COVERAGE

CHOICE_COLUMNS = [*ANSWER_SLOT, "role", "config_hash", "score"]
"""The columns of the verdicts table that the choice reads."""
HUMAN = HumanGrader.name
"""The role (and grader name) of people's labels."""


@dataclass(frozen=True)
class AnswerKeyChoice:
    """The grader whose verdicts fill the ``answer_key`` column."""

    grader: str
    """Its name, written in ``answer_key_grader``."""
    role: str
    """``answer_key``, or ``human`` for people's labels."""
    config_hash: str | None
    """Its configuration (None for ``human``: one set of labels per benchmark)."""

    def rows(self, verdicts: pd.DataFrame) -> pd.DataFrame:
        """This grader's rows of a verdicts table, one per answer."""
        mine = verdicts.role == self.role
        if self.config_hash is not None:
            mine &= verdicts.config_hash == self.config_hash
        # a grader listed twice under the same options gives each answer two equal rows
        return verdicts[mine].drop_duplicates(list(ANSWER_SLOT))


@dataclass(frozen=True)
class RunEvidence:
    """What the choice needs from one run's verdicts (small: a run cache keeps it beside the run's grades)."""

    answers: int
    """The run's answers."""
    labelled: pd.DataFrame | None
    """Its verdict rows, of the answer-key graders and people, at the answers people labelled (None: no label)."""

    @classmethod
    def of(cls, answers: int, verdicts: pd.DataFrame) -> RunEvidence:
        """The evidence of a run of ``answers`` answers and ``verdicts`` (at least :data:`CHOICE_COLUMNS`)."""
        human = verdicts[verdicts.role == HUMAN]
        labelled = None
        if len(human):
            rows = verdicts[verdicts.role.isin(["answer_key", HUMAN])]
            at_labels = rows.merge(human[list(ANSWER_SLOT)].drop_duplicates(), on=list(ANSWER_SLOT))
            labelled = at_labels[[*ANSWER_SLOT, "role", "config_hash", "score"]]
        return cls(answers, labelled)


@dataclass
class ChoiceEvidence:
    """What the choice needs from the verdicts of the runs graded so far."""

    answers: int = 0
    """Answers graded (the ``answer_key`` graders grade each once)."""
    labelled: list[pd.DataFrame] = field(default_factory=list)
    """Per run: its verdict rows, of the answer-key graders and people, at the answers people labelled."""

    def add(self, answers: int, verdicts: pd.DataFrame) -> None:
        """Count one run's answers and verdicts in (``verdicts``: at least the columns the choice reads,
        :data:`CHOICE_COLUMNS`)."""
        self.add_run(RunEvidence.of(answers, verdicts))

    def add_run(self, run: RunEvidence) -> None:
        """Count one run's evidence in."""
        self.answers += run.answers
        if run.labelled is not None:
            self.labelled.append(run.labelled)


def choose_answer_key(benchmark: Benchmark, evidence: ChoiceEvidence) -> AnswerKeyChoice | None:
    """Return the grader whose verdicts fill the ``answer_key`` column (rule: ``grade_benchmark``)."""
    listed = [get_grader(spec) for spec in benchmark.answer_key]
    if not listed:
        return None
    if isinstance(listed[0], HumanGrader):  # declared: people are the answer-key grading, whichever runs there are
        return AnswerKeyChoice(HUMAN, HUMAN, None)
    labelled = pd.concat(evidence.labelled, ignore_index=True) if evidence.labelled else None
    marks = labelled[labelled.role == HUMAN].drop_duplicates(list(ANSWER_SLOT)) if labelled is not None else None
    eligible = []
    for grader in listed if marks is not None and marks.score.notna().any() else ():
        candidate = AnswerKeyChoice(grader.name, "answer_key", grader.config_hash)
        if isinstance(grader, HumanGrader) or _coverage(candidate.rows(labelled), marks) < MIN_COVERAGE:
            continue
        k = _kappa_against(labelled, marks, grader.config_hash)
        if np.isfinite(k):
            eligible.append((round(k, 12), candidate))
    if eligible:  # max keeps the first of equal κ: ties go to the benchmark's order
        return max(eligible, key=lambda e: e[0])[1]
    return AnswerKeyChoice(listed[0].name, "answer_key", listed[0].config_hash)


def _coverage(rows: pd.DataFrame, marks: pd.DataFrame) -> float:
    """The share of the labelled answers (``marks``) on which a grader (its ``rows``) gave a verdict."""
    judged = rows[rows.score.notna()][list(ANSWER_SLOT)].merge(marks[list(ANSWER_SLOT)], on=list(ANSWER_SLOT))
    return len(judged) / len(marks)


def _kappa_against(labelled: pd.DataFrame, marks: pd.DataFrame, config_hash: str) -> float:
    """Return κ of one grader's pass/fail verdicts against the human marks; NaN if not estimable.

    Estimable by the rule of agreement.csv (:func:`~dualboard.kappa.not_estimable_reason`), on the
    answers both judged, clustered by question as there.
    """
    from dualboard import kappa  # SciPy: a second of imports per grading process, needed only with labels

    candidate = AnswerKeyChoice("", "answer_key", config_hash).rows(labelled)
    paired = marks[[*ANSWER_SLOT, "score"]].merge(
        candidate[[*ANSWER_SLOT, "score"]], on=list(ANSWER_SLOT), how="left", suffixes=("_human", "")
    )
    paired = paired[paired.score.notna() & paired.score_human.notna()]
    per_question = kappa.counts_by_question(
        paired.question_id, paired.score >= kappa.PASS_MARK, paired.score_human >= kappa.PASS_MARK
    )
    if kappa.not_estimable_reason(per_question):
        return float("nan")
    return float(kappa.kappa_from_counts(per_question.sum(axis=0)))


def with_answer_key(grades: RunGrades, choice: AnswerKeyChoice | None) -> pd.DataFrame:
    """One run's answers with the ``answer_key`` columns filled from ``choice``; columns ``scored_files.ANSWERS``.

    Only ``human`` grades a subset: the answers nobody labelled have no verdict.
    """
    answers = grades.answers
    score, parse = answer_key_values(answers, grades.verdicts, choice)
    full = answers.assign(answer_key=score, answer_key_grader=choice.grader if choice else "", answer_key_parse=parse)
    return full[list(ANSWERS.names)]


def answer_key_columns(answers: pa.Table, verdicts: pa.Table, choice: AnswerKeyChoice | None) -> pa.Table:
    """The :data:`~dualboard.scored_files.ANSWER_KEY_COLUMNS` of a run's answers (Arrow tables, as build/scored
    keeps them) under ``choice``."""
    slots = answers.select([*ANSWER_SLOT[1:], "unanswered"]).to_pandas()
    score, parse = answer_key_values(slots, verdicts.select(CHOICE_COLUMNS + ["verdict_parse"]).to_pandas(), choice)
    added = {
        "answer_key": pa.array(score, pa.float64(), from_pandas=True),  # NaN is null, as pandas writes it
        "answer_key_grader": pa.array([choice.grader if choice else ""] * len(slots), pa.string()),
        "answer_key_parse": pa.array(parse, pa.string()),
    }
    return pa.table(added, schema=pa.schema([ANSWERS.schema.field(name) for name in ANSWER_KEY_COLUMNS]))


def choice_id(choice: AnswerKeyChoice | None) -> str:
    """A short name of ``choice``: what fills the answer-key columns, hashed (``none``: nothing)."""
    if choice is None:
        return "none"
    return hashlib.sha256(json.dumps([choice.grader, choice.role, choice.config_hash]).encode()).hexdigest()[:16]


def answer_key_values(
    answers: pd.DataFrame, verdicts: pd.DataFrame, choice: AnswerKeyChoice | None
) -> tuple[np.ndarray, np.ndarray]:
    """The ``answer_key`` score and ``answer_key_parse`` of each of a run's ``answers`` (at least
    ``question_id``, ``round`` and ``unanswered``), from ``choice``'s rows of the run's ``verdicts``; an answer the
    run did not give scores 0, as under every grader."""
    if choice is None:
        score, parse = np.full(len(answers), np.nan), np.full(len(answers), "none", dtype=object)
    else:
        chosen = choice.rows(verdicts)[[*ANSWER_SLOT[1:], "score", "verdict_parse"]]
        filled = answers[list(ANSWER_SLOT[1:])].merge(chosen, on=list(ANSWER_SLOT[1:]), how="left")
        score, parse = filled.score.to_numpy(float), filled.verdict_parse.astype(object).fillna("none").to_numpy(object)
    return np.where(answers["unanswered"].to_numpy(bool), 0.0, score), parse
