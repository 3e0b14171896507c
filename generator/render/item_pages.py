"""The one question page and the one run page of each benchmark, and the page documents they show.

MkDocs builds only pages whose number does not grow with the questions and
runs. A benchmark's question page (``benchmarks/B/questions/question/``) shows
any of its questions, and its run page (``benchmarks/B/runs/run/``) any of its
runs, named in the address: ``question/?id=<slug>``. ``javascripts/item-pages.js``
looks the slug up in the folder's index (``data-files.json``, key
``<slug>#page``; :mod:`dualboard.render.lazy_tables`), loads the item's *page
document* from ``shared/`` and builds it with ``textContent`` (never
``innerHTML``), then fills its lazy tables from the same index. An unknown slug,
or scripts off, leaves a line that says so.

The page document (``FORMAT`` 1), gzip-compressed and named by its JSON::

    {"format": 1, "title": "...", "blocks": [block, ...]}

A block is one of:

* ``{"heading": text, "level": 2}``;
* ``{"text": [segment, ...], "class": css class?}``: a paragraph, each segment a
  string or a link ``{"text": ..., "href": ...}``;
* ``{"table": {"headers": [...], "rows": [[cell, ...], ...], "sortable": bool}}``:
  a table as :func:`dualboard.render.html.table` writes one, a header as
  :func:`~dualboard.render.lazy_tables.header_json` gives it and a cell as
  :func:`cell_json` does;
* ``{"lazy": {...}}``: a lazy table (:meth:`~dualboard.render.lazy_tables.LazyTable.block`).

Links are the site's own, relative to the item page (``../../`` is the
benchmark's leaderboard); the script refuses any other.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from typing import Any

import msgspec

from dualboard.render.html import Cell, Header, sort_text
from dualboard.render.lazy_tables import DOWNLOADS, GZIP_LEVEL, INDEX, SUFFIX, IndexedFiles, header_json, index_key
from dualboard.render.pages import Page, front_matter
from dualboard.render.shared_files import shared_name

FORMAT = 1
"""Version of the page document; ``item-pages.js`` refuses any other."""
PAGE = "page"
"""The noun of an item's page document in its folder's index."""
ITEM_PAGES = {"questions": "question", "runs": "run"}
"""The item page of each folder of a benchmark: ``benchmarks/B/<folder>/<page>/?id=<slug>``."""
_ENCODER = msgspec.json.Encoder()


FROM_ITEM = "../../"
"""The benchmark's folder from an item page (``benchmarks/B/runs/run/``)."""


def heading(text: str, level: int = 2) -> dict[str, Any]:
    """A heading block."""
    return {"heading": text, "level": level}


def text(*segments: str | Cell, css_class: str | None = None) -> dict[str, Any]:
    """A paragraph block: strings, and cells with an ``href`` as links."""
    parts = [s if isinstance(s, str) else ({"text": s.text, "href": s.href} if s.href else s.text) for s in segments]
    return {"text": parts, **({"class": css_class} if css_class else {})}


def table_block(headers: Sequence[str | Header], rows: Sequence[Sequence[Cell]], *, sortable: bool = True) -> dict:
    """A table block: what :func:`dualboard.render.html.table` writes, as data."""
    return {
        "table": {
            "headers": [header_json(h) for h in headers],
            "rows": [[cell_json(c) for c in row] for row in rows],
            "sortable": sortable,
        }
    }


def cell_json(cell: Cell) -> dict[str, Any]:
    """A table cell as a page document carries it: the fields :func:`dualboard.render.html.table` writes."""
    badges = [cell.badge] if isinstance(cell.badge, str) else list(cell.badge or ())
    found = {
        "text": cell.text,
        "sort": None if cell.sort is None else sort_text(cell.sort),
        "href": cell.href,
        "badges": badges or None,
        "class": cell.css_class,
        "note": cell.note,
        "filter": cell.filter,
    }
    return {name: value for name, value in found.items() if value is not None}


def page_document(page: str, title: str, blocks: Sequence[dict[str, Any]]) -> IndexedFiles:
    """The page document of the item whose page would be at docs path ``page`` (``benchmarks/B/runs/<slug>.md``):
    its data file, named in the folder's index under ``<slug>#page``."""
    raw = _ENCODER.encode({"format": FORMAT, "title": title, "blocks": list(blocks)})
    index, key = index_key(page, PAGE)
    return IndexedFiles(index, key, (shared_name(raw, SUFFIX),), (gzip.compress(raw, GZIP_LEVEL, mtime=0),))


def item_page(benchmark: str, folder: str, title: str) -> Page:
    """The page of ``benchmarks/<benchmark>/<folder>/`` that shows any one of its items (:data:`ITEM_PAGES`).

    Out of the search index: the indexes (:func:`dualboard.render.question_pages.question_list`) carry what
    search finds of each item.
    """
    noun = ITEM_PAGES[folder]
    return Page(
        f"benchmarks/{benchmark}/{folder}/{noun}.md",
        front_matter(title, search=False, hide=("navigation", "toc"))
        + f"<h1>{title}</h1>\n\n"  # no permalink: the script puts the item's own title in it
        + f'<div class="dualboard-item" data-src="../{INDEX}" data-noun="{noun}">'
        '<p class="dualboard-item-status"><span class="dualboard-item-message">This page shows the '
        f"{noun} named in its address (?id=), loaded from a data file by a script: if this line stays, scripts are "
        "off in this browser or the file could not be loaded.</span> Open one from the "
        f'<a href="../">list</a>; every answer and verdict is also in the scored data of each release, listed on the '
        f'<a href="{DOWNLOADS}">Downloads</a> page.</p></div>\n',
    )
