"""Small builders for the raw HTML blocks that pages are made of.

Every cell is escaped here, so page code cannot forget to.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.render.escape import escape_text


@dataclass(frozen=True)
class Cell:
    """One table cell: display text (escaped on output) and an optional sort key and link."""

    text: str
    """Text to show; untrusted text is fine, it is escaped."""
    sort: float | str | None = None
    """Value tablesort uses instead of the text (numbers sort numerically)."""
    href: str | None = None
    """Relative link built by the site itself (never from submitted text)."""


def table(headers: list[str], rows: list[list[Cell]], *, css_class: str = "dualboard-table") -> str:
    """Return a sortable HTML table as one raw HTML block (no blank lines inside)."""
    head = "".join(f"<th>{escape_text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows)
    return f'<div class="{css_class}"><table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>\n'


def _cell(cell: Cell) -> str:
    sort = "" if cell.sort is None else f' data-sort="{escape_text(cell.sort)}"'
    text = escape_text(cell.text)
    if cell.href is not None:
        text = f'<a href="{escape_text(cell.href)}">{text}</a>'
    return f"<td{sort}>{text}</td>"


def chart(src: str, caption: str) -> str:
    """Return a chart placeholder (drawn by charts.js) with its caption."""
    return (f'<figure><div class="dualboard-chart" data-src="{escape_text(src)}"></div>'
            f"<figcaption>{escape_text(caption)}</figcaption></figure>\n")


def preformatted(text: str) -> str:
    """Return untrusted multi-line text as an escaped block."""
    return f'<div class="dualboard-response">{escape_text(text)}</div>\n'
