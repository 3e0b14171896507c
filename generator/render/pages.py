"""What the render stage reads and writes: page types, inputs, and the home page.

Each generated file is a :class:`Page` (path inside the docs folder and its
text) or an :class:`Appendix` (text added to the end of a hand-written page).
Trusted text (our own headings and numbers) is Markdown; everything submitted
goes through :mod:`dualboard.render.html`, which escapes it. Page titles only
ever come from our own words, validated run ids and slugs, because MkDocs
templates do not escape them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd

from dualboard.intake.model_names import with_shown_models
from dualboard.intake.models import Benchmark, Run
from dualboard.render.escape import escape_slug, escape_text
from dualboard.render.html import Cell, table
from dualboard.render.numbers import (
    GRADING_NAMES,
    apart_reason,
    format_number,
    format_percent,
    is_true,
)
from dualboard.scored_files import ScoredFolder
from dualboard.stats import StatsTables
from dualboard.stats.scores import MIN_COVERAGE


@dataclass(frozen=True)
class Page:
    """A file of the generated site: docs-relative path and content."""

    path: str
    """Path inside the docs folder, e.g. ``benchmarks/demo/index.md``."""
    content: str
    """Markdown (with raw HTML blocks) or JSON text."""


SHOWN_VERDICT_COLUMNS = ("run_id", "question_id", "round", "grader", "role", "score", "verdict_parse", "detail")
"""The columns of the verdicts table (``dualboard.scored_files.VERDICTS``) that pages show: the render reads no
other (each string column read is held in memory for every answer)."""
READ_VERDICT_COLUMNS = tuple(c for c in SHOWN_VERDICT_COLUMNS if c != "detail")
"""What the render's process reads of the verdicts file: a verdict's detail, shown only in the answers' data
files, is read by what makes them, a shard at a time (``question_pages._make_shard``), so the process that peaks
highest never holds every detail at once."""


@dataclass(frozen=True)
class Appendix:
    """Generated text added to the end of a hand-written page (e.g. methodology.md)."""

    path: str
    """Path of the hand-written page inside the docs folder."""
    content: str
    """Markdown to append."""


@dataclass(frozen=True)
class GradedBenchmark:
    """What the grade stage made of one benchmark, as the render reads it: all that the answers' data files are
    made from (:func:`dualboard.render.question_pages.answer_files`), which therefore need not wait for the
    statistics (:func:`dualboard.pipeline.answers_ahead`)."""

    benchmark: Benchmark
    """The benchmark definition."""
    scored: pd.DataFrame
    """The scored table (``dualboard.scored_files.SCORED``): one row per run × question × round."""
    verdicts: pd.DataFrame
    """The verdicts table (``dualboard.scored_files.VERDICTS``): one row per answer × grader, at least the columns
    :data:`SHOWN_VERDICT_COLUMNS`, or :data:`READ_VERDICT_COLUMNS` when read from :attr:`files`."""
    runs: tuple[Run, ...] = ()
    """The stored runs (their metadata)."""
    files: ScoredFolder | None = None
    """The benchmark's folder of build/scored the tables were read from: the question and run pages read the
    answers from it a slice at a time, and the run keys its ``about.json`` records key their data files
    (:func:`dualboard.render.answer_shards.shard_keys`, :func:`dualboard.render.run_pages.run_table_keys`); None
    where the tables were given otherwise (their data files are then made anew, and only pages that show no
    response can be made)."""
    files_status: list[int] | None = None
    """The status of the folder's ``about.json`` (:func:`dualboard.build_cache.stat_key`) when the tables were
    read: keys read from its files later are of those rows only while it holds (else the render stops)."""

    @property
    def name(self) -> str:
        """The benchmark's name (a folder name)."""
        return self.benchmark.name


@dataclass(frozen=True)
class BenchmarkResults(GradedBenchmark):
    """What the render stage knows about one benchmark: what the grade made of it, and its statistics."""

    stats: StatsTables = field(kw_only=True)
    """The stats stage's tables (models, pairwise, agreement, power, equator)."""
    published: pd.DataFrame | None = field(default=None, kw_only=True)
    """The release's own published table reconciled with ours (:func:`dualboard.stats.published.reconcile`);
    None when the benchmark has no ``published.csv``."""

    @property
    def models(self) -> pd.DataFrame:
        """models.csv: one row per run, a model name shared by runs shown with each one's revision."""
        return with_shown_models(self.stats.models, self.runs)


@dataclass(frozen=True)
class SiteContent:
    """Everything the render stage hands to the site builder."""

    pages: list[Page] = field(default_factory=list)
    """Generated pages."""
    appendices: list[Appendix] = field(default_factory=list)
    """Generated sections added to hand-written pages."""
    assets: dict[str, str | bytes] = field(default_factory=dict)
    """Other files by docs-relative path (chart JSON, CSV downloads)."""
    shared: set[str] = field(default_factory=set)
    """Docs paths of every shared data file the pages load; those not in ``assets`` are in the docs folder
    already (:class:`dualboard.render.shared_files.SharedFiles`)."""
    nav: list = field(default_factory=list)
    """The navigation, as MkDocs' ``nav`` (titles → paths)."""


def front_matter(title: str, *, search: bool = True, hide: tuple[str, ...] = ()) -> str:
    """YAML front matter with a trusted title (JSON strings are valid YAML)."""
    lines = ["---", f"title: {json.dumps(title)}"]
    if not search:
        lines += ["search:", "  exclude: true"]
    if hide:
        lines += ["hide:"] + [f"  - {h}" for h in hide]
    return "\n".join(lines + ["---", "", ""])


def run_slug(run_id: str) -> str:
    """Path segment of a run page (run ids are validated; the slug guards anything else)."""
    return escape_slug(run_id)


def question_href(slug: str, up: str = "") -> str:
    """The address of a question on its benchmark's question page, from the benchmark's folder (``up``: the
    ``../`` that lead there from the linking page).

    Examples
    --------
    >>> question_href("demo-006"), question_href("demo-006", "../../")
    ('questions/question/?id=demo-006', '../../questions/question/?id=demo-006')
    """
    return f"{up}questions/question/?id={slug}"


def run_href(slug: str, up: str = "") -> str:
    """The address of a run on its benchmark's run page, as :func:`question_href`."""
    return f"{up}runs/run/?id={slug}"


def question_slugs(benchmark: Benchmark) -> dict[str, str]:
    """Unique path segment of every question page, by question id."""
    slugs: dict[str, str] = {}
    taken: set[str] = set()
    for question in benchmark.questions:
        slug = base = escape_slug(str(question["id"]))
        n = 1
        while slug in taken:
            n += 1
            slug = f"{base}-{n}"
        taken.add(slug)
        slugs[question["id"]] = slug
    return slugs


def home_page(results: list[BenchmarkResults], last_release: str | None) -> Page:
    """The home page: every benchmark with its leader under both gradings."""
    rows = [_home_row(r) for r in results]
    headers = ["Benchmark", "Runs", "Questions", "Leader, traditional", "Leader, answer-key"]
    release = (
        f"Latest release: **{escape_text(last_release)}** ([changelog](changelog.md)).\n\n"
        if last_release
        else "No release has been frozen yet; this is the working version.\n\n"
    )
    text = (
        front_matter("Home") + "# Dualboard leaderboards\n\n"
        "Every run is scored twice: under the benchmark's **traditional grading** and under strict "
        "**answer-key grading** against human answer keys. Differences are tested question by "
        "question, and every score carries a 95 % confidence interval clustered by question. "
        "See [Methodology](methodology.md).\n\n"
        + release
        + table(headers, rows)
        + "\nEvery grader is checked against human labels on its benchmark's *Graders* page; "
        "scored answers and statistics are on [Downloads](downloads.md).\n"
    )
    return Page("index.md", text)


def _home_row(result: BenchmarkResults) -> list[Cell]:
    models = result.models
    return [
        Cell(result.benchmark.title, href=f"benchmarks/{result.name}/"),
        Cell(str(len(models)), sort=len(models)),
        Cell(str(len(result.benchmark.questions)), sort=len(result.benchmark.questions)),
        Cell(_leader(models, "traditional")),
        Cell(_leader(models, "answer_key")),
    ]


def _leader(models: pd.DataFrame, grading: str) -> str:
    """The best ranked run, or every run tied for first (the data cannot separate it from the leader: its rank
    interval starts at 1); a run the grading judged too little of, or listed apart, is not ranked, so never the
    leader."""
    if models.empty:
        return "no runs yet"
    ranked = models[models[f"ranked_{grading}"].map(is_true)]
    if ranked.empty:
        return (
            f"none ranked (every run is listed apart, or has {GRADING_NAMES[grading]} verdicts "
            f"on under {format_percent(MIN_COVERAGE, 0)} of its answers)"
            if models["apart_reason"].map(apart_reason).ne("").any()
            else f"none ranked (every run has {GRADING_NAMES[grading]} verdicts "
            f"on under {format_percent(MIN_COVERAGE, 0)} of its answers)"
        )
    ranked = ranked.sort_values([f"{grading}_mean", "run_id"], ascending=[False, True])
    tied = ranked[ranked[f"tied_first_{grading}"].map(is_true)]
    named = [
        f"{r['model']} ({format_number(r[f'{grading}_mean'])})"
        for _, r in (tied if len(tied) > 1 else ranked.head(1)).iterrows()
    ]
    return f"tied 1st: {', '.join(named)}" if len(tied) > 1 else named[0]
