"""Run the Examples of every dualboard.stats module, so the docs cannot drift."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import dualboard.stats

MODULES = sorted(m.name for m in pkgutil.iter_modules(dualboard.stats.__path__, prefix="dualboard.stats."))


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
