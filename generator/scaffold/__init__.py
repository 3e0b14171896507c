"""``dualboard init``: scaffold a new leaderboard folder from the template files.

The template lives as plain files under ``generator/scaffold/template/``
(never as Python strings). While copying, ``@@BENCHMARK@@``, ``@@TITLE@@`` and
``@@REQUIREMENT@@`` are replaced in file contents and paths, a leading ``dot-`` becomes ``.``
(``dot-github/`` → ``.github/``) and a ``.txt`` added to keep a file package
data is dropped (``preview.py.txt`` → ``preview.py``, ``dot-gitignore.txt`` →
``.gitignore``), because wheels leave out hidden folders and unlisted suffixes.
"""

from __future__ import annotations

import os
import shutil
import uuid
from importlib import resources
from pathlib import Path, PurePosixPath

from dualboard import REQUIREMENT
from dualboard.errors import DualboardError
from dualboard.names import RUN_ID_RULE, is_name

TEMPLATE = "template"

REQUIREMENT_TOKEN = "@@REQUIREMENT@@"
"""Where the template installs Dualboard (workflows, README); replaced by :data:`dualboard.REQUIREMENT`,
the exact version that scaffolds. This repository's own ``.github/`` is the template with ``.`` there:
it installs its checkout."""


def scaffold(target: Path, benchmark: str, title: str | None = None) -> list[Path]:
    """Create the leaderboard folder ``target`` for ``benchmark``; return the files written.

    The files are built next to the folder, then renamed into place: a new folder appears complete or
    not at all. An existing empty folder (such as ``.``) is kept, so a shell inside it sees the files.
    """
    title = title or benchmark.replace("-", " ").replace("_", " ").title()
    target = target.absolute()  # "." has no parent or name to build next to
    _check(target, benchmark, title)
    tokens = {"@@BENCHMARK@@": benchmark, "@@TITLE@@": title, REQUIREMENT_TOKEN: REQUIREMENT}
    staging = target.parent / f".{target.name}.{uuid.uuid4().hex}.tmp"
    written = []
    try:
        for relative, data in template_files():
            path = staging / _replace(output_name(relative), tokens)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(_replace(data.decode("utf-8"), tokens).encode("utf-8"))
            written.append(target / path.relative_to(staging))
        if target.exists():  # checked empty above
            for entry in sorted(staging.iterdir()):
                os.replace(entry, target / entry.name)
        else:
            os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return sorted(written)


def template_files() -> list[tuple[str, bytes]]:
    """Every template file as (path relative to the template, bytes), sorted."""
    root = resources.files("dualboard.scaffold").joinpath(TEMPLATE)
    with resources.as_file(root) as folder:
        return [
            (p.relative_to(folder).as_posix(), p.read_bytes()) for p in sorted(Path(folder).rglob("*")) if p.is_file()
        ]


def output_name(relative: str) -> str:
    """The path a template file is written to (``dot-`` → ``.``, package-only ``.txt`` dropped)."""
    parts = []
    for part in PurePosixPath(relative).parts:
        hidden = part.startswith("dot-")
        if hidden:
            part = "." + part[len("dot-") :]
        if part.endswith(".txt") and (hidden or "." in part[: -len(".txt")].lstrip(".")):
            part = part[: -len(".txt")]
        parts.append(part)
    return "/".join(parts)


def _check(target: Path, benchmark: str, title: str) -> None:
    if not is_name(benchmark):
        raise DualboardError(f"benchmark name {benchmark!r} is not valid — use {RUN_ID_RULE}")
    if any(c in title for c in '"\\\n\r') or not title.isprintable():
        raise DualboardError(f"title {title!r} contains quotes, backslashes or control characters — write plain text")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise DualboardError(f"{target} already exists and is not empty — choose a new folder; nothing was written")


def _replace(text: str, tokens: dict[str, str]) -> str:
    for token, value in tokens.items():
        text = text.replace(token, value)
    return text
