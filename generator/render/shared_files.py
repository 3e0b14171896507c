"""Content-addressed data files that every version of the site shares.

Data a page loads lazily (the answers of a question page, for one) is
written once under ``shared/``, named by the SHA-256 of its bytes: a file that
did not change between two releases is the same file, so versions can share
it instead of each carrying a copy. In a site built alone (``dualboard build``)
the folder sits at the site's root; a release's deploy keeps it beside the
version folders (``gh-pages/shared/``), one level above each version's root.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import uuid
from pathlib import Path, PurePosixPath

SHARED_DIR = "shared"
"""Docs-relative folder of the shared files (and, in ``gh-pages``, the folder beside the versions)."""


def shared_name(data: bytes, suffix: str) -> str:
    """Docs-relative path of a shared file holding ``data``: its SHA-256 names it.

    Examples
    --------
    >>> shared_name(b"", ".json")
    'shared/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.json'
    """
    return shared_folder(data) + suffix


def shared_folder(data: bytes) -> str:
    """Docs-relative path named by the SHA-256 of ``data``: a shared file holding ``data`` may sit in it under
    a name of its own (a release's download keeps its file name that way), or take it plus a suffix.

    Examples
    --------
    >>> shared_folder(b"")
    'shared/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    """
    return f"{SHARED_DIR}/{hashlib.sha256(data).hexdigest()}"


def is_content_named(name: str, data: bytes) -> bool:
    """Whether the docs path ``name`` is where :func:`shared_name` or :func:`shared_folder` would put ``data``.

    A file so named can only ever hold these bytes, so it can never stand in
    for another data file (a leaderboard's own ``site_src/shared/`` may only
    hold such files).

    Examples
    --------
    >>> name = shared_name(b"x", ".svg")
    >>> is_content_named(name, b"x"), is_content_named(name, b"y")
    (True, False)
    >>> is_content_named(shared_folder(b"x") + "/x.csv", b"x")
    True
    >>> is_content_named(shared_folder(b"x") + "0.svg", b"x")
    False
    """
    folder = shared_folder(data)
    return name.startswith(folder) and name[len(folder) : len(folder) + 1] in ("", ".", "/")


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


class SharedFiles:
    """The shared files of a site being rendered, written as they are made instead of held until the end.

    With a docs folder (``docs``), each file goes straight to ``docs/shared/``
    (a file already there is not written again: its name is its content), so
    the data of thousands of pages is never in memory at once, and a file an
    earlier render wrote can be *kept* without being made again (:meth:`keep`).
    Without one (tests, tools), the files are held in :attr:`data`.
    :func:`dualboard.render.site.compose_docs` leaves every name in
    :attr:`names` in place and deletes the other shared files.
    """

    def __init__(self, docs: Path | None = None) -> None:
        self.docs = docs
        self.names: set[str] = set()
        """Docs paths of every shared file of this render."""
        self.data: dict[str, bytes] = {}
        """The bytes of each file, by docs path, when there is no docs folder."""
        self._folders: set[str] = set()

    def add(self, path: str, data: bytes) -> None:
        """Make ``path`` (a :func:`shared_name`) one of the site's files, holding ``data``."""
        self.names.add(path)
        if self.docs is None:
            self.data[path] = data
            return
        target = os.path.join(self.docs, path)  # strings, not Paths: this runs for every file of the site
        if _size(target) == len(data):
            return
        folder = os.path.dirname(target)
        if folder not in self._folders:
            os.makedirs(folder, exist_ok=True)
            self._folders.add(folder)
        # Written beside, then renamed: a killed render never leaves a file whose name promises other bytes.
        # A new inode, never the old one, which MkDocs' output may share (dualboard.render.site.build_site).
        tmp = os.path.join(folder, f".{uuid.uuid4().hex}.tmp")
        try:
            with open(tmp, "wb") as out:
                out.write(data)
            os.replace(tmp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def keep(self, path: str, size: int) -> bool:
        """Make ``path``, written by an earlier render, one of the site's files without making it again.

        Returns False, keeping nothing, when the docs folder holds no file of ``size`` bytes there.
        """
        if self.docs is None or _size(os.path.join(self.docs, path)) != size:
            return False
        self.names.add(path)
        return True


def _size(path: str) -> int | None:
    """The size of the regular file at ``path`` (a link is not one), None where there is none."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None
