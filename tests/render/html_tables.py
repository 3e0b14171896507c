"""Read the tables of a generated page back (stdlib HTML parser): what a reader's browser would get."""

from __future__ import annotations

import gzip
import html
import json
import posixpath
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from dualboard.render.html import Cell, Header
from dualboard.render.html import table as html_table
from dualboard.render.item_pages import FORMAT as ITEM_FORMAT
from dualboard.render.lazy_tables import FORMAT, INDEX, INDEX_FORMAT, IndexedFiles, read_data
from dualboard.render.shared_files import url_folder


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


def lazy_sources(page_path: str, page: str, heading: str, assets: dict) -> list[str]:
    """Docs paths of the data files that the lazy table after ``heading`` loads, as the page's script finds them.

    The table names the index of its folder (``data-src``, relative to the page's URL: MkDocs serves
    ``a/b.md`` at ``a/b/``) and its key there (``data-key``); the index names the files under ``shared/``.
    """
    match = re.search(r'<div class="dualboard-lazy" data-src="([^"]+)" data-key="([^"]+)"', page[page.index(heading) :])
    assert match, f"no lazy table after {heading!r}"
    index_path = _resolve(url_folder(page_path), html.unescape(match.group(1)))
    index = json.loads(assets[index_path])
    assert index["format"] == INDEX_FORMAT
    names = index["files"][html.unescape(match.group(2))]
    assert isinstance(names, list)
    return [_resolve(posixpath.dirname(index_path), index["shared"] + name) for name in names]


def lazy_source(page_path: str, page: str, heading: str, assets: dict) -> str:
    """The one data file of the lazy table after ``heading`` (:func:`lazy_sources`; a table of one file)."""
    (source,) = lazy_sources(page_path, page, heading, assets)
    return source


def _resolve(folder: str, href: str) -> str:
    return posixpath.normpath(posixpath.join(folder, href))


def merged_data(documents: list[dict]) -> dict:
    """The data documents of a table's shards as one, as the page shows them: rows one file after the other,
    link cells renumbered into the links put end to end."""
    merged = {"format": FORMAT, "pass_mark": None, "kinds": None, "links": [], "rows": []}
    for data in documents:
        assert data["format"] == FORMAT
        assert merged["kinds"] in (None, data["kinds"]), "the shards of one table have other columns"
        merged["pass_mark"], merged["kinds"] = data["pass_mark"], data["kinds"]
        offset = len(merged["links"])
        merged["links"] += data["links"]
        merged["rows"] += [
            [
                value + offset if kind == "link" and value is not None else value
                for kind, value in zip(data["kinds"], row)
            ]
            for row in data["rows"]
        ]
    return merged


def lazy_table_after(page_path: str, page: str, heading: str, assets: dict) -> tuple[ParsedTable, dict]:
    """The lazy table after ``heading`` as a reader sees it once its data files are loaded, and the data itself
    (the shards merged: :func:`merged_data`).

    Cells are read from the data files by kind, as ``javascripts/lazy-tables.js`` writes them
    (the browser tests check the script against the same files).
    """
    data = merged_data([read_data(assets[source]) for source in lazy_sources(page_path, page, heading, assets)])
    parsed = table_after(page, heading)
    assert parsed.rows == [], "a lazy table's rows are in its data files, not in the page"
    parsed.rows = [
        [_lazy_cell(kind, value, data) for kind, value in zip(data["kinds"] or [], row)] for row in data["rows"]
    ]
    return parsed, data


def _lazy_cell(kind: str, value, data: dict) -> ParsedCell:
    if kind == "link":
        text, href = data["links"][value]
        return ParsedCell(text=text, links=[{"href": href}])
    if kind == "options":
        return ParsedCell(text=value[0], note=value[1] or "") if value else ParsedCell(text="—")
    if kind in ("verdict", "value"):
        note = value[2] if len(value) > 2 and value[2] is not None else ""
        return ParsedCell(text=value[1], attrs={"data-sort": "" if value[0] is None else str(value[0])}, note=note)
    return ParsedCell(text="" if value is None else str(value))


def read_document(data: bytes) -> dict:
    """A question's or run's page document (:mod:`dualboard.render.item_pages`) from its gzip-compressed bytes."""
    document = json.loads(gzip.decompress(data))
    assert document["format"] == ITEM_FORMAT
    return document


def document_page(document: dict | IndexedFiles) -> str:
    """A page document as the item page shows it once ``javascripts/item-pages.js`` has built it: its title as a
    Markdown ``#`` heading and each heading as ``##`` (so :func:`table_after` finds the table after one), the rest
    as the HTML the script makes, which is the markup :func:`dualboard.render.html.table` writes (the browser
    tests check the script against the same files)."""
    if isinstance(document, IndexedFiles):
        document = read_document(document.data[0])
    return f"# {document['title']}\n\n" + "".join(_block(b) for b in document["blocks"])


def item_page(files: dict | Path, folder: str, slug: str) -> str:
    """The page of the item ``slug`` of the docs folder ``folder`` (``benchmarks/B/runs``), found as the item page
    finds it: through the folder's index, under ``<slug>#page`` (:func:`document_page`).

    ``files``: the site's files by docs path (a render's assets), or a built site's folder.
    """

    def read(path: str) -> bytes:
        return files[path] if isinstance(files, dict) else (files / path).read_bytes()

    index = json.loads(read(f"{folder}/{INDEX}"))
    (name,) = index["files"][f"{slug}#page"]
    return document_page(read_document(read(_resolve(folder, index["shared"] + name))))


def _block(block: dict) -> str:
    if "heading" in block:
        return f"{'#' * block['level']} {block['heading']}\n\n"
    if "text" in block:
        css = f' class="{block["class"]}"' if "class" in block else ""
        parts = [
            html.escape(p) if isinstance(p, str) else f'<a href="{html.escape(p["href"])}">{html.escape(p["text"])}</a>'
            for p in block["text"]
        ]
        return f"<p{css}>{''.join(parts)}</p>\n"
    if "table" in block:
        spec = block["table"]
        rows = [[_cell(c) for c in row] for row in spec["rows"]]
        return html_table([Header(**h) for h in spec["headers"]], rows, sortable=spec["sortable"])
    spec = block["lazy"]
    headers = [Header(**h) for h in spec["headers"]]
    wrapper = html_table(headers, [], filterable=spec["filterable"])
    return (
        f'<div class="dualboard-lazy" data-src="../{INDEX}" data-key="{html.escape(spec["key"])}" '
        f'data-noun="{html.escape(spec["noun"])}">{wrapper}</div>\n'
    )


def _cell(cell: dict) -> Cell:
    badges = cell.get("badges")
    return Cell(
        cell["text"],
        sort=cell.get("sort"),
        href=cell.get("href"),
        badge=tuple(badges) if badges else None,
        css_class=cell.get("class"),
        note=cell.get("note"),
        filter=cell.get("filter"),
    )
