"""The flawed EQUATOR contrast, shown once per benchmark so readers see why it misleads.

EQUATOR (arXiv 2501.00257) ran a paired t-test on 13 and 9 *model means*:
models are the sample, question-level noise is thrown away, and d_z measures
how consistently the gradings differ across models, so it is inflated. Beside
it, the defensible pooled effect: stack every (run, question) difference and
cluster the standard error by question (Methodology, §Why not a t-test on model means).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.regression.linear_model import OLS  # not statsmodels.api: a second of imports less

from dualboard.stats import paired
from dualboard.stats.comparison import DECIMALS
from dualboard.stats.scores import GRADINGS, POINTS
from dualboard.stats.tables import COLUMNS, documents


def run_means_ttest(models: pd.DataFrame) -> dict[str, float]:
    """Return the paired t on run means (answer_key - traditional), EQUATOR style."""
    d = (models["answer_key_mean"] - models["traditional_mean"]).to_numpy(dtype=float) / POINTS
    out = {
        "n_runs": len(d),
        "flawed_diff_mean": POINTS * float(d.mean()) if len(d) else np.nan,
        "flawed_t": np.nan,
        "flawed_df": np.nan,
        "flawed_p_value": np.nan,
        "flawed_effect_dz": np.nan,
    }
    if len(d) > 1 and d.std(ddof=1) > 0:
        t = paired.paired_t(d)
        out.update(
            flawed_t=float(t["t"]),
            flawed_df=float(t["df"]),
            flawed_p_value=float(t["p_value"]),
            flawed_effect_dz=float(t["mean"] / t["sd"]),
        )
    return out


def pooled_clustered(qmeans: pd.DataFrame, alpha: float = 0.05) -> dict[str, float]:
    """Return the mean of all (run, question) differences with a question-clustered SE.

    ``qmeans`` holds the question means over the answers both gradings judged
    (:func:`dualboard.stats.scores.judged_by_both`), so every (run, question)
    has both; a pair that lacks one anyway is left out.

    ``sm.OLS(d, 1).fit(cov_type='cluster', groups=question, use_t=True)``: the
    t reference uses G - 1 degrees of freedom, G = number of questions. When
    every difference is equal the interval is that of
    :func:`dualboard.stats.paired.constant_difference_interval` over G questions.
    """
    wide = qmeans.pivot_table(index=["run_id", "question_id"], columns="grading", values="mean")
    wide = wide.reindex(columns=list(GRADINGS)).dropna()
    d = (wide["answer_key"] - wide["traditional"]).to_numpy(dtype=float)
    groups = pd.factorize(wide.index.get_level_values("question_id"))[0]
    out = {
        "pooled_n_questions": int(groups.max() + 1) if len(groups) else 0,
        "pooled_diff_mean": np.nan,
        "pooled_se": np.nan,
        "pooled_ci_low": np.nan,
        "pooled_ci_high": np.nan,
        "pooled_p_value": np.nan,
    }
    if len(d) and np.all(np.round(d - d[0], DECIMALS) == 0):
        lo, hi = paired.constant_difference_interval(d[0], out["pooled_n_questions"], alpha)
        out.update(
            pooled_diff_mean=POINTS * float(d[0]), pooled_ci_low=POINTS * float(lo), pooled_ci_high=POINTS * float(hi)
        )
        return out
    if out["pooled_n_questions"] < 2:
        out["pooled_diff_mean"] = POINTS * float(d.mean()) if len(d) else np.nan
        return out
    fit = OLS(d, np.ones_like(d)).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    lo, hi = fit.conf_int(alpha)[0]
    out.update(
        pooled_diff_mean=POINTS * float(fit.params[0]),
        pooled_se=POINTS * float(fit.bse[0]),
        pooled_ci_low=POINTS * float(lo),
        pooled_ci_high=POINTS * float(hi),
        pooled_p_value=float(fit.pvalues[0]),
    )
    return out


@documents("equator")
def equator_table(models: pd.DataFrame, qmeans: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Return the one-row table contrasting the flawed run-means t with the clustered pooled effect.

    ``qmeans`` are the question means over the answers both gradings judged;
    every difference is answer_key - traditional, in points.
    """
    row = {
        "label": "flawed: paired t on run means (EQUATOR); compare the clustered pooled effect",
        **run_means_ttest(models),
        **pooled_clustered(qmeans, alpha),
    }
    return pd.DataFrame([row], columns=list(COLUMNS["equator"]))
