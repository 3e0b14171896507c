"""Small builders for the raw HTML blocks that pages are made of.

Every piece of text is escaped here, so page code cannot forget to. Links
(``href``) are built by the site itself from validated names and slugs, and
are escaped too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from dualboard.intake.schemas import load_schema
from dualboard.render.escape import escape_text

_URL = re.compile(load_schema("metadata")["properties"]["model_url"]["pattern"])
"""The metadata contract's link pattern: https, no quote, space or bracket (one definition, in the schema)."""


@dataclass(frozen=True)
class Header:
    """A column header: its text, what it means (shown on hover) and how the page's scripts treat it."""

    text: str
    """Header text (our own words; escaped anyway)."""
    title: str | None = None
    """Explanation shown on hover (the ``title`` attribute)."""
    key: str | None = None
    """Stable name of the column in a shared URL (``?sort=KEY``); see ``javascripts/tables.js``."""
    filter: bool = False
    """Offer a drop-down of the column's values above a filterable table."""


@dataclass(frozen=True)
class Cell:
    """One table cell: display text (escaped on output) and an optional sort key, link and badge."""

    text: str
    """Text to show; untrusted text is fine, it is escaped."""
    sort: float | str | None = None
    """Value tablesort uses instead of the text (numbers sort numerically)."""
    href: str | None = None
    """Relative link built by the site itself (never from submitted text)."""
    badge: str | tuple[str, ...] | None = None
    """Short label shown as a badge after the text (e.g. "tied 1st"), or several, in order."""
    css_class: str | None = None
    """Class of the cell (e.g. ``dualboard-response`` for long model text)."""
    note: str | None = None
    """A second, smaller line under the text (e.g. the naive interval under the honest one)."""
    filter: str | None = None
    """Value a column filter offers for this cell, when it is not the text (e.g. a size bracket)."""
    external: bool = False
    """``href`` is an absolute https link checked by :func:`safe_url` (opens with ``rel="nofollow noopener"``)."""


@dataclass(frozen=True)
class Row:
    """A table row: its cells and an optional class (e.g. a highlighted disagreement)."""

    cells: list[Cell]
    """The cells, one per header."""
    css_class: str | None = None
    """Class of the ``<tr>``."""


def table(
    headers: list[str | Header], rows: list[list[Cell] | Row], *, sortable: bool = True, filterable: bool = False
) -> str:
    """Return a material-styled table as one raw HTML block (no blank lines inside).

    The table carries no class, so mkdocs-material styles it like a Markdown
    table; ``tables.js`` makes every table inside ``.dualboard-sortable``
    sortable by clicking a header, and puts a text filter (and a drop-down
    per :attr:`Header.filter` column) above every ``.dualboard-filterable`` one.
    """
    head = "".join(_header(h if isinstance(h, Header) else Header(h)) for h in headers)
    body = "".join(_row(r if isinstance(r, Row) else Row(r)) for r in rows)
    wrapper = (
        "dualboard-table"
        + (" dualboard-sortable" if sortable else "")
        + (" dualboard-filterable" if filterable else "")
    )
    return (
        f'<div class="{wrapper}"><div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div></div></div>\n"
    )


def _header(header: Header) -> str:
    attrs = "".join(
        f' {name}="{escape_text(value)}"'
        for name, value in (("title", header.title), ("data-key", header.key))
        if value
    )
    if header.filter:
        attrs += ' data-filter="select"'
    return f"<th{attrs}>{escape_text(header.text)}</th>"


def _row(row: Row) -> str:
    css = f' class="{escape_text(row.css_class)}"' if row.css_class else ""
    return f"<tr{css}>" + "".join(_cell(c) for c in row.cells) + "</tr>"


def _cell(cell: Cell) -> str:
    attrs = "" if cell.sort is None else f' data-sort="{escape_text(sort_text(cell.sort))}"'
    if cell.css_class:
        attrs += f' class="{escape_text(cell.css_class)}"'
    if cell.filter is not None:
        attrs += f' data-filter="{escape_text(cell.filter)}"'
    text = escape_text(cell.text)
    if cell.href is not None:
        text = external_link(cell.href, cell.text) if cell.external else link(cell.href, cell.text)
    for label in (cell.badge,) if isinstance(cell.badge, str) else cell.badge or ():
        text += " " + badge(label)
    if cell.note:
        text += f'<span class="dualboard-cell-note">{escape_text(cell.note)}</span>'
    return f"<td{attrs}>{text}</td>"


def sort_text(value: float | str) -> str:
    """Numbers in fixed notation: tablesort's number sorter drops exponents (1e-05 → 1)."""
    if isinstance(value, (int, float)):
        return f"{float(value):.12f}"
    return str(value)


def link(href: str, text: str) -> str:
    """Return an escaped link built by the site."""
    return f'<a href="{escape_text(href)}">{escape_text(text)}</a>'


def safe_url(value: object) -> str | None:
    """Return a submitted URL if it is a plain ``https://host/...`` address, else None.

    Only such links are ever made clickable: no ``javascript:``, ``data:`` or
    relative URL, no credentials, no whitespace, quotes or angle brackets
    (the metadata schema asks for the same; this guards the page anyway).

    Examples
    --------
    >>> safe_url("https://huggingface.co/meta-llama/Llama-3.1-8B")
    'https://huggingface.co/meta-llama/Llama-3.1-8B'
    >>> safe_url("javascript:alert(1)"), safe_url("https://user:pw@host/"), safe_url("https:///x")
    (None, None, None)
    """
    if not isinstance(value, str) or len(value) > 500 or not _URL.fullmatch(value):
        return None
    parts = urlsplit(value)
    if parts.scheme != "https" or not parts.hostname or "@" in parts.netloc:
        return None
    return value


def external_link(href: str, text: str) -> str:
    """Return an escaped link to a checked https URL (:func:`safe_url`); anything else is shown as text."""
    url = safe_url(href)
    if url is None:
        return escape_text(text)
    return f'<a href="{escape_text(url)}" rel="nofollow noopener noreferrer">{escape_text(text)}</a>'


def badge(text: str) -> str:
    """Return a small inline badge."""
    return f'<span class="dualboard-badge">{escape_text(text)}</span>'


def paragraph(text: str, *, css_class: str | None = None) -> str:
    """Return untrusted text as a paragraph block."""
    css = f' class="{escape_text(css_class)}"' if css_class else ""
    return f"<p{css}>{escape_text(text)}</p>\n"


def chart(src: str, caption: str) -> str:
    """Return a chart placeholder (drawn by charts.js) with its caption."""
    return (
        f'<figure class="dualboard-figure"><div class="dualboard-chart" data-src="{escape_text(src)}"></div>'
        f"<figcaption>{escape_text(caption)}</figcaption></figure>\n"
    )


def code_block(text: str) -> str:
    """Return text (e.g. a JSON Schema) as an escaped ``<pre><code>`` block."""
    return f'<div class="highlight"><pre><code>{escape_text(text)}</code></pre></div>\n'


def rank_switch(tables: dict[str, tuple[str, str]]) -> str:
    """Return a CSS-only switch between tables: {key: (label, table html)}; the first is shown.

    Radio buttons and sibling selectors need no script, so the switch keeps
    working after instant navigation. Each radio's ``value`` is its key, which
    ``tables.js`` keeps in the URL (``?grading=KEY``) so a view can be shared.
    """
    inputs, panes = [], []
    for i, (key, (label, html)) in enumerate(tables.items()):
        ident = f"dualboard-rank-{escape_text(key)}"
        checked = " checked" if i == 0 else ""
        inputs.append(
            f'<input type="radio" name="dualboard-rank" id="{ident}" value="{escape_text(key)}" '
            f'class="dualboard-switch-input"{checked}>'
            f'<label for="{ident}" class="dualboard-switch-label">{escape_text(label)}</label>'
        )
        panes.append(f'<div class="dualboard-switch-pane">{html.strip()}</div>')
    return f'<div class="dualboard-switch">{"".join(inputs)}{"".join(panes)}</div>\n'
