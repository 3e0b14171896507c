"""Names that become folders, URL segments and Hub paths: run ids and benchmark names.

One definition of what a valid name is (:data:`RUN_ID`, always matched whole)
and of the path segment a name becomes on the site (:func:`slug`), so that
validation can refuse two names that would land on the same page.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

RUN_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
"""Valid run ids and benchmark names; use ``fullmatch`` (``$`` would accept a trailing newline)."""
HUB_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
"""A Hugging Face Hub dataset name, ``ORG/NAME``; use ``fullmatch``. It becomes part of links and Hub paths."""
GIT_FILE = re.compile(r"\.git.*|\.lfsconfig", re.IGNORECASE)
"""Names git (or Git LFS) reads as its own attributes, ignore rules, configuration, hooks or modules.

Such a file changes how git checks out, diffs and archives every other file
of its folder and below (``*/predictions.jsonl text eol=crlf`` rewrites other
runs' answers at checkout), so no submission may carry one. Matched whole,
case-insensitively (a case-insensitive checkout reads ``.GitAttributes`` too).
"""
RUN_ID_RULE = "lower-case letters, digits, '.', '_' or '-' (at most 100, starting with a letter or digit)"
""":data:`RUN_ID` in words, for messages."""


def is_name(value: object) -> bool:
    """True when ``value`` is a valid run id or benchmark name.

    Examples
    --------
    >>> is_name("fjord-3b"), is_name("fjord-3b\\n"), is_name("../x")
    (True, False, False)
    """
    return isinstance(value, str) and RUN_ID.fullmatch(value) is not None


def is_git_file(name: str) -> bool:
    """True when a file or folder called ``name`` configures git (:data:`GIT_FILE`).

    Examples
    --------
    >>> is_git_file(".gitattributes"), is_git_file(".GITIGNORE"), is_git_file(".lfsconfig"), is_git_file("git.txt")
    (True, True, True, False)
    """
    return GIT_FILE.fullmatch(name) is not None


def is_run_name(value: object) -> bool:
    """True when ``value`` is ``benchmark/run_id``, both valid names (how commands and records name a run).

    Examples
    --------
    >>> is_run_name("demo/fjord-3b"), is_run_name("demo/../x"), is_run_name("fjord-3b")
    (True, False, False)
    """
    parts = value.split("/") if isinstance(value, str) else []
    return len(parts) == 2 and all(is_name(p) for p in parts)


def slug(value: str) -> str:
    """Return a URL path segment that is safe as a file name and a link.

    Lower-case ASCII letters and digits stay; every other run of characters
    becomes one ``-``. Run pages are named by the slug of their run id, so two
    ids with the same slug would share a page (:func:`colliding`).

    Examples
    --------
    >>> slug("Spatial / Puzzle #3")
    'spatial-puzzle-3'
    >>> slug("fjord_3b") == slug("fjord-3b")
    True
    """
    out, dash = [], False
    for ch in value.lower():
        if ch.isascii() and ch.isalnum():
            out.append(ch)
            dash = False
        elif not dash:
            out.append("-")
            dash = True
    return "".join(out).strip("-") or "x"


def colliding(names: Iterable[str]) -> list[list[str]]:
    """Groups of distinct names that share a page: the same after case-folding and :func:`slug`.

    Examples
    --------
    >>> colliding(["fjord-3b", "fjord_3b", "Fjord.3B", "other"])
    [['Fjord.3B', 'fjord-3b', 'fjord_3b']]
    """
    groups: dict[str, set[str]] = defaultdict(set)
    for name in names:
        groups[slug(name.casefold())].add(name)
    return [sorted(group) for _, group in sorted(groups.items()) if len(group) > 1]
