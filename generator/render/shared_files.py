"""Content-addressed data files that every version of the site shares.

Data a page loads lazily (the answers of a question page, for one) is
written once under ``shared/``, named by the SHA-256 of its bytes: a file that
did not change between two releases is the same file, so versions can share
it instead of each carrying a copy. In a site built alone (``dualboard build``)
the folder sits at the site's root; a release's deploy keeps it beside the
version folders (``gh-pages/shared/``), one level above each version's root.
"""

from __future__ import annotations

import hashlib
from pathlib import PurePosixPath

SHARED_DIR = "shared"
"""Docs-relative folder of the shared files (and, in ``gh-pages``, the folder beside the versions)."""


def shared_name(data: bytes, suffix: str) -> str:
    """Docs-relative path of a shared file holding ``data``: its SHA-256 names it.

    Examples
    --------
    >>> shared_name(b"", ".json")
    'shared/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.json'
    """
    return f"{SHARED_DIR}/{hashlib.sha256(data).hexdigest()}{suffix}"


def shared_href(source: str, name: str, *, versioned: bool) -> str:
    """URL of the shared file ``name`` relative to the URL of the docs file ``source`` (a page or a file).

    A versioned site (a release) finds ``shared/`` one level above its root.

    Examples
    --------
    >>> shared_href("benchmarks/demo/questions/q1.md", "shared/ab.json", versioned=False)
    '../../../../shared/ab.json'
    >>> shared_href("index.md", "shared/ab.json", versioned=True)
    '../shared/ab.json'
    >>> shared_href("benchmarks/demo/questions/data-files.json", "shared/", versioned=False)
    '../../../shared/'
    """
    depth = len(PurePosixPath(url_folder(source)).parts)
    return "../" * (depth + (1 if versioned else 0)) + name


def url_folder(source: str) -> str:
    """The folder of the URL MkDocs serves the docs file ``source`` at (``.`` for the site's root).

    MkDocs writes ``a/b.md`` to ``a/b/index.html`` (directory URLs), so a page
    sits one folder deeper than its source, unless it is an ``index.md``; any
    other file is served at its own path.

    Examples
    --------
    >>> url_folder("benchmarks/demo/questions/q1.md"), url_folder("benchmarks/demo/index.md")
    ('benchmarks/demo/questions/q1', 'benchmarks/demo')
    >>> url_folder("index.md"), url_folder("benchmarks/demo/questions/data-files.json")
    ('.', 'benchmarks/demo/questions')
    """
    path = PurePosixPath(source)
    if path.suffix == ".md" and path.name != "index.md":
        return str(path.with_suffix(""))
    return str(path.parent)
