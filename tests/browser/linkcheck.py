"""A small link checker for a built static site: every internal link must land on a file (and #id), and a link
to a question or run (``question/?id=<slug>``) on one the folder's index names; so must every link of the data
files the pages build themselves from (page documents, lazy tables)."""

from __future__ import annotations

import gzip
import json
import posixpath
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

ATTRIBUTES = {"href", "src", "data-src"}


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ATTRIBUTES and value is not None:
                self.links.append(value)
            if name in ("id", "name") and value:
                self.ids.add(value)


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text("utf-8"))
    return parser


def _target(site: Path, url_path: str) -> Path:
    path = site / unquote(url_path).lstrip("/")
    return path / "index.html" if url_path.endswith("/") or path.is_dir() else path


def broken_links(site: Path) -> list[tuple[str, str]]:
    """Return (page, link) for every internal link of every HTML page that does not resolve."""
    broken, parsed = [], {}

    def parse(path: Path) -> _Links:
        if path not in parsed:
            parsed[path] = _parse(path)
        return parsed[path]

    for page in sorted(site.rglob("*.html")):
        page_url = "/" + page.relative_to(site).as_posix()
        links = parse(page).links
        for link in links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "data:")):
                continue
            target = page if not parts.path else _target(site, urljoin(page_url, parts.path))
            if not target.is_file() or not _names_an_item(target, parts.query):
                broken.append((page_url, link))
            elif parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in parse(target).ids:
                    broken.append((page_url, link))
    return broken


def _names_an_item(page: Path, query: str) -> bool:
    """Whether the item page ``page`` shows what ``query`` names: no ``id=``, or a slug its folder's index has."""
    if not query.startswith("id="):
        return True
    index = page.parent.parent / "data-files.json"
    return index.is_file() and f"{query[3:]}#page" in json.loads(index.read_text("utf-8"))["files"]


def broken_data_links(site: Path) -> list[tuple[str, str]]:
    """Return (data file, link) for every link of every data file an index names that does not resolve from the
    page that shows it: a question's or run's page (``<folder>/<item>/``), which loads them all."""
    broken = []
    for index_path in sorted(site.rglob("data-files.json")):
        index = json.loads(index_path.read_text("utf-8"))
        folder = index_path.parent
        page = next(p for p in folder.iterdir() if p.is_dir() and (p / "index.html").is_file())
        page_url = "/" + page.relative_to(site).as_posix() + "/"
        for names in index["files"].values():
            for name in names:
                path = (folder / index["shared"] / name).resolve()
                for link in _links_of(json.loads(gzip.decompress(path.read_bytes()))):
                    parts = urlsplit(link)
                    target = _target(site, posixpath.normpath(urljoin(page_url, parts.path)) + "/")
                    if not target.is_file() or not _names_an_item(target, parts.query):
                        broken.append((path.name, link))
    return broken


def _links_of(document) -> list[str]:
    """Every ``href`` of a page document and every link of a lazy table's data file."""
    if isinstance(document, dict):
        found = [document["href"]] if isinstance(document.get("href"), str) else []
        if "links" in document and "rows" in document:
            found += [href for _text, href in document["links"]]
        if "downloads" in document:
            found.append(document["downloads"])
        return found + [link for value in document.values() for link in _links_of(value)]
    if isinstance(document, list):
        return [link for value in document for link in _links_of(value)]
    return []
