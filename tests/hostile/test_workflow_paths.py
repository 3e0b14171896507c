"""A pull request cannot change what the build reads without the validate workflow running.

The build reads ``submissions/``, ``data/`` (benchmarks, questions, human
labels), ``site_src/`` (pages, theme overrides, CSS/JS), ``mkdocs.yml`` and
``dualboard.yaml`` (dualboard.project, dualboard.render.site), and whatever
``mkdocs.yml`` names: ``custom_dir``, ``hooks``, ``INHERIT`` may point at any
folder of the repository. No paths filter can list all of that, and GitHub
leaves a required check that a filter skipped pending for ever; so validate
runs on every pull request and on every push to it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

VALIDATE = [
    REPO / ".github" / "workflows" / "validate.yml",
    REPO / "generator" / "scaffold" / "template" / "dot-github" / "workflows" / "validate.yml",
]
FILTERS = ("paths", "paths-ignore", "branches", "branches-ignore")
"""Keys that let a pull request skip the workflow."""
RERUNS = {"opened", "synchronize", "reopened"}
"""GitHub's default pull_request activity types: a new push after review must be validated again."""


def _pull_request_trigger(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text("utf-8"))
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads the bare key `on` as True
    assert isinstance(on, dict) and "pull_request" in on, f"{path}: validate must run on pull_request"
    return on["pull_request"] or {}


@pytest.mark.parametrize("path", VALIDATE, ids=lambda p: str(p.relative_to(REPO)))
def test_validate_runs_whatever_a_pull_request_changes(path):
    trigger = _pull_request_trigger(path)
    assert not set(trigger) & set(FILTERS), (
        f"{path}: remove {sorted(set(trigger) & set(FILTERS))} — mkdocs.yml can "
        "make the build read any path, so any filter lets a change skip validation"
    )


@pytest.mark.parametrize("path", VALIDATE, ids=lambda p: str(p.relative_to(REPO)))
def test_validate_reruns_on_every_push(path):
    types = set(_pull_request_trigger(path).get("types") or RERUNS)
    assert RERUNS <= types, f"{path}: pull_request types must include {sorted(RERUNS)}"
