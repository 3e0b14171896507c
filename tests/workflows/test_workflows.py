"""Every GitHub workflow is safe for a repository that takes pull requests from anyone.

Checked for the repository's own .github/ and for the copy `dualboard init`
scaffolds: no ``pull_request_target``, top-level ``permissions`` in every file,
secrets only in publish.yml, no ``${{ }}`` expression inside a ``run:`` script
(text reaches scripts through ``env:``), and comment.yml runs only the default
branch's scripts. What those scripts do with attacker text is tested in
tests/hostile/test_preview_bot.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from dualboard.scaffold import REQUIREMENT_TOKEN, output_name, template_files
from tests.conftest import REPO

SCAFFOLD_GITHUB = (
    REPO / "generator" / "scaffold" / "template" / "dot-github"
)  # becomes .github/ (see dualboard.scaffold)
GITHUB_DIRS = [REPO / ".github", SCAFFOLD_GITHUB]
WORKFLOWS = sorted(p for d in GITHUB_DIRS for p in (d / "workflows").glob("*.y*ml"))
REPOSITORY_REQUIREMENT = "."
"""What this repository's workflows install where the scaffold's install the pinned version: the checkout."""
ICU = (
    "          # PyICU (model-name look-alikes) builds against ICU where pip finds no wheel for it\n"
    "          pkg-config --exists icu-i18n || "
    "{ sudo apt-get update -qq && sudo apt-get install -y -qq libicu-dev pkg-config; }\n"
)
"""The lines that install ICU's headers before Dualboard in every workflow."""
OWN_PUBLISH = (
    (
        f"""      # `dualboard init` pinned the exact Dualboard that scaffolded the repository
      # (never code from the checkout, which a pull request can change).
      - name: Install Dualboard
        run: |
{ICU}          python -P -m pip install "@@REQUIREMENT@@"
""",
        f"""      # Dualboard's own repository builds its wheel here, in the job with no
      # secret, and hands it to the publish job (`dualboard init` pins a release
      # instead). python -P: the checkout is never on sys.path.
      - name: Build and install Dualboard
        run: |
          python -P -m pip wheel --no-deps --wheel-dir "$RUNNER_TEMP/dist" .
{ICU}          python -P -m pip install "$RUNNER_TEMP"/dist/dualboard-*.whl
""",
    ),
    (
        """          git bundle create "$pack/gh-pages.bundle" gh-pages
""",
        """          git bundle create "$pack/gh-pages.bundle" gh-pages
          cp "$RUNNER_TEMP"/dist/dualboard-*.whl "$pack/"
""",
    ),
    (
        f"""      - name: Install Dualboard (the pinned release, never a file of the artifact)
        run: |
{ICU}          python -P -m pip install "@@REQUIREMENT@@"
""",
        f"""      - name: Install Dualboard (the wheel the build job made from this repository)
        run: |
{ICU}          python -P -m pip install "$RUNNER_TEMP"/staged/dualboard-*.whl
""",
    ),
)
"""Where this repository's publish.yml differs from the scaffold's: its publish job installs the wheel its
build job made (a checkout it must not run), where a scaffolded leaderboard's installs the pinned release."""


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
        holders = [job for job in jobs if re.search(r"secrets\s*[.\[]", yaml.safe_dump(job))]
        assert holders and all(job.get("environment") for job in holders), (
            "the Hub token comes from a protected environment"
        )


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


def test_comment_runs_only_the_default_branchs_code():
    for path in [p for p in WORKFLOWS if p.name == "comment.yml"]:
        doc = _load(path)
        assert set(_triggers(doc)) == {"workflow_run"}
        assert _triggers(doc)["workflow_run"]["workflows"] == ["validate"]
        assert doc["permissions"] == {"actions": "read", "contents": "read", "pull-requests": "write"}
        steps = list(_steps(doc))
        checkouts = [s for s in steps if "actions/checkout" in str(s.get("uses", ""))]
        assert len(checkouts) == 1, "one checkout: the trusted scripts"
        assert checkouts[0]["with"] == {
            "ref": "${{ github.event.repository.default_branch }}",
            "path": "trusted",
            "sparse-checkout": ".github/scripts",
            "persist-credentials": False,
        }
        downloads = [s for s in steps if "actions/download-artifact" in str(s.get("uses", ""))]
        assert [s["with"]["path"] for s in downloads] == ["untrusted"], "the artifact lands beside, never in, trusted/"
        assert not any("setup-python" in str(s.get("uses", "")) for s in steps), (
            "the scripts need the standard library only"
        )
        script = "\n".join(str(s.get("run", "")) for s in steps)
        assert re.findall(r"python3? (\S+)", script) == [
            "trusted/.github/scripts/pull_request.py",
            "trusted/.github/scripts/preview.py",
        ]
        assert "untrusted/" not in "".join(str(s.get("run", "")) for s in steps if s.get("id") == "pr"), (
            "the pull request number never comes from the artifact"
        )
        assert 'gh pr comment "$PR_NUMBER"' in script and "--body-file" in script
        assert "bash " not in script and "source" not in script


def test_publish_runs_on_main_only():
    for path in [p for p in WORKFLOWS if p.name == "publish.yml"]:
        doc = _load(path)
        assert set(_triggers(doc)) == {"push"}
        assert _triggers(doc)["push"]["branches"] == ["main"]
        script = "\n".join(str(s.get("run", "")) for s in _steps(doc))
        for command in ("dualboard build", "dualboard release", "dualboard publish --root", "gh-pages:gh-pages"):
            assert command in script


def test_repository_workflows_equal_the_scaffold():
    """.github/ is the scaffold's, except that this repository installs Dualboard from its checkout."""
    ours = {p.relative_to(REPO).as_posix(): p.read_bytes() for p in (REPO / ".github").rglob("*") if p.is_file()}
    scaffold = {
        output_name(rel): _own(rel, data).replace(REQUIREMENT_TOKEN.encode(), REPOSITORY_REQUIREMENT.encode())
        for rel, data in template_files()
        if rel.startswith("dot-github/")
    }
    assert {k: ours.get(k) for k in scaffold} == scaffold, (
        f"copy generator/scaffold/template/dot-github/ to .github/, "
        f"writing {REPOSITORY_REQUIREMENT} for {REQUIREMENT_TOKEN}"
    )
    scripts = {k for k in ours if k.startswith(".github/scripts/")}
    assert scripts <= set(scaffold), (
        "the scaffold's workflows run these scripts too: add them under dot-github/scripts/ (name.py.txt)"
    )


def _own(rel: str, data: bytes) -> bytes:
    """The scaffold's file as this repository keeps it (:data:`OWN_PUBLISH`)."""
    if not rel.endswith("workflows/publish.yml"):
        return data
    for scaffold, own in OWN_PUBLISH:
        assert data.count(scaffold.encode()) == 1, f"the scaffold's publish.yml lost {scaffold!r}: update OWN_PUBLISH"
        data = data.replace(scaffold.encode(), own.encode())
    return data


@pytest.mark.slow
def test_scaffold_installs_only_the_pinned_dualboard():
    """A scaffolded repository never installs code from its checkout: a pull request could change that code,
    and publish.yml runs it beside the Hub token. Every job that runs dualboard installs the pin first."""
    for path in [p for p in WORKFLOWS if p.is_relative_to(SCAFFOLD_GITHUB)]:
        for job in _load(path)["jobs"].values():
            scripts = [str(s.get("run", "")) for s in job.get("steps") or []]
            installs = [line.strip() for run in scripts for line in run.splitlines() if "pip install" in line]
            runs_dualboard = [i for i, run in enumerate(scripts) if re.search(r"^\s*dualboard ", run, re.M)]
            assert installs == ([f'python -P -m pip install "{REQUIREMENT_TOKEN}"'] if runs_dualboard else []), path
            if runs_dualboard:
                install = next(i for i, run in enumerate(scripts) if "pip install" in run)
                assert install < runs_dualboard[0], f"{path}: install Dualboard before the first dualboard command"
