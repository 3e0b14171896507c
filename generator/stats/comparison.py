"""Choose and run the right paired test for one pair of question-mean vectors.

See :mod:`dualboard.stats.paired` for the rules; this module applies them to
one comparison and returns a flat record with fixed keys, so the models table
(answer key vs traditional) and the pairwise table (run vs run) share it.
"""

from __future__ import annotations

import numpy as np

from dualboard.stats import paired, power
from dualboard.stats import pingouin_adapter as pga

# Question means are ratios of small integers; rounding their differences to 12
# decimals removes float noise (0.6 vs 0.6000000000000001) that would otherwise
# turn ties and zeros into tiny non-zero differences in sign and rank tests.
DECIMALS = 12

RECORD_KEYS = (
    "n_questions",
    "diff_mean",
    "diff_se",
    "diff_ci_low",
    "diff_ci_high",
    "test",
    "p_value",
    "effect_dz",
    "effect_dz_hedges",
    "effect_dz_ci_low",
    "effect_dz_ci_high",
    "n_discordant_up",
    "n_discordant_down",
    "corr_question",
    "wilcoxon_w",
    "wilcoxon_p",
    "mde",
    "mde_status",
    "note",
)


def constant_note(test: str) -> str:
    """Return the note of a comparison whose question differences are all equal (or concordant).

    ``test`` is ``mcnemar_exact`` (all pairs concordant), ``all_zero`` or ``sign_test``.

    Examples
    --------
    >>> constant_note("all_zero")
    'every question difference is 0: p=1'
    """
    return {
        "mcnemar_exact": "all pairs concordant: d=0, p=1",
        "all_zero": "every question difference is 0: p=1",
        "sign_test": "every question difference is equal: sign test",
    }[test]


def too_few_note(n: int) -> str:
    """Return the note of a comparison over fewer than TOO_FEW_QUESTIONS questions (no interval is shown).

    Examples
    --------
    >>> too_few_note(2)
    'too few judged questions (n=2 < 10): exact test only'
    """
    return f"too few judged questions (n={n} < {paired.TOO_FEW_QUESTIONS}): exact test only"


def compare(
    x: np.ndarray, y: np.ndarray, *, single_round_binary: bool, alpha: float = 0.05, detail: bool = True
) -> dict[str, object]:
    """Compare aligned question means ``x`` and ``y`` (difference x - y, scale [0, 1]).

    Returns a dict with the keys of ``RECORD_KEYS``: the mean difference and its
    SE (sd(d)/sqrt(n), Miller Eq. 7) and CI, the test actually run (``mcnemar_exact``,
    ``paired_t``, ``permutation_exact``, ``sign_test``, ``all_zero`` or
    ``no_shared_questions``), its p-value, d_z = mean(d)/sd(d) with Hedges' J
    and its noncentral-t CI, the number of questions where x is above/below y,
    corr(x, y) across questions, the Wilcoxon robustness check, the minimum
    detectable effect ``mde`` (scale [0, 1]) with its ``mde_status``
    (:func:`dualboard.stats.power.paired_mde`) and a note.
    ``detail=False`` skips the d_z interval and the Wilcoxon check (left NaN),
    which the run-vs-run table does not show and which dominate its cost.

    Examples
    --------
    >>> r = compare(np.array([1, 1, 0, 0.]), np.array([1, 1, 0, 0.]), single_round_binary=True)
    >>> r["test"], r["p_value"], r["diff_mean"]
    ('mcnemar_exact', 1.0, 0.0)
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    d = np.round(x - y, DECIMALS)
    rec: dict[str, object] = dict.fromkeys(RECORD_KEYS, float("nan"))
    rec.update(n_questions=len(d), note="", n_discordant_up=int(np.sum(d > 0)), n_discordant_down=int(np.sum(d < 0)))
    if len(d) == 0:
        rec.update(
            test="no_shared_questions", note="no shared questions: nothing to compare", mde_status="not_estimable"
        )
        return rec
    rec.update(_describe(x, y, d, detail))
    rec["mde"], rec["mde_status"] = power.paired_mde(
        len(d),
        binary_k1=single_round_binary,
        alpha=alpha,
        discordant=rec["n_discordant_up"] + rec["n_discordant_down"],
        sd_d=float(rec["diff_se"]) * np.sqrt(len(d)),
        abs_mean=float(np.abs(d).mean()),
        abs_sd=float(np.abs(d).std(ddof=1)) if len(d) > 1 else float("nan"),
    )
    if single_round_binary:
        rec.update(_mcnemar(rec["n_discordant_up"], rec["n_discordant_down"]))
    else:
        rec.update(_continuous(d, detail))
    if len(d) < paired.TOO_FEW_QUESTIONS:
        rec.update(note=join_notes(rec["note"], too_few_note(len(d))))
    else:
        rec["diff_ci_low"], rec["diff_ci_high"] = (
            float(v)
            for v in paired.difference_interval(
                len(d),
                rec["diff_mean"],
                float(rec["diff_se"]) * np.sqrt(len(d)),
                rec["n_discordant_up"],
                rec["n_discordant_down"],
                rec["p_value"],
                single_round_binary,
                alpha,
            )
        )
        rec["note"] = join_notes(
            rec["note"], widened_note(rec["test"], rec["p_value"], rec["diff_ci_low"], rec["diff_ci_high"], alpha)
        )
    return rec


def _describe(x: np.ndarray, y: np.ndarray, d: np.ndarray, detail: bool) -> dict[str, float]:
    """Return mean, SE, d_z (raw, Hedges, CI) and the question-level correlation."""
    n = len(d)
    sd = float(d.std(ddof=1)) if n > 1 else float("nan")
    constant = bool(np.all(d == d[0]))
    if constant:
        sd = 0.0  # numpy may return ~1e-17 from rounding in the mean
    out = {"diff_mean": float(d.mean()), "diff_se": sd / np.sqrt(n)}
    if n > 2 and not constant:
        dz = float(d.mean()) / sd
        out.update(effect_dz=dz, effect_dz_hedges=dz * paired.hedges_j(n))
        if detail:
            out["effect_dz_ci_low"], out["effect_dz_ci_high"] = paired.dz_interval(dz * np.sqrt(n), n)
    if n > 2 and x.std() > 0 and y.std() > 0:
        out["corr_question"] = float(np.corrcoef(x, y)[0, 1])
    return out


def _mcnemar(up: int, down: int) -> dict[str, object]:
    """Return the exact McNemar test."""
    out = {"test": "mcnemar_exact", "p_value": float(paired.mcnemar_exact_p(up, down))}
    if up + down == 0:
        out["note"] = constant_note("mcnemar_exact")
    return out


def _continuous(d: np.ndarray, detail: bool) -> dict[str, object]:
    """Return the paired t test, or its exact replacements when t is undefined or n < TOO_FEW_QUESTIONS."""
    n = len(d)
    if np.all(d == d[0]):
        test = "all_zero" if d[0] == 0 else "sign_test"
        p = 1.0 if test == "all_zero" else paired.sign_test_p(d)
        return {"test": test, "p_value": p, "note": constant_note(test)}
    out = {"test": "paired_t", "p_value": float(paired.paired_t(d)["p_value"])}
    if detail:
        w = pga.wilcoxon(d)
        out.update(wilcoxon_w=w["w"], wilcoxon_p=w["p_value"])
    if n < paired.TOO_FEW_QUESTIONS:
        out.update(test="permutation_exact", p_value=paired.sign_flip_p(d))
    return out


def widened_note(test: str, p_value: float, low: float, high: float, alpha: float = 0.05) -> str:
    """Say when Tango's interval was widened to reach 0 because exact McNemar does not reject (conservative)."""
    if test == "mcnemar_exact" and p_value >= alpha and 0.0 in (low, high):
        return "interval widened to reach 0: the exact test does not reject"
    return ""


def join_notes(*notes: object) -> str:
    """Join the non-empty notes with '; '."""
    return "; ".join(str(n) for n in notes if n)
