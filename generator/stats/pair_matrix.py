"""Run pairs of one grading at once: the vectorised path of the pairwise table.

Leaderboards hold hundreds of runs, so m(m-1)/2 pairs must not each cost a
pandas round trip. Any list of pairs is compared in array operations over a
pairs × questions matrix, a block of pairs at a time. The rules are those of
:func:`dualboard.stats.comparison.compare` (a test checks both agree on every
pair); pairs with fewer than :data:`~dualboard.stats.paired.TOO_FEW_QUESTIONS`
shared questions (exact permutation test) or none (unpaired comparison) are
left to that scalar path.

Each pair's row is reduced along its own contiguous row of questions (NumPy's
pairwise summation, as ``compare`` sums a vector), so a pair's numbers do not
depend on which other pairs share its block: a pair computed alone, when one
run is added, equals the same pair computed among all of them.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
from scipy import stats

from dualboard.stats import paired, power
from dualboard.stats.comparison import DECIMALS, constant_note, join_notes, widened_note
from dualboard.stats.scores import POINTS

PAIR_COLUMNS = (
    "n_questions",
    "diff_mean",
    "diff_se",
    "diff_ci_low",
    "diff_ci_high",
    "test",
    "p_value",
    "effect_dz",
    "mde_points",
    "mde_status",
    "note",
)
"""What one pair's comparison holds: the columns of pairwise.csv a pair decides alone, in that order."""
BLOCK = 256
"""Pairs compared per array operation: 256 pairs × 2,000 questions are 4 MB per temporary array."""


def wide(qmeans: pd.DataFrame) -> tuple[pd.Index, pd.Index, np.ndarray, np.ndarray]:
    """Return run ids, question ids, question means (questions × runs, NaN = not answered) and one-round-0/1 flags."""
    frame = qmeans.assign(simple=(qmeans["n_rounds"] == 1) & qmeans["binary"].astype(bool))
    values = frame.pivot(index="question_id", columns="run_id", values="mean")
    simple = frame.pivot(index="question_id", columns="run_id", values="simple")
    simple = simple.reindex_like(values).fillna(False).astype(bool)
    return values.columns, values.index, values.to_numpy(dtype=float), simple.to_numpy()


def column_digests(questions: pd.Index, values: np.ndarray, simple: np.ndarray) -> list[str]:
    """Return per run (column) a sha256 of everything its comparisons read: question ids, means, flags.

    Two runs' pair is decided by their two columns alone, so these digests key
    a pair's cached result (:mod:`dualboard.stats.pieces`).
    """
    shared = hashlib.sha256("\0".join(map(str, questions)).encode("utf-8", "surrogateescape")).digest()
    return [
        hashlib.sha256(shared + np.ascontiguousarray(values[:, j]).tobytes() + simple[:, j].tobytes()).hexdigest()
        for j in range(values.shape[1])
    ]


def _moments(d: np.ndarray, shared: np.ndarray) -> dict[str, np.ndarray]:
    """Return n, mean, sd, mean and sd of |d|, discordant counts and constancy (per pair: per row)."""
    n = shared.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean, abs_mean = d.sum(axis=-1) / n, np.abs(d).sum(axis=-1) / n
        constant = np.where(shared, d, np.inf).min(axis=-1) == np.where(shared, d, -np.inf).max(axis=-1)
        ss = (np.where(shared, d - mean[:, None], 0.0) ** 2).sum(axis=-1)
        abs_ss = (np.where(shared, np.abs(d) - abs_mean[:, None], 0.0) ** 2).sum(axis=-1)
        sd = np.where(constant, 0.0, np.sqrt(ss / (n - 1)))
        abs_sd = np.where(constant, 0.0, np.sqrt(abs_ss / (n - 1)))
    return {
        "n": n,
        "mean": mean,
        "sd": sd,
        "abs_mean": abs_mean,
        "abs_sd": abs_sd,
        "constant": constant,
        "up": (d > 0).sum(axis=-1),
        "down": (d < 0).sum(axis=-1),
    }


def _tests(m: dict[str, np.ndarray], binary: np.ndarray, alpha: float) -> dict[str, np.ndarray]:
    """Return test name, p-value and CI per pair, following compare()'s rules."""
    n, mean, sd, up, down = m["n"], m["mean"], m["sd"], m["up"], m["down"]
    with np.errstate(invalid="ignore", divide="ignore"):
        se = sd / np.sqrt(n)
        p_t = 2 * stats.t.sf(np.abs(mean / se), n - 1)
    exact = paired.mcnemar_exact_p(up, down)
    zero, constant = (up + down) == 0, m["constant"]
    test = np.select([binary, zero, constant], ["mcnemar_exact", "all_zero", "sign_test"], "paired_t")
    p = np.select([binary, zero, constant], [exact, 1.0, exact], p_t)
    lo, hi = paired.difference_interval(n, mean, sd, up, down, p, binary, alpha)
    return {"test": test, "p_value": p, "diff_ci_low": lo, "diff_ci_high": hi, "diff_se": se}


def row_tests(d: np.ndarray, shared: np.ndarray, binary: np.ndarray, alpha: float = 0.05) -> dict[str, np.ndarray]:
    """Return test, p-value, CI and SE of each row of differences ``d`` (rows × questions), as the pairwise table.

    The calibration bench calls it on simulated boards, so it checks the intervals the site shows.
    """
    return _tests(_moments(d, shared), binary, alpha)


def pairs(a: np.ndarray, b: np.ndarray, values: np.ndarray, simple: np.ndarray, alpha: float = 0.05) -> pd.DataFrame:
    """Return the comparisons of runs ``a[k]`` and ``b[k]`` (column numbers of :func:`wide`), points as pairwise.csv.

    Columns: :data:`PAIR_COLUMNS`; one row per pair.
    """
    columns, flags = values.T, simple.T  # one contiguous row of questions per run
    blocks = [
        _block(
            columns[a[k : k + BLOCK]],
            columns[b[k : k + BLOCK]],
            flags[a[k : k + BLOCK]],
            flags[b[k : k + BLOCK]],
            alpha,
        )
        for k in range(0, len(a), BLOCK)
    ]
    return pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame(columns=list(PAIR_COLUMNS))


def _block(x: np.ndarray, y: np.ndarray, simple_x: np.ndarray, simple_y: np.ndarray, alpha: float) -> pd.DataFrame:
    """Compare each row of ``x`` with the same row of ``y`` (pairs × questions)."""
    shared = ~np.isnan(x) & ~np.isnan(y)
    d = np.where(shared, np.round(np.nan_to_num(x - y), DECIMALS), 0.0)
    m = _moments(d, shared)
    binary = np.all(~shared | (simple_x.astype(bool) & simple_y.astype(bool)), axis=-1)
    t = _tests(m, binary, alpha)
    concordant = binary & ((m["up"] + m["down"]) == 0)
    notes = [
        join_notes(
            constant_note(name) if k and (name in ("all_zero", "sign_test") or flag) else "",
            widened_note(name, p, lo, hi, alpha),
        )
        for name, k, flag, p, lo, hi in zip(
            t["test"], m["n"], concordant, t["p_value"], t["diff_ci_low"], t["diff_ci_high"]
        )
    ]
    with np.errstate(invalid="ignore", divide="ignore"):
        dz = np.where((m["n"] > 2) & ~m["constant"], m["mean"] / m["sd"], np.nan)
    mde, status = _mde(m, binary, alpha)
    return pd.DataFrame(
        {
            "n_questions": m["n"],
            "diff_mean": POINTS * m["mean"],
            "diff_se": POINTS * t["diff_se"],
            "diff_ci_low": POINTS * t["diff_ci_low"],
            "diff_ci_high": POINTS * t["diff_ci_high"],
            "test": t["test"],
            "p_value": t["p_value"],
            "effect_dz": dz,
            "mde_points": mde,
            "mde_status": status,
            "note": notes,
        }
    )


def _mde(m: dict[str, np.ndarray], binary: np.ndarray, alpha: float) -> tuple[np.ndarray, list]:
    """Return each pair's MDE in points and its status (:func:`dualboard.stats.power.paired_mde`)."""
    found = [
        power.paired_mde(
            int(m["n"][j]),
            binary_k1=bool(binary[j]),
            alpha=alpha,
            discordant=int(m["up"][j] + m["down"][j]),
            sd_d=float(m["sd"][j]),
            abs_mean=float(m["abs_mean"][j]),
            abs_sd=float(m["abs_sd"][j]),
        )
        for j in range(len(binary))
    ]
    return POINTS * np.array([f[0] for f in found], dtype=float), [f[1] for f in found]
