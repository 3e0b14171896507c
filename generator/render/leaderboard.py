"""The leaderboard page of one benchmark: the ranked table and its four charts."""

from __future__ import annotations

import pandas as pd

from generator.render import charts
from generator.render.escape import escape_text
from generator.render.html import Cell, chart, rank_switch, table
from generator.render.numbers import format_interval, format_mde, format_p, format_rank, is_true, mde_sort_key, sort_key
from generator.render.pages import BenchmarkResults, Page, front_matter, run_slug

HEADERS = ["Rank (interval)", "Model", "Traditional [95% CI]", "Answer-key [95% CI]", "Answer-key − traditional [95% CI]",
           "p (Holm)", "Effect dz [95% CI]", "MDE (points)", "Questions", "Answers"]
RANKED_BY = {"answer_key": "Ranked by answer-key grading", "traditional": "Ranked by traditional grading"}

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
    tables = {g: (label, _ranked_table(models, g)) for g, label in RANKED_BY.items()}
    order = list(models.sort_values(["answer_key_mean", "run_id"], ascending=[False, True])["run_id"])
    text = (
        front_matter(f"Leaderboard: {b.name}", hide=("navigation", "toc"))
        + f"# {escape_text(b.title)}\n\n"
        + f"<p>{escape_text(b.description)}</p>\n\n"
        + f"Benchmark version {escape_text(b.version)}, {len(b.questions)} questions, {len(models)} runs. "
        "Scores are on 0–100. *Difference* = answer-key − traditional (negative: the run loses points when "
        "graded strictly against the answer key). Intervals are 95 % and clustered by question. The rank "
        "interval is simultaneous: every rank inside it is compatible with the data; **tied 1st** marks runs "
        "the data cannot separate from the leader. MDE is the smallest difference this benchmark detects with "
        "80 % power; *nothing detectable* means the two gradings disagree on too few questions for any difference "
        "to be detected (with 30 questions and one round: on 10 % of them or fewer). When every question difference is equal, the "
        "interval is not zero-width: it allows for the share of questions that could differ unseen (9.5 % at 30 "
        "questions). Click a column header to sort. See the [questions](questions/index.md) and how the [graders](graders.md) agree with humans.\n\n"
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


def _ranked_table(models: pd.DataFrame, grading: str) -> str:
    ordered = models.sort_values([f"rank_{grading}", f"{grading}_mean", "run_id"], ascending=[True, False, True])
    return table(HEADERS, [_row(row, grading) for row in ordered.itertuples(index=False)])


def _row(row, grading: str) -> list[Cell]:
    rank = getattr(row, f"rank_{grading}")
    low, high = getattr(row, f"rank_ci_low_{grading}"), getattr(row, f"rank_ci_high_{grading}")
    tied = getattr(row, f"tied_first_{grading}")
    return [
        Cell(format_rank(rank, low, high), sort=sort_key(rank), badge="tied 1st" if is_true(tied) else None),
        Cell(str(row.model), href=f"runs/{run_slug(row.run_id)}/"),
        _interval(row, "traditional"),
        _interval(row, "answer_key"),
        _interval(row, "diff"),
        Cell(format_p(row.p_holm), sort=sort_key(row.p_holm)),
        Cell(format_interval(row.effect_dz, row.effect_dz_ci_low, row.effect_dz_ci_high, 2), sort=sort_key(row.effect_dz)),
        Cell(format_mde(row.mde_points, row.mde_status), sort=mde_sort_key(row.mde_points, row.mde_status)),
        Cell(str(row.n_questions), sort=int(row.n_questions)),
        Cell(str(row.n_answers), sort=int(row.n_answers)),
    ]


def _interval(row, prefix: str) -> Cell:
    mean = getattr(row, f"{prefix}_mean")
    return Cell(format_interval(mean, getattr(row, f"{prefix}_ci_low"), getattr(row, f"{prefix}_ci_high")),
                sort=sort_key(mean))

