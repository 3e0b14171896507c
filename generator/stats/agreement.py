"""Grader agreement (``agreement.csv``): every grader pair, and every grader vs humans.

Unit = graded answer; rounds are clustered within questions, so standard
errors and the κ bootstrap resample questions. Scores become verdicts at
``threshold`` (default :data:`~dualboard.kappa.PASS_MARK` on 0–100); the
graded scale is compared by the mean absolute difference in points. A grader
that could not judge an answer (NaN score: no verdict) leaves that answer out
of its comparisons, and ``coverage_a`` says how many of grader_b's answers
remain. Rows: overall, per category and, with two runs or more, per run
(answering model).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd

from dualboard import kappa
from dualboard.scored_files import ANSWER_SLOT
from dualboard.stats import estimators
from dualboard.stats.defaults import TOO_FEW_QUESTIONS
from dualboard.stats.paired import constant_difference_interval
from dualboard.stats.pieces import Pieces, by_run, run_digests
from dualboard.stats.scores import GRADINGS, POINTS
from dualboard.stats.tables import COLUMNS, N_BOOT, SEED, documents

KEYS = list(ANSWER_SLOT)
READ = (*KEYS, "category", "grader", "role", "score")
"""The columns of the verdicts table (:data:`dualboard.scored_files.VERDICTS`) that agreement reads;
the stats stage reads no other (``detail``, the longest, is for the site)."""
CATEGORIES = ("run_id", "question_id", "category", "grader", "role")
"""The columns of :data:`READ` the stats stage reads as categoricals (:func:`dualboard.scored_files.read_table`):
few distinct strings on millions of rows, which agreement only compares and numbers (:func:`_numbered`)."""
NUMBERED = ("run_id", "question_id", "category")
"""What a grader pair's joined answers carry of each answer, numbered (:func:`_numbered`)."""
ALL = "all"
"""The ``run_id`` and ``category`` of rows that pool every run or category."""
PAIR_STATS_COLUMNS = ["question_id", "verdict_a", "verdict_b", "score_a", "score_b"]
"""What :func:`pair_stats` reads of a slice: a per-run row is kept under a hash of these, its questions
numbered within the run (:func:`_within_runs`, :mod:`~dualboard.stats.pieces`)."""
ROLE_ORDER = {"answer_key": 0, "traditional": 1, "human": 2}
"""Pairs put the later role as grader_b: each grader is read against the traditional grading and humans."""


def verdicts_from_scored(scored: pd.DataFrame) -> pd.DataFrame:
    """Return the long verdicts of the scored table's two gradings (traditional vs answer key).

    Grader names come from ``traditional_grader`` / ``answer_key_grader`` when
    present (else the grading name). Without a ``category`` column it is left
    empty, so the agreement table has only its overall "all" row per pair.

    Examples
    --------
    >>> scored = pd.DataFrame({"run_id": "r", "question_id": ["a", "b"], "round": 0,
    ...     "traditional": [100.0, 0.0], "answer_key": [100.0, 100.0]})
    >>> verdicts_from_scored(scored)[["grader", "role", "score"]].to_dict("records")[1:3]
    [{'grader': 'traditional', 'role': 'traditional', 'score': 0.0},
     {'grader': 'answer_key', 'role': 'answer_key', 'score': 100.0}]
    """
    base = scored.assign(category=scored.get("category"))
    frames = []
    for role in GRADINGS:
        name = base.get(f"{role}_grader", role)
        frames.append(base[[*KEYS, "category"]].assign(grader=name, role=role, score=base[role]))
    out = pd.concat(frames, ignore_index=True)
    if (out.groupby("grader")["role"].nunique() > 1).any():  # one grader in both roles
        out["grader"] = out["role"] + ":" + out["grader"].astype(str)
    return out


def to_verdicts(verdicts: pd.DataFrame, threshold: float = kappa.PASS_MARK) -> pd.DataFrame:
    """Return the verdict rows with a 0/1 ``verdict`` column, NaN where the score is (no verdict)."""
    score = pd.to_numeric(verdicts["score"], errors="coerce")
    return verdicts.assign(score=score, verdict=(score >= threshold).astype(float).where(score.notna()))


def question_counts(joined: pd.DataFrame) -> np.ndarray:
    """Return G × 4 counts (both pass, a only, b only, both fail) per question, questions in sorted order.

    ``question_id`` holds the ids, or numbers that group and sort as they do (:func:`_numbered`).

    >>> joined = pd.DataFrame({"question_id": ["q2", "q1", "q2"], "verdict_a": [1.0, 0, 1], "verdict_b": [1.0, 1, 0]})
    >>> question_counts(joined).tolist()
    [[0, 0, 1, 0], [1, 1, 0, 0]]
    """
    return kappa.counts_by_question(joined["question_id"], joined["verdict_a"], joined["verdict_b"])


def cluster_wilson(successes: np.ndarray, totals: np.ndarray, alpha: float) -> tuple:
    """Return a pooled proportion with its question-clustered Wilson n_eff interval."""
    keep = totals > 0
    s, t = successes[keep], totals[keep]
    if len(t) == 0:
        return float("nan"), float("nan"), float("nan")
    p, se = estimators.cluster_ratio_se(s, t)
    lo, hi = estimators.wilson_neff_interval(p, se, len(t), len(t) - 1, alpha)
    return p, float(lo), float(hi)


def mean_abs_diff(joined: pd.DataFrame, alpha: float) -> tuple[float, float, float]:
    """Return the mean |score_a − score_b| in points with its question-clustered interval.

    The pooled mean over answers has a cluster-robust SE and a t(G − 1)
    interval, as for partial-credit scores (Methodology, §Mean score and its
    interval). When every question's mean difference is the same (SE = 0, e.g.
    perfect agreement), the interval is the never-zero-width bound on the 0–100
    scale (Methodology, §No interval is zero-width). Under
    :data:`TOO_FEW_QUESTIONS` questions there is no interval.
    """
    per_q = (
        joined.assign(d=(joined["score_a"] - joined["score_b"]).abs() / POINTS)
        .groupby("question_id", sort=True)["d"]
        .agg(["sum", "size"])
    )
    if per_q.empty:
        return float("nan"), float("nan"), float("nan")
    mu, se = estimators.cluster_ratio_se(per_q["sum"].to_numpy(), per_q["size"].to_numpy())
    g = len(per_q)
    if g < TOO_FEW_QUESTIONS:  # a t interval on a handful of questions spans the scale: none is given
        lo, hi = float("nan"), float("nan")
    elif se == 0:
        lo, hi = constant_difference_interval(mu, g, alpha, bounds=(0.0, 1.0))
    else:
        lo, hi = estimators.t_interval(mu, se, g - 1, alpha)
    return POINTS * mu, POINTS * float(lo), POINTS * float(hi)


def pair_stats(
    joined: pd.DataFrame, raters: tuple[str, str], b_is_human: bool, *, n_boot: int, seed: int, alpha: float
) -> dict[str, object]:
    """Return the agreement statistics of one grader pair (``raters``: a, b) on one slice of grader_b's answers.

    ``joined`` has one row per answer grader_b judged; ``verdict_a`` is NaN
    where grader_a gave no verdict, and those answers are left out. Its
    ``question_id`` is read only through which answers share a question and how
    the questions sort: numbers that group and sort as the ids do give the same statistics.
    """
    both = joined[joined["verdict_a"].notna()]
    c = question_counts(both).reshape(-1, 4)
    g, total = len(c), c.sum(axis=0)
    n = total.sum()
    acc = cluster_wilson(c[:, 0] + c[:, 3], c.sum(axis=1), alpha)
    # An empty slice (no paired verdicts) has no prevalence; NaN says so without a 0/0 warning.
    prevalence_a, prevalence_b = ((total[0] + total[1]) / n, (total[0] + total[2]) / n) if n else (np.nan, np.nan)
    mad = mean_abs_diff(both, alpha)
    rec = {
        "n_judged_b": len(joined),
        "n": int(n),
        "coverage_a": n / len(joined) if len(joined) else np.nan,
        "n_questions": g,
        "accuracy": acc[0],
        "accuracy_ci_low": acc[1],
        "accuracy_ci_high": acc[2],
        "prevalence_a": prevalence_a,
        "prevalence_b": prevalence_b,
        "n_a_pass_b_fail": int(total[1]),
        "n_a_fail_b_pass": int(total[2]),
        "mean_abs_diff": mad[0],
        "mean_abs_diff_ci_low": mad[1],
        "mean_abs_diff_ci_high": mad[2],
    }
    if b_is_human:
        sens = cluster_wilson(c[:, 0], c[:, 0] + c[:, 2], alpha)
        spec = cluster_wilson(c[:, 3], c[:, 1] + c[:, 3], alpha)
        rec.update(zip(["sensitivity", "sensitivity_ci_low", "sensitivity_ci_high"], sens))
        rec.update(zip(["specificity", "specificity_ci_low", "specificity_ci_high"], spec))
    rec.update(_kappa_part(c, raters, n_boot=n_boot, seed=seed, alpha=alpha))
    return rec


def _kappa_part(c: np.ndarray, raters: tuple[str, str], *, n_boot: int, seed: int, alpha: float) -> dict[str, object]:
    """Return κ, its CI and labels, or the reason it is not estimable."""
    total = c.sum(axis=0)
    reason = kappa.not_estimable_reason(c, raters)
    if reason:
        return {"estimable": False, "reason": reason, "kappa_ci_method": "not_estimable"}
    k = float(kappa.kappa_from_counts(total))
    lo, hi, method = kappa.kappa_interval(c, n_boot=n_boot, seed=seed, alpha=alpha)
    return {
        "kappa": k,
        "kappa_ci_low": lo,
        "kappa_ci_high": hi,
        "kappa_ci_method": method,
        "label": kappa.landis_koch(k),
        "label_ci_span": kappa.label_span(lo, hi),
        "estimable": True,
        "reason": "",
    }


@documents("agreement")
def agreement_table(
    verdicts: pd.DataFrame,
    *,
    threshold: float = kappa.PASS_MARK,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    alpha: float = 0.05,
    pieces: Pieces | None = None,
) -> pd.DataFrame:
    """Return agreement of every grader pair, overall, per category and per run.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        Long verdicts: ``run_id``, ``question_id``, ``round``, ``category``,
        ``grader``, ``role`` (traditional | answer_key | human), ``score``
        (0–100; NaN = the grader could not judge).
    threshold : float
        Pass mark of the pass/fail reading (accuracy, κ, sensitivity).
    n_boot, seed, alpha
        κ bootstrap resamples and seed (every row's bootstrap starts from
        ``seed`` itself); 1 − confidence level.
    pieces : Pieces, optional
        Per-run rows computed before, by content: a run whose verdicts are
        unchanged is not bootstrapped again (:mod:`dualboard.stats.pieces`).

    Returns
    -------
    pandas.DataFrame
        One row per (grader pair, run_id, category); pairs that share no
        answer (graders of different question types) have none. Humans are always
        ``grader_b`` so that sensitivity and specificity read as "grader_a
        against human labels", and the traditional grader is grader_b of
        answer-key graders. Rows: run_id = category = "all"; one per category
        (run_id "all"; answers without a category count only in "all"); with
        two runs or more, one per run (category "all"). ``estimable`` is False
        (κ empty, ``reason`` says why) unless the slice has at least
        :data:`~dualboard.kappa.MIN_QUESTIONS` questions and at most 1 % of its
        question resamples leave a rater one class (:func:`~dualboard.kappa.not_estimable_reason`).
    """
    v, ids = _numbered(to_verdicts(verdicts, threshold))
    slot = _answer_slots(v)
    roles = v.groupby("grader", observed=True)["role"].first()
    graders = sorted(roles.index, key=lambda name: (ROLE_ORDER.get(roles[name], 0), name))
    pieces = pieces or Pieces(None)
    rows = []
    for ga, gb in itertools.combinations(graders, 2):
        joined = _join(v, slot, ga, gb)
        if joined.empty:  # graders of different question types never meet
            continue
        human = bool(roles[gb] == "human")
        for run_id, category, part, key in _slices(joined, ids, (ga, gb, human, n_boot, seed, alpha)):

            def stats_of(part: pd.DataFrame = part, raters: tuple = (ga, gb), human: bool = human) -> dict[str, object]:
                # Only the columns the key covers: a read of any other would fail here, not go stale in the cache.
                return pair_stats(part[PAIR_STATS_COLUMNS], raters, human, n_boot=n_boot, seed=seed, alpha=alpha)

            found = stats_of() if key is None else pieces.get(key, stats_of)
            rows.append({"grader_a": ga, "grader_b": gb, "category": category, "run_id": run_id, **found})
    return pd.DataFrame(rows, columns=list(COLUMNS["agreement"]))


def _numbered(v: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, pd.Index]]:
    """Return the verdicts with each of :data:`NUMBERED` as the place of its id among the sorted ids, and those ids.

    Grouping and sorting by the numbers groups and sorts as by the ids, so the
    statistics are the same to the bit, but each grader pair's join, slices and
    question counts then move and hash numbers, not strings. A number is a float,
    NaN where the id is missing: groupby and factorize leave it out, as they do the id.
    """
    numbers, ids = {}, {}
    for column in NUMBERED:
        numbers[column], ids[column] = _sorted_numbers(v[column])
    return v.assign(**numbers), ids


def _sorted_numbers(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Return each value's place among the sorted values, as a float (NaN: missing), and those values.

    Categoricals (:data:`CATEGORIES`) are numbered from their categories, without
    a string hashed per row; the numbers group and sort as ``pd.factorize(values,
    sort=True)``'s codes do (an unused category only leaves a gap).

    >>> _sorted_numbers(pd.Series(pd.Categorical(["b", None, "a", "b"], categories=["b", "c", "a"])))[0].tolist()
    [1.0, nan, 0.0, 1.0]
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        categories = values.cat.categories
        order = categories.argsort()
        place = np.empty(len(order))
        place[order] = np.arange(len(order))
        codes, ids = values.cat.codes.to_numpy(), categories[order]
    else:
        codes, ids = pd.factorize(values, sort=True)
        place = np.arange(len(ids), dtype=float)
    return np.append(place, np.nan)[codes], pd.Index(ids)  # code -1 (missing) takes the NaN after the places


def _slices(
    joined: pd.DataFrame, ids: dict[str, pd.Index], options: tuple
) -> Iterator[tuple[str, str, pd.DataFrame, str | None]]:
    """Yield (run_id, category, rows, key): all, each category, then each run when there are several.

    ``joined`` is numbered (:func:`_numbered`; ``ids`` names the numbers). A
    run's rows come with the key of their piece (:mod:`~dualboard.stats.pieces`):
    the hash of what :func:`pair_stats` reads of them (:data:`PAIR_STATS_COLUMNS`),
    their questions numbered within the run (:func:`_within_runs`); the rows pooled
    over runs, which change whenever any run does, come with none (always computed).
    """
    yield ALL, ALL, joined, None
    for number, part in joined.groupby("category", sort=True):
        yield ALL, ids["category"][int(number)], part, None
    grouped, runs = by_run(joined)
    if len(runs) > 1:
        grouped = grouped.assign(question_id=_within_runs(grouped["question_id"].to_numpy(), runs.values()))
        for (number, rows), digest in zip(runs.items(), run_digests(grouped, runs, runs, PAIR_STATS_COLUMNS)):
            yield ids["run_id"][int(number)], ALL, grouped.iloc[rows], Pieces.key_of("agreement", options, digest)


def _within_runs(questions: np.ndarray, runs: Iterable[slice]) -> np.ndarray:
    """Number each run's questions from 0 in sorted order (NaN stays NaN): what :func:`pair_stats` reads of them.

    pair_stats reads a question id only through which answers share it and
    where it sorts; these numbers say exactly that, whatever questions other
    runs answered, so a run's piece stays valid when the benchmark gains questions.

    >>> _within_runs(np.array([7.0, 3, 7, np.nan, 5, 9]), [slice(0, 4), slice(4, 6)]).tolist()
    [1.0, 0.0, 1.0, nan, 0.0, 1.0]
    """
    out = np.full(len(questions), np.nan)
    for rows in runs:
        codes = pd.factorize(questions[rows], sort=True)[0]
        out[rows] = np.where(codes >= 0, codes, np.nan)
    return out


def _join(v: pd.DataFrame, slot: np.ndarray, ga: str, gb: str) -> pd.DataFrame:
    """Return the answers grader_b judged and grader_a was given, with grader_a's verdict and score.

    ``verdict_a`` is NaN where grader_a could not judge; answers grader_a was
    never given (another question type's grader) are not in the result.
    ``slot`` numbers each row's answer (:func:`_answer_slots`): joining on it
    gives the rows, in the order, that joining on run, question and round
    gives, without hashing those strings again for every grader pair. The
    rows are those of an inner merge on the slot; only they are taken out of
    ``v`` (a merge would copy every row of grader_b's first).
    """
    in_b = np.flatnonzero(((v["grader"] == gb) & v["score"].notna()).to_numpy())
    in_a = np.flatnonzero((v["grader"] == ga).to_numpy())
    b_at, a_at = _inner_matches(slot[in_b], slot[in_a])
    b, a = in_b[b_at], in_a[a_at]
    verdict, score = v["verdict"].to_numpy(), v["score"].to_numpy()
    return (
        v[list(NUMBERED)]
        .iloc[b]
        .reset_index(drop=True)
        .assign(verdict_b=verdict[b], score_b=score[b], verdict_a=verdict[a], score_a=score[a])
    )


def _inner_matches(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the positions in ``left`` and in ``right`` of every pair of equal values, as the rows of an inner
    merge: left's order, and each left value's matches in right's order.

    >>> _inner_matches(np.array([3, 1, 2]), np.array([1, 3, 1]))
    (array([0, 1, 1]), array([1, 0, 2]))
    >>> _inner_matches(np.array([3, 1, 2]), np.array([1, 3, 4]))
    (array([0, 1]), array([1, 0]))
    """
    if len(right) and (np.diff(right) > 0).all():  # one grader's answers in order, each once (the usual table)
        at = np.minimum(np.searchsorted(right, left), len(right) - 1)
        hit = np.flatnonzero(right[at] == left)
        return hit, at[hit]
    order = np.argsort(right, kind="stable")
    ordered = right[order]
    first = np.searchsorted(ordered, left, side="left")
    counts = np.searchsorted(ordered, left, side="right") - first
    # Match k of the left value i sits at first[i] + k in ``ordered``: one arange, shifted per left value.
    shift = np.repeat(first - (np.cumsum(counts) - counts), counts)
    return np.repeat(np.arange(len(left)), counts), order[np.arange(int(counts.sum())) + shift]


def _answer_slots(v: pd.DataFrame) -> np.ndarray:
    """Return one integer per row of the numbered verdicts (:func:`_numbered`) naming its answer: equal exactly
    when run, question and round are, and ordered as they sort (a missing one first)."""
    parts = [np.nan_to_num(v[key].to_numpy(), nan=-1.0).astype(np.int64) for key in ("run_id", "question_id")]
    parts.append(pd.factorize(v["round"], sort=True)[0].astype(np.int64))
    slot = np.zeros(len(v), dtype=np.int64)
    for codes in parts:
        slot = slot * (int(codes.max(initial=-1)) + 2) + codes + 1
    return slot
