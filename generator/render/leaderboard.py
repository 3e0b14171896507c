"""The leaderboard page of one benchmark: the ranked table, its notes and its four charts.

Every column header explains itself on hover (:data:`COLUMNS`, also listed on
the methodology page); ``javascripts/tables.js`` keeps the grading shown and
the sort order in the address, and filters the runs by their model metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from dualboard.render import charts
from dualboard.render.escape import escape_text
from dualboard.render.html import Cell, Header, Row, chart, rank_switch, safe_url, table
from dualboard.render.numbers import (
    GRADING_NAMES,
    apart_reason,
    format_agreement,
    format_answers,
    format_coverage,
    format_difference,
    format_interval,
    format_mde,
    format_missing,
    format_p,
    format_percent,
    format_rank,
    is_true,
    mde_sort_key,
    nothing_detectable_cause,
    sort_key,
    unranked_reason,
)
from dualboard.render.pages import Appendix, BenchmarkResults, Page, front_matter, run_href, run_slug
from dualboard.render.published_table import published_section
from dualboard.stats.defaults import TOO_FEW_QUESTIONS
from dualboard.stats.scores import MIN_COVERAGE, is_ranked

COLUMNS = [
    Header(
        "Rank (interval)",
        key="rank",
        title=(
            "Rank under the grading shown (1 = best), and in brackets the rank interval: every rank inside it is "
            "compatible with the data, for all runs at once (simultaneous 95 %, from Holm-adjusted pairwise tests). "
            "tied 1st: the data cannot separate the run from the leader. "
            "Runs a grading judged too little of are not ranked."
        ),
    ),
    Header(
        "Model",
        key="model",
        title="The model as submitted; opens the run page, which lists every question with its scores.",
    ),
    Header(
        "Traditional [95% CI]",
        key="traditional",
        title=(
            "Mean traditional score (0–100): each question counts once, its rounds averaged; 95 % confidence interval "
            "clustered by question. Second line: the share of answers that were unreadable (the model's failure, "
            "scored 0), if any, and the naive interval that treats every answer as independent, as many published "
            "tables do; with several rounds it is too narrow."
        ),
    ),
    Header(
        "Answer-key [95% CI]",
        key="answer_key",
        title=(
            "Mean answer-key score (0–100): strict grading against the human answer key, same interval method; "
            "an answer the grader could not judge is left out (the share judged is shown when under 100 %), while an "
            "unreadable answer is the model's failure and scores 0 (its share is shown when there is one). "
            "Second line: the naive interval."
        ),
    ),
    Header(
        "Answer-key − traditional [95% CI]",
        key="difference",
        title=(
            "Paired difference per question, answer-key minus traditional (negative: the run loses points under strict "
            "grading), with its 95 % interval; second line: on how many answers the two gradings agree. With under "
            f"{TOO_FEW_QUESTIONS} questions judged by both gradings no interval is shown: the cell says too few judged "
            "questions, with the exact test's p."
        ),
    ),
    Header(
        "p (Holm)",
        key="p_holm",
        title=(
            "p-value of the test that both gradings give this run the same score (exact McNemar for one round of "
            "pass/fail answers, else a paired t test over questions), Holm-adjusted across the runs of this benchmark: "
            "under 0.05 the difference is significant even allowing for testing every run."
        ),
    ),
    Header(
        "Effect d_z [95% CI]",
        key="effect_dz",
        title=(
            "Standardised paired effect d_z: mean question difference divided by the SD of the question differences, "
            "with its 95 % interval (about 0.2 small, 0.5 medium, 0.8 large). Not Cohen's d on averaged SDs."
        ),
    ),
    Header(
        "MDE (points)",
        key="mde",
        title=(
            "Minimum detectable effect: the smallest answer-key − traditional difference this run's questions detect "
            "with 80 % power at α = 0.05. nothing detectable: no difference would be detected, and the cell says why: "
            "too few questions judged by both gradings, too few discordant questions (one round of pass/fail answers), "
            "no question differing, or a disagreement concentrated on too few questions."
        ),
    ),
    Header(
        "Questions",
        key="questions",
        title="Questions the run answered; second line: graded answers (questions × rounds).",
    ),
    Header(
        "Parameters",
        key="parameters",
        filter=True,
        title="Total parameters in billions, as submitted (optional metadata).",
    ),
    Header(
        "Weights",
        key="weights",
        filter=True,
        title="open: weights published for download; closed: served only by its maker (optional metadata).",
    ),
    Header(
        "Licence", key="licence", filter=True, title="Licence of the model itself, as submitted (optional metadata)."
    ),
    Header("Link", key="link", title="Model card or announcement (https links only)."),
]
"""The leaderboard's columns; their titles are shown on hover and listed on the methodology page."""
SIZE_BRACKETS = ((10, "under 10 B"), (100, "10–100 B"), (float("inf"), "100 B and more"))
"""Parameter counts (billions) grouped for the Parameters filter: upper bound (exclusive), label."""
RANKED_BY = {"answer_key": "Ranked by answer-key grading", "traditional": "Ranked by traditional grading"}
FIXES = {
    "answer_key": "configure the `llm` grader against an OpenAI-compatible endpoint, or add human labels",
    "traditional": "check the benchmark's traditional grader, or the recorded scores it imports",
}
"""What makes a grading judge more answers, said where it judged too few."""

CAPTIONS = {
    "scores": (
        "Dumbbell chart. Each row is a run: the blue dot is its traditional score, the orange dot its "
        "answer-key score, both with 95 % confidence intervals clustered by question; the grey bar joins them. "
        "A long bar means strict grading against the answer key changes the score a lot. A grading draws no dot "
        "for a run it does not rank (greyed in the table, for instance verdicts on under {min_coverage} of its "
        "answers, or listed apart), and no bar joins a run's dots when under {too_few} questions were judged by "
        "both gradings. Whether intervals overlap is not a test: which "
        "runs the data can order is shown by the pairwise matrix below (Holm-adjusted tests)."
    ),
    "differences": (
        "Forest plot of answer-key − traditional per run, with the 95 % confidence intervals of the table. Left of the "
        "dashed line the run loses points under strict grading. Orange squares are significant after Holm "
        "adjustment across runs; a drawn interval crossing zero is compatible with no difference. Runs with under "
        "{too_few} questions judged by both gradings are not drawn (exact test only, in the table); an open "
        "square marks a run that a grading does not rank (greyed in the table)."
    ),
    "categories": (
        "Per-category heatmap: each run's mean score in each question category under both gradings "
        "(rounds averaged within a question). Read across a row for a run's profile; compare the two "
        "panels to see which categories strict grading hits hardest. Few questions per category make "
        "these cells noisy. A grading's cells are blank for a run it does not rank."
    ),
    "pairwise": (
        "Pairwise significance matrix under {grading}: colour is the row run's score minus the column run's, "
        "over shared questions (blue: the row run scores higher, red: the column run does); "
        "● marks pairs whose difference is significant after Holm adjustment over all pairs. "
        "Pairs without ● are not ordered by these tests at this benchmark's size. Only the runs this grading ranks "
        "are shown."
    ),
}


def caption(name: str) -> str:
    """A chart's caption with the limits in force filled in."""
    return CAPTIONS[name].format(min_coverage=format_percent(MIN_COVERAGE, 0), too_few=TOO_FEW_QUESTIONS)


def leaderboard_page(result: BenchmarkResults) -> tuple[Page, dict[str, str]]:
    """Return the leaderboard page and its chart JSON files (docs-relative paths)."""
    b = result.benchmark
    models = result.models
    metadata = {run.run_id: run.metadata for run in result.runs}
    listed_apart = models["apart_reason"].map(apart_reason) != ""
    tables = {
        g: (label, _ranked_table(models[~listed_apart], g, metadata, b.version)) for g, label in RANKED_BY.items()
    }
    order = list(models.sort_values(["answer_key_mean", "run_id"], ascending=[False, True])["run_id"])
    text = (
        front_matter(f"Leaderboard: {b.name}", hide=("navigation", "toc"))
        + f"# {escape_text(b.title)}\n\n"
        + f"<p>{escape_text(b.description)}</p>\n\n"
        + coverage_banner(models)
        + f"Benchmark version {escape_text(b.version)}, {len(b.questions)} questions, {len(models)} runs. "
        "Scores are on 0–100. *Difference* = answer-key − traditional (negative: the run loses points when "
        "graded strictly against the answer key). Intervals are 95 % and clustered by question; under each score "
        "the *naive* interval, which treats every answer as independent, shows how much too narrow that would be. "
        "The rank interval is simultaneous: every rank inside it is compatible with the data; **tied 1st** marks runs "
        "the data cannot separate from the leader. MDE is the smallest difference this benchmark detects with "
        "80 % power; *nothing detectable* says why none would be: too few questions judged by both gradings (under "
        f"{TOO_FEW_QUESTIONS}, where only the exact test is shown and no interval is drawn), too few discordant "
        "questions (with 30 questions and one round: 7 of them or fewer), no question differing, or a "
        "disagreement concentrated on too few questions. "
        "No difference interval is zero-width or leaves [−100, 100]; the cell says on how many answers the two "
        "gradings agree. "
        + coverage_sentence(models)
        + older_versions_sentence(models, b.version)
        + "Hover a column header for what it means ([all columns](../../methodology.md#leaderboard-columns)); click it "
        "to sort; narrow the runs with the filters above the table. The address keeps the grading and the sort, so "
        "a copied link shows this view. See the [questions](questions/index.md) and how the "
        "[graders](graders.md) agree with humans.\n\n"
        + rank_switch(tables)
        + apart_section(models[listed_apart], b.version)
        + board_notes(result.stats.notes)
        + published_section(result.published, dict(zip(models["run_id"], models["model"], strict=True)))
        + "\n## Traditional → answer-key\n\n"
        + chart("charts/scores.json", caption("scores"))
        + "\n## Differences\n\n"
        + chart("charts/differences.json", caption("differences"))
        + "\n## Categories\n\n"
        + chart("charts/categories.json", CAPTIONS["categories"])
        + "\n## Which runs differ\n\n"
        + chart("charts/pairwise-answer_key.json", CAPTIONS["pairwise"].format(grading="answer-key grading"))
        + chart("charts/pairwise-traditional.json", CAPTIONS["pairwise"].format(grading="traditional grading"))
    )
    folder = f"benchmarks/{b.name}"
    assets = {
        f"{folder}/charts/scores.json": charts.figure_json(charts.dumbbell_figure(models)),
        f"{folder}/charts/differences.json": charts.figure_json(charts.forest_figure(models)),
        f"{folder}/charts/categories.json": charts.figure_json(
            charts.category_heatmap(charts.ranked_scores(charts.category_scores(result.scored), models), order)
        ),
    }
    for grading in charts.GRADINGS:
        ranked = set(models.loc[charts.ranked_mask(models, grading), "run_id"])
        assets[f"{folder}/charts/pairwise-{grading}.json"] = charts.figure_json(
            charts.pairwise_matrix(result.stats.pairwise, grading, [r for r in order if r in ranked])
        )
    return Page(f"{folder}/index.md", text), assets


_BY_KEY = {header.key: header for header in COLUMNS}
APART_COLUMNS = [
    _BY_KEY["model"],
    Header("Why not ranked", key="reason", title="What keeps the run out of both rankings."),
    _BY_KEY["traditional"],
    _BY_KEY["answer_key"],
    _BY_KEY["questions"],
]
"""The columns of the runs listed apart: their numbers stand, but they are ranked under neither grading."""


def apart_section(apart: pd.DataFrame, current: str) -> str:
    """The runs listed apart, not ranked under either grading (they count in no rank, interval or Holm family),
    each with the reason; "" when there is none."""
    if apart.empty:
        return ""
    older = dict(zip(apart["run_id"], _older(apart["benchmark_version"], current), strict=True))
    rows = [
        [
            Cell(
                str(row.model),
                href=run_href(run_slug(row.run_id)),
                badge=_badges(row, older[row.run_id]),
                css_class="dualboard-wrap",
            ),
            Cell(apart_reason(row.apart_reason), css_class="dualboard-wrap"),
            _interval(row, "traditional"),
            _interval(row, "answer_key"),
            _questions(row),
        ]
        for row in apart.sort_values("run_id").itertuples(index=False)
    ]
    return (
        "\n## Listed apart, not ranked {#listed-apart}\n\n"
        "These runs' numbers are shown, but they are ranked under neither grading and take no part in the others' "
        "rank intervals or tests ([why](../../methodology.md#listed-apart)).\n\n" + table(APART_COLUMNS, rows)
    )


def coverage_banner(models: pd.DataFrame) -> str:
    """Warn at the top of the leaderboard when a grading ranks fewer than half of the runs, with the fix."""
    out = ""
    for g, fix in FIXES.items():
        unranked = int((~is_ranked(models[f"{g}_coverage"])).sum())  # runs listed apart are not the grader's doing
        if len(models) and unranked > len(models) / 2:
            out += (
                f'!!! warning "{GRADING_NAMES[g].capitalize()} grading ranks few runs"\n'
                f"    {unranked} of {len(models)} runs have {GRADING_NAMES[g]} verdicts on under "
                f"{format_percent(MIN_COVERAGE, 0)} of their answers: the grader could not judge the rest, "
                f"so those runs are not ranked under {GRADING_NAMES[g]} grading (greyed below). "
                f"To fix: {fix}.\n\n"
            )
    return out


def coverage_sentence(models: pd.DataFrame) -> str:
    """Say what share of all answers each grading judged, and what happens to the rest."""
    answers = int(models["n_answers"].sum())
    judged = {g: (models[f"{g}_coverage"] * models["n_answers"]).sum() for g in GRADING_NAMES}
    shares = (
        ", ".join(f"{GRADING_NAMES[g]} {format_percent(n / answers)}" for g, n in judged.items()) if answers else "none"
    )
    return (
        f"Answers with a verdict: {shares} of {answers}. An answer a grader could not judge is left out of "
        f"that grading's numbers (a model's failure to answer still scores 0); a run whose grader judged "
        f"under {format_percent(MIN_COVERAGE, 0)} of its answers is not ranked under that grading and is "
        "greyed, as its mean covers only the answers the grader could judge. "
    )


def board_notes(notes: tuple[str, ...]) -> str:
    """The stats stage's caveats (too few questions, coverage, clipped variances, the bootstrap seed), on the board."""
    if not notes:
        return ""
    items = "".join(f"<li>{escape_text(note)}</li>" for note in notes)
    return f'<div class="dualboard-notes"><p>Notes on these numbers:</p><ul>{items}</ul></div>\n'


def leaderboard_columns_appendix() -> Appendix:
    """The methodology page's list of leaderboard columns: the same words the headers show on hover."""
    rows = [[Cell(h.text), Cell(h.title or "")] for h in COLUMNS]
    return Appendix(
        "methodology.md",
        "\n\n## Columns of the leaderboard {#leaderboard-columns}\n\n"
        "What each column of a leaderboard means (the same text shows when you hover its header).\n\n"
        + table(["Column", "Meaning"], rows, sortable=False),
    )


def older_versions_sentence(models: pd.DataFrame, current: str) -> str:
    """Say how runs of an earlier benchmark version are marked, and that questions they never saw are left out."""
    older = models[_older(models["benchmark_version"], current)]
    if older.empty:
        return ""
    return (
        f"{len(older)} run(s) answered an earlier benchmark version (marked *answered vN*): they are graded "
        "against the current answer keys, and the questions added since count as never run — left out of their "
        "scores and paired comparisons, not counted wrong (*Questions* says how many). "
    )


def _older(versions: pd.Series, current: str) -> pd.Series:
    """Which runs answered a version other than ``current`` (an empty version: not known, not marked)."""
    text = versions.fillna("").astype(str)
    return (text != "") & (text != current)


def _ranked_table(models: pd.DataFrame, grading: str, metadata: Mapping[str, Mapping[str, Any]], current: str) -> str:
    ordered = models.sort_values([f"rank_{grading}", f"{grading}_mean", "run_id"], ascending=[True, False, True])
    older = dict(zip(models["run_id"], _older(models["benchmark_version"], current), strict=True))
    rows = [
        _row(row, grading, metadata.get(row.run_id, {}), older[row.run_id]) for row in ordered.itertuples(index=False)
    ]
    return table(COLUMNS, rows, filterable=True)


def _questions(row) -> Cell:
    """Questions answered, and those never run (added after the version the run answered); the answers below."""
    never, unanswered = int(row.n_never_run), int(row.n_unanswered)
    return Cell(
        f"{int(row.n_questions)}"
        + (f" ({never} never run)" if never else "")
        + (f" ({unanswered} answers not given, scored 0)" if unanswered else ""),
        sort=int(row.n_questions),
        note=format_answers(row.n_answers, row.n_distinct_answers, row.rejudged),
    )


def _badges(row, older: bool) -> tuple[str, ...]:
    """The Model cell's marks: an earlier benchmark version answered, too few questions for rank intervals."""
    marks = (
        f"answered v{row.benchmark_version}" if older else "",
        "too few questions" if int(row.n_questions) < TOO_FEW_QUESTIONS else "",
    )
    return tuple(m for m in marks if m)


def _row(row, grading: str, metadata: Mapping[str, Any], older: bool = False) -> Row:
    ranked = is_true(getattr(row, f"ranked_{grading}"))
    return Row(
        [
            _rank_cell(row, grading)
            if ranked
            else Cell(  # sorts after every rank
                unranked_reason(grading, getattr(row, f"{grading}_coverage"), getattr(row, "n_awaiting_labels", 0)),
                sort=1e12,
                css_class="dualboard-wrap",
            ),
            Cell(
                str(row.model),
                href=run_href(run_slug(row.run_id)),
                badge=_badges(row, older),
                css_class="dualboard-wrap",
            ),
            _interval(row, "traditional"),
            _interval(row, "answer_key"),
            _difference(row),
            Cell(format_p(row.p_holm), sort=sort_key(row.p_holm)),
            Cell(
                format_interval(row.effect_dz, row.effect_dz_ci_low, row.effect_dz_ci_high, 2),
                sort=sort_key(row.effect_dz),
            ),
            _mde(row),
            _questions(row),
            *model_facts(metadata),
        ],
        css_class=None if ranked else "dualboard-unranked",
    )


def model_facts(metadata: Mapping[str, Any]) -> list[Cell]:
    """The optional model metadata as leaderboard cells: parameters, weights, licence, link ("—" when not given)."""
    size = metadata.get("parameters_billions")
    known = isinstance(size, (int, float)) and not isinstance(size, bool)
    bracket = next(label for bound, label in SIZE_BRACKETS if size < bound) if known else "not given"
    url = safe_url(metadata.get("model_url"))
    return [
        Cell(f"{size:g} B" if known else "—", sort=float(size) if known else -1.0, filter=bracket),
        Cell(str(metadata.get("weights") or "—"), filter=str(metadata.get("weights") or "not given")),
        Cell(
            str(metadata.get("model_license") or "—"),
            filter=str(metadata.get("model_license") or "not given"),
            css_class="dualboard-wrap",
        ),
        Cell("model card", href=url, external=True) if url else Cell("—"),
    ]


def _rank_cell(row, grading: str) -> Cell:
    rank = getattr(row, f"rank_{grading}")
    low, high = getattr(row, f"rank_ci_low_{grading}"), getattr(row, f"rank_ci_high_{grading}")
    tied = getattr(row, f"tied_first_{grading}")
    return Cell(format_rank(rank, low, high), sort=sort_key(rank), badge="tied 1st" if is_true(tied) else None)


def _interval(row, grading: str) -> Cell:
    """The honest interval, with the naive one (every answer independent) on a second line."""
    mean = getattr(row, f"{grading}_mean")
    text = format_interval(mean, getattr(row, f"{grading}_ci_low"), getattr(row, f"{grading}_ci_high"))
    naive = format_interval(
        getattr(row, f"{grading}_naive_mean"),
        getattr(row, f"{grading}_naive_ci_low"),
        getattr(row, f"{grading}_naive_ci_high"),
    )
    judged = format_coverage(getattr(row, f"{grading}_coverage"))
    unreadable = format_missing(getattr(row, f"{grading}_missing_rate"))
    return Cell(text, sort=sort_key(mean), note="; ".join(t for t in (judged, unreadable, f"naive {naive}") if t))


def _difference(row) -> Cell:
    """The difference with its interval (none under TOO_FEW_QUESTIONS judged questions: the exact test's p), and on
    how many answers the gradings agree (not a bare 0.0)."""
    text = format_difference(row.diff_mean, row.diff_ci_low, row.diff_ci_high, row.n_questions_paired, row.p_value)
    agree = format_agreement(row.n_answers_agree, row.n_answers_paired, row.n_answers)
    return Cell(text, sort=sort_key(row.diff_mean), note=agree, css_class="dualboard-wrap")


def _mde(row) -> Cell:
    """The MDE, or what makes nothing detectable (:func:`~dualboard.render.numbers.nothing_detectable_cause`)."""
    discordant = row.n_discordant_up + row.n_discordant_down
    cause = nothing_detectable_cause(row.n_questions_paired, str(row.test), discordant)
    return Cell(
        format_mde(row.mde_points, row.mde_status, cause),
        sort=mde_sort_key(row.mde_points, row.mde_status),
        css_class="dualboard-wrap",
    )
