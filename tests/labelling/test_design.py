"""The labelling design's estimates: against an independent κ on a census, and by simulation with known truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from dualboard.labelling.design import ITEM, agreement_with_people, answer_items
from tests.labelling.design_simulation import GRADERS, draw, estimate, population, true_kappa


@pytest.fixture(scope="module")
def known():
    return population(seed=3, n_items=600)


def test_with_every_answer_labelled_the_estimate_is_statsmodels_kappa(known) -> None:
    items, truth = known
    labels = truth.assign(score=100.0 * truth["human_pass"], labeller="ada", time="t")
    for grader in GRADERS:
        row = agreement_with_people(items, labels, grader)
        y = truth["human_pass"].to_numpy(bool)
        passes, fails = items[f"pass:{grader}"].to_numpy(), items[f"fail:{grader}"].to_numpy()
        table = np.array([[passes[y].sum(), passes[~y].sum()], [fails[y].sum(), fails[~y].sum()]])
        assert row["kappa"] == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)
        assert row["kappa"] == pytest.approx(true_kappa(items, truth, grader), abs=1e-12)
        # a census leaves nothing to estimate, but no interval is zero-width
        assert row["kappa_ci_low"] < row["kappa"] <= row["kappa_ci_high"]


@pytest.mark.slow
def test_weights_undo_the_design_that_over_samples_disagreements(known) -> None:
    """The labelled answers over-represent where graders disagree: their raw κ is biased, the weighted one not."""
    items, truth = known
    raw, weighted, true = [], [], true_kappa(items, truth, "judge")
    for rep in range(60):
        chosen = draw(items, truth, 80, np.random.default_rng(rep), design=True)
        weighted.append(estimate(items, truth, chosen, "judge", design=True)["kappa"])
        raw.append(estimate(items, truth, chosen, "judge", design=False)["kappa"])
    assert abs(np.mean(weighted) - true) < 0.03
    assert abs(np.mean(raw) - true) > 2 * abs(np.mean(weighted) - true)


def test_the_design_tightens_kappa_faster_than_random_sampling(known) -> None:
    items, truth = known
    for grader in GRADERS:
        widths = {True: [], False: []}
        for design in widths:
            for rep in range(20):
                row = estimate(
                    items, truth, draw(items, truth, 100, np.random.default_rng(rep), design), grader, design
                )
                widths[design].append(row["kappa_ci_high"] - row["kappa_ci_low"])
        assert np.mean(widths[True]) < 0.85 * np.mean(widths[False]), grader


@pytest.mark.test_all
@pytest.mark.parametrize("labels", [40, 100, 200])
def test_the_weighted_kappa_interval_covers_93_to_97_percent(labels: int) -> None:
    items, truth = population(seed=1)
    for grader in GRADERS:
        true, covered = true_kappa(items, truth, grader), []
        for rep in range(400):
            row = estimate(items, truth, draw(items, truth, labels, np.random.default_rng(rep), True), grader, True)
            covered.append(row["kappa_ci_low"] <= true <= row["kappa_ci_high"])
        assert 0.93 <= np.mean(covered) <= 0.97, (grader, labels, np.mean(covered))


def test_a_stratum_without_two_labels_makes_the_estimate_wait(known) -> None:
    items, truth = known
    one = truth.head(1).assign(score=100.0)
    row = agreement_with_people(items, one, "judge")
    assert not row["estimable"] and "strata have fewer than 2 labels" in row["reason"] and np.isnan(row["kappa"])


def test_items_join_identical_responses_and_mark_disagreement() -> None:
    slots = pd.DataFrame(
        {"run_id": ["a", "b", "c"], "question_id": "q", "round": 0, "response_sha256": ["x", "x", "y"]}
    )
    verdicts = pd.concat(
        [
            slots[["run_id", "question_id", "round"]].assign(
                grader="rules", role="answer_key", score=[100.0, 100.0, 0.0]
            ),
            slots[["run_id", "question_id", "round"]].assign(
                grader="judge", role="answer_key", score=[0.0, 100.0, 0.0]
            ),
            slots[["run_id", "question_id", "round"]].assign(grader="human", role="human", score=[0.0, 0.0, 0.0]),
        ]
    )
    items = answer_items(slots, verdicts).set_index(ITEM)
    assert items.loc[("q", "x"), "stratum"] == "judge mixed · rules pass" and items.loc[("q", "x"), "disagree"]
    assert items.loc[("q", "y"), "stratum"] == "judge fail · rules fail" and not items.loc[("q", "y"), "disagree"]
    assert items["n_answers"].tolist() == [2, 1] and "pass:human" not in items.columns
