"""validate.yml's preview step, run as GitHub runs it, on a pull request against the demo.

The untrusted job calls `dualboard preview` and nothing else of substance;
its one step is taken from the workflow file and run with ``bash -eo
pipefail`` in a git checkout holding a base commit and the pull request's
commit, with the ``${{ }}`` values GitHub would pass. Its artifact is then
rendered by the trusted script as comment.yml renders it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.preview.demo_runs import NEW, STORED, add_strong_run, copy_demo, git
from tests.workflows.test_workflows import WORKFLOWS, _id

VALIDATE = [p for p in WORKFLOWS if p.name == "validate.yml"]
INSTALL = "Install Dualboard"
"""The install step (how Dualboard gets on the runner) is not the preview's business."""
RUN_URL = "https://github.com/owner/board/actions/runs/42"


def _steps(path: Path) -> list[dict]:
    [job] = yaml.safe_load(path.read_text("utf-8"))["jobs"].values()
    return job["steps"]


def _preview_step(path: Path) -> dict:
    [step] = [s for s in _steps(path) if "run" in s and s.get("name") != INSTALL]
    return step


@pytest.mark.parametrize("path", VALIDATE, ids=_id)
def test_the_untrusted_job_runs_dualboard_preview_and_nothing_else(path):
    step = _preview_step(path)
    [command] = [line for line in step["run"].strip().splitlines() if line.strip()]
    assert command.startswith('dualboard preview --base "$BASE_SHA" ')
    assert "--hub-endpoint https://huggingface.co" in command, (
        "the endpoint is fixed here, never taken from dualboard.yaml"
    )
    assert not re.search(r"[;&|`]|\$\(", command), "one command, no shell logic"
    assert step["env"] == {"BASE_SHA": "${{ github.event.pull_request.base.sha }}"}
    [upload] = [s for s in _steps(path) if "actions/upload-artifact" in str(s.get("uses", ""))]
    assert upload["if"] == "always()", "the preview is posted also when validation fails"
    assert upload["with"]["path"] == _json_path(command)


def _json_path(command: str) -> str:
    return re.search(r"--json (\S+)", command).group(1)


def _run_step(checkout: Path, base_sha: str) -> subprocess.CompletedProcess:
    """The preview step in bash, as the runner runs it, with dualboard on PATH."""
    step = _preview_step(REPO / ".github" / "workflows" / "validate.yml")
    env = {**os.environ, "BASE_SHA": base_sha, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _render(checkout: Path, artifact: Path) -> str:
    """comment.yml's render, with the trusted script of this repository."""
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / ".github" / "scripts" / "preview.py"),
            "render",
            str(artifact),
            "--run-url",
            RUN_URL,
        ],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def pull_request(tmp_path: Path) -> tuple[Path, str]:
    """A checkout of the demo: the base commit, then a pull request commit adding the strong simulated run."""
    checkout = copy_demo(tmp_path / "checkout")
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-qm", "base")
    base = git(checkout, "rev-parse", "HEAD")
    add_strong_run(checkout)
    git(checkout, "add", "-A")
    git(checkout, "commit", "-qm", "a new run")
    return checkout, base


@pytest.mark.slow
def test_the_step_places_the_new_run_on_the_base_board(pull_request):
    checkout, base = pull_request
    done = _run_step(checkout, base)
    assert done.returncode == 0, done.stdout + done.stderr
    artifact = checkout / _json_path(_preview_step(REPO / ".github" / "workflows" / "validate.yml")["run"])
    doc = json.loads(artifact.read_text("utf-8"))
    [benchmark] = doc["benchmarks"]
    assert [r["run_id"] for r in benchmark["runs"]] == [NEW] and benchmark["board_runs"] == len(STORED) + 1
    comment = _render(checkout, artifact)
    assert "**Validation:** passed, 0 finding(s)." in comment
    assert f"| 1 of {len(STORED) + 1} [1, " in comment
    assert git(checkout, "status", "--porcelain") == "?? preview/", "the job leaves only its artifact in the checkout"


@pytest.mark.slow
def test_an_invalid_run_fails_the_step_and_still_leaves_the_artifact(pull_request):
    checkout, base = pull_request
    predictions = checkout / "submissions" / "demo" / NEW / "predictions.jsonl"
    predictions.write_text(predictions.read_text("utf-8") + '{"question_id": "no-such-question", "response": "x"}\n')
    git(checkout, "commit", "-qam", "a broken line")
    done = _run_step(checkout, base)
    assert done.returncode == 1
    artifact = checkout / _json_path(_preview_step(REPO / ".github" / "workflows" / "validate.yml")["run"])
    comment = _render(checkout, artifact)
    assert "**Validation:** failed" in comment and "no-such-question" in comment
    assert f"error: submissions/demo/{NEW}/predictions.jsonl:" in comment, "paths relative to the repository"
    assert str(checkout) not in comment
    assert "no run to place on the board" in comment
