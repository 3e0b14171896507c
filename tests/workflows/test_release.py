"""release.yml publishes Dualboard to PyPI with trusted publishing, and nothing else holds the id-token.

The workflow cannot run here (it needs GitHub's OpenID Connect identity and PyPI), so its shape is
checked like the other workflows', and its tag check runs as the script GitHub would run.
The build job runs this repository's code and gets no id-token; the publish job holds the id-token
(``id-token: write`` only, environment ``pypi``) and runs no code of the repository: it downloads
the built files and hands them to pypa/gh-action-pypi-publish, without any password.
"""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from dualboard import __version__
from tests.conftest import REPO
from tests.workflows.test_workflows import _triggers

RELEASE = REPO / ".github" / "workflows" / "release.yml"
PUBLISH_ACTION = "pypa/gh-action-pypi-publish"


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(RELEASE.read_text("utf-8"))


def _jobs(workflow: dict) -> tuple[dict, dict]:
    """(build job, publish job): the publish job is the one that uses PyPI's action."""
    jobs = workflow["jobs"]
    [publish] = [
        name for name, job in jobs.items() if any(PUBLISH_ACTION in str(s.get("uses", "")) for s in job["steps"])
    ]
    [build] = [name for name in jobs if name != publish]
    return jobs[build], jobs[publish]


def test_runs_on_version_tags_only(workflow):
    assert _triggers(workflow) == {"push": {"tags": ["v*"]}}
    assert workflow["permissions"] == {"contents": "read"}, "no write scope and no id-token at the top"


def test_only_the_publish_job_holds_the_id_token(workflow):
    build, publish = _jobs(workflow)
    assert publish["permissions"] == {"id-token": "write"}, "the id-token and nothing more"
    assert publish["environment"]["name"] == "pypi", "a protected environment PyPI's trusted publisher names"
    assert "id-token" not in str(build.get("permissions", {})) and "environment" not in build
    assert RELEASE.read_text("utf-8").count("id-token: write") == 1
    assert "secrets" not in RELEASE.read_text("utf-8"), "trusted publishing: no stored token"


def test_publish_job_runs_no_repository_code(workflow):
    build, publish = _jobs(workflow)
    assert publish["needs"] == next(name for name, job in workflow["jobs"].items() if job is build)
    steps = publish["steps"]
    assert [s["uses"].split("@")[0] for s in steps] == ["actions/download-artifact", PUBLISH_ACTION]
    assert not any("run" in s for s in steps), "no script beside the id-token"
    assert "with" not in steps[1] or not {"password", "user"} & set(steps[1]["with"]), "no password: trusted publishing"
    uploads = [s for s in build["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert [u["with"]["name"] for u in uploads] == [steps[0]["with"]["name"]], "publish what the build job uploaded"
    assert uploads[0]["with"]["path"].rstrip("/") == steps[0]["with"]["path"].rstrip("/") == "dist"


def test_build_job_builds_and_checks_the_wheel(workflow):
    build, _ = _jobs(workflow)
    [checkout] = [s for s in build["steps"] if str(s.get("uses", "")).startswith("actions/checkout")]
    assert checkout["with"]["persist-credentials"] is False
    script = "\n".join(str(s.get("run", "")) for s in build["steps"])
    assert "python -P -m build --outdir dist" in script
    assert "twine check --strict" in script
    assert "dualboard init" in script and "dualboard build" in script, (
        "the wheel works outside the checkout before it is published"
    )


@pytest.mark.parametrize(("tag", "ok"), [(f"v{__version__}", True), ("v9.9.9", False), (__version__, False)])
def test_tag_check_refuses_a_tag_that_is_not_the_version(workflow, tmp_path, tag, ok):
    build, _ = _jobs(workflow)
    [step] = [s for s in build["steps"] if "GITHUB_REF_NAME" in str(s.get("run", ""))]
    dist = tmp_path / "dist"
    dist.mkdir()
    for name in (f"dualboard-{__version__}.tar.gz", f"dualboard-{__version__}-py3-none-any.whl"):
        (dist / name).write_bytes(b"")
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=tmp_path,
        env={**os.environ, "GITHUB_REF_NAME": tag},
        capture_output=True,
        text=True,
    )
    assert (proc.returncode == 0) == ok, proc.stderr
    if not ok:
        assert f"tag {tag} does not match the version built" in proc.stderr
