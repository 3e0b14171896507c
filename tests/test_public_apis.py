"""Dualboard uses other packages through their public APIs only, and declares every package it imports.

A private name of another package (one starting with an underscore) may change or vanish in any release
of it. Every module of ``generator/``, ``tests/`` and ``bench/`` is read as a syntax tree, and each
import of such a name, and each such attribute read on anything but Dualboard's own objects, fails
the test at ``file:line``.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from tests.conftest import REPO

FOLDERS = ("generator", "tests", "bench")
OWN = {"dualboard", "tests", "scale", "synthetic_board", "judge_server"}
"""Import names of Dualboard's own code (the bench scripts import each other, and the test judge, by file name)."""
TUPLE_API = {"_asdict", "_replace", "_fields", "_make"}
"""The public methods of a named tuple, underscored so as not to clash with its fields."""


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (REPO / folder).rglob("*.py") if ".venv" not in p.parts)


def private_uses(path: Path) -> Iterator[str]:
    """``line: what`` for each private name of another package that ``path`` imports or reads."""
    tree = ast.parse(path.read_text("utf-8"))
    foreign: set[str] = set()  # names bound to another package's modules and objects
    own: set[str] = {"self", "cls"}  # names bound to Dualboard's own modules and objects
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                (own if alias.name.split(".")[0] in OWN else foreign).add(bound)
                if alias.name.split(".")[0] not in OWN and any(map(_private, alias.name.split("."))):
                    yield f"{node.lineno}: import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            mine = node.level > 0 or (node.module or "").split(".")[0] in OWN
            for alias in node.names:
                (own if mine else foreign).add(alias.asname or alias.name)
                if not mine and (_private(alias.name) or any(map(_private, node.module.split(".")))):
                    yield f"{node.lineno}: from {node.module} import {alias.name}"
        elif isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            own.add(node.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in TUPLE_API:
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if not (isinstance(base, ast.Name) and base.id in own and base.id not in foreign):
                yield f"{node.lineno}: {ast.unparse(node)}"


def test_no_private_name_of_another_package_is_used() -> None:
    found = [f"{path.relative_to(REPO)}:{use}" for path in _sources() for use in private_uses(path)]
    assert found == [], "private names of other packages:\n" + "\n".join(found)


def test_the_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import re2\nfrom mkdocs.structure.pages import _HTMLHandler\nfrom dualboard import x\n"
        "class A:\n    def f(self, parser):\n        return self._a, A._b, x._c, re2._Regexp, parser._cache\n",
        "utf-8",
    )
    assert list(private_uses(module)) == [
        "2: from mkdocs.structure.pages import _HTMLHandler",
        "6: re2._Regexp",
        "6: parser._cache",
    ]


def _requirement_names() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    requirements = [
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    return {_normal(re.match(r"[A-Za-z0-9._-]+", r).group()) for r in requirements}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_imported_package_is_declared() -> None:
    """By the package itself, or by an extra (``tests/`` and ``bench/`` use the test and harness extras)."""
    declared = _requirement_names()
    distributions = metadata.packages_distributions()
    missing = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            else:
                continue
            for name in names:
                if name in sys.stdlib_module_names or name in OWN:
                    continue
                owners = {_normal(d) for d in distributions.get(name, [name])}
                if not owners & declared:
                    missing.append(f"{path.relative_to(REPO)}:{node.lineno}: {name} ({', '.join(sorted(owners))})")
    assert missing == [], "imported but not declared in pyproject.toml:\n" + "\n".join(missing)
