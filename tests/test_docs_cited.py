"""Every section the code cites exists, and the docs point only to what a user has.

Docstrings and comments cite a section of the site's methodology page by its title, as in
(Methodology, §Paired tests), and one of the contributors' architecture page as in
(docs/architecture.md, "Rendering"), always in parentheses. Each title must be a heading of that page, so a renamed
section cannot leave a citation behind. No text, the tests' included, may send a reader to
the team's private specification, which users of the published project do not have.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_commands_named import REPO, readable_text, texts

METHODOLOGY = REPO / "generator" / "render" / "site_default" / "site_src" / "methodology.md"
ARCHITECTURE = REPO / "docs" / "architecture.md"

CITATIONS = {
    METHODOLOGY: re.compile(r"\(Methodology,\s+§(?P<title>[^)\"'`]+)\)"),
    ARCHITECTURE: re.compile(r'\(docs/architecture\.md,\s+"(?P<title>[^"]+)"\)'),
}
"""How each page is cited, always in parentheses; a title may wrap onto the next line."""

SPECIFICATION = re.compile(r"\b(?:DESIGN|STATISTICS|STYLE)\.md\b")
"""The team's private specification documents."""
WORKSPACE = re.compile(r"\.\./shared(?:/(?:data|hooks)\b|(?![/\w]))")
"""The team's workspace beside the checkout (only tests may read its data); ``../shared/<file>`` is a site's
shared data files (render/shared_files.py), not the workspace."""


def suite_sources() -> list[Path]:
    """The test suite's Python files: contributors read their docstrings and comments too."""
    return sorted(p for p in (REPO / "tests").rglob("*.py") if "__pycache__" not in p.parts)


CODE_SPAN = re.compile(r"`[^`\n]*`")
"""Inline code, whose ``[x](y)`` is an example, not a link."""


def headings(page: Path) -> set[str]:
    """The titles of a Markdown page's headings, without their ``{#anchor}``."""
    return {
        re.sub(r"\s*\{#[\w-]+\}\s*$", "", m.group(1)).strip()
        for m in re.finditer(r"^#{1,6}\s+(.+)$", page.read_text("utf-8"), re.M)
    }


def citations() -> list[tuple[Path, int, Path, str]]:
    """(file, line, cited page, cited title) of every citation in the files users and contributors read."""
    found = []
    for path in [*texts(), *suite_sources()]:
        text = readable_text(path)
        for page, pattern in CITATIONS.items():
            for match in pattern.finditer(text):
                title = " ".join(match.group("title").replace("#", " ").split())
                found.append((path, text.count("\n", 0, match.start()) + 1, page, title))
    return found


def test_the_cited_pages_have_the_sections_the_code_relies_on():
    assert {"Paired tests", "No interval is zero-width", "Grader agreement"} <= headings(METHODOLOGY)
    assert {"Rendering", "The Hub store", "Files that cross a stage boundary"} <= headings(ARCHITECTURE)


@pytest.mark.slow
def test_every_cited_section_exists():
    found = citations()
    assert len(found) >= 15, "the citation patterns found almost nothing: were they renamed?"
    known = {page: headings(page) for page in CITATIONS}
    missing = [
        f"{path.relative_to(REPO)}:{line}: cites {page.relative_to(REPO)} §{title!r}, which has no such heading"
        f" — cite one of: {', '.join(sorted(known[page]))}"
        for path, line, page, title in found
        if title not in known[page]
    ]
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        (
            "as for partial credit (Methodology, §Mean score and its" + "\n    interval). When",
            "Mean score and its interval",
        ),
        ("(Methodology, §Grader agreement), hence BCa.", "Grader agreement"),
    ],
)
def test_a_citation_wrapped_in_a_docstring_is_read_whole(text, title):
    match = CITATIONS[METHODOLOGY].search(text)
    assert " ".join(match.group("title").split()) == title


def _lines(paths: list[Path], pattern: re.Pattern) -> list[str]:
    return [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in paths
        for number, line in enumerate(readable_text(path).split("\n"), start=1)
        if pattern.search(line)
    ]


@pytest.mark.slow
def test_no_user_facing_text_points_to_the_private_workspace():
    hits = _lines(texts(), SPECIFICATION) + _lines(texts(), WORKSPACE)
    assert not hits, "cite the Methodology page or docs/architecture.md instead:\n" + "\n".join(hits)


def test_no_test_cites_the_private_specification():
    hits = _lines(suite_sources(), SPECIFICATION)
    assert not hits, "cite the Methodology page or docs/architecture.md instead:\n" + "\n".join(hits)


def test_relative_links_of_the_docs_resolve():
    pages = [REPO / "README.md", *sorted(REPO.glob("*/README.md")), *sorted((REPO / "docs").glob("*.md"))]
    broken = [
        f"{page.relative_to(REPO)}: ({target})"
        for page in pages
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", CODE_SPAN.sub("", page.read_text("utf-8")))
        if "://" not in target and not (page.parent / target).exists()
    ]
    assert not broken, "\n".join(broken)


REPO_PATH = re.compile(r"`((?:generator|tests|bench|data|docs|site_src|submissions|\.github)/[\w./-]*)`")
"""A path in the repository, written as inline code; ones with placeholders (``<run>``, ``*``) do not match."""


def test_every_repository_path_the_docs_name_exists():
    pages = [REPO / "README.md", *sorted(REPO.glob("*/README.md")), *sorted((REPO / "docs").glob("*.md"))]
    named = [
        (page, number, path)
        for page in pages
        for number, line in enumerate(page.read_text("utf-8").split("\n"), start=1)
        for path in REPO_PATH.findall(line)
    ]
    assert len(named) >= 20, "the path pattern found almost nothing"
    missing = [
        f"{page.relative_to(REPO)}:{number}: `{path}` does not exist — correct the path"
        for page, number, path in named
        if not (REPO / path).exists() and not (page.parent / path).exists()
    ]
    assert not missing, "\n".join(missing)


def test_the_bench_readme_names_every_script():
    readme = (REPO / "bench" / "README.md").read_text("utf-8")
    unnamed = [p.name for p in sorted((REPO / "bench").glob("*.py")) if f"`{p.name}`" not in readme]
    assert not unnamed, f"bench/README.md does not say what {', '.join(unnamed)} measure(s) — add a row"
