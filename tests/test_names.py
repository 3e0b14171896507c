"""Run ids and benchmark names have one rule, :data:`dualboard.names.RUN_ID`; the copies that cannot import it agree."""

from __future__ import annotations

import importlib.util

import pytest

from dualboard.intake.schemas import load_schema
from dualboard.names import RUN_ID, RUN_ID_RULE, is_name
from tests.conftest import REPO

TEMPLATE = REPO / "generator" / "scaffold" / "template" / "dot-github"


def _preview_script():
    """The pull-request preview's trusted script: standard library only, so it keeps its own copy of the rule."""
    spec = importlib.util.spec_from_file_location("preview", REPO / ".github" / "scripts" / "preview.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_preview_script_checks_names_by_the_same_pattern():
    assert _preview_script().IDENTIFIER.pattern == RUN_ID.pattern


def test_the_benchmark_schema_checks_names_by_the_same_pattern():
    assert load_schema("benchmark")["properties"]["name"]["pattern"] == f"^{RUN_ID.pattern}$"


@pytest.mark.parametrize("template", [REPO / ".github", TEMPLATE], ids=["repository", "scaffold"])
def test_the_pull_request_checklist_states_the_same_pattern(template):
    checklist = (template / "PULL_REQUEST_TEMPLATE.md").read_text(encoding="utf-8")
    assert f"`^{RUN_ID.pattern}$`" in checklist


def test_the_rule_in_words_says_what_the_pattern_accepts():
    assert "at most 100" in RUN_ID_RULE and is_name("a" * 100) and not is_name("a" * 101)
    assert "starting with a letter or digit" in RUN_ID_RULE and is_name("0.a") and not is_name(".a")
    assert all(is_name(f"a{c}b") for c in "._-") and not any(is_name(f"a{c}b") for c in "A/ +~")
