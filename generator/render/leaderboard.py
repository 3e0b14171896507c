"""The leaderboard page of one benchmark: the ranked table and its four charts."""

from __future__ import annotations

import pandas as pd

from generator.render import charts
from generator.render.escape import escape_text
from generator.render.html import Cell, Row, chart, rank_switch, table
from generator.render.numbers import (
    GRADING_NAMES,
    format_agreement,
    format_interval,
    format_mde,
    format_p,
    format_percent,
    format_rank,
    is_true,
    mde_sort_key,
    sort_key,
    unranked_reason,
    with_coverage,
)
from generator.render.pages import BenchmarkResults, Page, front_matter, run_slug
from generator.stats.scores import MIN_COVERAGE

HEADERS = ["Rank (interval)", "Model", "Traditional [95% CI]", "Answer-key [95% CI]", "Answer-key − traditional [95% CI]",
           "p (Holm)", "Effect dz [95% CI]", "MDE (points)", "Questions", "Answers"]
RANKED_BY = {"answer_key": "Ranked by answer-key grading", "traditional": "Ranked by traditional grading"}
FIXES = {"answer_key": "configure the `llm` grader against an OpenAI-compatible endpoint, or add human labels",
         "traditional": "check the benchmark's traditional grader, or the recorded scores it imports"}
"""What makes a grading judge more answers, said where it judged too few."""

CAPTIONS = {
    "scores": ("Dumbbell chart. Each row is a run: the blue dot is its traditional score, the orange dot its "
               "answer-key score, both with 95 % confidence intervals clustered by question; the grey bar joins them. "
               "A long bar means strict grading against the answer key changes the score a lot; overlapping "
               "intervals between two runs mean the data cannot order them."),
    "differences": ("Forest plot of answer-key − traditional per run, with 95 % confidence intervals. Left of the dashed "
                    "line the run loses points under strict grading. Orange squares are significant after Holm "
                    "adjustment across runs; an interval crossing zero is compatible with no difference."),
    "categories": ("Per-category heatmap: each run's mean score in each question category under both gradings "
                   "(rounds averaged within a question). Read across a row for a run's profile; compare the two "
                   "panels to see which categories strict grading hits hardest. Few questions per category make "
                   "these cells noisy."),
    "pairwise": ("Pairwise significance matrix under {grading}: colour is the row run's score minus the column run's, "
                 "over shared questions (blue: the row run scores higher, red: the column run does); ● marks pairs whose difference is "
                 "significant after Holm adjustment over all pairs. Pairs without ● cannot be ordered by this benchmark."),
}


def leaderboard_page(result: BenchmarkResults) -> tuple[Page, dict[str, str]]:
    """Return the leaderboard page and its chart JSON files (docs-relative paths)."""
    b = result.benchmark
    models = result.models
    tables = {g: (label, _ranked_table(models, g, b.version)) for g, label in RANKED_BY.items()}
    order = list(models.sort_values(["answer_key_mean", "run_id"], ascending=[False, True])["run_id"])
    text = (
        front_matter(f"Leaderboard: {b.name}", hide=("navigation", "toc"))
        + f"# {escape_text(b.title)}\n\n"
        + f"<p>{escape_text(b.description)}</p>\n\n"
        + coverage_banner(models)
        + f"Benchmark version {escape_text(b.version)}, {len(b.questions)} questions, {len(models)} runs. "
        "Scores are on 0–100. *Difference* = answer-key − traditional (negative: the run loses points when "
        "graded strictly against the answer key). Intervals are 95 % and clustered by question. The rank "
        "interval is simultaneous: every rank inside it is compatible with the data; **tied 1st** marks runs "
        "the data cannot separate from the leader. MDE is the smallest difference this benchmark detects with "
        "80 % power; *nothing detectable* means the two gradings disagree on too few questions for any difference "
        "to be detected (with 30 questions and one round: on 10 % of them or fewer). When every question difference is equal, the "
        "interval is not zero-width: it allows for the share of questions that could differ unseen (9.5 % at 30 "
        "questions), and the cell says on how many answers the two gradings agree. "
        + coverage_sentence(models)
        + older_versions_sentence(models, b.version)
        + "Click a column header to sort. See the [questions](questions/index.md) and how the [graders](graders.md) agree with humans.\n\n"
        + rank_switch(tables)
        + "\n## Traditional → answer-key\n\n" + chart("charts/scores.json", CAPTIONS["scores"])
        + "\n## Differences\n\n" + chart("charts/differences.json", CAPTIONS["differences"])
        + "\n## Categories\n\n" + chart("charts/categories.json", CAPTIONS["categories"])
        + "\n## Which runs differ\n\n"
        + chart("charts/pairwise-answer_key.json", CAPTIONS["pairwise"].format(grading="answer-key grading"))
        + chart("charts/pairwise-traditional.json", CAPTIONS["pairwise"].format(grading="traditional grading"))
    )
    folder = f"benchmarks/{b.name}"
    assets = {
        f"{folder}/charts/scores.json": charts.figure_json(charts.dumbbell_figure(models)),
        f"{folder}/charts/differences.json": charts.figure_json(charts.forest_figure(models)),
        f"{folder}/charts/categories.json": charts.figure_json(
            charts.category_heatmap(charts.category_scores(result.scored), order)),
    }
    for grading in charts.GRADINGS:
        assets[f"{folder}/charts/pairwise-{grading}.json"] = charts.figure_json(
            charts.pairwise_matrix(result.stats.pairwise, grading, order))
    return Page(f"{folder}/index.md", text), assets


def coverage_banner(models: pd.DataFrame) -> str:
    """Warn at the top of the leaderboard when a grading ranks fewer than half of the runs, with the fix."""
    out = ""
    for g, fix in FIXES.items():
        unranked = int((~models[f"ranked_{g}"].map(is_true)).sum())
        if len(models) and unranked > len(models) / 2:
            out += (f'!!! warning "{GRADING_NAMES[g].capitalize()} grading ranks few runs"\n'
                    f"    {unranked} of {len(models)} runs have {GRADING_NAMES[g]} verdicts on under "
                    f"{format_percent(MIN_COVERAGE, 0)} of their answers: the grader could not judge the rest, "
                    f"so those runs are not ranked under {GRADING_NAMES[g]} grading (greyed below). "
                    f"To fix: {fix}.\n\n")
    return out


def coverage_sentence(models: pd.DataFrame) -> str:
    """Say what share of all answers each grading judged, and what happens to the rest."""
    answers = int(models["n_answers"].sum())
    judged = {g: (models[f"{g}_coverage"] * models["n_answers"]).sum() for g in GRADING_NAMES}
    shares = ", ".join(f"{GRADING_NAMES[g]} {format_percent(n / answers)}" for g, n in judged.items()) if answers else "none"
    return (f"Answers with a verdict: {shares} of {answers}. An answer a grader could not judge is left out of "
            f"that grading's numbers (a model's failure to answer still scores 0); a run whose grader judged "
            f"under {format_percent(MIN_COVERAGE, 0)} of its answers is not ranked under that grading and is "
            "greyed, as its mean covers only the answers the grader could judge. ")


def older_versions_sentence(models: pd.DataFrame, current: str) -> str:
    """Say how runs of an earlier benchmark version are marked, and that questions they never saw are left out."""
    older = models[_older(models["benchmark_version"], current)]
    if older.empty:
        return ""
    return (f"{len(older)} run(s) answered an earlier benchmark version (marked *answered vN*): they are graded "
            "against the current answer keys, and the questions added since count as never run — left out of their "
            "scores and paired comparisons, not counted wrong (*Questions* says how many). ")


def _older(versions: pd.Series, current: str) -> pd.Series:
    """Which runs answered a version other than ``current`` (an empty version: not known, not marked)."""
    text = versions.fillna("").astype(str)
    return (text != "") & (text != current)


def _ranked_table(models: pd.DataFrame, grading: str, current: str) -> str:
    ordered = models.sort_values([f"rank_{grading}", f"{grading}_mean", "run_id"], ascending=[True, False, True])
    older = dict(zip(models["run_id"], _older(models["benchmark_version"], current), strict=True))
    return table(HEADERS, [_row(row, grading, older[row.run_id]) for row in ordered.itertuples(index=False)])


def _questions(row) -> Cell:
    """Questions answered, and those never run (added after the version the run answered)."""
    never = int(row.n_never_run)
    return Cell(f"{int(row.n_questions)}" + (f" ({never} never run)" if never else ""), sort=int(row.n_questions))


def _row(row, grading: str, older: bool = False) -> Row:
    ranked = is_true(getattr(row, f"ranked_{grading}"))
    return Row([
        _rank_cell(row, grading) if ranked else Cell(  # sorts after every rank
            unranked_reason(grading, getattr(row, f"{grading}_coverage")), sort=1e12),
        Cell(str(row.model), href=f"runs/{run_slug(row.run_id)}/",
             badge=f"answered v{row.benchmark_version}" if older else None),
        _interval(row, "traditional"),
        _interval(row, "answer_key"),
        _difference(row),
        Cell(format_p(row.p_holm), sort=sort_key(row.p_holm)),
        Cell(format_interval(row.effect_dz, row.effect_dz_ci_low, row.effect_dz_ci_high, 2), sort=sort_key(row.effect_dz)),
        Cell(format_mde(row.mde_points, row.mde_status), sort=mde_sort_key(row.mde_points, row.mde_status)),
        _questions(row),
        Cell(str(row.n_answers), sort=int(row.n_answers)),
    ], css_class=None if ranked else "dualboard-unranked")


def _rank_cell(row, grading: str) -> Cell:
    rank = getattr(row, f"rank_{grading}")
    low, high = getattr(row, f"rank_ci_low_{grading}"), getattr(row, f"rank_ci_high_{grading}")
    tied = getattr(row, f"tied_first_{grading}")
    return Cell(format_rank(rank, low, high), sort=sort_key(rank), badge="tied 1st" if is_true(tied) else None)


def _interval(row, grading: str) -> Cell:
    mean = getattr(row, f"{grading}_mean")
    text = format_interval(mean, getattr(row, f"{grading}_ci_low"), getattr(row, f"{grading}_ci_high"))
    return Cell(with_coverage(text, getattr(row, f"{grading}_coverage")), sort=sort_key(mean))


def _difference(row) -> Cell:
    """The difference with its interval, and on how many answers the gradings agree (not a bare 0.0)."""
    text = format_interval(row.diff_mean, row.diff_ci_low, row.diff_ci_high)
    agree = format_agreement(row.n_answers_agree, row.n_answers_paired, row.n_answers)
    return Cell(f"{text}; {agree}", sort=sort_key(row.diff_mean))
