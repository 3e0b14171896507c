"""No arrow points against the flow: every import inside the package goes down :data:`dualboard.LAYERS`.

Each module of ``generator/`` is parsed (not imported), and every import of a
``dualboard`` module, wherever it stands (inside a function, under
``TYPE_CHECKING``), is mapped to the layer of its top-level module. A module may
import its own layer and the layers before it; an import of a later layer is an
arrow against the flow, reported with the file, the line and both layers.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import dualboard

PACKAGE = Path(dualboard.__path__[0])
LAYER = {name: i for i, layer in enumerate(dualboard.LAYERS) for name in layer}


@dataclass(frozen=True)
class Arrow:
    """One import of a later layer."""

    module: str
    """File, relative to the package folder."""
    line: int
    imported: str
    """The dualboard module imported."""

    def __str__(self) -> str:
        here, there = _top(self.module), self.imported.split(".")[1] if "." in self.imported else "__init__"
        return (
            f"generator/{self.module}:{self.line}: imports {self.imported} — layer {LAYER[there]} ({there}) "
            f"comes after layer {LAYER[here]} ({here}) in dualboard.LAYERS; move what it needs down the flow"
        )


def _top(module: str) -> str:
    """The top-level name a file belongs to: ``render/site.py`` → ``render``, ``cli.py`` → ``cli``."""
    first = module.split("/")[0]
    return first.removesuffix(".py")


def imported_modules(path: Path, package: Path) -> list[tuple[int, str]]:
    """(line, dualboard module) for every import of the package in ``path``; relative imports resolved."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    # The package a relative import starts from: a module's own, and for __init__.py the package itself.
    package_parts = ["dualboard", *path.relative_to(package).parts[:-1]]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "dualboard"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                start = package_parts[: len(package_parts) - node.level + 1]
                base = ".".join(start + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] == "dualboard":
                # ``from dualboard import pipeline`` imports a module; ``from dualboard import REQUIREMENT`` a name.
                found += [(node.lineno, _module_of(base, a.name)) for a in node.names]
    return found


def _module_of(base: str, name: str) -> str:
    return f"{base}.{name}" if base == "dualboard" and name in LAYER else base


def backward_imports(package: Path) -> list[Arrow]:
    """Every import, in every module under ``package``, of a layer after the module's own."""
    arrows = []
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        for line, imported in imported_modules(path, package):
            there = imported.split(".")[1] if "." in imported else "__init__"
            if LAYER[there] > LAYER[_top(module)]:
                arrows.append(Arrow(module, line, imported))
    return arrows


def test_every_module_has_one_layer():
    """LAYERS names every top-level module and subpackage once, and nothing that does not exist."""
    present = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()
    }
    listed = [name for layer in dualboard.LAYERS for name in layer]
    assert len(listed) == len(set(listed)), "a module is in two layers"
    assert present == set(listed), (
        f"not in dualboard.LAYERS: {sorted(present - set(listed))}; listed but absent: {sorted(set(listed) - present)}"
    )


def test_the_stages_follow_the_flow_and_sit_between_foundations_and_pipeline():
    """The issue's order: intake → store → grading → stats → render → release, then pipeline, then cli."""
    order = ["errors", "intake", "store", "grading", "stats", "render", "release", "pipeline", "cli"]
    assert [LAYER[n] for n in order] == sorted(LAYER[n] for n in order)
    assert len({LAYER[n] for n in order}) == len(order), "each stage is a layer of its own"


@pytest.mark.slow
def test_no_import_points_against_the_flow():
    arrows = backward_imports(PACKAGE)
    assert not arrows, "imports against the flow:\n" + "\n".join(map(str, arrows))


@pytest.mark.parametrize(
    "module, source, imported",
    [
        ("render/site_content.py", "from dualboard.release.freeze import ReleaseResult\n", "dualboard.release.freeze"),
        ("release/freeze.py", "def f():\n    from dualboard import pipeline\n", "dualboard.pipeline"),
        (
            "stats/x.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import dualboard.cli\n",
            "dualboard.cli",
        ),
        ("store/__init__.py", "from ..grading import tables\n", "dualboard.grading"),
        ("scored_files.py", "from .intake.models import Benchmark\n", "dualboard.intake.models"),
    ],
)
def test_a_planted_backward_import_is_named(tmp_path, module, source, imported):
    """The checker finds an arrow wherever it is written: in a function, for type checking only, relative."""
    path = tmp_path / module
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("from dualboard.errors import DualboardError\n" + source, "utf-8")
    arrows = backward_imports(tmp_path)
    assert [(a.module, a.imported) for a in arrows] == [(module, imported)]
    assert f"generator/{module}:" in str(arrows[0]) and imported in str(arrows[0])


def test_a_forward_import_is_not_an_arrow(tmp_path):
    (tmp_path / "release").mkdir()
    (tmp_path / "release" / "freeze.py").write_text(
        "from dualboard import REQUIREMENT, release_files\nfrom dualboard.render.site import deploy_site\n"
        "from . import tables\nfrom dualboard.intake.models import Benchmark\n",
        "utf-8",
    )
    assert backward_imports(tmp_path) == []
