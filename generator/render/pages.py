"""Build the generated pages: pure functions from tables to Markdown text.

Each page is a :class:`Page` (path inside the docs folder and its text);
:mod:`generator.render.site` writes them. Trusted text (our own headings and
numbers) is Markdown; everything submitted goes through
:mod:`generator.render.html`, which escapes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from generator.intake.models import Benchmark
from generator.render.escape import escape_text, format_number
from generator.render.html import Cell, chart, table


@dataclass(frozen=True)
class Page:
    """A file of the generated site: docs-relative path and content."""

    path: str
    """Path inside the docs folder, e.g. ``benchmarks/demo/index.md``."""
    content: str
    """Markdown (with raw HTML blocks) or JSON text."""


@dataclass(frozen=True)
class BenchmarkResults:
    """What the render stage knows about one benchmark."""

    benchmark: Benchmark
    """The benchmark definition."""
    models: pd.DataFrame
    """models.csv of the stats stage (one row per run)."""


def home_page(results: list[BenchmarkResults]) -> Page:
    """The home page: every benchmark with its leader under both gradings."""
    rows = [_home_row(r) for r in results]
    headers = ["Benchmark", "Runs", "Leader, traditional", "Leader, answer-key"]
    text = (
        "# Dualboard leaderboards\n\n"
        "Every run is scored twice: under the benchmark's **traditional grading** and under strict "
        "**answer-key grading** against human answer keys. Differences are tested question by "
        "question, and every score carries a 95 % confidence interval clustered by question. "
        "See [Methodology](methodology.md).\n\n"
        + table(headers, rows)
    )
    return Page("index.md", text)


def _home_row(result: BenchmarkResults) -> list[Cell]:
    models = result.models
    name = result.benchmark.name
    return [
        Cell(result.benchmark.title, href=f"benchmarks/{name}/"),
        Cell(str(len(models)), sort=len(models)),
        Cell(_leader(models, "traditional")),
        Cell(_leader(models, "answer_key")),
    ]


def _leader(models: pd.DataFrame, grading: str) -> str:
    if models.empty:
        return "no runs yet"
    best = models.sort_values([f"{grading}_mean", "run_id"], ascending=[False, True]).iloc[0]
    return f"{best['model']} ({format_number(best[f'{grading}_mean'])})"


def leaderboard_page(result: BenchmarkResults) -> Page:
    """The leaderboard of one benchmark: table of both gradings, difference, test, chart."""
    b = result.benchmark
    models = result.models.sort_values(["answer_key_mean", "run_id"], ascending=[False, True])
    headers = ["Rank (answer-key)", "Model", "Run", "Traditional [95% CI]", "Answer-key [95% CI]",
               "Difference [95% CI]", "Test", "p (Holm)", "Effect dz [95% CI]", "Questions", "Answers"]
    rows = [_leaderboard_row(row) for row in models.itertuples(index=False)]
    text = (
        f"# {escape_text(b.title)}\n\n"
        f'<p>{escape_text(b.description)}</p>\n\n'
        f"Benchmark version {escape_text(b.version)}, {len(b.questions)} questions, {len(models)} runs. "
        "Scores are on 0–100. Difference = answer-key − traditional (negative: the run loses points "
        "when graded strictly against the answer key). Intervals are 95 % and clustered by question.\n\n"
        + table(headers, rows)
        + "\n## Scores under both gradings\n\n"
        + chart("scores.json", "Each run's mean score under traditional grading and answer-key grading, "
                "with 95 % confidence intervals clustered by question. Runs are ordered by answer-key score; "
                "a gap between the two markers is the cost of strict grading.")
    )
    return Page(f"benchmarks/{b.name}/index.md", text)


def _interval(row, prefix: str) -> Cell:
    mean = getattr(row, f"{prefix}_mean")
    low, high = getattr(row, f"{prefix}_ci_low"), getattr(row, f"{prefix}_ci_high")
    return Cell(f"{format_number(mean)} [{format_number(low)}, {format_number(high)}]", sort=_sortable(mean))


def _sortable(value) -> float | str:
    return "" if pd.isna(value) else float(value)


def _leaderboard_row(row) -> list[Cell]:
    return [
        Cell(format_number(row.rank_answer_key, 0), sort=_sortable(row.rank_answer_key)),
        Cell(str(row.model)),
        Cell(str(row.run_id)),
        _interval(row, "traditional"),
        _interval(row, "answer_key"),
        Cell(f"{format_number(row.diff_mean)} [{format_number(row.diff_ci_low)}, {format_number(row.diff_ci_high)}]", sort=_sortable(row.diff_mean)),
        Cell(str(row.test)),
        Cell(_p_value(row.p_holm), sort=_sortable(row.p_holm)),
        Cell(f"{format_number(row.effect_dz, 2)} [{format_number(row.effect_dz_ci_low, 2)}, {format_number(row.effect_dz_ci_high, 2)}]", sort=_sortable(row.effect_dz)),
        Cell(str(row.n_questions), sort=int(row.n_questions)),
        Cell(str(row.n_answers), sort=int(row.n_answers)),
    ]


def _p_value(p: float) -> str:
    if pd.isna(p):
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"
