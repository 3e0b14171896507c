"""Escaping: submitted text is inert in Markdown and HTML."""

from __future__ import annotations

import html

import markdown
from hypothesis import given
from hypothesis import strategies as st

from dualboard.render.escape import escape_slug, escape_text
from dualboard.render.html import Cell, table

# html.unescape (like a browser) maps C0/C1 controls and surrogates to other
# characters, so round-tripping is only defined for displayable text.
DISPLAYABLE = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Co", "Cn"), whitelist_characters="\n\t"))


@given(DISPLAYABLE)
def test_escaped_text_round_trips_through_html(text):
    assert html.unescape(escape_text(text)) == text


@given(st.text())
def test_escaped_text_has_only_safe_characters(text):
    out = escape_text(text)
    assert all(ch.isascii() and (ch.isalnum() or ch in " &#;") for ch in out)


@given(st.text(min_size=1))
def test_slugs_are_path_safe(text):
    slug = escape_slug(text)
    assert slug and "/" not in slug and ".." not in slug and all(c.isascii() for c in slug)


PAYLOADS = [
    "<script>alert(1)</script>",
    "[x](javascript:alert(1))",
    "*bold* _it_",
    '--8<-- "/etc/passwd"',
    "{{ config }}",
    "</td></tr></table><img src=x onerror=alert(1)>",
    "\n\n# heading\n\n",
]


def test_table_cells_survive_markdown_as_text():
    rendered = markdown.markdown(table(["h"], [[Cell(p)] for p in PAYLOADS]), extensions=["tables", "attr_list"])
    assert "<script" not in rendered and "<img" not in rendered and "javascript:" not in rendered
    assert "<h1" not in rendered and "<strong>" not in rendered and "<em>" not in rendered
    shown = html.unescape(rendered)
    for p in PAYLOADS:
        assert p in shown, f"payload must be displayed literally: {p!r}"
    assert rendered.count("<tr>") == len(PAYLOADS) + 1
