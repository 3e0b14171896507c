"""The labelling design: which answer a person labels next, and what the labels say of the whole benchmark.

The unit is an *item*: one distinct response to one question (the SHA-256 of its text,
:func:`~dualboard.intake.human_labels.response_sha256`). Identical responses to a question, such as
rounds that re-judge one answer, are one item, and its label covers every answer that holds it.

Items are stratified by the automatic graders' verdicts on them (each grader: pass, fail, mixed over
the item's answers, or none). The queue labels at least :data:`MIN_PER_STRATUM` items of every
stratum, strata where graders disagree first, then allocates each next label to the stratum where it
shrinks the variance of the estimated human pass total most (sequential Neyman allocation, with a
Jeffreys-smoothed pass rate). Within a stratum items are drawn in a seeded random order, so each
stratum's labelled items are a simple random sample of it.

The estimates weight each labelled item by N_h/n_h of the stratum it is in now (post-stratified: a
grader's new version can move items between strata), times its number of answers. Agreement of a
grader with people (accuracy, Cohen's κ, sensitivity, specificity) is a smooth function of two
estimated totals, since the grader's own verdicts are known on every answer; its variance is the
stratified, finite-population-corrected variance of the linearised statistic (Taylor series), and the
interval is the normal one. The estimand is the agreement over this benchmark's answers as they are,
not over a population of questions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from dualboard.intake.human_labels import response_sha256
from dualboard.kappa import MIN_QUESTIONS, PASS_MARK, kappa_from_counts
from dualboard.stats.paired import constant_difference_interval

MIN_PER_STRATUM = 2
"""Labels every stratum gets before allocation starts: the fewest that estimate a within-stratum variance."""
MIN_LABELS = MIN_QUESTIONS
"""The fewest labels an estimate rests on, as κ between graders needs as many questions."""
SMOOTHING = 0.25
"""Passes and fails added to a stratum whose labels all agree, for its variance: a quarter of each, half the
Jeffreys prior's, which over-covers (98 % at 40 labels); bench/label_design.py shows 94–96 % with this."""
TARGET_HALF_WIDTH = 0.1
"""The κ interval half-width the page counts labels towards ("about N more for ±0.1")."""
HUMAN = "human"
SLOT = ["run_id", "question_id", "round"]
ITEM = ["question_id", "response_sha256"]
PATTERNS = ("pass", "fail", "mixed", "none")


def _pattern(passes: int, fails: int) -> str:
    """A grader's verdict on an item from its verdicts on the item's answers."""
    if passes and fails:
        return "mixed"
    return "pass" if passes else "fail" if fails else "none"


def answer_items(slots: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per item: ``question_id``, ``response_sha256``, ``n_answers``, ``stratum``, ``disagree``, and per
    automatic grader ``pass:<g>`` / ``fail:<g>`` (its verdicts on the item's answers).

    ``slots`` has ``run_id, question_id, round, response_sha256``, one row per answer; ``verdicts`` the verdicts
    table (``grader``, ``role``, ``score``). Human verdicts play no part in the strata.

    Examples
    --------
    >>> slots = pd.DataFrame({"run_id": ["a", "b", "a"], "question_id": "q", "round": 0,
    ...                       "response_sha256": ["x", "x", "y"]})
    >>> slots.loc[2, "question_id"] = "r"
    >>> verdicts = pd.DataFrame({"run_id": ["a", "b", "a"], "question_id": ["q", "q", "r"], "round": 0,
    ...                          "grader": "rules", "role": "answer_key", "score": [100.0, 0.0, None]})
    >>> answer_items(slots, verdicts)[["question_id", "n_answers", "stratum", "disagree"]].to_dict("records")
    [{'question_id': 'q', 'n_answers': 2, 'stratum': 'rules mixed', 'disagree': True},
     {'question_id': 'r', 'n_answers': 1, 'stratum': 'rules none', 'disagree': False}]
    """
    automatic = verdicts[~verdicts["role"].astype(str).eq(HUMAN)]
    graders = sorted(automatic["grader"].astype(str).unique())
    score = pd.to_numeric(automatic["score"], errors="coerce")
    wide = automatic[SLOT].assign(
        grader=automatic["grader"].astype(str).to_numpy(),
        passed=(score >= PASS_MARK) & score.notna(),
        failed=(score < PASS_MARK) & score.notna(),
    )
    joined = slots[[*SLOT, "response_sha256"]].merge(wide, on=SLOT, how="left")
    counts = joined.groupby([*ITEM, "grader"], sort=True)[["passed", "failed"]].sum().unstack("grader", fill_value=0)
    items = slots.groupby(ITEM, sort=True).size().rename("n_answers").reset_index()
    columns = {}
    for grader in graders:
        columns[f"pass:{grader}"] = _aligned(counts, "passed", grader, items)
        columns[f"fail:{grader}"] = _aligned(counts, "failed", grader, items)
    items = items.assign(**columns)
    patterns = [[_pattern(p, f) for p, f in zip(items[f"pass:{g}"], items[f"fail:{g}"], strict=True)] for g in graders]
    by_item = list(zip(*patterns, strict=True)) if graders else [() for _ in range(len(items))]
    items["stratum"] = [" · ".join(f"{g} {p}" for g, p in zip(graders, row, strict=True)) or "all" for row in by_item]
    items["disagree"] = [("mixed" in row) or {"pass", "fail"} <= set(row) for row in by_item]
    return items


def _aligned(counts: pd.DataFrame, column: str, grader: str, items: pd.DataFrame) -> np.ndarray:
    """A grader's count per item, in the order of ``items`` (0 where it judged none of the item's answers)."""
    if (column, grader) not in counts.columns:
        return np.zeros(len(items), dtype=int)
    series = counts[(column, grader)]
    keys = pd.MultiIndex.from_frame(items[ITEM])
    return series.reindex(keys, fill_value=0).to_numpy(dtype=int)


def graded_answers(answers: pd.DataFrame) -> pd.DataFrame:
    """The grading stage's answers with the digest each label names: ``run_id, question_id, round, response,
    response_sha256``."""
    return answers[[*SLOT, "response"]].assign(response_sha256=[response_sha256(r) for r in answers["response"]])


def draw_order(items: pd.DataFrame, seed: int, salt: str = "order") -> np.ndarray:
    """A seeded uniform number in [0, 1) per item, from its question and response: the order items are drawn."""
    keys = (f"{salt}\0{seed}\0{q}\0{d}" for q, d in zip(items["question_id"], items["response_sha256"], strict=True))
    return np.array([int(hashlib.sha256(k.encode()).hexdigest()[:13], 16) / 16**13 for k in keys])


def primary_labels(labels: pd.DataFrame) -> pd.DataFrame:
    """The first label of each item (by ``time``, then labeller): the one the design counts.

    ``labels`` has ``question_id, response_sha256, score, labeller, time``, one row per label (not per answer).
    """
    ordered = labels.sort_values(["time", "labeller"], kind="stable")
    return ordered.drop_duplicates(ITEM, keep="first")


def allocate(
    population: np.ndarray, labelled: np.ndarray, passes: np.ndarray, mean_sq: np.ndarray, disagree: np.ndarray
) -> int | None:
    """The stratum the next label goes to, or None when every stratum is labelled whole.

    Per stratum: ``population`` items, ``labelled`` items, ``passes`` among them (by people),
    ``mean_sq`` the mean squared number of answers per item, and whether graders ``disagree``. First every
    stratum gets :data:`MIN_PER_STRATUM` labels (disagreeing strata first, then the larger); then the label
    goes where it most reduces N_h² S_h² / n_h, S_h² the Jeffreys-smoothed pass variance times ``mean_sq``.

    Examples
    --------
    >>> allocate(np.array([50, 5]), np.array([0, 0]), np.array([0, 0]), np.ones(2), np.array([False, True]))
    1
    >>> allocate(np.array([50, 5]), np.array([2, 2]), np.array([1, 2]), np.ones(2), np.array([False, True]))
    0
    """
    open_ = labelled < population
    if not open_.any():
        return None
    short = open_ & (labelled < np.minimum(MIN_PER_STRATUM, population))
    if short.any():
        rank = np.lexsort((-population, ~disagree.astype(bool), ~short))
        return int(rank[0])
    rate = (passes + 0.5) / (labelled + 1.0)
    variance = population.astype(float) ** 2 * rate * (1 - rate) * mean_sq
    gain = np.where(open_, variance / (labelled * (labelled + 1.0)), -np.inf)
    return int(np.argmax(gain))


def stratum_tally(items: pd.DataFrame, primary: pd.DataFrame) -> pd.DataFrame:
    """Per stratum: ``population``, ``labelled``, ``passes``, ``mean_sq`` and ``disagree``, strata by name."""
    joined = labelled_items(items, primary)
    return (
        joined.assign(passes=joined["human_pass"].eq(1.0))
        .groupby("stratum", sort=True)
        .agg(
            population=("n_answers", "size"),
            labelled=("labelled", "sum"),
            passes=("passes", "sum"),
            mean_sq=("n_answers", lambda m: float(np.mean(np.square(m)))),
            disagree=("disagree", "first"),
        )
    )


def next_item(
    items: pd.DataFrame,
    labels: pd.DataFrame,
    labeller: str,
    order: np.ndarray,
    shared: np.ndarray,
    skipped: Iterable = (),
) -> int | None:
    """The position in ``items`` of the item ``labeller`` labels next, or None when none is left.

    ``order`` is each item's place in the draw (:func:`draw_order`), ``shared`` whether it falls in the share
    that a second labeller labels too. Such an item, labelled by another named labeller and not yet by
    ``labeller``, comes first: people-vs-people agreement is measured on those. Otherwise the design
    (:func:`allocate`) picks the stratum, and the stratum's first item in ``order`` that nobody has labelled.
    ``skipped`` holds ``(question_id, response_sha256)`` pairs to pass over.
    """
    skip = set(skipped)
    keys = list(zip(items["question_id"], items["response_sha256"], strict=True))
    mine = set(zip(*(labels.loc[labels["labeller"].eq(labeller), c] for c in ITEM), strict=True))
    others = labels[~labels["labeller"].isin([labeller, ""])].sort_values("time", kind="stable")
    position = {key: i for i, key in enumerate(keys)}
    for key in zip(others["question_id"], others["response_sha256"], strict=True):
        i = position.get(key)
        if i is not None and shared[i] and key not in mine and key not in skip:
            return i
    taken = set(zip(labels["question_id"], labels["response_sha256"], strict=True)) | skip
    free = np.array([key not in taken for key in keys], dtype=bool)
    tally = stratum_tally(items, primary_labels(labels))
    strata = items["stratum"].to_numpy()
    available = np.array([bool((free & (strata == s)).any()) for s in tally.index])
    # a stratum with nothing left to draw (all labelled or skipped) is closed: its population is what it has
    population = np.where(available, tally["population"].to_numpy(), tally["labelled"].to_numpy())
    h = allocate(
        population,
        tally["labelled"].to_numpy(),
        tally["passes"].to_numpy(),
        tally["mean_sq"].to_numpy(),
        tally["disagree"].to_numpy(),
    )
    if h is None:
        return None
    candidates = np.flatnonzero(free & (strata == tally.index[h]))
    return int(candidates[np.argmin(order[candidates])])


def labelled_items(items: pd.DataFrame, primary: pd.DataFrame) -> pd.DataFrame:
    """``items`` with ``labelled`` and the people's verdict ``human_pass`` (0/1, NaN where unlabelled)."""
    passed = primary.assign(human_pass=(primary["score"] >= PASS_MARK).astype(float))[[*ITEM, "human_pass"]]
    out = items.merge(passed, on=ITEM, how="left")
    return out.assign(labelled=out["human_pass"].notna())


Statistic = Callable[[float, float], float]
KAPPA_RANGE, SHARE_RANGE = (-1.0, 1.0), (0.0, 1.0)


def agreement_with_people(
    items: pd.DataFrame, primary: pd.DataFrame, grader: str, alpha: float = 0.05
) -> dict[str, object]:
    """Design-weighted agreement of ``grader`` with people over every answer it judged.

    Returns ``grader``, ``n_labels`` (labelled items it judged), ``n_items``, ``n_answers``, ``n_strata``, and for
    each of ``accuracy``, ``kappa``, ``sensitivity``, ``specificity`` the estimate with ``_ci_low`` / ``_ci_high``,
    ``estimable``, ``reason`` and ``more_labels`` (about how many more labels make the κ interval ±0.1).
    """
    frame = labelled_items(items, primary)
    passes, fails = frame[f"pass:{grader}"].to_numpy(float), frame[f"fail:{grader}"].to_numpy(float)
    judged = passes + fails > 0
    frame, passes, fails = frame[judged], passes[judged], fails[judged]
    out: dict[str, object] = {
        "grader": grader,
        "n_labels": int(frame["labelled"].sum()),
        "n_items": len(frame),
        "n_answers": int((passes + fails).sum()),
        "n_strata": int(frame["stratum"].nunique()),
    }
    reason = _not_estimable(frame) or _one_verdict(frame)
    totals = (passes.sum(), fails.sum())
    statistics = _statistics(*totals)
    if reason is None:
        y = frame["human_pass"].fillna(0.0).to_numpy()
        weights = np.column_stack([passes, fails])
        units = y[:, None] * weights
        for name, (statistic, bounds) in statistics.items():
            estimate, low, high = _linearised(frame, units, weights, statistic, bounds, alpha)
            out |= {name: estimate, f"{name}_ci_low": low, f"{name}_ci_high": high}
        if not np.isfinite(out["kappa"]):
            reason = "κ is undefined: people, or the grader, give one verdict on every answer"
    if reason is not None:
        out |= {f"{name}{end}": np.nan for name in statistics for end in ("", "_ci_low", "_ci_high")}
    out["estimable"] = reason is None
    out["reason"] = reason or ""
    out["more_labels"] = _more_labels(out) if reason is None else np.nan
    return out


def _not_estimable(frame: pd.DataFrame) -> str | None:
    """Why the design's estimate cannot be formed yet: a stratum with too few labels."""
    tally = frame.groupby("stratum", sort=True)["labelled"].agg(["size", "sum"])
    short = tally[tally["sum"] < np.minimum(MIN_PER_STRATUM, tally["size"])]
    if tally.empty:
        return "the grader judged no answer"
    if short.empty and tally["sum"].sum() >= MIN_LABELS:
        return None
    if short.empty:
        return f"{int(tally['sum'].sum())} labels, fewer than the {MIN_LABELS} an estimate needs"
    name, row = next(iter(short.iterrows()))
    return (
        f"{len(short)} of {len(tally)} strata have fewer than {MIN_PER_STRATUM} labels "
        f"(e.g. {name}: {int(row['sum'])} of {int(row['size'])} items)"
    )


def _one_verdict(frame: pd.DataFrame) -> str | None:
    """Why κ measures no agreement: people gave one verdict on every labelled answer (or questions are too few)."""
    labelled = frame[frame["labelled"]]
    verdicts = set(labelled["human_pass"])
    if len(verdicts) == 1:
        word = "pass" if verdicts == {1.0} else "fail"
        return f"people gave every one of the {len(labelled)} labelled answers a {word}: κ measures no agreement"
    questions = labelled["question_id"].nunique()
    if questions < MIN_QUESTIONS:
        return f"the labels cover {questions} questions, fewer than the {MIN_QUESTIONS} an estimate needs"
    return None


def _statistics(grader_passes: float, grader_fails: float) -> dict[str, tuple[Statistic, tuple[float, float]]]:
    """Each agreement statistic as a function of the totals (answers people pass that the grader passes, fails).

    The grader's own totals are known on every answer, so these two are all the labels estimate.
    """
    total = grader_passes + grader_fails

    def counts(both: float, people_only: float) -> np.ndarray:
        return np.array([both, grader_passes - both, people_only, grader_fails - people_only])

    def ratio(top: float, bottom: float) -> float:
        return top / bottom if bottom > 0 else np.nan

    return {
        "accuracy": (lambda a, c: ratio(a + grader_fails - c, total), SHARE_RANGE),
        "kappa": (lambda a, c: float(kappa_from_counts(counts(a, c))), KAPPA_RANGE),
        "sensitivity": (lambda a, c: ratio(a, a + c), SHARE_RANGE),
        "specificity": (lambda a, c: ratio(grader_fails - c, total - a - c), SHARE_RANGE),
    }


def _linearised(
    frame: pd.DataFrame,
    units: np.ndarray,
    weights: np.ndarray,
    statistic: Statistic,
    bounds: tuple[float, float],
    alpha: float,
) -> tuple[float, float, float]:
    """A statistic of the weighted totals of ``units`` (item × 2: the people's pass times ``weights``, each item's
    grader passes and fails), with its stratified Taylor-series interval."""
    strata = frame["stratum"].to_numpy()
    labelled = frame["labelled"].to_numpy()
    estimate_totals = np.zeros(2)
    pieces = []
    for stratum in np.unique(strata):
        members = strata == stratum
        population, sample = int(members.sum()), units[members & labelled]
        estimate_totals += population * sample.mean(axis=0)
        passes = int(frame["human_pass"].to_numpy()[members & labelled].sum())
        pieces.append((population, sample, weights[members & labelled], passes))
    estimate = statistic(*estimate_totals)
    if not np.isfinite(estimate):
        return np.nan, np.nan, np.nan
    gradient = _gradient(statistic, estimate_totals)
    variance = 0.0
    for population, sample, weights, passes in pieces:
        n = len(sample)
        if n < population:
            variance += population**2 * (1 - n / population) * _unit_variance(weights @ gradient, passes) / n
    if variance == 0:  # every label where the statistic can move agrees: the bound no interval is narrower than
        low, high = constant_difference_interval(estimate, int(labelled.sum()), alpha, bounds)
        return float(estimate), float(low), float(high)
    # t with n − H degrees of freedom (labels less strata), the stratified variance estimator's
    half = float(stats.t.ppf(1 - alpha / 2, max(int(labelled.sum()) - len(pieces), 1))) * np.sqrt(variance)
    return float(estimate), float(max(bounds[0], estimate - half)), float(min(bounds[1], estimate + half))


def _unit_variance(w: np.ndarray, passes: int) -> float:
    """The within-stratum variance of the linearised unit z = y·w (y the people's 0/1 verdict, w known per item).

    With y a Bernoulli(p) draw within the stratum, var(z) = p·E[w²] − p²·E[w]². Where the labels all agree, p is
    smoothed, (passes + s)/(n + 2s) with s = :data:`SMOOTHING`, so that a few agreeing labels do not call the
    stratum certain.
    """
    n = len(w)
    rate = passes / n if 0 < passes < n else (passes + SMOOTHING) / (n + 2 * SMOOTHING)
    return rate * float(np.mean(np.square(w))) - rate**2 * float(np.mean(w)) ** 2


def _gradient(statistic: Statistic, at: np.ndarray) -> np.ndarray:
    """The central-difference gradient of ``statistic`` at the totals ``at``."""
    step = np.maximum(1e-6 * np.abs(at), 1e-6)
    out = np.zeros(2)
    for k in range(2):
        up, down = at.copy(), at.copy()
        up[k] += step[k]
        down[k] -= step[k]
        out[k] = (statistic(*up) - statistic(*down)) / (2 * step[k])
    return np.nan_to_num(out)


def _more_labels(row: dict[str, object]) -> float:
    """About how many more labels bring the κ interval to ±:data:`TARGET_HALF_WIDTH` (its width shrinks as 1/√n);
    0 when it is there already. It can exceed the answers left: then even labelling them all may not."""
    half = (float(row["kappa_ci_high"]) - float(row["kappa_ci_low"])) / 2
    n = int(row["n_labels"])
    return float(max(int(np.ceil(n * (half / TARGET_HALF_WIDTH) ** 2)) - n, 0))


def kappa_sentence(row: Mapping[str, Any], interval: str) -> str:
    """``κ(rules vs people) = 0.71 [0.52, 0.86] after 40 labels; about 38 more for ±0.1``, or why not yet, for a row
    of :func:`agreement_with_people` (``interval``: its κ and interval as the caller writes numbers).

    Examples
    --------
    >>> row = {"grader": "rules", "estimable": True, "n_labels": 40, "n_items": 500, "more_labels": 38.0}
    >>> kappa_sentence(row, "0.71 [0.52, 0.86]")
    'κ(rules vs people) = 0.71 [0.52, 0.86] after 40 labels; about 38 more for ±0.1'
    """
    if not row["estimable"]:
        return f"κ({row['grader']} vs people): not estimable yet: {row['reason']}"
    more, left = int(row["more_labels"]), int(row["n_items"]) - int(row["n_labels"])
    target = (
        "within ±0.1"
        if not more
        else f"about {more} more for ±0.1"
        if more < left
        else f"±0.1 needs about every one of the {left} answers left"
    )
    return f"κ({row['grader']} vs people) = {interval} after {int(row['n_labels'])} labels; {target}"
