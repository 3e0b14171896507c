"""``analyse``: the statistics stage from the scored table to :class:`StatsTables`."""

from __future__ import annotations

import pandas as pd

from dualboard.stats import scores
from dualboard.stats.agreement import agreement_table, verdicts_from_scored
from dualboard.stats.equator import equator_table
from dualboard.stats.models_table import models_table, naive_table
from dualboard.stats.paired import TOO_FEW_QUESTIONS
from dualboard.stats.pairwise import pairwise_table
from dualboard.stats.pieces import Pieces
from dualboard.stats.power_table import power_table
from dualboard.stats.ranks import add_ranks
from dualboard.stats.tables import COLUMNS, N_BOOT, SEED, StatsTables


def analyse(
    scored: pd.DataFrame,
    *,
    verdicts: pd.DataFrame | None = None,
    seed: int = SEED,
    n_boot: int = N_BOOT,
    alpha: float = 0.05,
    pieces: Pieces | None = None,
) -> StatsTables:
    """Analyse one benchmark's scored answers with paired, question-level statistics.

    Parameters
    ----------
    scored : pandas.DataFrame
        One row per (run, question, round) with at least ``run_id``, ``model``,
        ``question_id``, ``round``, ``traditional`` (0–100) and ``answer_key``
        (0–100). NaN in either is *no verdict*: the grader could not judge
        the answer, which is then left out of that grading's means and of
        every traditional vs answer-key pairing; each grading's coverage is
        reported, and under :data:`dualboard.stats.scores.MIN_COVERAGE` a run
        is not ranked in that grading. With ``answer_key_grader`` ``human``, a
        run with an answer people have not labelled awaits labels: its
        answer-key scores are left out, so it is not ranked under answer-key
        grading (:func:`dualboard.stats.scores.awaiting_labels`).
    verdicts : pandas.DataFrame, optional
        Long verdicts for agreement: ``run_id``, ``question_id``, ``round``,
        ``category``, ``grader``, ``role`` (traditional | answer_key | human),
        ``score`` (0–100). Without it, agreement compares the scored table's
        own two gradings (traditional vs answer key).
    seed, n_boot : int
        Seed and number of resamples of every bootstrap (published in the notes).
    alpha : float
        1 - confidence level, and the level of every test.
    pieces : Pieces, optional
        What was computed before for one run alone (its models row, its
        agreement rows) or one pair of runs (its pairwise rows), by content:
        only new or changed runs and their pairs are computed,
        and the tables equal those computed from scratch
        (:mod:`dualboard.stats.pieces`).

    Returns
    -------
    StatsTables
        ``models``, ``pairwise``, ``agreement``, ``power``, ``equator`` and
        ``notes``; every column is described in :data:`COLUMNS`.

    Examples
    --------
    >>> from dualboard.simulation.outcomes import simulate_outcomes
    >>> runs = []
    >>> for i, m in enumerate([.8, .6]):
    ...     df = simulate_outcomes(30, 1, {"traditional": m, "answer_key": m - .1}, seed=i)
    ...     runs.append(df.assign(run_id=f"run{i}", model=f"m{i}",
    ...         question_id=df["question"].map("q{:02d}".format),
    ...         traditional=100.0 * df["traditional"], answer_key=100.0 * df["answer_key"]))
    >>> tables = analyse(pd.concat(runs), n_boot=200)
    >>> tables.models[["run_id", "n_questions", "test"]].to_dict("records")
    [{'run_id': 'run0', 'n_questions': 30, 'test': 'mcnemar_exact'},
     {'run_id': 'run1', 'n_questions': 30, 'test': 'mcnemar_exact'}]

    See also
    --------
    dualboard.stats.tables.write_tables, dualboard.stats.tables.read_tables
    """
    scores.check_scored(scored)
    scored, missing_labels = scores.awaiting_labels(scored)  # a run awaiting labels has no answer-key score
    # The paired means are those of the answers both gradings judged (usually every answer: the same table).
    qmeans, paired = scores.question_and_paired_means(scored)
    counts = scores.run_counts(scored).assign(n_awaiting_labels=lambda c: c["run_id"].map(missing_labels))
    models = models_table(qmeans, paired, counts, naive_table(scored, alpha), alpha, pieces)
    pairwise = pairwise_table(qmeans, alpha, scores.unranked_runs(counts), pieces)
    models = add_ranks(models, pairwise, qmeans, seed=seed, n_boot=n_boot, alpha=alpha)
    rounds = scored.groupby(["run_id", "question_id"]).size().groupby("run_id").max()
    if verdicts is None:
        verdicts = verdicts_from_scored(scored)
    agreement = (
        agreement_table(verdicts, n_boot=n_boot, seed=seed, alpha=alpha, pieces=pieces)
        if len(verdicts)
        else pd.DataFrame(columns=list(COLUMNS["agreement"]))
    )
    return StatsTables(
        models=models[list(COLUMNS["models"])],
        pairwise=pairwise,
        agreement=agreement,
        power=power_table(models, pairwise, rounds),
        equator=equator_table(models, paired, alpha),
        notes=_notes(models, seed, n_boot),
    )


def _notes(models: pd.DataFrame, seed: int, n_boot: int) -> tuple[str, ...]:
    """Collect the caveats a reader must see next to the tables."""
    notes = [f"Bootstrap: B = {n_boot} resamples of questions, seed {seed}."]
    for r in models.itertuples():
        if r.n_questions < TOO_FEW_QUESTIONS:
            notes.append(
                f"{r.run_id}: too few questions ({r.n_questions} < {TOO_FEW_QUESTIONS}): estimates shown, "
                "exact tests only, no rank interval or tie group."
            )
        if r.note:
            notes.append(f"{r.run_id}: {r.note}.")
    return tuple(notes)
