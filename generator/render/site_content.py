"""Assemble every generated page, asset and the navigation of the site."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from types import MappingProxyType

from dualboard.release_files import ReleaseRecord
from dualboard.render import charts
from dualboard.render.changelog import changelog_page, history, removed_since
from dualboard.render.escape import escape_text
from dualboard.render.graders_page import graders_page
from dualboard.render.kept_files import KeptFiles
from dualboard.render.lazy_tables import data_files
from dualboard.render.leaderboard import leaderboard_columns_appendix, leaderboard_page
from dualboard.render.pages import BenchmarkResults, SiteContent, home_page
from dualboard.render.question_pages import AnswerFiles, answer_files, question_pages
from dualboard.render.reference_pages import DOWNLOADS_PAGE, downloads_page, methodology_appendix, submit_page
from dualboard.render.run_pages import run_pages
from dualboard.render.shared_files import SharedFiles
from dualboard.store.base import Removal

NOT_IN_NAV = ("benchmarks/*/runs/run.md", "benchmarks/*/questions/question.md")
"""Pages reachable by links only (MkDocs ``not_in_nav`` patterns): the pages that show one run or question."""


def site_content(
    results: list[BenchmarkResults],
    releases: list[ReleaseRecord],
    removals: list[Removal] = (),
    *,
    release: str | None = None,
    shared: SharedFiles | None = None,
    shards: Mapping[str, KeptFiles] = MappingProxyType({}),
    run_tables: Mapping[str, KeptFiles] = MappingProxyType({}),
    started: Mapping[str, AnswerFiles] = MappingProxyType({}),
) -> SiteContent:
    """Every generated page of the site, its chart JSON and downloads, and the navigation.

    ``removals``: the store's removal records; those not yet released head the changelog.
    ``release``: the version this site is deployed as, whose files the Downloads page carries.
    ``shared``: where the data files the pages load go (written to the docs folder as they are made);
    without it they are in the content's assets. ``shards`` and ``run_tables``: each benchmark's
    :class:`KeptFiles`, by name, for the question pages to keep the answers' data files of unchanged shards
    of runs, and for the run pages to keep those of unchanged runs. ``started``: the answers' data files of
    benchmarks whose making began before the render (:func:`dualboard.pipeline.answers_ahead`), by name; the
    others' begin here.
    """
    content = SiteContent()
    held = shared is None
    shared = SharedFiles() if held else shared
    content.pages.append(home_page(results, releases[-1].version if releases else None))
    for result in results:
        # A worker makes the answers' data files (when there are several cores) while this process writes the
        # leaderboard and run pages. The graders page is made after the worker is done: it is where this process
        # peaks in memory, and the render's memory counts over its process tree.
        ahead = started.get(result.name)
        begun = contextlib.nullcontext(ahead) if ahead is not None else None
        with begun or answer_files(result, shared, shards.get(result.name)) as answers:
            page, assets = leaderboard_page(result)
            content.pages.append(page)
            content.assets.update(assets)
            runs, run_files = run_pages(result, shared, run_tables.get(result.name))
            questions, question_files = question_pages(result, answers)
        content.pages.extend(runs + questions + [graders_page(result)])
        # The indexes that name the data files those pages load (shared/).
        content.assets.update(data_files(run_files + question_files, shared, versioned=release is not None))
    downloads, files = downloads_page(results, releases, release, shared)
    content.pages.extend(
        [
            submit_page([r.benchmark for r in results]),
            downloads,
            changelog_page(history(releases), removed_since(releases, list(removals))),
        ]
    )
    content.assets.update(files)
    content.assets["javascripts/plotly.min.js"] = charts.plotly_js()
    content.assets["javascripts/chart-templates.js"] = charts.templates_js()
    content.appendices.append(methodology_appendix(results))
    content.appendices.append(leaderboard_columns_appendix())
    content.nav.extend(navigation(results))
    if held:
        content.assets.update(shared.data)
    content.shared.update(shared.names)
    return content


def navigation(results: list[BenchmarkResults]) -> list:
    """The explicit navigation; the pages that show one run or question are reached by links."""
    benchmarks = [
        {
            escape_text(r.benchmark.title): [
                {"Leaderboard": f"benchmarks/{r.name}/index.md"},
                {"Questions": f"benchmarks/{r.name}/questions/index.md"},
                {"Runs": f"benchmarks/{r.name}/runs/index.md"},
                {"Graders": f"benchmarks/{r.name}/graders.md"},
            ]
        }
        for r in results
    ]
    return [
        {"Home": "index.md"},
        *benchmarks,
        {"Methodology": "methodology.md"},
        {"How to submit": "submit.md"},
        {"Downloads": DOWNLOADS_PAGE},
        {"Changelog": "changelog.md"},
    ]
