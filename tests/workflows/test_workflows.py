"""Every GitHub workflow is safe for a repository that takes pull requests from anyone.

Checked for the repository's own .github/ and for the copy `dualboard init`
scaffolds: no ``pull_request_target``, top-level ``permissions`` in every file,
secrets only in publish.yml, no ``${{ }}`` expression inside a ``run:`` script
(text reaches scripts through ``env:``), and the preview script makes
submitted text inert.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

from generator.scaffold import output_name, template_files

from tests.conftest import REPO

SCAFFOLD_GITHUB = REPO / "generator" / "scaffold" / "template" / "dot-github"  # becomes .github/ (see generator.scaffold)
GITHUB_DIRS = [REPO / ".github", SCAFFOLD_GITHUB]
WORKFLOWS = sorted(p for d in GITHUB_DIRS for p in (d / "workflows").glob("*.y*ml"))


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text("utf-8"))


def _triggers(doc: dict) -> dict:
    """The ``on:`` block; YAML 1.1 reads the bare key ``on`` as True."""
    on = doc.get("on", doc.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {name: None for name in on}
    return dict(on or {})


def _steps(doc: dict):
    for job in (doc.get("jobs") or {}).values():
        yield from job.get("steps") or []


def _id(path: Path) -> str:
    return str(path.relative_to(REPO))


def test_workflows_exist_in_repo_and_scaffold():
    names = {p.name for p in WORKFLOWS}
    assert {"validate.yml", "comment.yml", "publish.yml"} <= names
    assert len([p for p in WORKFLOWS if p.is_relative_to(SCAFFOLD_GITHUB)]) == 3


@pytest.mark.parametrize("path", WORKFLOWS, ids=_id)
def test_never_pull_request_target(path):
    assert "pull_request_target" not in _triggers(_load(path)), f"{path}: pull_request_target runs PR code with secrets"
    assert "pull_request_target" not in path.read_text("utf-8")


@pytest.mark.parametrize("path", WORKFLOWS, ids=_id)
def test_top_level_permissions(path):
    doc = _load(path)
    assert "permissions" in doc, f"{path}: set top-level permissions (the default token may write everything)"
    assert doc["permissions"] not in ("write-all", "read-all")


@pytest.mark.parametrize("path", WORKFLOWS, ids=_id)
def test_secrets_only_in_publish(path):
    text = path.read_text("utf-8")
    uses_secrets = re.search(r"secrets\s*[.\[]", text) is not None
    if path.name != "publish.yml":
        assert not uses_secrets, f"{path}: secrets belong to publish.yml only"
    else:
        jobs = _load(path)["jobs"].values()
        assert all(job.get("environment") for job in jobs), "the Hub token comes from a protected environment"


@pytest.mark.parametrize("path", WORKFLOWS, ids=_id)
def test_no_expressions_inside_run_scripts(path):
    for step in _steps(_load(path)):
        assert "${{" not in str(step.get("run", "")), f"{path}: step {step.get('name')!r}: pass values through env:"


def test_validate_is_read_only_and_unprivileged():
    for path in [p for p in WORKFLOWS if p.name == "validate.yml"]:
        doc = _load(path)
        assert set(_triggers(doc)) == {"pull_request"}
        assert doc["permissions"] == {"contents": "read"}
        for job in doc["jobs"].values():
            assert "write" not in str(job.get("permissions", "")), "no job may widen the token"
        assert any("actions/upload-artifact" in str(s.get("uses", "")) for s in _steps(doc))


def test_comment_treats_the_artifact_as_data():
    for path in [p for p in WORKFLOWS if p.name == "comment.yml"]:
        doc = _load(path)
        assert set(_triggers(doc)) == {"workflow_run"}
        assert _triggers(doc)["workflow_run"]["workflows"] == ["validate"]
        assert doc["permissions"].get("pull-requests") == "write"
        assert set(doc["permissions"]) <= {"pull-requests", "actions"}
        uses = [str(s.get("uses", "")) for s in _steps(doc)]
        assert not any("checkout" in u or "setup-python" in u for u in uses), "no code from anywhere is run"
        script = "\n".join(str(s.get("run", "")) for s in _steps(doc))
        assert "^[0-9]{1,10}$" in script, "the PR number is checked to be digits"
        assert "--body-file" in script and "bash " not in script and "python" not in script and "source" not in script


def test_publish_runs_on_main_only():
    for path in [p for p in WORKFLOWS if p.name == "publish.yml"]:
        doc = _load(path)
        assert set(_triggers(doc)) == {"push"}
        assert _triggers(doc)["push"]["branches"] == ["main"]
        script = "\n".join(str(s.get("run", "")) for s in _steps(doc))
        for command in ("dualboard build", "dualboard publish --hub", "mike deploy"):
            assert command in script


def test_repository_workflows_equal_the_scaffold():
    ours = {p.relative_to(REPO).as_posix(): p.read_bytes() for p in (REPO / ".github").rglob("*") if p.is_file()}
    scaffold = {output_name(rel): data for rel, data in template_files() if rel.startswith("dot-github/")}
    assert {k: ours.get(k) for k in scaffold} == scaffold, "copy generator/scaffold/template/dot-github/ to .github/"


def _preview_module():
    spec = importlib.util.spec_from_file_location("preview", REPO / ".github" / "scripts" / "preview.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("hostile", [
    "[click](javascript:alert(1))", "![x](https://evil.example/p.png)", "@everyone please", "<img src=x onerror=alert(1)>",
    "a | b\n| c |", "`code` **bold** <!-- hidden -->", "\x1b[31mred\u202e", "#1 fixes #2",
])
def test_preview_cells_are_inert(hostile):
    out = _preview_module().cell(hostile)
    bare = re.sub(r"&#[0-9]+;", "", out)
    assert not set(bare) & set("[]()<>|@`*!#&\n\x1b\u202e"), out


def test_preview_end_to_end(tmp_path):
    import json

    report = {"valid": False, "runs": [], "findings": [
        {"file": "submissions/x/r/predictions.jsonl", "line": 3, "field": "question_id",
         "problem": "unknown question id '<script>'", "fix": "use an id", "severity": "error"}]}
    (tmp_path / "validate.json").write_text(json.dumps(report))
    stats = tmp_path / "stats" / "tiny"
    stats.mkdir(parents=True)
    (stats / "models.csv").write_text("run_id,model,traditional_mean,traditional_ci_low,traditional_ci_high,rank_traditional\n"
                                      "run-a,@evil [x](y),71.25,60,80,1\n")
    module = _preview_module()
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert module.main(["preview.py", str(tmp_path / "validate.json"), str(tmp_path / "stats")]) == 0
    text = out.getvalue()
    assert "1 problem(s) found" in text and "&#60;script&#62;" in text and "<script>" not in text
    assert "71.2 [60.0, 80.0]" in text and "@evil" not in text
