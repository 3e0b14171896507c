"""The examples in the package's docstrings, run against the installed import package.

Each module is imported once, as ``dualboard.…`` (the name users import), rather than
collected by pytest's ``--doctest-modules`` from the ``generator/`` folder, which would import
it a second time under the folder's name.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import dualboard


def modules_with_examples() -> list[str]:
    """Every module of the package whose docstrings hold at least one example."""
    finder = doctest.DocTestFinder()
    # __main__ would run the CLI on import.
    names = [
        m.name
        for m in pkgutil.walk_packages(dualboard.__path__, prefix="dualboard.")
        if not m.name.endswith(".__main__")
    ]
    return sorted(n for n in ["dualboard", *names] if any(t.examples for t in finder.find(importlib.import_module(n))))


@pytest.mark.parametrize("name", modules_with_examples())
def test_docstring_examples_hold(name):
    result = doctest.testmod(
        importlib.import_module(name),
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        verbose=False,
        report=False,
    )
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} examples in {name} fail (run: python -m doctest -v)"
    )


def test_every_module_with_examples_is_collected():
    # A module that fails to import, or an examples-less walk, would quietly run nothing.
    assert len(modules_with_examples()) >= 40
