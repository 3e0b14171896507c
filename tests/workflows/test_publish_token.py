"""publish.yml gives the Hub token to one step, the one that writes, and fixes the Hub endpoint.

Checked for the repository's workflow and the copy `dualboard init` scaffolds:
the build before the write step reads files a pull request changed, so it
must run without the token, and dualboard.yaml (which a pull request can
edit) must never choose where the token is sent.
"""

from __future__ import annotations

import re

import pytest
import yaml

from tests.workflows.test_workflows import WORKFLOWS, _id

PUBLISH = [p for p in WORKFLOWS if p.name == "publish.yml"]
ENDPOINT = "https://huggingface.co"


def _steps(path) -> list[dict]:
    """Every job's steps, job after job (the build job, then the one that publishes)."""
    doc = yaml.safe_load(path.read_text("utf-8"))
    return [step for job in doc["jobs"].values() for step in job["steps"]]


def _writer(steps: list[dict]) -> int:
    """Index of the one step that writes to the Hub."""
    writers = [i for i, s in enumerate(steps) if "dualboard publish" in str(s.get("run", ""))]
    assert len(writers) == 1, "exactly one step pushes to the Hub"
    return writers[0]


def test_publish_workflows_exist():
    assert len(PUBLISH) == 2


@pytest.mark.parametrize("path", PUBLISH, ids=_id)
def test_token_exists_only_in_the_step_that_writes_to_the_hub(path):
    doc = yaml.safe_load(path.read_text("utf-8"))
    [job] = [j for j in doc["jobs"].values() if "dualboard publish" in str(j["steps"])]
    steps = job["steps"]
    writer = steps[_writer(steps)]
    assert writer["env"] == {"HF_TOKEN": "${{ secrets.HF_TOKEN }}"}
    secrets_in_file = len(re.findall(r"secrets\s*[.\[]", path.read_text("utf-8")))
    assert secrets_in_file == 1, "no secret anywhere else: not in the workflow's or job's env, nor in another step"
    for level in (doc, job):
        assert "HF_TOKEN" not in str(level.get("env", {})), "the token must not reach every step"
    others = [s for s in steps if s is not writer]
    assert not any("HF_TOKEN" in str(s) for s in others)


@pytest.mark.parametrize("path", PUBLISH, ids=_id)
def test_the_build_reads_without_a_token_and_stages_its_changes(path):
    steps = _steps(path)
    writer = _writer(steps)
    before = [str(s.get("run", "")) for s in steps[:writer]]
    builds = [run for run in before if "dualboard build" in run]
    assert builds and all("--stage" in run for run in builds), "the build keeps its changes locally"
    assert not any(re.search(r"dualboard (ingest|publish)\b", run) and "--stage" not in run for run in before)
    after = "\n".join(str(s.get("run", "")) for s in steps[writer + 1 :])
    assert not re.search(r"dualboard \w+ .*--hub\b", after), "nothing touches the Hub after the write step"


@pytest.mark.parametrize("path", PUBLISH, ids=_id)
def test_hub_endpoint_is_written_in_the_workflow(path):
    commands = [line for s in _steps(path) for line in str(s.get("run", "")).splitlines() if "dualboard " in line]
    hub_commands = [c for c in commands if "--hub " in c]
    assert len(hub_commands) >= 2
    for command in hub_commands:
        assert f"--hub-endpoint {ENDPOINT}" in command, f"{command!r}: pass the endpoint explicitly"
    assert "DUALBOARD_HUB_ENDPOINT" not in path.read_text("utf-8"), "no endpoint from a variable"


@pytest.mark.parametrize("path", PUBLISH, ids=_id)
def test_github_token_stays_out_of_the_build(path):
    """A relative link to .git/config must find no token there: the checkout keeps none, only the deploy step
    has one."""
    steps = _steps(path)
    [checkout] = [s for s in steps if str(s.get("uses", "")).startswith("actions/checkout")]
    assert checkout["with"]["persist-credentials"] is False
    holders = [s.get("name") for s in steps if "github.token" in str(s.get("env", {})) + str(s.get("with", {}))]
    assert holders == ["Deploy the versioned site"]
    assert "github.token" not in "".join(str(s.get("run", "")) for s in steps)


def _jobs(path) -> dict[str, dict]:
    return yaml.safe_load(path.read_text("utf-8"))["jobs"]


@pytest.mark.parametrize("path", PUBLISH, ids=_id)
def test_the_job_that_holds_secrets_checks_out_nothing(path):
    """The tree a merged pull request wrote is read by the tokenless build job only; the publish job gets its
    results as an artifact, installs Dualboard outside any checkout and pushes from a fresh repository."""
    jobs = _jobs(path)
    holders = {name for name, job in jobs.items() if re.search(r"secrets\.|github\.token", yaml.safe_dump(job))}
    assert holders == {"publish"}
    build, publish = jobs["build"], jobs["publish"]
    assert publish["needs"] == "build" and "environment" not in build and "permissions" not in build
    assert not any("actions/checkout" in str(s.get("uses", "")) for s in publish["steps"])
    script = "\n".join(str(s.get("run", "")) for s in publish["steps"])
    assert "git init --quiet --bare" in script
    git_commands = [line for line in script.splitlines() if re.match(r"\s*git ", line)]
    assert all("-c core.hooksPath=/dev/null" in line for line in git_commands[1:]), git_commands
    assert "GITHUB_WORKSPACE" not in script and " ./" not in script


@pytest.mark.parametrize("path", WORKFLOWS, ids=_id)
def test_python_never_imports_from_the_working_folder(path):
    """``python -m pip`` puts the current folder first on sys.path, so a pull request's pip.py would run
    instead of pip: every ``-m`` runs with ``-P`` (or ``-I``), which leaves it out; scripts run by path."""
    for step in _steps(path):
        for line in str(step.get("run", "")).splitlines():
            for call in re.findall(r"python3?\S*\s+(?:-\S+\s+)*-m\b", line):
                assert re.search(r"\s-[IP]\s", f" {call} "), f"{path.name}: {line.strip()!r}: run python -P -m"
