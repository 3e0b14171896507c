"""What a leaderboard folder's own ``mkdocs.yml`` may set, read without trusting it.

A pull request can edit ``mkdocs.yml``, and the file is dangerous as MkDocs
reads it: MkDocs loads it with PyYAML's full loader plus ``!ENV`` and
``!relative`` (``!!python/object/apply:os.system`` runs a command,
``site_name: !ENV HF_TOKEN`` prints a secret on every page), and several of its
settings run code or read the build machine's files (``hooks``, ``plugins``,
``theme.custom_dir``, ``INHERIT``, ``pymdownx.snippets``). So the folder's file
never reaches MkDocs: it is parsed here with a safe loader, every setting is
checked against :data:`ALLOWED`, and only the checked values are written into
the effective configuration. See :func:`site_source_findings`
for the policy and its reasons.
"""

from __future__ import annotations

import os
import stat
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from dualboard.errors import Finding
from dualboard.render.shared_files import SHARED_DIR, is_content_named
from dualboard.safe_read import UnsafeFileError, read_regular, untrusted_findings

CONFIG_NAME = "mkdocs.yml"
SITE_SOURCE_DIR = "site_src"
"""The leaderboard's own pages and assets, laid over the package's (their docs paths as in this folder)."""
SITE_SOURCES = (CONFIG_NAME, SITE_SOURCE_DIR, "releases")
"""What the render reads from a leaderboard folder (releases/ feeds the downloads and changelog pages)."""
TOOLS = ("mkdocs", "mkdocs-material", "markdown", "pymdown-extensions", "jinja2", "pygments")
"""What renders every page besides Dualboard: a site built with other versions of these is built again in full."""


def tool_versions() -> list[str]:
    """``name version`` of each of :data:`TOOLS` (``name absent`` when it is not installed)."""
    versions = []
    for name in TOOLS:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} absent")
    return versions


CONFIG_LIMIT = 1 << 20
"""Bytes; a site configuration is a few hundred lines, so more is a mistake or an attack."""

ALLOWED: dict[str, type] = {
    "site_name": str,
    "site_description": str,
    "site_author": str,
    "site_url": str,
    "copyright": str,
    "repo_url": str,
    "repo_name": str,
    "edit_uri": str,
    "nav": list,
    "extra": dict,
    "theme": dict,
    "extra_css": list,
    "extra_javascript": list,
    "markdown_extensions": list,
}
"""Top-level settings a leaderboard may set, with the type each must have."""

APPENDED = ("extra_css", "extra_javascript", "markdown_extensions")
"""List settings added after the package's own (replacing them would drop the charts and sortable tables)."""

THEME_KEYS = ("name", "palette", "features", "logo", "favicon", "icon", "language")
"""``theme:`` options a leaderboard may set; ``name`` only to :data:`THEME_NAME`."""

THEME_NAME = "material"

MARKDOWN_EXTENSIONS = frozenset(
    {
        "abbr",
        "admonition",
        "attr_list",
        "codehilite",
        "def_list",
        "extra",
        "fenced_code",
        "footnotes",
        "legacy_attrs",
        "legacy_em",
        "md_in_html",
        "meta",
        "nl2br",
        "sane_lists",
        "smarty",
        "tables",
        "toc",
        "wikilinks",
        *(
            f"pymdownx.{name}"
            for name in (
                "arithmatex",
                "betterem",
                "caret",
                "critic",
                "details",
                "emoji",
                "escapeall",
                "extra",
                "fancylists",
                "highlight",
                "inlinehilite",
                "keys",
                "magiclink",
                "mark",
                "progressbar",
                "quotes",
                "saneheaders",
                "smartsymbols",
                "striphtml",
                "superfences",
                "tabbed",
                "tasklist",
                "tilde",
                "blocks.admonition",
                "blocks.caption",
                "blocks.definition",
                "blocks.details",
                "blocks.html",
                "blocks.tab",
            )
        ),
    }
)
"""Markdown extensions a leaderboard may add: they transform text only, and read no file."""

REFUSED = {
    "INHERIT": "it makes MkDocs read another YAML file, which may lie outside the folder",
    "hooks": "MkDocs runs these Python files at build time",
    "plugins": (
        "MkDocs runs plugins' Python at build time (mkdocs-macros makes every page a template that can run code)"
    ),
    "docs_dir": "the render lays out the docs folder itself",
    "site_dir": "the render chooses where the site is written",
    "extra_templates": "MkDocs renders these files as Jinja templates, which can reach Python and run code",
    "theme.custom_dir": "template overrides are Jinja, which can reach Python and run code, and the theme "
    "folder's other files are copied onto the site",
    "theme.font": "it loads Google Fonts, and the site makes no external requests",
    "pymdownx.snippets": "it includes files of the build machine in pages",
    "pymdownx.b64": "it embeds files of the build machine in pages",
}
"""Why the settings people most often reach for are not taken (anything else not allowed gets a generic reason)."""

SAFE_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp", "merge")
)
"""YAML tags that build plain data; ``!ENV``, ``!relative`` and ``!!python/...`` are everything else."""


class _DataLoader(yaml.SafeLoader):
    """Builds the settings to check even when some value has a refused tag (that value becomes None)."""


_DataLoader.add_multi_constructor("", lambda loader, suffix, node: None)


def site_source_findings(root: Path) -> list[Finding]:
    """Every problem with what the render would read from the leaderboard folder ``root``.

    A pull request can change all of it, and the build that publishes the
    site holds secrets, so:

    * No symbolic link and no special file anywhere under ``mkdocs.yml``,
      ``site_src/`` or ``releases/`` (``site_src/x.txt -> /proc/self/environ``
      would put the environment's tokens on the site; a FIFO would hang the
      build). One finding per entry, paths relative to ``root``.
    * A file in ``site_src/shared/`` must be named by the SHA-256 of its bytes,
      as the render names the data files the pages load from there; any other
      file could stand in for one of them.
    * ``mkdocs.yml`` never reaches MkDocs as written: MkDocs loads it with
      PyYAML's full loader (``!!python/object/apply`` runs code) and ``!ENV``
      (reads the environment). It is parsed with a safe loader; any tag other
      than plain data, any alias and any duplicate key is a finding.
    * Of its settings only these are taken, because they are plain text or
      data that the templates show as values: ``site_name``,
      ``site_description``, ``site_author``, ``site_url``, ``copyright``,
      ``repo_url``, ``repo_name``, ``edit_uri``, ``nav``, ``extra``,
      ``extra_css`` and ``extra_javascript`` (added after the package's own,
      which the charts and tables need), ``theme`` options ``name``
      (``material`` only), ``palette``, ``features``, ``logo``, ``favicon``,
      ``icon``, ``language``, and ``markdown_extensions`` from a list of
      extensions that only transform text (added after the package's own).
    * Everything else is refused, notably ``hooks`` and ``plugins`` (Python
      run at build time), ``INHERIT`` (reads another file, possibly outside
      the folder), ``docs_dir``/``site_dir`` (the render owns the folders),
      ``extra_templates`` and ``theme.custom_dir`` (Jinja templates reach
      Python objects and run code; theme folders are copied onto the site),
      ``theme.font`` (Google Fonts: no external requests), and the
      extensions ``pymdownx.snippets`` and ``pymdownx.b64`` (they read files
      of the build machine) or any extension not on the list (MkDocs imports
      it by name, so it could be a module of the pull request).

    ``dualboard validate`` reports these findings on a pull request (this
    module imports nothing of the render, so checking costs no start-up);
    :func:`dualboard.render.site.compose_docs` refuses to build while there is any.
    """
    return checked_site_sources(Path(root))[1]


def checked_site_sources(root: Path) -> tuple[dict[str, Any], list[Finding]]:
    """The folder's checked mkdocs settings, and every finding of :func:`site_source_findings`."""
    findings = [f for name in SITE_SOURCES for f in untrusted_findings(root / name, relative_to=root)]
    findings += _shared_folder_findings(root)
    if any(f.file == CONFIG_NAME for f in findings):
        return {}, findings
    own, problems = read_site_config(root / CONFIG_NAME, CONFIG_NAME)
    return own, findings + problems


def _shared_folder_findings(root: Path) -> list[Finding]:
    """Files of ``site_src/shared/`` not named by their own content (:func:`is_content_named`).

    The render's data files live in ``shared/`` under the SHA-256 of their
    bytes, so any other file there could stand in for one of them (and, once
    released, block the real one on ``gh-pages`` for good). A content-named
    file holds the only bytes its name allows, so it is harmless.
    """
    folder = root / SITE_SOURCE_DIR / SHARED_DIR
    if not os.path.lexists(folder) or folder.is_symlink():  # a link is already a finding
        return []
    if not folder.is_dir():
        return [_shared_finding(root, folder)]
    findings = []
    for parent, _, names in os.walk(folder):  # os.walk never follows a linked folder
        for path in sorted(Path(parent) / name for name in names):
            if not stat.S_ISREG(path.lstat().st_mode):
                continue  # links and special files are findings of untrusted_findings
            try:
                data = read_regular(path, root=root)
            except UnsafeFileError as error:
                findings.append(error.finding())
                continue
            if not is_content_named(path.relative_to(root / SITE_SOURCE_DIR).as_posix(), data):
                findings.append(_shared_finding(root, path))
    return findings


def _shared_finding(root: Path, path: Path) -> Finding:
    return Finding(
        path.relative_to(root).as_posix(),
        None,
        "path",
        f"a file in {SHARED_DIR}/ must be named by the SHA-256 of its bytes "
        f"({SHARED_DIR}/<sha256><suffix> or {SHARED_DIR}/<sha256>/<name>): the pages find their data files there",
        f"move it out of {SITE_SOURCE_DIR}/{SHARED_DIR}/",
    )


def read_site_config(path: Path, file: str) -> tuple[dict[str, Any], list[Finding]]:
    """Parse a folder's ``mkdocs.yml`` safely; return its settings and the findings against them.

    ``file`` is the path as findings show it. The settings are empty when
    there is any finding (nothing of a refused file is used) or no file.
    """
    if not path.is_file():
        return {}, []
    try:
        text = read_regular(path, root=path.parent, limit=CONFIG_LIMIT).decode("utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        findings, lines = _node_findings(node, file)
        data = yaml.load(text, Loader=_DataLoader) if node is not None else {}
    except UnsafeFileError as exc:
        return {}, [Finding(file, None, "-", exc.problem, exc.fix)]
    except UnicodeDecodeError as exc:
        return {}, [Finding(file, None, "-", f"is not UTF-8 ({exc.reason} at byte {exc.start})", "save it as UTF-8")]
    except (yaml.YAMLError, ValueError) as exc:
        mark = getattr(exc, "problem_mark", None)
        return {}, [
            Finding(
                file,
                mark.line + 1 if mark else None,
                "-",
                f"is not valid YAML ({exc})".replace("\n", " "),
                "fix the syntax",
            )
        ]
    if not isinstance(data, dict):
        return {}, [Finding(file, 1, "-", "holds no key: value settings", "write settings such as site_name: My board")]
    flagged = {f.field for f in findings}
    findings += [f for f in _setting_findings(data, lines, file) if f.field not in flagged]
    return ({} if findings else data), findings


def effective_settings(own: dict[str, Any], default: dict[str, Any]) -> dict[str, Any]:
    """The folder's checked settings as written into the effective config (lists in APPENDED extended)."""
    return {key: default.get(key, []) + value if key in APPENDED else value for key, value in own.items()}


def _node_findings(root: yaml.Node | None, file: str) -> tuple[list[Finding], dict[str, int]]:
    """Findings for unsafe tags, aliases and duplicate keys, and the line of every setting (``theme.font``).

    Walks the composed nodes, not constructed data: composing runs no
    constructor. Aliases are refused because MkDocs walks ``nav`` as a tree,
    so nested aliases would make a small file take forever to build.
    """
    findings, lines, seen = [], {}, set()
    stack = [(root, "-")] if root is not None else []
    while stack:
        node, field = stack.pop()
        line = node.start_mark.line + 1
        if id(node) in seen:
            findings.append(
                Finding(
                    file,
                    line,
                    field,
                    "is an alias (*) of the anchor (&) on this line",
                    f"write the value out under {field}",
                )
            )
            continue
        seen.add(id(node))
        lines.setdefault(field, line)
        if node.tag not in SAFE_TAGS:
            findings.append(
                Finding(
                    file,
                    line,
                    field,
                    f"uses the YAML tag {node.tag.replace('tag:yaml.org,2002:', '!!')}",
                    "write the plain value: tags read the environment (!ENV) or run Python "
                    "(!!python/...) when MkDocs loads the file",
                )
            )
        stack.extend(reversed(_children(node, field, file, findings)))
    return sorted(findings, key=lambda f: f.line or 0), lines


def _children(node: yaml.Node, field: str, file: str, findings: list[Finding]) -> list[tuple[yaml.Node, str]]:
    """The child nodes with their dotted names, in document order (so an anchor is met before its aliases).

    A duplicate key is a finding: YAML would silently keep the last value, so a
    reviewer could read one setting while MkDocs used another.
    """
    if isinstance(node, yaml.SequenceNode):
        return [(item, f"{field}[{i}]") for i, item in enumerate(node.value)]
    if not isinstance(node, yaml.MappingNode):
        return []
    children, names = [], set()
    for key, value in node.value:
        name = ("" if field == "-" else f"{field}.") + (key.value if isinstance(key, yaml.ScalarNode) else "?")
        if name in names:
            findings.append(
                Finding(file, key.start_mark.line + 1, name, "is set twice (the last value would win)", "keep one")
            )
        names.add(name)
        children += [(key, name), (value, name)]
    return children


def _setting_findings(data: dict, lines: dict[str, int], file: str) -> list[Finding]:
    """A finding for every setting that is not allowed or has the wrong type."""
    findings = []
    for key, value in data.items():
        field = str(key)
        if field not in ALLOWED:
            findings.append(_refused(field, field, lines, file, allowed=f"{CONFIG_NAME} may set " + ", ".join(ALLOWED)))
        elif not isinstance(value, ALLOWED[field]):
            kind = {str: "text", list: "a list", dict: "a mapping"}[ALLOWED[field]]
            findings.append(
                Finding(file, lines.get(field), field, f"must be {kind}, not {value!r:.80}", f"write {field} as {kind}")
            )
    if isinstance(data.get("theme"), dict):
        findings += _theme_findings(data["theme"], lines, file)
    if isinstance(data.get("markdown_extensions"), list):
        findings += _extension_findings(data["markdown_extensions"], lines, file)
    return findings


def _theme_findings(theme: dict, lines: dict[str, int], file: str) -> list[Finding]:
    findings = [
        _refused(f"theme.{key}", f"theme.{key}", lines, file, allowed="theme may set " + ", ".join(THEME_KEYS))
        for key in theme
        if key not in THEME_KEYS
    ]
    if theme.get("name", THEME_NAME) != THEME_NAME:
        findings.append(
            Finding(
                file,
                lines.get("theme.name"),
                "theme.name",
                f"is {theme['name']!r}, but the generated pages need the {THEME_NAME} theme",
                "remove it",
            )
        )
    return findings


def _extension_findings(extensions: list, lines: dict[str, int], file: str) -> list[Finding]:
    findings = []
    for i, item in enumerate(extensions):
        name = next(iter(item)) if isinstance(item, dict) and len(item) == 1 else item
        name = name.removeprefix("markdown.extensions.") if isinstance(name, str) else repr(name)
        if name not in MARKDOWN_EXTENSIONS:
            findings.append(
                _refused(
                    name,
                    f"markdown_extensions[{i}]",
                    lines,
                    file,
                    allowed="markdown_extensions may add " + ", ".join(sorted(MARKDOWN_EXTENSIONS)),
                    why="MkDocs imports an extension by name and runs it at build time",
                )
            )
    return findings


def _refused(
    setting: str,
    field: str,
    lines: dict[str, int],
    file: str,
    *,
    allowed: str,
    why: str = "only settings known to run no code and read no file of the build machine are taken",
) -> Finding:
    """The finding for a setting a leaderboard may not set: why (REFUSED, or ``why``), and what it may set instead."""
    subject = "" if setting == field else f"{setting} "
    return Finding(
        file,
        lines.get(field),
        field,
        f"{subject}cannot be set by a leaderboard: {REFUSED.get(setting, why)}",
        f"remove it ({allowed})",
    )
