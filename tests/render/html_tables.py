"""Read the tables of a generated page back (stdlib HTML parser): what a reader's browser would get."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class ParsedCell:
    """One cell: its text (entities decoded), attributes, links and the second-line note."""

    text: str = ""
    attrs: dict[str, str] = field(default_factory=dict)
    links: list[dict[str, str]] = field(default_factory=list)
    note: str = ""


@dataclass
class ParsedTable:
    """A table: header cells and body rows."""

    headers: list[ParsedCell] = field(default_factory=list)
    rows: list[list[ParsedCell]] = field(default_factory=list)

    def column(self, header: str) -> int:
        """Index of the column whose header text is ``header``."""
        return [h.text for h in self.headers].index(header)


class _TableParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[ParsedTable] = []
        self.cell: ParsedCell | None = None
        self.row: list[ParsedCell] | None = None
        self.in_head = False
        self.in_note = False

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        if tag == "table":
            self.tables.append(ParsedTable())
        elif tag == "thead":
            self.in_head = True
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = ParsedCell(attrs=attrs)
        elif tag == "a" and self.cell is not None:
            self.cell.links.append(attrs)
        elif tag == "span" and "dualboard-cell-note" in attrs.get("class", ""):
            self.in_note = True

    def handle_endtag(self, tag):
        if tag == "thead":
            self.in_head = False
        elif tag == "span":
            self.in_note = False
        elif tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            table = self.tables[-1]
            if self.in_head:
                table.headers = self.row
            else:
                table.rows.append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            if self.in_note:
                self.cell.note += data
            else:
                self.cell.text += data


def tables(page: str) -> list[ParsedTable]:
    """Every table of a page's HTML or Markdown-with-raw-HTML, in order."""
    parser = _TableParser()
    parser.feed(page)
    for table in parser.tables:
        for row in [table.headers, *table.rows]:
            for cell in row:
                cell.text = cell.text.strip()
    return parser.tables


def table_after(page: str, heading: str) -> ParsedTable:
    """The first table after the Markdown heading ``heading`` (e.g. ``## Every question``)."""
    return tables(page[page.index(heading) :])[0]
