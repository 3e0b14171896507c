"""Run pages: a run's metadata, its per-category scores, every question it answered, and the answers the
two gradings disagree on.

The list of questions answers "what does this model fail": one compact row
per question (scores per round as a second line), sortable and filterable by
category and outcome in the browser (``javascripts/tables.js``), each linking
to the question page where the answers themselves are. That list and the
disagreements are lazy tables (:mod:`dualboard.render.lazy_tables`): their rows
are in data files the page loads, so a run page weighs the same however many
questions and rounds the run answered. Run pages are linked
from the leaderboard and kept out of the navigation (a leaderboard may hold
hundreds of runs; see docs/architecture.md, "Rendering").
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from dualboard.build_cache import code_digest, digest
from dualboard.intake.models import Run
from dualboard.kappa import PASS_MARK
from dualboard.render.answer_texts import responses_of
from dualboard.render.charts import GRADINGS, category_scores
from dualboard.render.escape import escape_text
from dualboard.render.html import Cell, Header
from dualboard.render.item_pages import (
    FROM_ITEM,
    heading,
    item_page,
    page_document,
    table_block,
    text,
)
from dualboard.render.kept_files import KeptFiles, check_unreplaced
from dualboard.render.lazy_tables import Column, IndexedFiles, LazyTable, lazy_table, number, sharded_table
from dualboard.render.numbers import (
    apart_reason,
    format_agreement,
    format_answers,
    format_difference,
    format_interval,
    format_number,
    format_rank,
    format_share_judged,
    is_missing,
    is_true,
    sort_key,
    unranked_reason,
    with_coverage,
)
from dualboard.render.pages import (
    BenchmarkResults,
    Page,
    front_matter,
    question_href,
    question_slugs,
    run_href,
    run_slug,
)
from dualboard.render.question_pages import prompt_preview
from dualboard.render.shared_files import SharedFiles
from dualboard.scored_files import ABOUT

MAX_LISTED = 200
"""Disagreements listed per run page; the rest are on the question pages and in the downloads."""


RUN_CACHE_DIR = "run-tables"
"""The folder of ``build/`` where the run pages' :class:`KeptFiles` keep one manifest per benchmark."""


@dataclass(frozen=True)
class RunTables:
    """What a run page shows that is made from the run's rows alone, kept while its key holds (:func:`run_pages`):
    its scores per category, and its two lazy tables (what grows with the run's answers) with the words before each."""

    categories: dict[str, Any]
    """The block of its mean score per category (or of the sentence that it has no scored answer)."""
    listing_intro: str
    listing: LazyTable | None
    """The list of questions; None when the run has no scored answer."""
    disagreement_intro: str
    disagreements: LazyTable | None
    """The answers the gradings disagree on; None when there is none."""


def run_pages(
    result: BenchmarkResults, shared: SharedFiles | None = None, kept: KeptFiles | None = None
) -> tuple[list[Page], list[IndexedFiles]]:
    """The list of runs and the page that shows any one of them, and each stored run's page document and lazy
    tables.

    With ``kept`` (and ``shared``, where the kept data files stay), a run whose tables' key
    (:func:`run_table_keys`) is what it was in the last render keeps its data files, unread, and its category
    table; the tables of the other runs are made: their lists of questions and their scores per category from
    one grouping each of their rows of the scored table, and the responses of their listed disagreements from one
    reading of the answers table (``result.files``).
    """
    slugs = question_slugs(result.benchmark)
    models = result.models.set_index("run_id")
    indices = result.scored.groupby("run_id", sort=False).indices
    scored = {run_id: _rows(result.scored, index) for run_id, index in indices.items()}
    keys = run_table_keys(result, slugs) if kept is not None and shared is not None else {}
    tables: dict[str, RunTables] = {}
    for run_id, key in keys.items():
        entry = kept.reuse(run_id, key, shared)
        if entry is not None:
            tables[run_id] = _kept_tables(_page_path(result.name, run_id), entry)
    todo = [run_id for run_id in scored if run_id not in tables]
    positions = [indices[run_id] for run_id in todo]
    made = _rows(result.scored, np.sort(np.concatenate(positions)) if positions else np.arange(0))
    answered = _per_question(made)
    scores = category_scores(made)  # one grouping of the runs made, as for their lists of questions
    categories = dict(tuple(scores.groupby("run_id", sort=False)))
    listed = [listed_disagreements(scored[run_id]) for run_id in todo]
    texts = responses_of(result.files, pd.concat(listed)) if listed and result.files is not None else {}
    files: list[IndexedFiles] = []
    for run in result.runs:
        rows = scored.get(run.run_id, result.scored.iloc[0:0])
        path = _page_path(result.name, run.run_id)
        if run.run_id not in tables:
            questions, categories_of_run = result.benchmark.questions, categories.get(run.run_id, scores.iloc[0:0])
            made_tables = run_tables(
                path, run, rows, slugs, questions, answered.get(run.run_id, {}), texts, categories_of_run
            )
            tables[run.run_id] = made_tables
            if run.run_id in keys:
                kept.record(run.run_id, keys[run.run_id], *_made_files(made_tables))
        document, page_tables = run_page(
            result.name,
            run,
            models.loc[run.run_id] if run.run_id in models.index else None,
            rows,
            slugs,
            current_version=result.benchmark.version,
            tables=tables[run.run_id],
        )
        files += [document, *page_tables]
    if kept is not None and shared is not None:
        if keys and result.files_status is not None:
            check_unreplaced(result.files.path / ABOUT, result.files_status)
        kept.save()
    return [runs_index(result), item_page(result.name, "runs", "Run")], files


def _rows(scored: pd.DataFrame, index: np.ndarray) -> pd.DataFrame:
    """The rows of ``scored`` at the ascending positions ``index``: a slice, not a copy, where they are together
    (the grade stage writes a run's rows together)."""
    if len(index) and index[-1] - index[0] + 1 == len(index):
        return scored.iloc[index[0] : index[-1] + 1]
    return scored.take(index)


def run_table_keys(result: BenchmarkResults, slugs: Mapping[str, str]) -> dict[str, str]:
    """The key of each run's tables: a digest of all they are made from (the code, the questions and their
    slugs, and the key ``about.json`` records for the run, a digest of its stored files and all else its graded
    files are made from, with the choice that filled the answer-key columns).

    A run with no graded files has no key, nor has any run when the scored table was not read from files: their
    tables are always made anew.
    """
    if result.files is None:
        return {}
    about = result.files.about()
    common = digest(
        "run-tables",
        code_digest(),
        result.name,
        about.choice,
        json.dumps([list(result.benchmark.questions), dict(slugs), list(result.scored.columns)], sort_keys=True),
    )
    keys = {}
    for run_id in result.scored["run_id"].unique():
        if run_id in about.runs:
            keys[run_id] = digest(common, run_id, about.runs[run_id])
    return keys


def _made_files(tables: RunTables) -> tuple[dict[str, tuple[str, int]], dict[str, str]]:
    """What :class:`KeptFiles` records of a run's tables just made: their data files, and the texts the page shows."""
    files = {t.key: (t.paths[0], len(t.data[0])) for t in (tables.listing, tables.disagreements) if t is not None}
    return files, {"categories": tables.categories, "disagreement_intro": tables.disagreement_intro}


def _kept_tables(path: str, entry: Mapping[str, Any]) -> RunTables:
    """A run's tables from what :class:`KeptFiles` kept of them (their data files stay as they are)."""
    files = entry["files"]
    listing, disagreements = (files.get(f"{PurePosixPath(path).stem}#{noun}") for noun in ("questions", "answers"))
    return RunTables(
        entry["notes"]["categories"],
        LISTING_INTRO if listing else NO_ANSWERS,
        sharded_table(path, QUESTION_COLUMNS, [listing], noun="questions", filterable=True) if listing else None,
        entry["notes"]["disagreement_intro"],
        sharded_table(path, DISAGREEMENT_COLUMNS, [disagreements], noun="answers") if disagreements else None,
    )


def _page_path(benchmark: str, run_id: str) -> str:
    return f"benchmarks/{benchmark}/runs/{run_slug(run_id)}.md"


def run_tables(
    path: str,
    run: Run,
    scored: pd.DataFrame,
    slugs: Mapping[str, str],
    questions: Sequence[Mapping[str, Any]],
    answered: Mapping[str, Mapping[str, Any]],
    responses: Mapping[tuple[str, str, int], str],
    categories: pd.DataFrame,
) -> RunTables:
    """Make the category table and the two lazy tables of the run page at docs path ``path`` (arguments as for
    :func:`run_page`; ``categories``: the run's rows of :func:`~dualboard.render.charts.category_scores`)."""
    listing_intro, listing = question_table(path, scored, answered, questions, slugs)
    disagreement_intro, lazy = _disagreements(path, run, scored, slugs, responses)
    return RunTables(_category_table(scored, categories), listing_intro, listing, disagreement_intro, lazy)


def run_page(
    benchmark: str,
    run: Run,
    model_row: pd.Series | None,
    scored: pd.DataFrame,
    slugs: Mapping[str, str],
    questions: Sequence[Mapping[str, Any]] = (),
    *,
    current_version: str | None = None,
    answered: Mapping[str, Mapping[str, Any]] | None = None,
    responses: Mapping[tuple[str, str, int], str] = MappingProxyType({}),
    tables: RunTables | None = None,
) -> tuple[IndexedFiles, list[LazyTable]]:
    """The page document of one run (metadata, scores per category) and the data files of its two lazy tables.

    Its list of questions and the answers the two gradings disagree on are
    loaded by the page from data files, so the document carries no response and
    does not grow with the run's answers.
    ``current_version``: the benchmark's version; a run of an earlier one says so, and how many
    questions it was never asked. ``answered``: the run's entry of :func:`_per_question` (worked out
    from ``scored`` when not given); ``responses``: the text of the listed disagreements by
    (run id, question id, round) (:func:`dualboard.render.answer_texts.responses_of`; one missing shows empty).
    ``tables``: the category table and the two lazy tables, made already (:func:`run_tables`); then
    ``questions``, ``answered`` and ``responses`` are not used.
    """
    path = _page_path(benchmark, run.run_id)
    if tables is None:
        if answered is None:
            answered = _per_question(scored).get(run.run_id, {})
        tables = run_tables(path, run, scored, slugs, questions, answered, responses, category_scores(scored))
    listed, lazy = tables.listing, tables.disagreements
    blocks = [
        text("Run ", run.run_id, " on benchmark ", Cell(benchmark, href=FROM_ITEM), "."),
        *(_older_version(model_row, current_version) if model_row is not None else []),
        *(_summary(model_row) if model_row is not None else []),
        *(harness_note(run.metadata.get("harness"), model_row["traditional_mean"]) if model_row is not None else []),
        heading("Scores per category"),
        text("Mean score per question category (rounds averaged within a question first), both on 0–100."),
        tables.categories,
        heading("Every question"),
        text(tables.listing_intro),
        *([listed.block()] if listed is not None else []),
        heading("Answers the gradings disagree on"),
        text(tables.disagreement_intro),
        *([lazy.block()] if lazy is not None else []),
        heading("Submission"),
        table_block(["Field", "Value"], _metadata_rows(run.metadata), sortable=False),
    ]
    title = str(run.model if model_row is None else model_row["model"])
    return page_document(path, title, blocks), [t for t in (listed, lazy) if t is not None]


SEARCHED_METADATA = {"model_revision": "revision", "submitter": "submitted by", "notes": "notes:"}
"""What the list of runs says of each run besides its model and id, so the site's search finds it by these too."""


def runs_index(result: BenchmarkResults) -> Page:
    """Every run of the benchmark, one heading each with its model and run id, which the site's search finds."""
    models = dict(zip(result.models["run_id"], result.models["model"])) if len(result.models) else {}
    sections = "".join(
        f'<h2 id="run-{run_slug(run.run_id)}">{escape_text(models.get(run.run_id, run.model))}</h2>\n'
        f'<p><a href="{run_href(run_slug(run.run_id), "../")}">Run {escape_text(run.run_id)}</a> of model '
        f"{escape_text(models.get(run.run_id, run.model))}"
        + "".join(
            f"; {words} {escape_text(run.metadata[key])}"
            for key, words in SEARCHED_METADATA.items()
            if run.metadata.get(key) not in (None, "")
        )
        + "</p>\n\n"
        for run in result.runs
    )
    text_ = (
        front_matter(f"Runs: {result.name}", hide=("toc",))
        + f"# Runs of {escape_text(result.benchmark.title)}\n\n"
        + (
            "Every run stored for this benchmark, by model. Its scores and ranks are on the "
            '<a href="../">leaderboard</a>; a run\'s page lists every question it answered.\n\n'
            if result.runs
            else "No run is stored for this benchmark yet.\n\n"
        )
        + sections
    )
    return Page(f"benchmarks/{result.name}/runs/index.md", text_)


def _older_version(row: pd.Series, current: str | None) -> list[dict[str, Any]]:
    """Say that the run answered an earlier benchmark version, and what that means for its numbers."""
    answered = str(row.get("benchmark_version", ""))
    if current is None or answered in ("", "nan", current):
        return []
    never = int(row.get("n_never_run", 0))
    return [
        text(
            f"This run answered benchmark version {answered} (current: {current}). It is graded against "
            f"the current answer keys; the {never} question(s) added since were never run and are left "
            "out of its scores and of every paired comparison, not counted wrong."
        )
    ]


def _summary(row: pd.Series) -> list[dict[str, Any]]:
    """The run's numbers as one measure per row: six columns side by side scrolled sideways at 1,400 px."""
    measures = [
        "Traditional [95% CI]",
        "Answer-key [95% CI]",
        "Answer-key − traditional [95% CI]",
        "Rank, traditional",
        "Rank, answer-key",
        "Answers with a verdict",
    ]
    cells = [
        Cell(
            with_coverage(
                format_interval(row[f"{g}_mean"], row[f"{g}_ci_low"], row[f"{g}_ci_high"]), row[f"{g}_coverage"]
            )
        )
        for g in GRADINGS
    ]
    cells.append(
        Cell(
            format_difference(
                row["diff_mean"], row["diff_ci_low"], row["diff_ci_high"], row["n_questions_paired"], row["p_value"]
            )
        )
    )
    cells += [Cell(_rank(row, g)) for g in GRADINGS]
    cells.append(
        Cell(
            f"traditional {format_share_judged(row['traditional_coverage'])}, answer-key "
            f"{format_share_judged(row['answer_key_coverage'])} of "
            f"{format_answers(row['n_answers'], row['n_distinct_answers'], row['rejudged'])}"
        )
    )
    agreement = format_agreement(row["n_answers_agree"], row["n_answers_paired"], row["n_answers"])
    paired = text(
        f"The difference pairs each answer's two verdicts: {agreement}, "
        f"over {int(row['n_questions_paired'])} of {int(row['n_questions'])} questions. An answer a grader "
        "could not judge is left out of that grading's numbers."
    )
    notes = [text(f"Notes: {row['note']}.")] if isinstance(row["note"], str) and row["note"] else []
    rows = [[Cell(measure), cell] for measure, cell in zip(measures, cells, strict=True)]
    return [table_block(["Measure", "Value"], rows, sortable=False), paired, *notes, *_variance(row)]


def harness_note(harness: Mapping[str, Any] | None, traditional_mean: float) -> list[dict[str, Any]]:
    """Say what the harness a run was imported from reported, beside the board's traditional mean.

    The two agree when the harness took the mean over every round; a harness that reduces a question's rounds
    another way (mode, max, pass@k) reports another number, and the note says why.

    Examples
    --------
    >>> harness = {"name": "Inspect AI", "version": "0.3.285", "task": "t", "score": "choice",
    ...            "metric": "accuracy", "reported": 0.5, "reducer": "mode"}
    >>> harness_note(harness, 62.5)[0]["text"][0].endswith("the harness reduced the rounds by mode first.")
    True
    >>> harness_note(harness, 50.0)[0]["text"][0].endswith("the same number.")
    True
    >>> harness_note(harness | {"reducer": "mean"}, 62.5)[0]["text"][0].endswith("this run disagree.")
    True
    """
    if not harness:
        return []
    reported = float(harness["reported"])
    same = abs(reported * 100 - float(traditional_mean)) <= 1e-7
    if same:
        verdict = "the same number."
    elif harness["reducer"] == "mean":
        verdict = "a different number, though the harness also took the mean: its log and this run disagree."
    else:
        verdict = f"a different number, because the harness reduced the rounds by {harness['reducer']} first."
    return [
        text(
            f"According to its metadata, this run was imported from {harness['name']} {harness['version']} (task "
            f"{harness['task']}): the harness reported {harness['metric']} {reported:.4f} for {harness['score']}, with "
            f"each question's rounds reduced by {harness['reducer']}; the traditional mean here is "
            f"{format_number(traditional_mean)}, the mean of {harness['score']} over every round: {verdict}"
        )
    ]


def _rank(row: pd.Series, grading: str) -> str:
    """The rank with its interval, or why the run is not ranked in this grading."""
    if apart_reason(row["apart_reason"]):
        return f"not ranked, listed apart: {apart_reason(row['apart_reason'])}"
    if not is_true(row[f"ranked_{grading}"]):
        return unranked_reason(grading, row[f"{grading}_coverage"], row.get("n_awaiting_labels", 0))
    return format_rank(row[f"rank_{grading}"], row[f"rank_ci_low_{grading}"], row[f"rank_ci_high_{grading}"])


REJUDGED_VARIANCE = (
    "This run's rounds re-judge one answer per question (the same response in every round): σ̄² measures "
    "the judge's variation on one answer, not the model's sampling."
)


def _variance(row: pd.Series) -> list[dict[str, Any]]:
    """Variance components per grading; a negative Var(x) estimate is shown as 0 and said to be clipped."""
    rows = [
        [
            Cell(g.replace("_", "-")),
            Cell(
                format_number(row[f"{g}_var_between"])
                + (" (clipped at 0: the estimate was negative)" if is_true(row[f"{g}_var_between_clipped"]) else "")
            ),
            Cell(format_number(row[f"{g}_var_within"])),
        ]
        for g in GRADINGS
    ]
    return [
        text(
            "Variance components (points²): Var(x) is the spread of true question scores, σ̄² the mean variance "
            "of a question's rounds. More rounds help only while σ̄²/rounds is not much smaller than Var(x)."
        ),
        *([text(REJUDGED_VARIANCE)] if is_true(row["rejudged"]) else []),
        table_block(["Grading", "Var(x) between questions", "σ̄² within a question"], rows, sortable=False),
    ]


def _metadata_rows(metadata: Mapping[str, Any]) -> list[list[Cell]]:
    return [[Cell(key), Cell(value)] for key, value in _flatten(metadata)]


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Nested metadata as (dotted key, text) pairs, in file order."""
    if isinstance(value, Mapping):
        out: list[tuple[str, str]] = []
        for key, item in value.items():
            out += _flatten(item, f"{prefix}.{key}" if prefix else str(key))
        return out
    return [(prefix, "" if value is None else str(value))]


def _category_table(scored: pd.DataFrame, scores: pd.DataFrame) -> dict[str, Any]:
    """The table of a run's mean score per category (``scores``: its rows of ``category_scores``)."""
    if scored.empty:
        return text(NO_ANSWERS)
    rows = [
        [
            Cell(str(r.category)),
            Cell(format_number(r.traditional), sort=sort_key(r.traditional)),
            Cell(format_number(r.answer_key), sort=sort_key(r.answer_key)),
            Cell(format_number(r.answer_key - r.traditional), sort=sort_key(r.answer_key - r.traditional)),
        ]
        for r in scores.itertuples(index=False)
    ]
    return table_block(["Category", "Traditional", "Answer-key", "Answer-key − traditional"], rows)


QUESTION_COLUMNS = (
    Column(
        Header(
            "Question",
            key="question",
            title="Opens the question page: every run's answers and every grader's verdict.",
        ),
        "link",
    ),
    Column(Header("Category", key="category", filter=True), "text"),
    Column(Header("Prompt", key="prompt", title="The start of the question's text."), "wrap"),
    Column(
        Header(
            "Traditional",
            key="traditional",
            title="Mean traditional score over the question's rounds (0–100); second line: the score of each round.",
        ),
        "verdict",
    ),
    Column(
        Header(
            "Answer-key",
            key="answer_key",
            title=(
                "Mean answer-key score over the rounds the grader judged (0–100); "
                "second line: each round, – where it gave no verdict."
            ),
        ),
        "verdict",
    ),
    Column(Header("Difference", key="difference", title="Answer-key − traditional of the two means."), "value"),
    Column(
        Header(
            "Outcome",
            key="outcome",
            filter=True,
            title=(
                f"Whether each grading passes the question (mean ≥ {format_number(PASS_MARK, 0)} counts as a pass); "
                "never run: the run was not asked it (added after the version it answered); missing: its version "
                "asked it and the run gave no answer, scored 0 under both gradings."
            ),
        ),
        "text",
    ),
)
"""Columns of a run page's list of questions."""
LISTING_INTRO = (
    "One row per question: the mean score of its rounds under each grading, and under it each round's score "
    "(✓ 100, ✗ 0, – no verdict). Sort by a column, or filter by category, outcome or any text; open a question "
    "to read the answers. Highlighted questions pass one grading and fail the other."
)
"""The words before a run's list of questions."""
NO_ANSWERS = "This run has no scored answers."
ROUND_MARKS = {100.0: "✓", 0.0: "✗"}
"""How a pass/fail score of one round is written in the per-round line (partial credit stays a number)."""


def question_table(
    page: str,
    scored: pd.DataFrame,
    answered: Mapping[str, Mapping[str, Any]],
    questions: Sequence[Mapping[str, Any]],
    slugs: Mapping[str, str],
) -> tuple[str, LazyTable | None]:
    """Every question of the benchmark, one row each: category, both gradings per round and on average, outcome.

    The rows are a lazy table's data file (the page ``page`` loads it), so the page does not grow with the
    run's answers. A question the run never answered (added after the version it answered) is listed as
    never run. ``answered``: the run's entry of :func:`_per_question`. Returns the text before the table
    and the table (None when the run has no scored answer).
    """
    if scored.empty:
        return NO_ANSWERS, None
    by_id = {str(q["id"]): q for q in questions}
    order = list(by_id) + sorted(set(answered) - set(by_id))  # benchmark order
    rows = [
        _question_row(i, answered[qid], by_id.get(qid, {})) if qid in answered else _never_run_row(i, by_id[qid])
        for i, qid in enumerate(order)
    ]
    links = [(qid, question_href(slugs.get(qid, "x"), FROM_ITEM)) for qid in order]
    return LISTING_INTRO, lazy_table(page, QUESTION_COLUMNS, rows, links, noun="questions", filterable=True)


def _per_question(scored: pd.DataFrame) -> dict[str, dict[str, dict[str, Any]]]:
    """Each question each run answered (run id → question id → entry): its category, each grading's mean
    over the rounds and its per-round line.

    One grouping of every run's rows, sorted by run, question and round (not one grouping per run, nor
    one per question, which cost time with each run), and each per-round line joined from a list.
    """
    ordered = scored.sort_values(["run_id", "question_id", "round"], kind="stable")
    keys = [ordered["run_id"], ordered["question_id"].astype(str)]
    grouped = ordered.groupby(keys, sort=False)
    summary = grouped[list(GRADINGS)].mean()  # NaN-skipping: an answer without a verdict is left out
    summary["category"] = grouped["category"].first()
    # a question none of whose rounds the run answered (its version asked it): each round scored 0
    summary["unanswered"] = grouped["unanswered"].all() if "unanswered" in ordered else False
    size = grouped.size().to_numpy()
    ends = np.cumsum(size)
    for g in GRADINGS:
        marks = _round_marks(ordered[g].to_numpy(dtype=float))
        summary[f"rounds:{g}"] = [" ".join(marks[end - n : end]) for n, end in zip(size, ends)]
    columns = {c: summary[c].tolist() for c in summary.columns}  # lists once: DataFrame.to_dict("index") is slow
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for i, (run_id, question_id) in enumerate(summary.index):
        out.setdefault(run_id, {})[question_id] = {c: values[i] for c, values in columns.items()}
    return out


def _round_marks(scores: np.ndarray) -> list[str]:
    """:func:`_round_mark` of every score, worked out once per distinct score."""
    distinct, inverse = np.unique(scores, return_inverse=True)  # NaNs are one value: no verdict
    marks = [_round_mark(v) for v in distinct]
    return [marks[i] for i in inverse.tolist()]


def _question_row(link: int, answered: Mapping[str, Any], question: Mapping[str, Any]) -> list[Any]:
    """The data row of a question the run answered: ``answered`` is its entry of :func:`_per_question`."""
    means = {g: answered[g] for g in GRADINGS}
    difference = means["answer_key"] - means["traditional"]
    return [
        link,
        str(answered["category"]),
        prompt_preview(question),
        # Means as verdicts: on both sides of the pass mark, the row is highlighted (fails one grading only).
        *[[number(means[g]), format_number(means[g]), answered[f"rounds:{g}"]] for g in GRADINGS],
        [number(difference), format_number(difference)],
        NOT_ANSWERED if answered.get("unanswered") else _outcome(means["traditional"], means["answer_key"]),
    ]


def _never_run_row(link: int, question: Mapping[str, Any]) -> list[Any]:
    """The data row of a question the run was never asked (added after the benchmark version it answered)."""
    return [
        link,
        str(question.get("category", "")),
        prompt_preview(question),
        *[[None, format_number(None)] for _ in range(3)],
        NEVER_RUN,
    ]


def _round_mark(score: float | None) -> str:
    """One round's score in the per-round line: ✓/✗ for pass/fail, the number for partial credit, – for no verdict.

    Examples
    --------
    >>> [_round_mark(v) for v in (100.0, 0.0, 60.0, float("nan"))]
    ['✓', '✗', '60', '–']
    """
    return "–" if is_missing(score) else ROUND_MARKS.get(float(score), format_number(score, 0))


PASSES = {
    (True, True): "passes both",
    (False, False): "fails both",
    (True, False): "fails answer-key only",
    (False, True): "fails traditional only",
}
"""The outcome of a question by (traditional passes, answer-key passes)."""
NO_VERDICT, NEVER_RUN, NOT_ANSWERED = "no verdict", "never run", "missing: scored 0"
OUTCOMES = (*PASSES.values(), NO_VERDICT, NEVER_RUN, NOT_ANSWERED)
"""Every word the Outcome column (and its filter) can show."""


def _outcome(traditional: float, answer_key: float) -> str:
    """Which grading passes the question (mean ≥ 50), in words a filter can offer."""
    if is_missing(traditional) or is_missing(answer_key):
        return NO_VERDICT
    return PASSES[(traditional >= PASS_MARK, answer_key >= PASS_MARK)]


def disagreements(scored: pd.DataFrame) -> pd.DataFrame:
    """Answers that pass one grading and fail the other (≥ 50 counts as a pass).

    An answer without a verdict in either grading cannot disagree: it is left
    out, as it is of the scores.
    """
    both = scored[list(GRADINGS)].notna().all(axis=1)
    return scored[both & ((scored["traditional"] >= PASS_MARK) != (scored["answer_key"] >= PASS_MARK))]


DISAGREEMENT_COLUMNS = (
    Column("Question", "link"),
    Column("Round", "number"),
    Column("Category", "text"),
    Column("Traditional", "verdict"),
    Column("Answer-key", "verdict"),
    Column("Verdict parse", "text"),
    Column("Response", "response"),
)
"""Columns of a run page's disagreements (loaded from its data file)."""


def listed_disagreements(scored: pd.DataFrame) -> pd.DataFrame:
    """The disagreements a run page lists: the first :data:`MAX_LISTED` of :func:`disagreements`."""
    return disagreements(scored).head(MAX_LISTED)


def _disagreements(
    page: str,
    run: Run,
    scored: pd.DataFrame,
    slugs: Mapping[str, str],
    responses: Mapping[tuple[str, str, int], str],
) -> tuple[str, LazyTable | None]:
    """What the run page says about the answers the gradings disagree on, and the lazy table listing them."""
    found = disagreements(scored)
    judged = int(scored[list(GRADINGS)].notna().all(axis=1).sum())
    if found.empty:
        return f"None: each of the {judged} answers both gradings judged passes both or fails both.", None
    listed = listed_disagreements(scored)
    questions = list(dict.fromkeys(str(q) for q in listed["question_id"]))
    index = {qid: i for i, qid in enumerate(questions)}
    rows = [
        [
            index[str(r.question_id)],
            int(r.round),
            str(r.category),
            [number(r.traditional), format_number(r.traditional, 0)],
            [number(r.answer_key), format_number(r.answer_key, 0)],
            str(r.answer_key_parse),
            responses.get((run.run_id, r.question_id, int(r.round)), ""),
        ]
        for r in listed.itertuples(index=False)
    ]
    links = [(qid, question_href(slugs.get(qid, "x"), FROM_ITEM)) for qid in questions]
    lazy = lazy_table(page, DISAGREEMENT_COLUMNS, rows, links, noun="answers")
    shown = (
        f"The first {MAX_LISTED} are listed; every answer is on its question page and in the downloads. "
        if len(found) > MAX_LISTED
        else ""
    )
    intro = (
        f"{len(found)} of the {judged} answers both gradings judged pass one and fail the other "
        f"(≥ {format_number(PASS_MARK, 0)} counts as a pass). {shown}"
        "Open a question to see every grader's verdict."
    )
    return intro, lazy
