"""Generated pages, pure: built in-process from a tiny leaderboard (3 questions: most statistics are missing)."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
import yaml

from dualboard import pipeline
from dualboard.project import Project
from dualboard.release_files import load_releases
from dualboard.render.site_content import site_content
from dualboard.store import LocalStore
from tests.conftest import tiny_metadata, write_run
from tests.render.html_tables import item_page

HOSTILE_MODEL = "<script>window.__xss=1</script>[x](javascript:alert(1)){{ config }}"


@pytest.fixture
def tiny_content(tiny_root: Path):
    write_run(tiny_root, "run-b", metadata=tiny_metadata(model=HOSTILE_MODEL, notes='--8<-- "/etc/passwd"'))
    project = Project(tiny_root)
    store = LocalStore(project.store_dir)
    pipeline.ingest(project, store)
    pipeline.grade(project, store, progress=False)
    pipeline.stats(project)
    results = pipeline.analysed_results(project, store)
    return project, store, site_content(results, load_releases(tiny_root))


def test_every_page_type_is_generated(tiny_content):
    _, _, content = tiny_content
    paths = [p.path for p in content.pages]
    assert len(paths) == len(set(paths))
    for path in (
        "index.md",
        "benchmarks/tiny/index.md",
        "benchmarks/tiny/runs/index.md",
        "benchmarks/tiny/runs/run.md",
        "benchmarks/tiny/questions/index.md",
        "benchmarks/tiny/questions/question.md",
        "benchmarks/tiny/graders.md",
        "submit.md",
        "downloads.md",
        "changelog.md",
    ):
        assert path in paths, path
    assert {a.path for a in content.appendices} == {"methodology.md"}
    assert {"benchmarks/tiny/charts/scores.json", "benchmarks/tiny/charts/pairwise-answer_key.json"} <= set(
        content.assets
    )


def test_the_pages_of_one_question_or_run_are_out_of_nav_and_search(tiny_content):
    _, _, content = tiny_content
    nav = yaml.safe_dump(content.nav)
    for path in ("benchmarks/tiny/questions/question.md", "benchmarks/tiny/runs/run.md"):
        page = next(p for p in content.pages if p.path == path)
        assert page.content.startswith("---\n") and "search:\n  exclude: true" in page.content
        assert page.path not in nav
    assert "benchmarks/tiny/questions/index.md" in nav and "benchmarks/tiny/runs/index.md" in nav


def test_hostile_text_never_reaches_markdown_raw(tiny_content):
    _, _, content = tiny_content
    for page in content.pages:
        assert "<script>" not in page.content and "javascript:" not in page.content, page.path
        assert "{{" not in page.content and "--8<--" not in page.content, page.path
    assert item_page(content.assets, "benchmarks/tiny/runs", "run-b").startswith(f"# {HOSTILE_MODEL}\n")
    runs = next(p for p in content.pages if p.path == "benchmarks/tiny/runs/index.md")
    assert HOSTILE_MODEL in html.unescape(runs.content)


def test_column_docs_and_schemas_come_from_the_code(tiny_content):
    from dualboard.stats import COLUMNS

    _, _, content = tiny_content
    methodology = html.unescape(content.appendices[0].content)
    for table, columns in COLUMNS.items():
        for column, meaning in columns.items():
            assert column in methodology and str(meaning) in methodology, (table, column)
    submit = html.unescape(next(p for p in content.pages if p.path == "submit.md").content)
    assert '"$id": "dualboard/prediction.schema.json"' in submit


@pytest.mark.slow
def test_tiny_site_builds_strict(tiny_content):
    """Missing statistics (3 questions) must still give a valid site: mkdocs build --strict passes."""
    project, store, _ = tiny_content
    pipeline.render(project, store)
    assert (project.site_dir / "benchmarks/tiny/questions/question/index.html").is_file()
    assert (project.site_dir / "benchmarks/tiny/runs/run/index.html").is_file()
