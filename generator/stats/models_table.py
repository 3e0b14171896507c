"""The per-run table (``models.csv``): each grading's mean and CI, and their paired difference."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dualboard.stats import estimators
from dualboard.stats import pingouin_adapter as pga
from dualboard.stats.comparison import compare, join_notes
from dualboard.stats.pieces import Pieces, by_run, run_digests
from dualboard.stats.scores import GRADINGS, MIN_COVERAGE, POINTS, coverage_percent, is_ranked
from dualboard.stats.tables import documents

RUN_ROW_COLUMNS = ("grading", "question_id", "n_rounds", "mean", "var_within", "binary")
"""What :func:`run_row` reads of a run's question means: a models row is kept under a hash of these
(:mod:`~dualboard.stats.pieces`); the run id is not read, so two runs of the same means share one."""


def grading_summary(qm: pd.DataFrame, alpha: float = 0.05) -> dict[str, object]:
    """Return mean, SE, CI, CI method and variance components of one run × grading (0–100).

    ``qm`` holds that run's rows of :func:`dualboard.stats.scores.question_means`.
    Binary-origin scores get the Wilson interval with effective n; partial
    credit gets mean ± t·SE, or Wilson with n_eff = n when every question mean
    is equal (SE = 0: never a zero-width interval). Variance components are
    those of :func:`variance_components`. With no question judged, every
    number is NaN and the method is ``no_verdict``.

    Examples
    --------
    >>> qm = pd.DataFrame({"mean": [1.0] * 30, "binary": True, "n_rounds": 1, "var_within": np.nan})
    >>> r = grading_summary(qm)
    >>> r["mean"], round(r["ci_low"], 1), r["ci_high"], r["ci_method"]
    (100.0, 87.8, 100.0, 'wilson_neff')
    >>> r = grading_summary(qm.assign(mean=0.6, binary=False))
    >>> round(r["ci_low"], 1), round(r["ci_high"], 1), r["ci_method"]
    (41.6, 76.0, 'wilson_n')
    """
    if qm.empty:  # the grader judged none of the run's answers
        nothing = dict.fromkeys(("mean", "se", "ci_low", "ci_high"), float("nan"))
        return {**nothing, "ci_method": "no_verdict", **variance_components(qm)}
    y = qm["mean"].to_numpy(dtype=float)
    mu, se, df = (float(v) for v in estimators.cluster_mean_se(y))
    binary = bool(qm["binary"].all())
    method = "wilson_neff" if binary else ("wilson_n" if se == 0 else "t")
    if method == "t":
        lo, hi = estimators.t_interval(mu, se, df, alpha)
    else:
        lo, hi = estimators.wilson_neff_interval(mu, se, len(y), df, alpha)
    return {
        "mean": POINTS * mu,
        "se": POINTS * se,
        "ci_low": POINTS * float(lo),
        "ci_high": POINTS * float(hi),
        "ci_method": method,
        **variance_components(qm),
    }


def variance_components(qm: pd.DataFrame) -> dict[str, object]:
    """Return Var(x) between questions (clipped at 0, with the raw estimate) and σ̄² within, points².

    ``var_between`` estimates Var(x) as Var(question means) - mean(σ²_i/K_i)
    (Miller App. C). Sampling noise can make that negative, which no variance
    is: it is clipped at 0, ``var_between_clipped`` says so and
    ``var_between_raw`` keeps the estimate. ``var_within`` is the mean
    within-question variance σ̄² (NaN with one round per question).

    Examples
    --------
    >>> qm = pd.DataFrame({"mean": [0.5] * 4, "n_rounds": 2, "var_within": [0.5, 0.5, 0.0, 0.0]})
    >>> r = variance_components(qm)
    >>> r["var_between"], r["var_between_clipped"], r["var_between_raw"]
    (0.0, True, -1250.0)
    """
    y = qm["mean"].to_numpy(dtype=float)
    within = qm["var_within"].to_numpy(dtype=float)
    has_rounds = bool(np.isfinite(within).any())
    share = np.nanmean(within / qm["n_rounds"].to_numpy()) if has_rounds else 0.0
    raw = POINTS**2 * float(np.var(y, ddof=1) - share) if len(y) > 1 else float("nan")
    return {
        "var_between": max(raw, 0.0) if np.isfinite(raw) else raw,
        "var_between_clipped": bool(raw < 0),
        "var_between_raw": raw,
        "var_within": POINTS**2 * float(np.nanmean(within)) if has_rounds else float("nan"),
    }


def naive_table(scored: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Return per run the naive interval of each grading (every answer independent), 0–100.

    Columns: ``run_id``, ``{g}_naive_mean``, ``{g}_naive_ci_low``, ``{g}_naive_ci_high``
    for g in traditional, answer_key, over the answers with a verdict (NaN when none).
    A ``rejudged`` run counts each distinct answer once (:func:`naive_answers`).
    """
    rows = []
    for run_id, run in scored.groupby("run_id", sort=True):
        row: dict[str, object] = {"run_id": run_id}
        rejudged = "rejudged" in run and bool(run["rejudged"].iloc[0])
        for g in GRADINGS:
            values = naive_answers(run, g, rejudged)
            mu, lo, hi = estimators.naive_interval(values / POINTS, alpha) if len(values) else (float("nan"),) * 3
            row.update(
                {f"{g}_naive_mean": POINTS * mu, f"{g}_naive_ci_low": POINTS * lo, f"{g}_naive_ci_high": POINTS * hi}
            )
        rows.append(row)
    return pd.DataFrame(rows)


def naive_answers(run: pd.DataFrame, grading: str, rejudged: bool) -> np.ndarray:
    """Return the scores the naive interval treats as independent answers: one per answer with a verdict,
    or, for a run whose rounds re-judge one response per question, the mean of each answer's judgements.

    Examples
    --------
    >>> run = pd.DataFrame({"question_id": ["a", "a", "b", "b"], "traditional": [100, 60, 0, None]})
    >>> naive_answers(run, "traditional", False).tolist(), naive_answers(run, "traditional", True).tolist()
    ([100.0, 60.0, 0.0], [80.0, 0.0])
    """
    scores = pd.to_numeric(run[grading], errors="coerce")
    if rejudged:
        scores = scores.groupby(run["question_id"], sort=True).mean()
    return scores.dropna().to_numpy(dtype=float)


def single_round_binary(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Say whether both sides have exactly one round per question and 0/1 scores."""
    return bool((a["n_rounds"] == 1).all() and (b["n_rounds"] == 1).all() and a["binary"].all() and b["binary"].all())


def run_row(run_qm: pd.DataFrame, run_paired: pd.DataFrame, alpha: float = 0.05) -> dict[str, object]:
    """Return one run's grading summaries and its answer-key vs traditional comparison.

    ``run_qm`` holds the run's question means over every answer each grading
    judged; ``run_paired`` those over the answers both gradings judged
    (:func:`dualboard.stats.scores.judged_by_both`), which the comparison uses.
    """
    row: dict[str, object] = {}
    for g in GRADINGS:
        summary = grading_summary(run_qm[run_qm["grading"] == g], alpha)
        row.update({f"{g}_{k}": v for k, v in summary.items() if k != "ci_method"})
        row[f"ci_method_{g}"] = summary["ci_method"]
    rec = grading_difference(run_paired, alpha)
    row.update(rec)
    row["note"] = join_notes(rec["note"], *(_clipped_note(g, row) for g in GRADINGS))
    return row


def grading_difference(run_paired: pd.DataFrame, alpha: float = 0.05) -> dict[str, object]:
    """Compare answer key with traditional over the questions both judged (points; n in n_questions_paired)."""
    by_g = {g: run_paired[run_paired["grading"] == g].set_index("question_id") for g in GRADINGS}
    key, trad = by_g["answer_key"], by_g["traditional"].reindex(by_g["answer_key"].index)
    rec = compare(
        key["mean"].to_numpy(), trad["mean"].to_numpy(), single_round_binary=single_round_binary(key, trad), alpha=alpha
    )
    for k in ("diff_mean", "diff_se", "diff_ci_low", "diff_ci_high"):
        rec[k] = POINTS * float(rec[k])
    rec["mde_points"] = POINTS * float(rec.pop("mde"))
    rec["n_questions_paired"] = rec.pop("n_questions")
    return rec


def _clipped_note(grading: str, row: dict[str, object]) -> str:
    """Say that a grading's Var(x) estimate was negative and is shown as 0."""
    if not row[f"{grading}_var_between_clipped"]:
        return ""
    return (
        f"{grading} Var(x) estimate {row[f'{grading}_var_between_raw']:.1f} points² "
        "clipped at 0 (question means vary less than round-to-round noise predicts)"
    )


def _coverage_notes(row: dict[str, object]) -> list[str]:
    """Say which gradings left answers unjudged, and which of them do not rank the run (awaiting labels first)."""
    missing = int(row["n_awaiting_labels"])
    notes = [awaiting_note(missing, int(row["n_answers"]))] if missing else []
    for g in GRADINGS:
        share = float(row[f"{g}_coverage"])
        if share < 1 and not (missing and g == "answer_key"):
            ranked = bool(is_ranked(share))
            notes.append(
                f"{g} verdicts on {coverage_percent(share)}% of answers (the rest left out)"
                + ("" if ranked else f"; not ranked under {g} grading (coverage under {100 * MIN_COVERAGE:.0f}%)")
            )
    return notes


def awaiting_note(missing: int, answers: int) -> str:
    """Say that a run awaits human labels, and how many.

    Examples
    --------
    >>> awaiting_note(3, 48)
    'awaiting labels: 3 of 48 answers have no human label yet; not ranked under answer-key grading'
    """
    return (
        f"awaiting labels: {missing} of {answers} answers have no human label yet; not ranked under answer-key grading"
    )


def rejudged_note(row: dict[str, object]) -> str:
    """Say that a run's rounds re-judge one answer per question, and what its numbers then count.

    Examples
    --------
    >>> note = rejudged_note({"rejudged": True, "n_distinct_answers": 30, "n_answers": 300})
    >>> note.split(":")[0]
    '30 distinct answers, each judged 10 times'
    """
    if not row["rejudged"]:
        return ""
    n = int(row["n_distinct_answers"])
    return (
        f"{distinct_answers_phrase(n, int(row['n_answers']))}: its rounds are judge re-runs, not model samples "
        f"(the naive interval counts {n} answers; var_within is judge variation)"
    )


def distinct_answers_phrase(n_distinct: int, n_answers: int) -> str:
    """Say how many distinct answers a rejudged run gave and how often each was judged.

    Examples
    --------
    >>> distinct_answers_phrase(30, 300), distinct_answers_phrase(29, 295)
    ('30 distinct answers, each judged 10 times', '29 distinct answers, each judged 10.2 times on average')
    """
    times = n_answers / n_distinct if n_distinct else 0.0
    if times.is_integer():
        return f"{n_distinct} distinct answers, each judged {times:.0f} times"
    return f"{n_distinct} distinct answers, each judged {times:.1f} times on average"


def _never_run_note(row: dict[str, object]) -> str:
    """Say how many questions the run was never asked (added after the version it answered)."""
    n = int(row["n_never_run"])
    version = f" (it answered version {row['benchmark_version']})" if row["benchmark_version"] else ""
    return (
        f"{n} question(s) never run{version}: left out of its scores and paired comparisons, not counted wrong"
        if n
        else ""
    )


def _apart_notes(row: dict[str, object]) -> list[str]:
    """Say how many answers the run left out (each scored wrong) and why it is listed apart, if it is."""
    n = int(row["n_unanswered"])
    return [
        f"{n} answer(s) not given: scored wrong (0) under both gradings" if n else "",
        f"not ranked, listed apart: {row['apart_reason']}" if row["apart_reason"] else "",
    ]


@documents("models")
def models_table(
    qmeans: pd.DataFrame,
    paired: pd.DataFrame,
    counts: pd.DataFrame,
    naive: pd.DataFrame,
    alpha: float = 0.05,
    pieces: Pieces | None = None,
) -> pd.DataFrame:
    """Return one row per run: both gradings' means and CIs, their difference and test.

    ``qmeans`` and ``paired`` are :func:`dualboard.stats.scores.question_means`
    of every answer and of the answers both gradings judged; ``counts`` is
    :func:`dualboard.stats.scores.run_counts`. Ranks are added by
    :func:`dualboard.stats.ranks.add_ranks`. Every column is described in
    ``COLUMNS["models"]`` (``generator/stats/columns.yaml``). ``p_holm`` is
    Holm-adjusted across runs. With ``pieces``, a run whose question means are
    unchanged reuses its :func:`run_row` (:mod:`dualboard.stats.pieces`).
    """
    pieces = pieces or Pieces(None)
    empty = qmeans.iloc[0:0]  # a run no grader judged at all has no question means
    # When every answer has both verdicts, ``paired`` is ``qmeans`` (analyse passes the same frame):
    # its runs are then split, and their rows hashed, once.
    same = paired is qmeans
    judged_rows, judged = by_run(qmeans)
    both_rows, both = (judged_rows, judged) if same else by_run(paired)
    runs = list(counts["run_id"])
    qm_digests = run_digests(judged_rows, judged, runs, RUN_ROW_COLUMNS)
    paired_digests = qm_digests if same else run_digests(both_rows, both, runs, RUN_ROW_COLUMNS)
    rows = []
    for r, qm_digest, paired_digest in zip(runs, qm_digests, paired_digests):
        run_qm = judged_rows.iloc[judged[r]] if r in judged else empty
        run_paired = both_rows.iloc[both[r]] if r in both else empty
        key = Pieces.key_of("models", (alpha,), qm_digest, paired_digest)
        rows.append({"run_id": r, **pieces.get(key, lambda q=run_qm, p=run_paired: _run_row_of_key(q, p, alpha))})
    table = counts.merge(pd.DataFrame(rows), on="run_id").merge(naive, on="run_id")
    table["note"] = [
        join_notes(*_apart_notes(r), *_coverage_notes(r), _never_run_note(r), rejudged_note(r), r["note"])
        for r in table.to_dict("records")
    ]
    p = table["p_value"].to_numpy(dtype=float)
    ok = np.isfinite(p)
    adjusted = np.full(len(p), np.nan)
    adjusted[ok] = pga.holm(p[ok], alpha)[1]
    table["p_holm"] = adjusted
    return table


def _run_row_of_key(qmeans: pd.DataFrame, paired: pd.DataFrame, alpha: float) -> dict:
    """:func:`run_row` given only the columns its piece's key covers: a read of any other fails here instead of
    going stale in the cache (sliced only when the piece is computed, never for a kept one)."""
    return run_row(qmeans[list(RUN_ROW_COLUMNS)], paired[list(RUN_ROW_COLUMNS)], alpha)
