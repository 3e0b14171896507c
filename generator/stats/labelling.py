"""``labelling.csv``: what the labelling design's labels say of each grader, and of people against people.

Rows of design ``stratified``: each automatic grader against people, weighted by the design
(:func:`dualboard.labelling.design.agreement_with_people`), estimating the agreement over every answer
of the benchmark. Rows of design ``overlap``: two labellers against each other on the answers both
labelled, the ceiling an automatic grader can reach; unweighted, with the question-cluster intervals of
``agreement.csv`` (:func:`dualboard.stats.agreement.pair_stats`).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from dualboard.kappa import PASS_MARK
from dualboard.labelling.design import ITEM, agreement_with_people, answer_items, primary_labels
from dualboard.stats.agreement import pair_stats
from dualboard.stats.tables import COLUMNS, N_BOOT, SEED, documents

PEOPLE = "people"


@documents("labelling")
def labelling_table(
    answers: pd.DataFrame,
    verdicts: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Return one row per automatic grader against people, and one per pair of labellers who share answers.

    ``answers`` has ``run_id, question_id, round, response_sha256``; ``verdicts`` the verdicts table; ``labels``
    one row per label and answer (:func:`dualboard.intake.human_labels.load_labels`: ``question_id``,
    ``response_sha256``, ``score``, ``labeller``, ``time``).
    """
    items = answer_items(answers, verdicts)
    per_item = labels.drop_duplicates([*ITEM, "labeller"])
    primary = primary_labels(per_item)
    graders = sorted(c.split(":", 1)[1] for c in items.columns if c.startswith("pass:"))
    rows = [
        agreement_with_people(items, primary, g, alpha) | {"compared_with": PEOPLE, "design": "stratified"}
        for g in graders
    ]
    rows += _people_rows(items, per_item, n_boot=n_boot, seed=seed, alpha=alpha)
    return pd.DataFrame(rows, columns=list(COLUMNS["labelling"]))


def _people_rows(items: pd.DataFrame, per_item: pd.DataFrame, *, n_boot: int, seed: int, alpha: float) -> list[dict]:
    """Each pair of named labellers on the items both labelled (``human_labels.csv`` names no labeller)."""
    named = per_item[per_item["labeller"].ne("")]
    answers = items.set_index(ITEM)["n_answers"]
    rows = []
    for first, second in itertools.combinations(sorted(named["labeller"].unique()), 2):
        a = named[named["labeller"].eq(first)][[*ITEM, "score"]]
        b = named[named["labeller"].eq(second)][[*ITEM, "score"]]
        both = a.merge(b, on=ITEM, suffixes=("_a", "_b"))
        if both.empty:
            continue
        joined = both.assign(
            verdict_a=(both["score_a"] >= PASS_MARK).astype(float),
            verdict_b=(both["score_b"] >= PASS_MARK).astype(float),
        )
        stats = pair_stats(joined, (first, second), True, n_boot=n_boot, seed=seed, alpha=alpha)
        covered = answers.reindex(pd.MultiIndex.from_frame(both[ITEM])).fillna(0).sum()
        rows.append(
            {k: v for k, v in stats.items() if k in COLUMNS["labelling"]}
            | {
                "grader": first,
                "compared_with": second,
                "design": "overlap",
                "n_labels": len(both),
                "n_items": len(both),
                "n_answers": int(covered),
                "n_strata": np.nan,
                "more_labels": np.nan,
            }
        )
    return rows
