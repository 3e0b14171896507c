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

import html
import os
import re
import stat
import unicodedata
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

TEXT_SETTINGS = ("site_name", "site_description", "site_author", "copyright", "repo_name")
"""Plain text the theme writes into every page as HTML (``{{ config.copyright }}``, ``content="{{ ... }}"``):
taken HTML-escaped, so markup in them is shown as written and never parsed (nav titles too)."""

EXTRA_KEYS = ("social", "homepage", "generator")
"""``extra:`` keys a leaderboard may set. The theme reads others into pages as HTML or script
(``extra.consent``), or loads trackers (``extra.analytics``)."""

SOCIAL_KEYS = ("icon", "link", "name")
SCRIPT_KEYS = ("path", "type", "async", "defer")
"""Keys of an ``extra_javascript`` entry written as a mapping."""

VALUE_KINDS = (
    (re.compile("|".join(TEXT_SETTINGS)), "text"),
    (re.compile(r"site_url|repo_url|edit_uri|extra\.homepage|extra\.social\[\d+\]\.link|nav\b.*"), "link"),
    (re.compile(r"extra_css\[\d+\]|extra_javascript\[\d+\](\.path)?|theme\.(logo|favicon)"), "asset"),
    (re.compile(r"markdown_extensions\[\d+\]\..*"), "option"),
    (
        re.compile(
            r"theme\.(features\[\d+\]|language|icon\..*|palette(\[\d+\])?\.(scheme|primary|accent|toggle\.icon))"
            r"|extra\.social\[\d+\]\.icon|extra_javascript\[\d+\]\.type"
        ),
        "name",
    ),
)
"""What each text value of ``mkdocs.yml`` is, by its dotted name (first match; any other is ``plain``):
``text`` is escaped (:data:`TEXT_SETTINGS`); the others are checked by :data:`VALUE_RULES`."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_ASSET = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._/+-]*")
_MARKUP = frozenset("<>\"'`")


def _unseen(value: str) -> bool:
    """Whether ``value`` holds a blank, control or format character (a browser drops some inside a link)."""
    return any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in value)


def _link_problem(value: str) -> str | None:
    if _unseen(value) or _MARKUP.intersection(value) or "\\" in value:
        return "holds a blank, control character, quote, angle bracket, backtick or backslash, which can end the link"
    if html.unescape(value) != value:
        return "holds an HTML character reference (&...;), which the browser decodes in a link"
    scheme = _SCHEME.match(value)
    if scheme and scheme.group(1).lower() not in ("http", "https"):
        return f"is a {scheme.group(1)}: link, and only http(s) and relative links are taken (javascript: runs script)"
    return None


def _asset_problem(value: str) -> str | None:
    if _ASSET.fullmatch(value) is None or ".." in value.split("/"):
        return "is not a path inside the site, and the site loads nothing from another origin"
    return None


def _name_problem(value: str) -> str | None:
    if _NAME.fullmatch(value) is None:
        return "is not a name (letters, digits, ' ', '.', '_', '/', '+', '-')"
    return None


def _plain_problem(value: str) -> str | None:
    if _unseen(value.replace(" ", "")) or _MARKUP.intersection(value):
        return "holds markup (< > \" ' `) or a control character, which the theme would write into a page as HTML"
    return None


def _option_problem(value: str) -> str | None:
    """An extension option is plain text; one that starts like a link (wikilinks' ``base_url``) is a link too."""
    return _plain_problem(value) or (_link_problem(value) if _SCHEME.match(value) else None)


VALUE_RULES = {
    "link": (_link_problem, "write an https:// address or a path relative to the site"),
    "asset": (_asset_problem, "put the file under site_src/ and name its path, such as stylesheets/extra.css"),
    "name": (_name_problem, "write the theme's name for it, such as indigo or material/weather-night"),
    "plain": (_plain_problem, "write plain text"),
    "option": (_option_problem, "write plain text, or an https:// address or relative path where it is a link"),
}
"""How each kind of value is checked, and the fix a finding gives."""

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
    "pymdownx.emoji": "its images load from a CDN, and the site makes no external requests",
    "extra.analytics": "it loads a tracker from another origin, and the site makes no external requests",
    "extra.consent": "the theme writes its text into every page as HTML",
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
    * Every text value is checked, because the theme writes them into every
      page as HTML, unescaped: ``site_name``, ``site_description``,
      ``site_author``, ``copyright``, ``repo_name`` and the titles of ``nav``
      are HTML-escaped (markup shows as written), and a ``nav`` title may not
      hold ``<`` or ``>`` (the theme's ``<title>`` undoes escaping). Links (``site_url``,
      ``repo_url``, ``edit_uri``, ``nav`` paths, ``extra.homepage``,
      ``extra.social`` links) must be http(s) or relative, with no quote, blank,
      angle bracket or character reference (``javascript:`` ran script). Assets
      (``extra_css``, ``extra_javascript``, ``theme.logo``, ``theme.favicon``)
      must be paths inside the site, with no ``..``: nothing loads from another origin. Theme
      names (palette colours, icons, features, language) must be names, and any
      other text must hold no markup. ``extra`` may set only ``social``,
      ``homepage`` and ``generator``; ``extra.social`` entries only ``icon``,
      ``link`` and ``name``; an extension's options only plain values or lists
      of them, and one that starts like a link (wikilinks' ``base_url``) is a
      link.
    * Everything else is refused, notably ``hooks`` and ``plugins`` (Python
      run at build time), ``INHERIT`` (reads another file, possibly outside
      the folder), ``docs_dir``/``site_dir`` (the render owns the folders),
      ``extra_templates`` and ``theme.custom_dir`` (Jinja templates reach
      Python objects and run code; theme folders are copied onto the site),
      ``theme.font`` (Google Fonts: no external requests), and the
      extensions ``pymdownx.snippets`` and ``pymdownx.b64`` (they read files
      of the build machine), ``pymdownx.emoji`` (images from a CDN),
      ``extra.analytics`` (a tracker) and ``extra.consent`` (HTML), or any
      extension not on the list (MkDocs imports it by name, so it could be a
      module of the pull request).

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
    """The folder's checked settings as written into the effective config (lists in APPENDED extended).

    :data:`TEXT_SETTINGS` and the titles of ``nav`` are HTML-escaped: the theme writes them into pages as HTML.
    """
    settings = {key: default.get(key, []) + value if key in APPENDED else value for key, value in own.items()}
    settings.update({key: html.escape(settings[key]) for key in TEXT_SETTINGS if key in settings})
    if "nav" in settings:
        settings["nav"] = _escaped_titles(settings["nav"])
    return settings


def _escaped_titles(nav: Any) -> Any:
    """``nav`` with every title (mapping key) HTML-escaped; the paths and links stay as checked."""
    if isinstance(nav, list):
        return [_escaped_titles(item) for item in nav]
    if isinstance(nav, dict):
        return {html.escape(str(title)): _escaped_titles(item) for title, item in nav.items()}
    return nav


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
    findings += _shape_findings(data, lines, file)
    refused = tuple(prefix for f in findings for prefix in (f"{f.field}.", f"{f.field}["))
    return findings + [f for f in _value_findings(data, lines, file) if not f.field.startswith(refused)]


def _value_findings(data: dict, lines: dict[str, int], file: str) -> list[Finding]:
    """A finding for every text value that could run script or load from another origin (:data:`VALUE_KINDS`)."""
    findings = []
    for field, value in _texts(data, ""):
        kind = next((kind for pattern, kind in VALUE_KINDS if pattern.fullmatch(field)), "plain")
        if kind == "text":
            continue  # escaped by effective_settings
        problem, fix = VALUE_RULES[kind]
        if (found := problem(value)) is not None:
            findings.append(Finding(file, lines.get(field), field, f"is {value!r:.80}: {found}", fix))
    return findings + [
        Finding(
            file,
            lines.get(field),
            field,
            f"is a title with an angle bracket ({title!r:.80}): the theme writes page titles into <title> "
            "through Jinja's striptags, which undoes escaping",
            "write the title without < and >",
        )
        for field, title in _titles(data.get("nav"), "nav")
        if "<" in title or ">" in title
    ]


def _titles(nav: Any, field: str) -> list[tuple[str, str]]:
    """Every title of ``nav`` (its mappings' keys) with the dotted name of its entry."""
    if isinstance(nav, list):
        return [title for i, item in enumerate(nav) for title in _titles(item, f"{field}[{i}]")]
    if isinstance(nav, dict):
        return [(f"{field}.{k}", str(k)) for k in nav] + [
            title for k, item in nav.items() for title in _titles(item, f"{field}.{k}")
        ]
    return []


def _texts(value: Any, field: str) -> list[tuple[str, str]]:
    """Every text value under ``value`` with its dotted name as :func:`_children` writes it (``nav[1].About``).

    Mapping keys are names of settings, except in ``nav``, where they are titles (escaped)."""
    if isinstance(value, str):
        return [(field, value)]
    if isinstance(value, list):
        return [text for i, item in enumerate(value) for text in _texts(item, f"{field}[{i}]")]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in _texts(item, f"{field}.{key}".lstrip("."))]
    return []


def _shape_findings(data: dict, lines: dict[str, int], file: str) -> list[Finding]:
    """``extra`` keys, ``extra.social`` and ``extra_javascript`` entries, extension options: only checked shapes."""
    extra = data.get("extra") if isinstance(data.get("extra"), dict) else {}
    allowed = "extra may set " + ", ".join(EXTRA_KEYS)
    refused = [f"extra.{key}" for key in extra if key not in EXTRA_KEYS]
    findings = [_refused(name, name, lines, file, allowed=allowed) for name in refused]
    social = extra.get("social") if isinstance(extra.get("social"), list) else []
    findings += _entry_findings(social, "extra.social", SOCIAL_KEYS, lines, file)
    scripts = data.get("extra_javascript") if isinstance(data.get("extra_javascript"), list) else []
    findings += _entry_findings(scripts, "extra_javascript", SCRIPT_KEYS, lines, file, text_too=True)
    extensions = data.get("markdown_extensions") if isinstance(data.get("markdown_extensions"), list) else []
    for i, item in enumerate(extensions):
        options = next(iter(item.values())) if isinstance(item, dict) and len(item) == 1 else None
        for key, value in options.items() if isinstance(options, dict) else ():
            if isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, dict | list) for v in value)):
                field = f"markdown_extensions[{i}].{next(iter(item))}.{key}"
                findings.append(
                    Finding(
                        file,
                        lines.get(field),
                        field,
                        "is a mapping or nested list: an extension option may be a plain value or a list of them "
                        "(nested ones set HTML attributes or name Python functions)",
                        "remove it",
                    )
                )
    return findings


def _entry_findings(
    entries: list, field: str, keys: tuple[str, ...], lines: dict[str, int], file: str, *, text_too: bool = False
) -> list[Finding]:
    """Entries of ``field`` that are not mappings of ``keys`` (or, with ``text_too``, text)."""
    findings = []
    for i, entry in enumerate(entries):
        name = f"{field}[{i}]"
        if isinstance(entry, dict):
            findings += [
                _refused(f"{name}.{k}", f"{name}.{k}", lines, file, allowed=f"{field} entries set " + ", ".join(keys))
                for k in entry
                if k not in keys
            ]
        elif not (text_too and isinstance(entry, str)):
            kind = "text or a mapping" if text_too else "a mapping"
            findings.append(Finding(file, lines.get(name), name, f"must be {kind}, not {entry!r:.80}", f"write {kind}"))
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
