"""A small link checker for a built static site: every internal link must land on a file (and #id)."""

from __future__ import annotations

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
            if not target.is_file():
                broken.append((page_url, link))
            elif parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in parse(target).ids:
                    broken.append((page_url, link))
    return broken
