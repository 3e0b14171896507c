"""Check the scored table, reduce it to one mean per (run, grading, question) and count coverage.

Missing answers and missing verdicts differ (Methodology, §No verdict and coverage). A model that
gave no readable answer already scores 0 from its grader. A grader that could
not judge an answer gives no verdict (``NaN``): that answer is left out of
that grading's question means, and a question none of whose answers has a
verdict drops out of that grading. A grading's *coverage* of a run is the
share of its answers with a verdict; under :data:`MIN_COVERAGE` the run is
not ranked in that grading. A question a run never answered has no rows:
paired analyses use the questions (or answers) both sides share.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dualboard.errors import Finding, InvalidInputError
from dualboard.scored_files import ANSWER_SLOT, GRADINGS, MIN_COVERAGE

POINTS = 100.0
"""Scores are on 0–100 points; the statistics work on 0–1 means and report points (× POINTS)."""
REQUIRED = ("run_id", "model", "question_id", "round", *GRADINGS)
"""The columns of the scored table (:data:`dualboard.scored_files.SCORED`, which defines them) the statistics need."""
PARSE = {"traditional": "verdict_parse", "answer_key": "answer_key_parse"}
"""Each grading's parse-status column of the scored table: ``none`` beside a score is an unreadable answer,
the model's failure scored 0 (beside no score, the grader gave no verdict)."""
READ = (
    *REQUIRED,
    "benchmark_version",
    "unanswered",
    "answered_share",
    "min_answered",
    "answer_key_grader",
    *PARSE.values(),
    "rejudged",
    "n_distinct_answers",
)
"""The columns the stats stage reads from a scored file: the others (texts…) it never uses,
and leaving them in the file keeps the stage's memory and reading time down."""
CATEGORIES = ("answer_key_grader", *PARSE.values())
"""The columns of :data:`READ` read as categoricals: one grader name repeated on every row."""
PEOPLE = "human"
"""The ``answer_key_grader`` of people's labels (``dualboard.grading.human.HumanGrader.name``)."""


def check_scored(scored: pd.DataFrame) -> None:
    """Raise one InvalidInputError listing every problem of the scored table."""
    findings = [
        Finding("scored", None, col, "column is missing", "produce the scored table with `dualboard grade`")
        for col in REQUIRED
        if col not in scored.columns
    ]
    if not findings:
        findings += _range_findings(scored) + _duplicate_findings(scored)
    if findings:
        raise InvalidInputError(findings)


def _range_findings(scored: pd.DataFrame) -> list[Finding]:
    """List scores outside 0–100."""
    out = []
    for g in GRADINGS:
        values = pd.to_numeric(scored[g], errors="coerce")
        bad = values[(values < 0) | (values > POINTS)]
        if len(bad):
            out.append(
                Finding(
                    "scored",
                    None,
                    g,
                    f"{len(bad)} score(s) outside 0–100, e.g. {bad.iloc[0]!r}",
                    "scores must be on the 0–100 scale; rescale before analysis",
                )
            )
    return out


def _duplicate_findings(scored: pd.DataFrame) -> list[Finding]:
    """List repeated (run_id, question_id, round) rows."""
    dup = scored.duplicated(list(ANSWER_SLOT))
    if not dup.any():
        return []
    first = scored.loc[dup, list(ANSWER_SLOT)].iloc[0].tolist()
    return [
        Finding(
            "scored",
            None,
            "run_id/question_id/round",
            f"{int(dup.sum())} duplicated row(s), e.g. {first}",
            "keep one row per (run, question, round)",
        )
    ]


def question_means(scored: pd.DataFrame) -> pd.DataFrame:
    """Return one row per (run, grading, question) on the [0, 1] scale, over the answers judged.

    An answer without a verdict in a grading (NaN) is left out of that
    grading's question mean; a question with no verdict at all has no row in
    that grading. A model failure is a verdict (0), so it stays in.

    Returns
    -------
    pandas.DataFrame
        ``run_id``, ``grading``, ``question_id``, ``n_rounds`` (rounds with a
        verdict), ``mean`` (mean of those rounds), ``var_within`` (their
        variance, ddof=1; NaN with one round), ``binary`` (every one is 0 or 1).

    Examples
    --------
    >>> scored = pd.DataFrame({"run_id": ["r"] * 3, "model": "m", "question_id": ["a", "a", "b"],
    ...     "round": [0, 1, 0], "traditional": [100, 0, 100.0], "answer_key": [100, None, None]})
    >>> question_means(scored)[["grading", "question_id", "n_rounds", "mean"]].to_dict("records")
    [{'grading': 'traditional', 'question_id': 'a', 'n_rounds': 2, 'mean': 0.5},
     {'grading': 'traditional', 'question_id': 'b', 'n_rounds': 1, 'mean': 1.0},
     {'grading': 'answer_key', 'question_id': 'a', 'n_rounds': 1, 'mean': 1.0}]
    """
    long, ids = _long_scores(scored)
    return _labelled(_means(long, long["score"].notna().to_numpy()), ids)


def question_and_paired_means(scored: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return :func:`question_means` of ``scored`` and of :func:`judged_by_both` of it, keying the answers once.

    The same two frames, to the bit, as the two calls. A (run, question) all of
    whose answers both gradings judged has the same rows, so the same means,
    in both: only the others are averaged again, over their answers judged by
    both. When every answer has both verdicts, both are the one frame.
    """
    long, ids = _long_scores(scored)
    judged = long["score"].notna().to_numpy()
    means = _means(long, judged)
    both = judged.reshape(len(GRADINGS), len(scored)).all(axis=0)
    if both.all():
        labelled = _labelled(means, ids)
        return labelled, labelled
    n_q = len(ids[1])
    pairs = _run_question(long["key"].to_numpy(), n_q)
    redone = pairs[: len(scored)][~both]  # the first grading's rows name every answer's (run, question)
    again = _means(long, np.isin(pairs, redone) & np.tile(both, len(GRADINGS)))
    kept = means[~np.isin(_run_question(means.index.to_numpy(), n_q), redone)]
    # An empty part is left out: concatenating it could change a column's dtype.
    paired = pd.concat([part for part in (kept, again) if len(part)] or [again]).sort_index(kind="stable")
    return _labelled(means, ids), _labelled(paired, ids)


def _run_question(key: np.ndarray, n_questions: int) -> np.ndarray:
    """Return the number of the (run, question) of each :func:`_long_scores` key (any grading)."""
    return key // (len(GRADINGS) * n_questions) * n_questions + key % n_questions


def _long_scores(scored: pd.DataFrame) -> tuple[pd.DataFrame, tuple[np.ndarray, np.ndarray]]:
    """Return every grading's scores one after the other (``key``, ``score`` on [0, 1], NaN kept), with the
    sorted run and question ids that ``key`` numbers (:func:`_means`)."""
    # One integer per (run, grading, question), numbered in the order of the result (run and question ids
    # sorted, gradings in GRADINGS order): grouping by it gives the same groups and rows per group as
    # grouping by the three strings, so the same means to the bit, at a fraction of the cost, and already
    # in order. A subset of the rows keeps these numbers: they still sort its groups as its strings would.
    runs, run_ids = pd.factorize(scored["run_id"], sort=True)
    questions, question_ids = pd.factorize(scored["question_id"], sort=True)
    n_q, n_g = len(question_ids), len(GRADINGS)
    grading = np.repeat(np.arange(n_g), len(scored))
    long = pd.DataFrame(
        {
            "key": (np.tile(runs.astype(np.int64), n_g) * n_g + grading) * n_q + np.tile(questions, n_g),
            "score": np.concatenate([pd.to_numeric(scored[g], errors="coerce").to_numpy(dtype=float) for g in GRADINGS])
            / POINTS,
        }
    )
    return long, (run_ids, question_ids)


def _means(long: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """Return the question means of the ``rows`` of :func:`_long_scores`' table (rows judged), indexed by key."""
    long = long[rows]
    return (
        long.assign(is_binary=np.isin(long["score"], (0.0, 1.0)))
        .groupby("key", sort=True)
        .agg(
            n_rounds=("score", "size"), mean=("score", "mean"), var_within=("score", "var"), binary=("is_binary", "all")
        )
    )


def _labelled(means: pd.DataFrame, ids: tuple[np.ndarray, np.ndarray]) -> pd.DataFrame:
    """Return :func:`_means`' rows with the run id, grading and question id their key numbers, in front."""
    key, (run_ids, question_ids) = means.index.to_numpy(), ids
    n_q, n_g = len(question_ids), len(GRADINGS)
    return pd.DataFrame(
        {
            "run_id": run_ids[key // (n_g * n_q)],
            "grading": np.asarray(GRADINGS, dtype=object)[key // n_q % n_g],
            "question_id": question_ids[key % n_q],
            **{c: means[c].to_numpy() for c in means.columns},
        }
    )


def _verdicts(scored: pd.DataFrame) -> pd.DataFrame:
    """Return both gradings' scores as numbers (NaN = no verdict)."""
    return pd.DataFrame({g: pd.to_numeric(scored[g], errors="coerce") for g in GRADINGS})


def judged_by_both(scored: pd.DataFrame) -> pd.DataFrame:
    """Return the answers both gradings judged: the rows every traditional vs answer-key pairing uses.

    The pairing is made at the answer, before question means are taken: with
    several rounds, a question's two means then cover the same rounds, so
    their difference measures the gradings and not which rounds each grader
    happened to judge.

    Examples
    --------
    >>> scored = pd.DataFrame({"traditional": [100, 0, None], "answer_key": [None, 0, 100.0]})
    >>> judged_by_both(scored).index.tolist()
    [1]
    """
    return scored[_verdicts(scored).notna().all(axis=1)]


def is_ranked(coverage: pd.Series | float) -> pd.Series | np.bool_:
    """Say whether a coverage reaches :data:`MIN_COVERAGE` (24 of 30 answers does: 0.8 exactly).

    Examples
    --------
    >>> is_ranked(pd.Series([23 / 30, 24 / 30, 1.0])).tolist()
    [False, True, True]
    """
    # A share is a ratio of counts; 12 decimals absorb float noise around the threshold.
    return np.round(coverage, 12) >= MIN_COVERAGE


def coverage_percent(share: float) -> int:
    """Return a coverage in whole percent, rounded down: a run under the threshold never reads as at it.

    Examples
    --------
    >>> coverage_percent(0.795), coverage_percent(0.29), coverage_percent(0.999)
    (79, 29, 99)
    """
    return math.floor(round(100 * float(share), 9))  # 100 · 0.29 is 28.999999999999996


def run_counts(scored: pd.DataFrame) -> pd.DataFrame:
    """Return per run the counts and coverages that qualify its numbers.

    Returns
    -------
    pandas.DataFrame
        ``run_id``, ``model``, ``n_questions``, ``n_answers``,
        ``traditional_coverage`` and ``answer_key_coverage`` (share of the
        answers with a verdict in that grading), ``n_answers_paired`` (answers
        both gradings judged), ``n_answers_agree`` (of those, the answers
        the two gradings score the same), ``n_never_run`` (questions other
        runs answered and this one was never asked: no row, so left out of
        every analysis, not counted wrong), ``benchmark_version`` (the
        version the run answered; empty when the table has no such column),
        ``n_unanswered`` (answers its version asked that it did not give, each
        scored 0), ``answered_share``, ``apart_reason`` (why it is not
        ranked at all, :func:`_apart_reason`; empty when it may be),
        ``traditional_missing_rate``, ``answer_key_missing_rate``
        (:func:`missing_rates`), ``rejudged`` (its rounds re-judge one
        response per question) and ``n_distinct_answers`` (its distinct
        responses; ``n_answers`` for a table without that column).

    Examples
    --------
    >>> scored = pd.DataFrame({"run_id": "r", "model": "m", "question_id": ["a", "b", "c", "d"],
    ...     "traditional": [100.0, 0, 100, 0], "answer_key": [100, 100, None, 0]})
    >>> run_counts(scored).iloc[0].to_dict()
    {'run_id': 'r', 'model': 'm', 'n_questions': 4, 'n_answers': 4, 'traditional_coverage': 1.0,
     'answer_key_coverage': 0.75, 'n_answers_paired': 3, 'n_answers_agree': 2, 'n_never_run': 0,
     'benchmark_version': '', 'n_unanswered': 0, 'answered_share': 1.0, 'apart_reason': '', 'rejudged': False,
     'n_distinct_answers': 4, 'traditional_missing_rate': 0.0, 'answer_key_missing_rate': 0.0}
    """
    v = _verdicts(scored)
    frame = scored[["run_id", "model", "question_id"]].assign(
        traditional_coverage=v["traditional"].notna(),
        answer_key_coverage=v["answer_key"].notna(),
        n_answers_paired=v.notna().all(axis=1),
        n_answers_agree=v["traditional"].eq(v["answer_key"]),
    )
    out = frame.groupby("run_id", sort=True).agg(
        model=("model", "first"),
        n_questions=("question_id", "nunique"),
        n_answers=("question_id", "size"),
        traditional_coverage=("traditional_coverage", "mean"),
        answer_key_coverage=("answer_key_coverage", "mean"),
        n_answers_paired=("n_answers_paired", "sum"),
        n_answers_agree=("n_answers_agree", "sum"),
    )
    out[["n_answers_paired", "n_answers_agree"]] = out[["n_answers_paired", "n_answers_agree"]].astype(int)
    out["n_never_run"] = scored["question_id"].nunique() - out["n_questions"]
    by_run = scored.groupby("run_id", sort=True)
    out["benchmark_version"] = by_run["benchmark_version"].first().astype(str) if "benchmark_version" in scored else ""
    # a table graded before these columns, or built by hand, answered everything asked
    out["n_unanswered"] = by_run["unanswered"].sum().astype(int) if "unanswered" in scored else 0
    out["answered_share"] = by_run["answered_share"].first().astype(float) if "answered_share" in scored else 1.0
    minimum = by_run["min_answered"].first().astype(float) if "min_answered" in scored else 0.0
    lows = np.broadcast_to(minimum, len(out))
    out["apart_reason"] = [_apart_reason(share, low) for share, low in zip(out["answered_share"], lows, strict=True)]
    out["rejudged"] = by_run["rejudged"].first().astype(bool) if "rejudged" in scored else False
    distinct = by_run["n_distinct_answers"].first() if "n_distinct_answers" in scored else out["n_answers"]
    out["n_distinct_answers"] = distinct.astype(int)
    return out.join(missing_rates(scored)).reset_index()


def missing_rates(scored: pd.DataFrame) -> pd.DataFrame:
    """Return per run (index ``run_id``) each grading's share of answers that were unreadable: scored 0 as the
    model's failure (parse status ``none`` beside a score, :data:`PARSE`), answers not given included.

    A table without a parse column (graded before it, or built by hand) records no unreadable answer: 0.

    Examples
    --------
    >>> scored = pd.DataFrame({"run_id": "r", "traditional": [0.0, 100, None, 0], "answer_key": [0.0, 100, 0, 0],
    ...     "verdict_parse": ["none", "ok", "none", "ok"], "answer_key_parse": ["none", "ok", "ok", "ok"]})
    >>> missing_rates(scored).to_dict("records")
    [{'traditional_missing_rate': 0.25, 'answer_key_missing_rate': 0.25}]
    """
    v = _verdicts(scored)
    failed = {
        f"{g}_missing_rate": (scored[column].astype(object).eq("none") & v[g].notna())
        if column in scored
        else pd.Series(False, index=scored.index)
        for g, column in PARSE.items()
    }
    return pd.DataFrame(failed).groupby(scored["run_id"], sort=True).mean()


def _apart_reason(share: float, minimum: float) -> str:
    """Why a run is not ranked under either grading, but listed apart ("" when it may be ranked).

    Examples
    --------
    >>> _apart_reason(1 / 30, 0.9)
    'answered 3% of the current questions (min_answered: 90%)'
    >>> _apart_reason(27 / 30, 0.9)
    ''
    """
    if np.round(share, 12) >= minimum:
        return ""
    return f"answered {coverage_percent(share)}% of the current questions (min_answered: {100 * minimum:g}%)"


def ranked_in(counts: pd.DataFrame, grading: str) -> pd.Series:
    """Which runs of ``counts`` (:func:`run_counts`, or the models table) ``grading`` ranks: those it judged
    enough of (:func:`is_ranked`) and not listed apart (``apart_reason``)."""
    return pd.Series(is_ranked(counts[f"{grading}_coverage"]), index=counts.index) & counts["apart_reason"].eq("")


def awaiting_labels(scored: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Set aside the answer-key scores of the runs that await human labels; count their missing labels.

    When people's labels are the answer-key grading (``answer_key_grader`` is
    ``human``), an answer without a score has no label yet (or its label judged
    another response). A run with one such answer awaits labels: a mean over
    the labelled answers alone is not its answer-key score, so every
    answer-key score of the run is left out (it is not ranked under answer-key
    grading) and its traditional numbers stay.

    Returns
    -------
    tuple
        ``scored`` with those runs' ``answer_key`` set to NaN, and the number of
        answers awaiting a label per run id (every run, 0 for most).

    Examples
    --------
    >>> scored = pd.DataFrame({"run_id": ["a", "a", "b"], "traditional": [100.0, 0, 100],
    ...     "answer_key": [100.0, None, 100], "answer_key_grader": "human"})
    >>> kept, missing = awaiting_labels(scored)
    >>> kept["answer_key"].tolist(), missing.to_dict()
    ([nan, nan, 100.0], {'a': 1, 'b': 0})
    """
    unlabelled = pd.Series(False, index=scored.index)
    if "answer_key_grader" in scored.columns:
        unlabelled = scored["answer_key_grader"].astype(object).eq(PEOPLE) & _verdicts(scored)["answer_key"].isna()
    missing = unlabelled.groupby(scored["run_id"], sort=True).sum().astype(int)
    waiting = scored["run_id"].isin(missing.index[missing > 0])
    if not waiting.any():
        return scored, missing
    return scored.assign(answer_key=scored["answer_key"].mask(waiting)), missing


def unranked_runs(counts: pd.DataFrame) -> frozenset[tuple[str, str]]:
    """Return the (run_id, grading) pairs not ranked (:func:`ranked_in`): out of that grading's Holm family."""
    return frozenset((run_id, g) for g in GRADINGS for run_id in counts.loc[~ranked_in(counts, g), "run_id"])
