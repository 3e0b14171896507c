"""Known-truth outcomes: per-question pass probabilities and per-round verdicts.

The model behind every simulated run:

* Each question i has a true pass probability under each grading g,
  x_i^g ~ Beta with mean ``means[g]`` and concentration ``concentration``
  (a + b). The two gradings are tied by a Gaussian copula with correlation
  ``rho``: rho = 1 with equal means makes the gradings identical (the null).
* Each round r of question i passes with probability x_i^g, independently
  across rounds and gradings given the x_i.

The estimand of the statistics stage is the population mean of x^g, which is
``means[g]`` exactly, so coverage and type-I error can be measured against it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from dualboard.scored_files import GRADINGS

CONCENTRATION = 4.0
"""Default Beta a + b of question probabilities: questions spread between easy and hard, as on real benchmarks."""


def question_probabilities(
    n_questions: int,
    means: dict[str, float],
    *,
    concentration: float | None,
    rho: float,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Draw each question's true pass probability under each grading.

    Parameters
    ----------
    n_questions : int
        Number of questions sampled from the population.
    means : dict
        True population accuracy (0–1) per grading name.
    concentration : float or None
        Beta a + b; small values spread questions between easy and hard
        (strong clustering of rounds). ``None`` gives every question the
        mean itself (no clustering).
    rho : float
        Copula correlation between the gradings' question probabilities.
    rng : numpy.random.Generator
        Source of randomness; pass a seeded generator.

    Returns
    -------
    pandas.DataFrame
        ``question`` (int) and one column per grading with x_i in [0, 1].
    """
    names = list(means)
    cov = np.full((len(names), len(names)), rho)
    np.fill_diagonal(cov, 1.0)
    z = rng.multivariate_normal(np.zeros(len(names)), cov, size=n_questions)
    u = stats.norm.cdf(z)
    columns = {"question": np.arange(n_questions)}
    for j, name in enumerate(names):
        columns[name] = _beta_quantile(u[:, j], means[name], concentration)
    return pd.DataFrame(columns)


def _beta_quantile(u: np.ndarray, mean: float, concentration: float | None) -> np.ndarray:
    """Map uniforms to Beta(mean, concentration) quantiles (degenerate at 0, 1, or no spread)."""
    if concentration is None or mean in (0.0, 1.0):
        return np.full(u.shape, mean)
    return stats.beta.ppf(u, mean * concentration, (1 - mean) * concentration)


def draw_rounds(
    probabilities: pd.DataFrame,
    rounds: int,
    *,
    rng: np.random.Generator,
    gradings: tuple[str, ...] = GRADINGS,
) -> pd.DataFrame:
    """Draw per-round 0/1 outcomes from question probabilities.

    Returns
    -------
    pandas.DataFrame
        One row per (question, round): ``question``, ``round`` and one 0/1
        integer column per grading.
    """
    n = len(probabilities)
    out = pd.DataFrame(
        {
            "question": np.repeat(probabilities["question"].to_numpy(), rounds),
            "round": np.tile(np.arange(rounds), n),
        }
    )
    for g in gradings:
        p = np.repeat(probabilities[g].to_numpy(), rounds)
        out[g] = (rng.random(n * rounds) < p).astype(int)
    return out


def simulate_outcomes(
    n_questions: int,
    rounds: int,
    means: dict[str, float],
    *,
    concentration: float | None = CONCENTRATION,
    rho: float = 0.5,
    seed: int | np.random.Generator = 0,
) -> pd.DataFrame:
    """Simulate one run's 0/1 outcomes under both gradings, with known truth.

    Examples
    --------
    >>> df = simulate_outcomes(30, 3, {"traditional": .8, "answer_key": .6}, seed=1)
    >>> sorted(df.columns)
    ['answer_key', 'question', 'round', 'traditional']
    >>> len(df)
    90
    """
    rng = np.random.default_rng(seed)
    probs = question_probabilities(n_questions, means, concentration=concentration, rho=rho, rng=rng)
    return draw_rounds(probs, rounds, rng=rng, gradings=tuple(means))
