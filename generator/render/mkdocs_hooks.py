"""MkDocs hooks that make ``mkdocs build --dirty`` write the site a full build writes.

With ``--dirty`` MkDocs reads and renders only the pages whose source is newer
than their output, and copies only the newer files. Left alone, that gets
three things wrong, which these hooks put right:

* **The search index.** mkdocs-material writes one that holds only the rebuilt
  pages (squidfunk/mkdocs-material#7638). Here the previous index, read before
  the build, gives the entries of every page that was not rebuilt and is still
  in the site; with the new entries, in the order of the pages (the order a
  full build indexes them), they make the index a full build writes.
* **Pages and files that left the site.** Their output stays. Here every file
  of the output folder that no current page or file produced and that this
  build did not write is removed.
* **The navigation.** A page that is not rebuilt is not read, so a page in the
  navigation that takes its title from its own text would be shown untitled in
  the navigation of the rebuilt pages. Every page in the navigation is rebuilt
  (a dozen or so; the thousands of run and question pages are not in it).

MkDocs also warns that a dirty build "will likely lead to inaccurate
navigation", which ``--strict`` would count as an error: that one warning is
dropped, since the hooks fix what it warns about.

And MkDocs writes a file in place, truncating it, while the published site
shares the output folder's files (hard links, so that publishing copies no
byte): every output this build will write (pages and files newer than their
output, the search index, the theme's sitemap) is unlinked first,
so MkDocs writes a new file and the published one stays as it was. In every
build, full or not, the output of a file of the docs folder (a data file, a
script) is a hard link to it rather than a copy: the data files of ``shared/``
change by thousands when a run is added, and writing or deleting a file costs
more than linking it. Those data files (content-named, loaded by the pages'
scripts, never linked from Markdown) are linked here and taken out of MkDocs'
files, so MkDocs looks at none of them (:func:`_is_data_file`). A dirty build
also keeps the 404 page as it is (:data:`KEPT_TEMPLATES`), and every build keeps
Jinja's compiled templates (:data:`TEMPLATE_CACHE`) and reads each page's raw
HTML once (:mod:`dualboard.render.raw_html_blocks`). Everything else a dirty build
relies on (the same configuration, navigation and tools as the build that wrote
the folder, and sources rewritten only when their bytes change) is the caller's
to ensure (:func:`dualboard.render.site.build_site`). Without ``--dirty`` the
hooks only link files, keep compiled templates and read raw HTML once.

MkDocs loads this file itself (``hooks:`` in the generated configuration) and
calls its ``on_*`` functions in its own process; the state of one build is kept
in :data:`_BUILD` between the calls.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from jinja2 import FileSystemBytecodeCache
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.utils import copy_file

from dualboard.render.raw_html_blocks import RawHtmlFirst
from dualboard.render.shared_files import SHARED_DIR
from dualboard.render.site_config import tool_versions

SEARCH_INDEX = os.path.join("search", "search_index.json")
"""Where mkdocs-material's search plugin writes its index, inside the output folder."""
SITEMAP = "sitemap.xml"
"""The theme template that MkDocs also writes gzip-compressed (``sitemap.xml.gz``)."""
KEPT_TEMPLATES = frozenset({"404.html"})
"""Theme templates a dirty build keeps as they are: like a page not rebuilt, they show only what the layout
fixes (the navigation, the site's name); the sitemap lists every page, so it is rendered every time."""
TEMPLATE_CACHE = "mkdocs-templates"
"""The folder beside the effective configuration where Jinja keeps the theme's templates compiled (rather than
compiling them every build), in a subfolder per Python and tools' versions; Jinja checks each template's
source itself."""
DIRTY_WARNING = "A 'dirty' build is being performed"
"""The start of MkDocs' warning about dirty builds (mkdocs/commands/build.py)."""
MTIME_SLACK_S = 0.05
"""File times come from a coarse clock: a file written just after the build started may look a little older."""


@dataclass
class _DirtyBuild:
    """What the hooks learn during one build and use at its end."""

    dirty: bool = False
    started: float = 0.0
    previous: list[dict[str, Any]] = field(default_factory=list)
    """Entries of the search index of the build that wrote the folder."""
    pages: list[str] = field(default_factory=list)
    """URL of every page, in the order MkDocs builds (and indexes) them."""
    outputs: set[str] = field(default_factory=set)
    """Output of every page and file of the site, and of the templates not rendered again (:data:`KEPT_TEMPLATES`):
    posix paths relative to the output folder."""
    rebuilt: set[str] = field(default_factory=set)
    """URL of every page rebuilt by this build."""
    data_outputs: set[str] = field(default_factory=set)
    """Output of every shared data file, as in :attr:`outputs` (:func:`on_files` takes them out of MkDocs' files)."""
    raw_anchors: set[str | None] = field(default_factory=set)
    """Anchor ids of the raw HTML blocks of the page being rendered, which MkDocs does not see
    (:class:`~dualboard.render.raw_html_blocks.RawHtmlFirst`)."""


_BUILD = _DirtyBuild()


def on_startup(command: str, dirty: bool) -> None:
    global _BUILD
    _BUILD = _DirtyBuild(dirty=dirty)
    if dirty:
        logging.getLogger("mkdocs.commands.build").addFilter(_not_the_dirty_warning)


def _not_the_dirty_warning(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith(DIRTY_WARNING)


def on_config(config):
    config.markdown_extensions.append(RawHtmlFirst(_BUILD.raw_anchors))
    if _BUILD.dirty:
        config.theme.static_templates -= KEPT_TEMPLATES
    return config


def on_env(env, config, files):
    key = hashlib.sha256("\n".join([sys.version, *tool_versions()]).encode("utf-8")).hexdigest()[:16]
    folder = os.path.join(os.path.dirname(config.config_file_path), TEMPLATE_CACHE, key)
    os.makedirs(folder, exist_ok=True)
    env.bytecode_cache = FileSystemBytecodeCache(folder)
    return env


def on_pre_build(config) -> None:
    if not _BUILD.dirty:
        return
    _BUILD.started = time.time() - MTIME_SLACK_S
    path = os.path.join(config.site_dir, SEARCH_INDEX)
    try:
        with open(path, encoding="utf-8") as handle:
            _BUILD.previous = list(json.load(handle)["docs"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise PluginError(
            f"{path}: the search index of the previous build cannot be read ({e}) — a dirty build needs it; "
            "build the site in full (dualboard build --force)"
        ) from e
    templates = [*config.theme.static_templates, *(f"{t}.gz" for t in config.theme.static_templates if t == SITEMAP)]
    for name in [SEARCH_INDEX, *templates]:  # written by every build
        _unlink(os.path.join(config.site_dir, name))


def on_files(files, config):
    data = [f for f in files if _is_data_file(f, config.docs_dir)]
    for file in data:
        files.remove(file)  # MkDocs neither checks nor copies them: they are linked here
    _BUILD.data_outputs = _link_data_files(data, config.site_dir)
    for file in files:
        if not file.inclusion.is_included():
            continue
        if _BUILD.dirty and os.path.isfile(file.abs_dest_path) and file.is_modified():
            _unlink(file.abs_dest_path)  # MkDocs writes it again
        if not file.is_documentation_page():
            _link_from_docs(file, config.docs_dir)
    return files


def _is_data_file(file, docs_dir: str) -> bool:
    """Whether ``file`` is a shared data file of the docs folder, which the site has but no page links to in Markdown.

    Such files (thousands at a million answers) are named by their content
    (:mod:`dualboard.render.shared_files`), and the pages load them from their
    HTML only, so MkDocs needs not know them: an output of the same name holds
    the same bytes, and nothing else is to be checked or copied.
    """
    return (
        file.src_uri.startswith(f"{SHARED_DIR}/")
        and file.src_dir == docs_dir
        and file.inclusion.is_included()
        and not file.is_documentation_page()
    )


def _link_data_files(data: list, site_dir: str) -> set[str]:
    """Give each data file of ``data`` whose output is missing one, linked from it; return every output.

    One listing of the output's data folder replaces a look at each output: at +1 run, all but a few are there.
    """
    existing = _files_under(site_dir, SHARED_DIR)
    made = set()
    for file in data:
        if file.dest_uri not in existing:
            dest = os.path.join(site_dir, file.dest_uri)
            if os.path.dirname(dest) not in made:
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                made.add(os.path.dirname(dest))
            _link(file.abs_src_path, dest)
    return {file.dest_uri for file in data}


def _files_under(site_dir: str, folder: str) -> set[str]:
    """Every entry but folders under ``site_dir``'s ``folder``, as posix paths relative to ``site_dir``."""
    found = set()
    for parent, _dirs, names in os.walk(os.path.join(site_dir, folder)):
        prefix = os.path.relpath(parent, site_dir).replace(os.sep, "/")
        found.update(names if prefix == "." else (f"{prefix}/{name}" for name in names))
    return found


def _link_from_docs(file, docs_dir: str) -> None:
    """Make the output of a file of the docs folder a hard link to it, so MkDocs copies no byte.

    MkDocs copies a file onto itself by doing nothing (it catches ``SameFileError``), and with ``--dirty``
    skips an output no older than its source. The docs folder is written anew file by file, never in place
    (:func:`dualboard.render.site.compose_docs`), so the link never sees a change it should not.
    """
    source, dest = file.abs_src_path, file.abs_dest_path
    if source is None or os.path.lexists(dest) or not os.path.abspath(source).startswith(docs_dir + os.sep):
        return
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    try:
        os.link(source, dest)
    except OSError:
        pass  # no links here (another file system): MkDocs copies it


def _link(source: str, dest: str) -> None:
    """Make ``dest`` a hard link to ``source``, or a copy as MkDocs makes one where the file system has no links."""
    try:
        os.link(source, dest)
    except OSError:
        copy_file(source, dest)


def on_nav(nav, config, files):
    if not _BUILD.dirty:
        return nav
    # As Page.url has it: the home page's is "" (its file's is "./").
    _BUILD.pages = ["" if file.url in (".", "./") else file.url for file in files.documentation_pages()]
    _BUILD.outputs = {f.dest_uri for f in files if f.inclusion.is_included()} | _BUILD.data_outputs | KEPT_TEMPLATES
    for page in nav.pages:
        _unlink(page.file.abs_dest_path)  # no output: MkDocs reads and rebuilds the page, so its title is known
    return nav


def on_page_content(html, page, config, files):
    # Taken and cleared: Markdown returns before its preprocessors on a blank page, which then would get the ids
    # of the page read before it.
    page.present_anchor_ids |= _BUILD.raw_anchors
    _BUILD.raw_anchors.clear()
    return html


def on_page_context(context, page, config, nav):
    _BUILD.rebuilt.add(page.url)
    return context


@event_priority(-100)  # after the search plugin has written its index
def on_post_build(config) -> None:
    if not _BUILD.dirty:
        return
    path = os.path.join(config.site_dir, SEARCH_INDEX)
    with open(path, encoding="utf-8") as handle:
        written = json.load(handle)
    docs = merged_entries(_BUILD.previous, written["docs"], _BUILD.pages, _BUILD.rebuilt)
    # Separators and default as mkdocs-material writes the index, so the bytes are those of a full build.
    text = json.dumps({"config": written["config"], "docs": docs}, separators=(",", ":"), default=str)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    _remove_stale(config.site_dir, _BUILD.outputs, _BUILD.started)


def merged_entries(
    previous: list[dict[str, Any]], new: list[dict[str, Any]], pages: list[str], rebuilt: set[str]
) -> list[dict[str, Any]]:
    """Search entries of a full build: ``previous`` ones of pages still there and not rebuilt, and the ``new`` ones.

    An entry belongs to the page whose URL starts its ``location`` (before any
    ``#``); entries are ordered by their page's place in ``pages``, a page's own
    entries keeping their order.

    Examples
    --------
    >>> old = [{"location": ""}, {"location": "a/"}, {"location": "a/#x"}, {"location": "gone/"}]
    >>> [e["location"] for e in merged_entries(old, [{"location": "b/"}], ["", "b/", "a/"], {"b/"})]
    ['', 'b/', 'a/', 'a/#x']
    """
    order = {url: i for i, url in enumerate(pages)}
    kept = [e for e in previous if _page(e) in order and _page(e) not in rebuilt]
    return sorted(kept + new, key=lambda e: order.get(_page(e), len(order)))


def _page(entry: dict[str, Any]) -> str:
    return str(entry.get("location", "")).split("#", 1)[0]


def _unlink(path: str) -> None:
    if os.path.isfile(path):
        os.unlink(path)


def _remove_stale(site_dir: str, outputs: set[str], started: float) -> None:
    """Remove what no page or file of the site produced and this build did not write, then the folders emptied.

    ``outputs``: posix paths relative to ``site_dir``. Only a folder something was removed from can have become
    empty: the build that wrote the folder left none.
    """
    emptied = set()
    for folder, _dirs, files in os.walk(site_dir, topdown=False):
        prefix = os.path.relpath(folder, site_dir).replace(os.sep, "/")
        for name in files:
            if (name if prefix == "." else f"{prefix}/{name}") not in outputs:
                path = os.path.join(folder, name)
                if os.lstat(path).st_mtime < started:
                    os.unlink(path)
                    emptied.add(folder)
        if folder in emptied and folder != site_dir and not os.listdir(folder):
            os.rmdir(folder)
            emptied.add(os.path.dirname(folder))
