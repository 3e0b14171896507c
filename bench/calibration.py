"""Calibrate Dualboard's intervals and tests by simulation with known truth.

Usage::

    python bench/calibration.py            # full grid: 2,000 sims (coverage), 10,000 (type I)
    python bench/calibration.py --quick    # small grid, fewer sims (seconds)
    python bench/calibration.py --sims 500 --type1-sims 2000 --out calibration.csv

Truth comes from the demo simulator, :mod:`dualboard.simulation.outcomes`:
each question's pass probability x_i ~ Beta(mean, concentration) per grading,
tied across gradings by a Gaussian copula (``question_probabilities``); each
round passes with probability x_i. The K rounds of a question are drawn at
once as Binomial(K, x_i), which is exactly ``draw_rounds`` summed over rounds.
The estimand is the population mean (``means[g]``). Thousands of benchmarks
are simulated at once (arrays of simulations × questions) and passed to the
same vectorised functions the leaderboard uses (``dualboard.stats.estimators``,
``dualboard.stats.paired``, ``dualboard.stats.power``).

Gates (Methodology, §How the methods are checked) scale with the number of simulations
actually run (:class:`Gate`): target ± (tolerance + z·Monte-Carlo SE), with
z = z₀.₉₉, so a method exactly on target fails a gate 1 % of the time whatever
the number of simulations. At the page's sizes they are its bounds:
coverage of 95 % intervals in [92.9, 97.1] % at 2,000 simulations ([93, 97],
MC SE 0.49 %; conservative methods: lower bound only); type I ≤ 5.5 % at
10,000 (≤ 6.1 % at 2,000, ≤ 6.6 % at --quick's 1,000); Holm family-wise
error with 8 identical runs as type I; power at the reported MDE 80 ± 2.6 %
at 2,000; simultaneous rank intervals contain all true ranks ≥ 95 % less the
MC allowance (gaps ≥ 4 SE). n = 10 is reported, not gated.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from dualboard import kappa
from dualboard.simulation import outcomes
from dualboard.simulation.outcomes import question_probabilities
from dualboard.stats import estimators, pair_matrix, paired, power
from dualboard.stats.comparison import DECIMALS
from dualboard.stats.tables import SEED

ALPHA = 0.05
CONCENTRATION = {"uneven": 1.0, "clustered": outcomes.CONCENTRATION, "unclustered": None}
"""Beta a + b per setting: uneven difficulty (most questions near 0 or 1), the simulator's default spread, or none."""
Z_GATE = float(stats.norm.ppf(0.99))
"""Monte-Carlo allowance of every gate: a method exactly on target fails it 1 % of the time."""


@dataclass(frozen=True)
class Gate:
    """An acceptance band for a simulated rate: target ± (tolerance + Z_GATE·MC SE).

    The Monte-Carlo SE is that of a rate equal to ``target`` over the
    simulations actually run, so the band narrows as simulations grow and
    --quick reports no failure that is only noise. ``tolerance`` is how far the
    method's true rate may sit from the target.
    """

    target: float
    tolerance: float
    lower: bool = True
    """The band has a lower bound (conservative methods and error rates have one side)."""
    upper: bool = True

    def bounds(self, sims: int) -> tuple[float, float]:
        """Return the band (low, high) for ``sims`` simulations."""
        half = self.tolerance + Z_GATE * np.sqrt(self.target * (1 - self.target) / sims)
        return (self.target - half if self.lower else 0.0, self.target + half if self.upper else 1.0)

    def label(self, sims: int) -> str:
        """Return the band as printed in the results table."""
        low, high = self.bounds(sims)
        if not self.lower:
            return f"<= {high:.2%}"
        return f">= {low:.2%}" if not self.upper else f"[{low:.2%}, {high:.2%}]"


COVERAGE = Gate(0.95, 0.01)  # [93, 97] at 2,000 simulations (Methodology, §How the methods are checked)
COVERAGE_CONSERVATIVE = Gate(0.95, 0.01, upper=False)  # Tango widened to McNemar; sparse differences; capped mean
TYPE_ONE = Gate(ALPHA, 0.0, lower=False)  # 5.5 % at 10,000 simulations
POWER = Gate(0.80, 0.005)  # 80 ± 2.6 at 2,000 simulations
RANKS = Gate(0.95, 0.0, upper=False)  # simultaneous: at least 95 %


@dataclass(frozen=True)
class Cell:
    """One point of the simulation grid."""

    n: int
    rounds: int
    mean: float
    clustering: str

    @property
    def concentration(self) -> float | None:
        return CONCENTRATION[self.clustering]


def simulate(
    cell: Cell, means: dict[str, float], rho: float, sims: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Return question means (sims × n) per grading, drawn from the known-truth simulator."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rho = 1: singular covariance, fine
        probs = question_probabilities(sims * cell.n, means, concentration=cell.concentration, rho=rho, rng=rng)
    out = {}
    for g in means:
        x = probs[g].to_numpy().reshape(sims, cell.n)
        out[g] = rng.binomial(cell.rounds, x) / cell.rounds
    return out


def second_mean(mean: float) -> float:
    """Return the answer-key truth used beside a traditional truth (a 10-point drop)."""
    return round(mean - 0.1, 10)


# ---------------------------------------------------------------- coverage


def coverage_cell(cell: Cell, sims: int, rng: np.random.Generator) -> list[dict]:
    """Return coverage of every interval in one grid cell."""
    truth = {"traditional": cell.mean, "answer_key": second_mean(cell.mean)}
    q = simulate(cell, truth, 0.5, sims, rng)
    y, k = q["traditional"], q["answer_key"]
    rows = mean_coverage(cell, y, truth["traditional"], sims)
    rows.append(_diff_coverage(cell, k, y, truth["answer_key"] - truth["traditional"], sims))
    return rows


def mean_coverage(cell: Cell, y: np.ndarray, truth: float, sims: int) -> list[dict]:
    """Return coverage of the mean-score intervals for question means ``y`` (sims × n).

    The leaderboard's interval is gated as conservative: its n_eff cap makes it
    wide where rounds are nearly independent, so only the lower bound binds.
    """
    mu, se, df = estimators.cluster_mean_se(y)
    lo, hi = estimators.wilson_neff_interval(mu, se, cell.n, df, ALPHA)
    rows = [_cov(cell, "mean: wilson_neff", lo, hi, truth, sims, conservative=True)]
    lo, hi = estimators.t_interval(mu, se, df, ALPHA)
    rows.append(_cov(cell, "mean: t on question means", lo, hi, truth, sims, gated=False))
    n_all = cell.n * cell.rounds
    sd_all = np.sqrt(mu * (1 - mu) * n_all / max(n_all - 1, 1))
    half = estimators.naive_z(ALPHA) * sd_all / np.sqrt(n_all)
    rows.append(_cov(cell, "mean: NAIVE (answers independent)", mu - half, mu + half, truth, sims, gated=False))
    return rows


def _diff_coverage(cell: Cell, k: np.ndarray, y: np.ndarray, truth: float, sims: int) -> dict:
    """Return coverage of the answer_key - traditional interval the leaderboard would show."""
    lo, hi = shown_difference_interval(k - y, cell.rounds == 1)
    if cell.rounds == 1:
        return _cov(cell, "diff: Tango, to 0 if McNemar (K=1)", lo, hi, truth, sims, conservative=True)
    return _cov(cell, "diff: augmented t, atanh, hull with t", lo, hi, truth, sims, conservative=True)


def shown_difference_interval(d: np.ndarray, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    """Return the interval the site shows for each row of question differences ``d`` (sims × n)."""
    d = np.round(d, DECIMALS)  # as the site: float noise must not break a constant d
    t = pair_matrix.row_tests(d, np.ones(d.shape, dtype=bool), np.full(len(d), binary), ALPHA)
    return t["diff_ci_low"], t["diff_ci_high"]


def _cov(
    cell: Cell,
    check: str,
    lo: np.ndarray,
    hi: np.ndarray,
    truth: float,
    sims: int,
    *,
    gated: bool = True,
    conservative: bool = False,
) -> dict:
    """Summarise one interval's coverage as a result row (gated from n = 30)."""
    rate = float(np.mean((lo <= truth + 1e-12) & (truth - 1e-12 <= hi)))
    gate = (COVERAGE_CONSERVATIVE if conservative else COVERAGE) if gated and cell.n >= 30 else None
    return _row("coverage", check, cell, sims, rate, gate)


def _row(kind: str, check: str, cell: Cell, sims: int, value: float, gate: Gate | None) -> dict:
    """Build one result row; ``gate`` None means reported, not gated."""
    if gate is None:
        label, verdict = "report", ""
    else:
        low, high = gate.bounds(sims)
        label, verdict = gate.label(sims), "PASS" if low <= value <= high else "FAIL"
    return {
        "kind": kind,
        "check": check,
        "n": cell.n,
        "K": cell.rounds,
        "mean": cell.mean,
        "clustering": cell.clustering,
        "sims": sims,
        "value": value,
        "gate": label,
        "pass": verdict,
    }


# ---------------------------------------------------------------- type I


def type1_cell(cell: Cell, sims: int, rng: np.random.Generator) -> list[dict]:
    """Return the rejection rate of every test under the null (identical x_i)."""
    q = simulate(cell, {"traditional": cell.mean, "answer_key": cell.mean}, 1.0, sims, rng)
    d = q["answer_key"] - q["traditional"]

    def row(check: str, p: np.ndarray, gated: bool = True) -> dict:
        rate = float(np.mean(p <= ALPHA))
        return _row("type I", check, cell, sims, rate, TYPE_ONE if gated and cell.n >= 30 else None)

    rows = []
    if cell.rounds == 1:
        up, down = np.sum(d > 0, axis=1), np.sum(d < 0, axis=1)
        exact = paired.mcnemar_exact_p(up, down)
        mid = exact - stats.binom.pmf(np.minimum(up, down), up + down, 0.5)
        rows += [row("mcnemar exact", exact), row("mcnemar mid-p", mid, gated=False)]
    rows.append(row("paired t", _t_p(d), gated=cell.rounds > 1))
    if cell.rounds > 1:
        rows.append(row("wilcoxon (normal approx.)", _wilcoxon_p(d)))
    return rows


def _t_p(d: np.ndarray) -> np.ndarray:
    """Return paired-t p-values, with p = 1 where every difference is 0 (as the site does)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p = paired.paired_t(d)["p_value"]
    return np.where(np.all(d == d[:, :1], axis=1), 1.0, np.nan_to_num(p, nan=1.0))


def _wilcoxon_p(d: np.ndarray) -> np.ndarray:
    """Return Wilcoxon p-values (zeros dropped, tie and continuity corrected, normal approx.).

    pingouin/scipy's method='auto' switches to an exact permutation test when
    ≤ 13 differences are non-zero and there are ties (~1 s per row): far too
    slow for 10,000 simulations, so the bench uses the normal approximation
    for every row and labels the check accordingly.
    """
    p = np.ones(len(d))
    nonzero = np.any(d != 0, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.wilcoxon(d[nonzero], axis=1, correction=True, zero_method="wilcox", method="approx")
    p[nonzero] = np.nan_to_num(res.pvalue, nan=1.0)
    return p


# ---------------------------------------------------------------- multiplicity and ranks


def holm_reject(p: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Return Holm step-down rejections, vectorised over rows (sims × hypotheses)."""
    m = p.shape[1]
    order = np.argsort(p, axis=1)
    sorted_p = np.take_along_axis(p, order, axis=1)
    ok = sorted_p <= alpha / (m - np.arange(m))
    ok = np.cumprod(ok, axis=1).astype(bool)
    reject = np.zeros_like(ok)
    np.put_along_axis(reject, order, ok, axis=1)
    return reject


def pair_pvalues(q: dict[str, np.ndarray], rounds: int) -> tuple[list, np.ndarray, np.ndarray]:
    """Return run pairs, their p-values (sims × pairs) and mean differences a - b."""
    names = list(q)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    ps, diffs = [], []
    for a, b in pairs:
        d = q[a] - q[b]
        if rounds == 1:
            ps.append(paired.mcnemar_exact_p(np.sum(d > 0, axis=1), np.sum(d < 0, axis=1)))
        else:
            ps.append(_t_p(d))
        diffs.append(d.mean(axis=1))
    return pairs, np.stack(ps, axis=1), np.stack(diffs, axis=1)


def fwer_cell(cell: Cell, sims: int, rng: np.random.Generator, runs: int = 8) -> dict:
    """Return Holm's family-wise error rate with ``runs`` identical runs."""
    means = {f"run{i}": cell.mean for i in range(runs)}
    q = simulate(cell, means, 1.0, sims, rng)
    _, p, _ = pair_pvalues(q, cell.rounds)
    rate = float(np.mean(holm_reject(p).any(axis=1)))
    return _row("Holm FWER (8 identical runs)", "any pair significant", cell, sims, rate, TYPE_ONE)


def rank_cell(cell: Cell, sims: int, rng: np.random.Generator, runs: int, gap_se: float, gated: bool = True) -> dict:
    """Return how often Holm rank intervals contain every true rank jointly."""
    base = {f"run{i}": 0.5 for i in range(runs)}
    sd_pair = population_sd(cell, base, 0.5, "run0", "run1")
    gap = gap_se * sd_pair / np.sqrt(cell.n)
    truth = {f"run{i}": 0.5 + gap * ((runs - 1) / 2 - i) for i in range(runs)}
    q = simulate(cell, truth, 0.5, sims, rng)
    pairs, p, diff = pair_pvalues(q, cell.rounds)
    reject = holm_reject(p)
    above = np.zeros((sims, runs), dtype=int)
    below = np.zeros((sims, runs), dtype=int)
    for j, (a, b) in enumerate(pairs):
        ia, ib = int(a[3:]), int(b[3:])
        a_wins = reject[:, j] & (diff[:, j] > 0)
        b_wins = reject[:, j] & (diff[:, j] < 0)
        above[:, ib] += a_wins
        below[:, ia] += a_wins
        above[:, ia] += b_wins
        below[:, ib] += b_wins
    true_rank = np.arange(1, runs + 1)
    contains = (1 + above <= true_rank) & (true_rank <= runs - below)
    rate = float(np.mean(contains.all(axis=1)))
    return _row(
        "rank intervals (joint)", f"{runs} runs, gaps {gap_se:g} SE(diff)", cell, sims, rate, RANKS if gated else None
    )


# ---------------------------------------------------------------- power at the MDE


def population_sd(cell: Cell, means: dict[str, float], rho: float, a: str, b: str, size: int = 400_000) -> float:
    """Return the population SD of question-mean differences a - b (large Monte Carlo)."""
    rng = np.random.default_rng(7)
    big = Cell(size, cell.rounds, cell.mean, cell.clustering)
    q = simulate(big, means, rho, 1, rng)
    return float(np.std(q[a] - q[b]))


def population_discordance(cell: Cell, means: dict[str, float], rho: float) -> float:
    """Return the population rate of discordant one-round pairs (Monte Carlo)."""
    rng = np.random.default_rng(8)
    q = simulate(Cell(400_000, 1, cell.mean, cell.clustering), means, rho, 1, rng)
    return float(np.mean(q["answer_key"] != q["traditional"]))


def mde_at_truth(cell: Cell, rho: float) -> float:
    """Return δ with δ = reported MDE under the population parameters at drop δ (fixed point)."""
    delta = 0.1
    for _ in range(6):
        means = {"traditional": cell.mean, "answer_key": cell.mean - delta}
        if cell.rounds == 1:
            new = power.mde_mcnemar(population_discordance(cell, means, rho), cell.n)
        else:
            new = power.mde_paired_t(population_sd(cell, means, rho, "answer_key", "traditional"), cell.n)
        if not np.isfinite(new) or abs(new - delta) < 1e-4:
            return new
        delta = new
    return delta


def power_cell(cell: Cell, sims: int, rng: np.random.Generator, rho: float = 0.5) -> dict:
    """Return the simulated power of the leaderboard's test at the reported MDE."""
    delta = mde_at_truth(cell, rho)
    if not np.isfinite(delta) or cell.mean - delta < 0:
        return _row("power at MDE", "MDE not reachable", cell, sims, float("nan"), None)
    q = simulate(cell, {"traditional": cell.mean, "answer_key": cell.mean - delta}, rho, sims, rng)
    d = q["answer_key"] - q["traditional"]
    if cell.rounds == 1:
        p = paired.mcnemar_exact_p(np.sum(d > 0, axis=1), np.sum(d < 0, axis=1))
    else:
        p = _t_p(d)
    rate = float(np.mean(p <= ALPHA))
    return _row("power at MDE", f"MDE = {100 * delta:.1f} points", cell, sims, rate, POWER if cell.n >= 30 else None)


# ---------------------------------------------------------------- effect size and kappa


def dz_cell(cell: Cell, sims: int, rng: np.random.Generator) -> dict:
    """Return coverage of the noncentral-t interval of d_z (d is not normal: report only)."""
    truth = {"traditional": cell.mean, "answer_key": second_mean(cell.mean)}
    big = simulate(Cell(400_000, cell.rounds, cell.mean, cell.clustering), truth, 0.5, 1, np.random.default_rng(9))
    d_pop = big["answer_key"] - big["traditional"]
    dz_true = float(d_pop.mean() / d_pop.std())
    q = simulate(cell, truth, 0.5, sims, rng)
    t = paired.paired_t(q["answer_key"] - q["traditional"])["t"]
    bounds = np.array([paired.dz_interval(float(ti), cell.n) for ti in t])
    rate = float(np.mean((bounds[:, 0] <= dz_true) & (dz_true <= bounds[:, 1])))
    return _row("coverage", f"effect d_z: noncentral t (true {dz_true:.2f})", cell, sims, rate, None)


def verdict_counts(cell: Cell, sims: int, accuracy: float, rng: np.random.Generator) -> np.ndarray:
    """Return per-question 2×2 counts (sims × n × 4) of a grader against human labels.

    Human labels: rounds pass with the question's x_i (Beta, as the simulator);
    the grader agrees with the human with a per-question accuracy a_i ~ Beta
    (mean ``accuracy``, concentration 10), so errors cluster in hard questions.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        probs = question_probabilities(
            sims * cell.n, {"h": cell.mean, "a": accuracy}, concentration=cell.concentration, rho=0.0, rng=rng
        )
    x = probs["h"].to_numpy().reshape(sims, cell.n, 1)
    acc = probs["a"].to_numpy().reshape(sims, cell.n, 1)
    if cell.concentration is None:
        acc = np.full_like(x, accuracy)
    human = rng.random((sims, cell.n, cell.rounds)) < x
    agree = rng.random((sims, cell.n, cell.rounds)) < acc
    grader = np.where(agree, human, ~human)
    cells = [grader & human, grader & ~human, ~grader & human, ~grader & ~human]
    return np.stack([c.sum(axis=2) for c in cells], axis=-1)


def kappa_cell(cell: Cell, sims: int, accuracy: float, rng: np.random.Generator, n_boot: int = 1000) -> dict:
    """Return coverage of the question-cluster BCa interval of κ (the leaderboard's code)."""
    big = verdict_counts(Cell(200_000, cell.rounds, cell.mean, cell.clustering), 1, accuracy, np.random.default_rng(10))
    k_true = float(kappa.kappa_from_counts(big[0].sum(axis=0)))
    counts = verdict_counts(cell, sims, accuracy, rng)
    hits, defined = 0, 0
    for i in range(sims):
        if kappa.not_estimable_reason(counts[i]):
            continue
        lo, hi, _ = kappa.kappa_interval(counts[i], n_boot=n_boot, seed=i)
        defined += 1
        hits += lo <= k_true <= hi
    rate = hits / max(defined, 1)
    return _row("coverage", f"kappa: cluster BCa (true {k_true:.2f}, {defined} estimable)", cell, sims, rate, None)


# ---------------------------------------------------------------- sparse paired differences

SPARSE_DISCORDANT = (0, 1, 2, 5)
"""Expected discordant answers per simulated board in the sparse cells (issue 26, item 4)."""


@dataclass(frozen=True)
class SparseCell:
    """Two runs that disagree on a handful of answers: ``discordant`` expected over n × K answers.

    ``two_way``: each question's discordances go either way (true difference 0), else all one way.
    ``gathered``: discordances gather on few questions (per-question rate ~ Beta with concentration 1),
    else they are spread evenly (the same rate on every question).
    ``step``: partial credit, one round: each question differs by ``step`` with probability discordant/n
    (the gradings disagree on whole questions, by half or all of the scale), else 0 (0: binary rounds).
    """

    n: int
    rounds: int
    discordant: int
    two_way: bool
    gathered: bool
    step: float = 0.0

    @property
    def label(self) -> str:
        way, where = ("two-way" if self.two_way else "one-way"), ("gathered" if self.gathered else "spread")
        if self.step:
            where = f"partial credit, step {self.step:g}"
        return f"sparse diff: {self.discordant} discordant, {way}, {where}"


def sparse_differences(cell: SparseCell, sims: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Return question differences (sims × n) and the true mean difference."""
    rate = cell.discordant / (cell.n * cell.rounds)
    shape = (sims, cell.n)
    if cell.step:
        sign = rng.choice((-1.0, 1.0), shape) if cell.two_way else 1.0
        return sign * cell.step * (rng.random(shape) < rate), 0.0 if cell.two_way else rate * cell.step
    theta = rng.beta(rate, 1 - rate, shape) if cell.gathered and rate > 0 else np.full(shape, rate)
    sign = rng.choice((-1.0, 1.0), shape) if cell.two_way else 1.0
    return sign * rng.binomial(cell.rounds, theta) / cell.rounds, 0.0 if cell.two_way else rate


def sparse_cell(cell: SparseCell, sims: int, rng: np.random.Generator) -> dict:
    """Return coverage and mean width (points) of the shown interval in one sparse cell (gate: at least 93 %)."""
    d, truth = sparse_differences(cell, sims, rng)
    lo, hi = shown_difference_interval(d, cell.rounds == 1 and not cell.step)
    rate = float(np.mean((lo <= truth + 1e-12) & (truth - 1e-12 <= hi)))
    row = _row("coverage", cell.label, Cell(cell.n, cell.rounds, truth, "sparse"), sims, rate, COVERAGE_CONSERVATIVE)
    return row | {"width": float(100 * np.mean(hi - lo))}


def sparse_cells() -> list[SparseCell]:
    """Return the sparse grid: binary K=1 and K=10, and partial credit K=1 moving whole questions by half or
    all of the scale; n = 30 and 100, every discordance count and pattern."""
    binary = [
        SparseCell(n, k, e, two_way, gathered)
        for n in (30, 100)
        for k in (1, 10)
        for e in SPARSE_DISCORDANT
        for two_way in (False, True)
        for gathered in ((False,) if k == 1 else (False, True))
    ]
    partial = [
        SparseCell(n, 1, e, two_way, False, step)
        for n in (30, 100)
        for e in SPARSE_DISCORDANT
        for two_way in (False, True)
        for step in (0.5, 1.0)
    ]
    return binary + partial


# ---------------------------------------------------------------- driver


def grid(quick: bool) -> list[Cell]:
    """Return the type-I grid of the Methodology page's checks (or a small one with --quick)."""
    ns, ks, means = ((30, 100), (1, 3), (0.5, 0.95)) if quick else ((10, 30, 100, 500), (1, 3, 5), (0.5, 0.8, 0.95))
    return [Cell(n, k, m, c) for n in ns for k in ks for m in means for c in ("clustered", "unclustered")]


def coverage_grid(quick: bool) -> list[Cell]:
    """Return the coverage grid: the type-I grid plus high scores, ten rounds and uneven difficulty."""
    if quick:
        ns, ks, means = (30, 100), (1, 5), (0.5, 0.95)
    else:
        ns, ks, means = (10, 30, 100, 500), (1, 3, 5, 10), (0.5, 0.8, 0.9, 0.95, 0.97, 0.99)
    return [Cell(n, k, m, c) for n in ns for k in ks for m in means for c in CONCENTRATION]


CRITICAL_CELLS = tuple(Cell(30, k, m, "uneven") for k in (5, 10) for m in (0.95, 0.97, 0.99))
"""Where the uncapped Wilson n_eff interval covered 88–90 %: few questions, high scores, uneven difficulty."""


PARTS = ("grid", "sparse", "fwer", "power", "ranks", "effects", "kappa")


def run(quick: bool, sims: int, type1_sims: int, seed: int, parts: tuple[str, ...] = PARTS) -> pd.DataFrame:
    """Run the chosen checks and return the result rows."""
    rng = np.random.default_rng(seed)
    rows: list[dict] = []

    def add(new: list[dict]) -> None:
        rows.extend(new)
        for r in new:  # progress on stderr: a long run shows where it is
            print(
                f"{r['kind']:>28} | {r['check']:<44} n={r['n']:<4} K={r['K']} "
                f"mean={r['mean']} {r['clustering']:<11} {r['value']:.4f} {r['pass']}",
                file=sys.stderr,
                flush=True,
            )

    if "grid" in parts:
        for cell in coverage_grid(quick):
            add(coverage_cell(cell, sims, rng))
        for cell in grid(quick):
            add(type1_cell(cell, type1_sims, rng))
    if "sparse" in parts:
        add([sparse_cell(cell, sims, rng) for cell in sparse_cells()])
    if "fwer" in parts:
        for n, k in ((30, 1), (30, 3), (100, 1), (100, 3)):
            add([fwer_cell(Cell(n, k, 0.8, "clustered"), type1_sims, rng)])
    if "power" in parts:
        for n, k in ((30, 1), (30, 3), (100, 1), (100, 5), (500, 1), (500, 3)):
            add([power_cell(Cell(n, k, 0.5, "clustered"), sims, rng)])
    if "ranks" in parts:
        for n, runs, gap, gated in ((100, 3, 4, True), (500, 5, 4, True), (100, 3, 1, False)):
            for k in (1, 3):
                add([rank_cell(Cell(n, k, 0.5, "clustered"), sims, rng, runs, gap, gated)])
    if "effects" in parts:
        for n, k in ((30, 3), (100, 3), (100, 5)):
            add([dz_cell(Cell(n, k, 0.8, "clustered"), min(sims, 1000), rng)])
    if "kappa" in parts:
        for n, k, acc in ((30, 1, 0.95), (100, 1, 0.95), (100, 3, 0.95), (100, 3, 0.8)):
            add([kappa_cell(Cell(n, k, 0.6, "clustered"), min(sims, 300 if quick else 500), acc, rng)])
    return pd.DataFrame(rows)


def coverage_summary(table: pd.DataFrame, sims: int) -> pd.DataFrame:
    """Return the lowest and highest gated coverage of each interval at each true mean."""
    gated = table[(table["kind"] == "coverage") & (table["pass"] != "")]
    return gated.groupby(["check", "mean"])["value"].agg(["min", "max", "count"]).reset_index()


def near_gate(table: pd.DataFrame, sims: int, margin: float = 0.005) -> pd.DataFrame:
    """Return the gated coverage rows that fail or lie within ``margin`` of their band."""
    gated = table[(table["kind"] == "coverage") & (table["pass"] != "")]
    conservative = gated["gate"].str.startswith(">=")
    low = np.where(conservative, COVERAGE_CONSERVATIVE.bounds(sims)[0], COVERAGE.bounds(sims)[0])
    high = np.where(conservative, np.inf, COVERAGE.bounds(sims)[1])
    close = (gated["value"] < low + margin) | (gated["value"] > high - margin)
    return gated[close].drop(columns=["kind", "sims"])


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the grid, print the table; exit 1 when a gate fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small grid, few simulations")
    parser.add_argument("--sims", type=int, help="simulations per coverage/power/rank cell")
    parser.add_argument("--type1-sims", type=int, help="simulations per type-I/FWER cell")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, help="also write the table as CSV")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS), help="run only these parts")
    args = parser.parse_args(argv)
    sims = args.sims or (300 if args.quick else 2000)
    type1 = args.type1_sims or (1000 if args.quick else 10_000)
    started, cpu = time.perf_counter(), time.process_time()
    table = run(args.quick, sims, type1, args.seed, tuple(args.only))
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", None)
    print(table.to_string(index=False, formatters={"value": "{:.3f}".format}))
    coverage = coverage_summary(table, sims)
    if len(coverage):
        print("\nCoverage per check and true mean (gated cells, n >= 30), and the cells within 0.5 points of a gate:")
        print(coverage.to_string(index=False, float_format="{:.3f}".format))
        print(near_gate(table, sims).to_string(index=False, formatters={"value": "{:.3f}".format}))
    failed = table[table["pass"] == "FAIL"]
    print(
        f"\n{len(table)} checks, {int((table['pass'] == 'PASS').sum())} pass, {len(failed)} fail, "
        f"{int((table['pass'] == '').sum())} reported only; {time.perf_counter() - started:.0f} s wall, "
        f"{time.process_time() - cpu:.0f} s CPU, load average {os.getloadavg()[0]:.1f}"
    )
    if args.out:
        table.to_csv(args.out, index=False)
    return 1 if len(failed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
