"""Check the scored table and reduce it to one mean per (run, grading, question).

Missing verdicts: an answer that was attempted but got no verdict (``NaN``
in ``answer_key``, or in ``traditional``) counts as 0, as STATISTICS.md §0
prescribes, and is counted (``n_no_verdict``, ``missing_rate``) so that the
page can show it. A question a run never answered has no rows and is simply
absent from that run: paired analyses use the questions both sides share.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from generator.errors import Finding, InvalidInputError

GRADINGS = ("traditional", "answer_key")
REQUIRED = ("run_id", "model", "question_id", "round", *GRADINGS)


def check_scored(scored: pd.DataFrame) -> None:
    """Raise one InvalidInputError listing every problem of the scored table."""
    findings = [
        Finding("scored", None, col, "column is missing",
                "produce it with `dualboard grade` (DESIGN.md, scored parquet)")
        for col in REQUIRED if col not in scored.columns
    ]
    if not findings:
        findings += _range_findings(scored) + _duplicate_findings(scored)
    if findings:
        raise InvalidInputError(findings)


def _range_findings(scored: pd.DataFrame) -> list[Finding]:
    """List scores outside 0–100."""
    out = []
    for g in GRADINGS:
        values = pd.to_numeric(scored[g], errors="coerce")
        bad = values[(values < 0) | (values > 100)]
        if len(bad):
            out.append(Finding("scored", None, g,
                               f"{len(bad)} score(s) outside 0–100, e.g. {bad.iloc[0]!r}",
                               "scores must be on the 0–100 scale; rescale before analysis"))
    return out


def _duplicate_findings(scored: pd.DataFrame) -> list[Finding]:
    """List repeated (run_id, question_id, round) rows."""
    dup = scored.duplicated(["run_id", "question_id", "round"])
    if not dup.any():
        return []
    first = scored.loc[dup, ["run_id", "question_id", "round"]].iloc[0].tolist()
    return [Finding("scored", None, "run_id/question_id/round",
                    f"{int(dup.sum())} duplicated row(s), e.g. {first}",
                    "keep one row per (run, question, round)")]


def question_means(scored: pd.DataFrame) -> pd.DataFrame:
    """Return one row per (run, grading, question) on the [0, 1] scale.

    Returns
    -------
    pandas.DataFrame
        ``run_id``, ``grading``, ``question_id``, ``n_rounds``, ``mean`` (mean
        of the rounds, missing verdicts as 0), ``var_within`` (variance of the
        rounds, ddof=1; NaN with one round), ``binary`` (every round is 0 or 1).

    Examples
    --------
    >>> scored = pd.DataFrame({"run_id": ["r"] * 3, "model": "m", "question_id": ["a", "a", "b"],
    ...     "round": [0, 1, 0], "traditional": [100, 0, 100.0], "answer_key": [100, None, 0]})
    >>> question_means(scored)[["grading", "question_id", "mean"]].to_dict("records")[:2]
    [{'grading': 'traditional', 'question_id': 'a', 'mean': 0.5}, {'grading': 'traditional', 'question_id': 'b', 'mean': 1.0}]
    """
    long = scored.melt(id_vars=["run_id", "question_id", "round"], value_vars=list(GRADINGS),
                       var_name="grading", value_name="score")
    long["score"] = pd.to_numeric(long["score"], errors="coerce").fillna(0.0) / 100.0
    long["is_binary"] = np.isin(long["score"], (0.0, 1.0))
    grouped = long.groupby(["run_id", "grading", "question_id"], sort=True)
    out = grouped.agg(n_rounds=("score", "size"), mean=("score", "mean"),
                      var_within=("score", "var"), binary=("is_binary", "all"))
    out = out.reset_index()
    order = {g: i for i, g in enumerate(GRADINGS)}
    return out.sort_values(["run_id", "grading", "question_id"],
                           key=lambda s: s.map(order) if s.name == "grading" else s,
                           kind="stable").reset_index(drop=True)


def missing_counts(scored: pd.DataFrame) -> pd.DataFrame:
    """Return per run: model, n_questions, n_answers, n_no_verdict, missing_rate.

    ``n_no_verdict`` counts answers without an answer-key verdict;
    ``missing_rate`` is the share of answers lacking a score in either grading.
    """
    frame = scored.assign(
        _no_key=scored["answer_key"].isna(),
        _any_missing=scored["answer_key"].isna() | scored["traditional"].isna(),
    )
    out = frame.groupby("run_id", sort=True).agg(
        model=("model", "first"), n_questions=("question_id", "nunique"),
        n_answers=("question_id", "size"), n_no_verdict=("_no_key", "sum"),
        missing_rate=("_any_missing", "mean"))
    out["n_no_verdict"] = out["n_no_verdict"].astype(int)
    return out.reset_index()
