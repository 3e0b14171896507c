"""A benchmark with known truth for the labelling design: people's verdict on every answer is known, so the
design's estimates can be checked against the agreement over all answers (tests and ``bench/label_design.py``).

Two automatic graders, as on open-ended boards: ``rules`` judges few answers (a short key) and is accurate
when it does; ``judge`` judges every answer, leniently, and its verdict varies between the rounds that hold one
response. Each item (a distinct response) holds 1 to 3 answers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dualboard.kappa import kappa_from_counts
from dualboard.labelling.design import ITEM, agreement_with_people, allocate, answer_items

GRADERS = ("judge", "rules")


def population(seed: int, n_items: int = 1500, right: float = 0.4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Items (:func:`answer_items`) and their truth: ``question_id, response_sha256, human_pass``; people pass a
    share ``right`` of the distinct answers."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n_items) < right
    copies = rng.choice([1, 2, 3], size=n_items, p=[0.7, 0.2, 0.1])
    item = np.repeat(np.arange(n_items), copies)
    correct = truth[item]
    rules_judges = np.repeat(rng.random(n_items) < 0.35, copies)
    rules = np.where(rules_judges, np.where(rng.random(len(item)) < 0.92, correct, ~correct), np.nan)
    judge = np.where(correct, rng.random(len(item)) < 0.9, rng.random(len(item)) < 0.35)
    slots = pd.DataFrame(
        {
            "run_id": [f"r{k}" for k in range(len(item))],
            "question_id": [f"q{i % 40}" for i in item],
            "round": 0,
            "response_sha256": [f"d{i}" for i in item],
        }
    )
    verdicts = pd.concat(
        [
            slots[["run_id", "question_id", "round"]].assign(grader=g, role="answer_key", score=100.0 * v)
            for g, v in (("rules", np.where(np.isnan(rules), np.nan, rules)), ("judge", judge.astype(float)))
        ]
    )
    items = answer_items(slots, verdicts)
    known = pd.DataFrame(
        {
            "question_id": [f"q{i % 40}" for i in range(n_items)],
            "response_sha256": [f"d{i}" for i in range(n_items)],
            "human_pass": truth,
        }
    )
    return items, items[ITEM].merge(known, on=ITEM)


def true_kappa(items: pd.DataFrame, truth: pd.DataFrame, grader: str) -> float:
    """κ of ``grader`` against people over every answer it judged (the estimand)."""
    y = truth["human_pass"].to_numpy(bool)
    passes, fails = items[f"pass:{grader}"].to_numpy(float), items[f"fail:{grader}"].to_numpy(float)
    counts = np.array([passes[y].sum(), passes[~y].sum(), fails[y].sum(), fails[~y].sum()])
    return float(kappa_from_counts(counts))


def draw(items: pd.DataFrame, truth: pd.DataFrame, n: int, rng: np.random.Generator, design: bool) -> list[int]:
    """The positions of ``n`` items labelled in turn: by the design's allocation, or a simple random sample."""
    if not design:
        return list(rng.permutation(len(items))[:n])
    codes, strata = pd.factorize(items["stratum"], sort=True)
    population = np.bincount(codes, minlength=len(strata))
    mean_sq = np.bincount(codes, weights=items["n_answers"].to_numpy(float) ** 2, minlength=len(strata)) / population
    disagree = items.groupby("stratum", sort=True)["disagree"].first().to_numpy()
    y = truth["human_pass"].to_numpy(bool)
    order = [list(rng.permutation(np.flatnonzero(codes == h))) for h in range(len(strata))]
    labelled, passes, chosen = np.zeros(len(strata), int), np.zeros(len(strata), int), []
    for _ in range(n):
        h = allocate(population, labelled, passes, mean_sq, disagree)
        if h is None:
            break
        i = order[h].pop()
        chosen.append(i)
        labelled[h] += 1
        passes[h] += y[i]
    return chosen


def estimate(items: pd.DataFrame, truth: pd.DataFrame, chosen: list[int], grader: str, design: bool) -> dict:
    """The design's estimate from the labels of ``chosen`` (one stratum for a simple random sample)."""
    labels = truth.iloc[chosen].assign(score=lambda f: 100.0 * f["human_pass"])
    frame = items if design else items.assign(stratum="all")
    return agreement_with_people(frame, labels, grader)
