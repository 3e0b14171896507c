"""Known truth of simulated runs: what an ideal grader scores, and what each grading observes.

Per answer (:func:`draw_truth`), three layers are drawn from the seeds:

1. **Ideal verdicts.** For each model and category,
   :func:`~dualboard.simulation.outcomes.question_probabilities` draws every
   question's pass probability under both gradings and
   :func:`~dualboard.simulation.outcomes.draw_rounds` each round's verdicts;
   a ``malformed_rate`` share of answers is empty, truncated or refused and
   fails both. These are the verdicts of an ideal grader: the model's true
   accuracy (``accuracy`` in ``simulated_models.yaml``) is their mean.
2. **Writer and grader errors**, at the model's documented rates, on readable
   open answers only: free prose with no marked final answer
   (``unmarked_rate``), wording that fools a string matcher
   (``rules_false_fail_rate`` on correct answers, which ``rules`` fails;
   ``rules_false_pass_rate`` on wrong ones, which it fails too: they hedge), the lenient judge passing a failing answer
   (``judge_false_pass_rate``), and, on every readable answer, a human
   labeller contradicting the ideal answer-key verdict (``human_error_rate``).
3. **Scores** on 0–100, ideal and observed.

Per population (:func:`true_scores`), the expected ideal and observed score
of each run, grading and category, which the statistics should cover.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from dualboard.intake.models import Benchmark
from dualboard.scored_files import GRADINGS
from dualboard.simulation.models import SimulatedModel, check_categories
from dualboard.simulation.outcomes import draw_rounds, question_probabilities
from dualboard.simulation.responses import expected_judge_score, judge_scores

TRUTH_COLUMNS = (
    "question_id",
    "category",
    "type",
    "round",
    "malformed",
    "marked",
    "misleading",
    "judge_false_pass",
    "human_error",
    "ideal_traditional",
    "traditional",
    "ideal_answer_key",
    "answer_key",
    "human",
)


def draw_truth(benchmark: Benchmark, model: SimulatedModel, *, seed: int) -> pd.DataFrame:
    """Draw every answer's ideal verdicts, its writer and grader errors, and its scores.

    Returns
    -------
    pandas.DataFrame
        One row per (question, round) in file order, columns ``TRUTH_COLUMNS``:

        - ``question_id``, ``category``, ``type``, ``round``;
        - ``malformed`` (bool): empty, truncated or refused; fails every grading;
        - ``marked`` (bool): the final answer is marked; False for the free-prose
          open answers the ``rules`` grader cannot read;
        - ``misleading`` (bool): a marked open answer worded to fool a string
          matcher: a paraphrase (when ``ideal_answer_key`` is 100) or a wrong
          answer mentioning the key (when it is 0);
        - ``judge_false_pass`` (bool): the judge passes an answer that fails
          the ideal traditional grading;
        - ``human_error`` (bool): the simulated human label is wrong;
        - ``ideal_traditional``: an error-free traditional grader's score
          (multiple choice 0/100; open: the judge's score, 80 or 100 for a
          pass, 0, 20 or 40 for a fail);
        - ``traditional``: what the traditional graders should score (the
          judge's recorded score, a pass score where it falsely passes);
        - ``ideal_answer_key``: 100 when the final answer is correct, else 0;
        - ``answer_key``: what the ``rules`` grader should score: the ideal
          verdict, reversed where ``misleading``; NaN where the answer is not
          ``marked``: free prose is the grader's to read or not (it should
          give no verdict unless it has a rule for it, such as a number that
          matches a numeric key), so the simulator does not say;
        - ``human``: the simulated human label (0/100).
    """
    truth = _ideal_verdicts(benchmark, model, seed=seed)
    rng = np.random.default_rng([seed, model.seed, 3])
    return _scored(_with_errors(truth, model, rng), rng)


def _ideal_verdicts(benchmark: Benchmark, model: SimulatedModel, *, seed: int) -> pd.DataFrame:
    """Draw the ideal 0/1 verdicts under both gradings, category by category, and the malformed answers."""
    check_categories(benchmark, model)
    rng = np.random.default_rng([seed, model.seed, 0])
    frames = []
    for category, questions in _questions_by_category(benchmark).items():
        means = model.accuracy[category]
        probabilities = question_probabilities(
            len(questions), means, concentration=model.concentration, rho=model.rho, rng=rng
        )
        rounds = draw_rounds(probabilities, model.rounds, rng=rng)
        rounds["question_id"] = [questions[i]["id"] for i in rounds["question"]]
        frames.append(rounds)
    truth = pd.concat(frames, ignore_index=True)
    truth["malformed"] = rng.random(len(truth)) < model.malformed_rate
    truth.loc[truth["malformed"], list(GRADINGS)] = 0
    return _in_file_order(truth, benchmark)


def _questions_by_category(benchmark: Benchmark) -> dict[str, list[dict[str, Any]]]:
    """Group questions by category, categories in order of first appearance."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for question in benchmark.questions:
        groups.setdefault(question["category"], []).append(question)
    return groups


def _in_file_order(truth: pd.DataFrame, benchmark: Benchmark) -> pd.DataFrame:
    position = {q["id"]: i for i, q in enumerate(benchmark.questions)}
    truth = truth.assign(position=truth["question_id"].map(position))
    truth = truth.sort_values(["position", "round"], kind="stable").reset_index(drop=True)
    truth["category"] = [benchmark.question(q)["category"] for q in truth["question_id"]]
    truth["type"] = [benchmark.question(q)["type"] for q in truth["question_id"]]
    return truth[["question_id", "category", "type", "round", *GRADINGS, "malformed"]]


def _with_errors(truth: pd.DataFrame, model: SimulatedModel, rng: np.random.Generator) -> pd.DataFrame:
    """Flag the writer and grader errors, each drawn at its rate among the answers it can hit."""
    readable = ~truth["malformed"].to_numpy()
    readable_open = readable & (truth["type"] == "open").to_numpy()
    correct = truth["answer_key"].to_numpy() == 1
    # One uniform per answer and error, whatever the rates: changing one rate moves no other draw.
    u = rng.random((4, len(truth)))
    marked = ~(readable_open & (u[0] < model.unmarked_rate))
    misleading_rate = np.where(correct, model.rules_false_fail_rate, model.rules_false_pass_rate)
    return truth.assign(
        marked=marked,
        misleading=readable_open & marked & (u[1] < misleading_rate),
        judge_false_pass=readable_open & (truth["traditional"].to_numpy() == 0) & (u[2] < model.judge_false_pass_rate),
        human_error=readable & (u[3] < model.human_error_rate),
    )


def _scored(truth: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Add the ideal and observed 0–100 scores of each grading and the human label."""
    judged_open = ((truth["type"] == "open") & ~truth["malformed"]).to_numpy()
    passed = truth["traditional"].to_numpy() == 1
    ideal_traditional = np.where(judged_open, judge_scores(passed, rng), 100 * passed)
    false_pass_scores = judge_scores(np.ones(len(truth), dtype=bool), rng)
    ideal_answer_key = 100 * truth["answer_key"].to_numpy()
    # Only a paraphrase misleads rules: a wrong answer that mentions the key hedges, and rules fails it.
    fooled = truth["misleading"].to_numpy() & (ideal_answer_key == 100)
    answer_key = np.where(fooled, 0, ideal_answer_key).astype(float)
    answer_key[~truth["marked"].to_numpy()] = np.nan
    scored = truth.assign(
        ideal_traditional=ideal_traditional,
        traditional=np.where(truth["judge_false_pass"], false_pass_scores, ideal_traditional),
        ideal_answer_key=ideal_answer_key,
        answer_key=answer_key,
        human=np.where(truth["human_error"], 100 - ideal_answer_key, ideal_answer_key),
    )
    return scored[list(TRUTH_COLUMNS)]


def true_scores(models: list[SimulatedModel], benchmark: Benchmark) -> pd.DataFrame:
    """Return each run's expected score per grading, ideal and observed, per category and overall.

    The truth is the population mean the statistics estimate. For a question
    of a category with true accuracy p and malformed rate m, an ideal grader
    scores 100·(1−m)·p under the answer key, and the same under the
    traditional grading of multiple choice; for open questions the judge
    scores (1−m)·E[judge score]. What the graders observe differs on open
    questions: the judge also passes a ``judge_false_pass_rate`` share of the
    answers that fail, and ``rules`` fails paraphrases (and, rightly, key-mentioning
    answers), and is taken to give no verdict on unmarked answers, so its mean
    runs over the answers it judges (marked and malformed ones): unmarked
    answers are as likely to be correct as marked ones, so leaving them out
    changes no expectation but the share of malformed answers. Category and
    overall values average these over the benchmark's questions.

    Returns
    -------
    pandas.DataFrame
        ``run_id``, ``grading`` (``traditional`` | ``answer_key``),
        ``category`` (a category name or ``all``), ``ideal_mean`` (0–100: an
        error-free grader) and ``observed_mean`` (0–100: the benchmark's
        graders at the documented error rates).
    """
    rows = []
    for model in models:
        check_categories(benchmark, model)
        expected = pd.DataFrame([_expected_scores(q, model) for q in benchmark.questions])
        for grading in GRADINGS:
            columns = [f"ideal_{grading}", grading]
            per_category = expected.groupby("category", sort=False)[columns].mean()
            for category, (ideal, observed) in [*per_category.iterrows(), ("all", expected[columns].mean())]:
                rows.append(
                    {
                        "run_id": model.run_id,
                        "grading": grading,
                        "category": category,
                        "ideal_mean": float(ideal),
                        "observed_mean": float(observed),
                    }
                )
    return pd.DataFrame(rows, columns=["run_id", "grading", "category", "ideal_mean", "observed_mean"])


def _expected_scores(question: Mapping[str, Any], model: SimulatedModel) -> dict[str, Any]:
    """Expected 0–100 score of one question under each grading, ideal and observed."""
    accuracy = model.accuracy[question["category"]]
    kept = 1 - model.malformed_rate
    p_traditional, p_key = accuracy["traditional"], accuracy["answer_key"]
    row = {
        "category": question["category"],
        "ideal_traditional": kept * 100 * p_traditional,
        "ideal_answer_key": kept * 100 * p_key,
    }
    row.update(traditional=row["ideal_traditional"], answer_key=row["ideal_answer_key"])
    if question["type"] == "open":
        judge_passes = p_traditional + (1 - p_traditional) * model.judge_false_pass_rate
        row.update(
            ideal_traditional=kept * expected_judge_score(p_traditional),
            traditional=kept * expected_judge_score(judge_passes),
            answer_key=_expected_rules_score(p_key, model),
        )
    return row


def _expected_rules_score(p_key: float, model: SimulatedModel) -> float:
    """Expected ``rules`` score of an open question over the answers it judges (NaN if none)."""
    marked = (1 - model.malformed_rate) * (1 - model.unmarked_rate)
    passes = p_key * (1 - model.rules_false_fail_rate)
    judged = model.malformed_rate + marked
    return 100 * marked * passes / judged if judged > 0 else float("nan")
