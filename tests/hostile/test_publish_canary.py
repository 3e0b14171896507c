"""A merged pull request that plants code for the publishing build never sees a token.

publish.yml runs after a maintainer merges a pull request, and holds the Hub
and GitHub tokens. A pull request can commit ``pip.py`` (``python -m pip`` in
the checkout would run it instead of pip), ``pip/__main__.py``,
``sitecustomize.py``, ``usercustomize.py``, ``.pth`` files and git hooks with a
``core.hooksPath`` set in a committed ``.gitconfig``. Each planted file, if it
ever runs, writes the environment it sees into a canary folder.

The scaffold's publish.yml is run job after job as GitHub runs it
(:mod:`tests.workflows.job_runner`): each job on a fresh runner (its own
workspace and ``$RUNNER_TEMP``), artifacts carried between them, Python as
setup-python gives it (the real interpreter; pip resolves offline to a
stand-in wheel without installing), ``dualboard`` a stub that writes what each
command would, and the gh-pages push going to a local bare repository. Canary
tokens stand in for the secrets: nothing planted may run, and no file anywhere
may hold a canary afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from dualboard import REQUIREMENT, __version__
from dualboard.scaffold import REQUIREMENT_TOKEN
from tests.conftest import REPO
from tests.workflows.job_runner import EXPRESSION, load_steps, run_job

WORKFLOW = REPO / "generator" / "scaffold" / "template" / "dot-github" / "workflows" / "publish.yml"
HF_CANARY = "hf_canary_6f1d2a9c"
GH_CANARY = "ghs_canary_0b7e4d13"
REPOSITORY = "owner/board"

PLANTED_PYTHON = """import os, pathlib
pathlib.Path({out!r}, {name!r}).write_text(repr(dict(os.environ)))
"""
PLANTED_PIP = """import os, pathlib, subprocess
pathlib.Path({out!r}, {name!r}).write_text(repr(dict(os.environ)))
# What the attack did next: a hook for the push, and a .pth for every later Python process.
hooks = pathlib.Path(".git", "hooks")
hooks.mkdir(parents=True, exist_ok=True)
(hooks / "pre-push").write_text("#!/bin/sh\\nenv > {out}/pre-push-from-pip\\n")
(hooks / "pre-push").chmod(0o755)
subprocess.run(["git", "config", "core.hooksPath", ".githooks"], check=False)
"""
HOOK = "#!/bin/sh\nenv > {out}/{name}\n"

DUALBOARD_STUB = """#!{python}
# Stands in for dualboard: writes what each command leaves for the next, runs nothing of the checkout.
import json, os, pathlib, subprocess, sys
args = sys.argv[1:]
log = pathlib.Path({log!r})
with log.open("a") as out:
    out.write(json.dumps({{"args": args, "cwd": os.getcwd(), "token": "HF_TOKEN" in os.environ}}) + "\\n")
if args[0] == "build":
    pathlib.Path(".dualboard/hub-pending/runs").mkdir(parents=True, exist_ok=True)
    pathlib.Path(".dualboard/hub-pending/runs/staged.txt").write_text("a staged run")
    pathlib.Path("build").mkdir(exist_ok=True)
    pathlib.Path("build/store-source.json").write_text("{{}}")
elif args[0] == "release":
    pathlib.Path("releases", args[1]).mkdir(parents=True)
    pathlib.Path("releases", args[1], "SHA256SUMS").write_text("")
    tree = subprocess.run(["git", "mktree"], input="", capture_output=True, text=True, check=True).stdout.strip()
    commit = subprocess.run(["git", "commit-tree", tree, "-m", "site"], capture_output=True, text=True, check=True)
    subprocess.run(["git", "update-ref", "refs/heads/gh-pages", commit.stdout.strip()], check=True)
elif args[0] == "publish":
    root = pathlib.Path(args[args.index("--root") + 1] if "--root" in args else ".")
    version = args[args.index("--release") + 1]
    assert (root / "releases" / version / "SHA256SUMS").is_file(), "the release reached the publish job"
    assert (root / ".dualboard/hub-pending/runs/staged.txt").is_file(), "the staged runs reached it"
    assert (root / "build/store-source.json").is_file(), "the build's source reached it"
"""


def _git(cwd: Path, *args: str) -> str:
    author = ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "core.hooksPath=/dev/null"]
    done = subprocess.run(["git", "-C", str(cwd), *author, *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _merged_pull_request(root: Path, out: Path) -> Path:
    """A leaderboard repository whose main holds a merged pull request full of planted code."""
    repo = root / "origin"
    (repo / "submissions" / "demo" / "good-run").mkdir(parents=True)
    (repo / "submissions" / "demo" / "good-run" / "metadata.yaml").write_text("model: m\n")
    _git(root, "init", "-q", "-b", "main", str(repo))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    planted = {
        "pip.py": PLANTED_PIP.format(out=str(out), name="pip.py"),
        "pip/__main__.py": PLANTED_PIP.format(out=str(out), name="pip-main"),
        "sitecustomize.py": PLANTED_PYTHON.format(out=str(out), name="sitecustomize"),
        "usercustomize.py": PLANTED_PYTHON.format(out=str(out), name="usercustomize"),
        "evil.pth": f"import os, pathlib; pathlib.Path({str(out)!r}, 'pth').write_text(repr(dict(os.environ)))\n",
        "submissions/demo/new-run/evil.pth": f"import os; os.system('env > {out}/pth-in-run')\n",
        ".githooks/pre-push": HOOK.format(out=out, name="githooks-pre-push"),
        ".githooks/post-checkout": HOOK.format(out=out, name="githooks-post-checkout"),
        ".githooks/reference-transaction": HOOK.format(out=out, name="githooks-reference-transaction"),
        ".gitconfig": "[core]\n\thooksPath = .githooks\n",
        ".git-hooks-config": "[core]\n\thooksPath = .githooks\n",
    }
    for name, text in planted.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
        if name.startswith(".githooks/"):
            (repo / name).chmod(0o755)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "merge: add new-run")
    return repo


def _stand_in_wheel(folder: Path) -> Path:
    """A wheel named as the pinned release: pip resolves the pin to it offline (it installs nothing)."""
    folder.mkdir()
    info = f"dualboard-{__version__}.dist-info"
    with zipfile.ZipFile(folder / f"dualboard-{__version__}-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: dualboard\nVersion: {__version__}\n")
        wheel.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{info}/RECORD", "")
    return folder


def _tools(folder: Path, log: Path) -> Path:
    """What the runner has on PATH: setup-python's python (the real interpreter), a dualboard stub."""
    folder.mkdir()
    (folder / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (folder / "dualboard").write_text(DUALBOARD_STUB.format(python=sys.executable, log=str(log)))
    for tool in folder.iterdir():
        tool.chmod(0o755)
    return folder


def _expand(value: str, context: dict[str, str]) -> str:
    return EXPRESSION.sub(lambda match: context[match[1]], value)


@pytest.mark.slow
def test_planted_code_never_runs_and_no_canary_leaves(tmp_path):
    out = tmp_path / "canary"
    out.mkdir()
    origin = _merged_pull_request(tmp_path, out)
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    log = tmp_path / "dualboard-calls.jsonl"
    tools = _tools(tmp_path / "tools", log)
    workflow = tmp_path / "publish.yml"
    workflow.write_text(WORKFLOW.read_text("utf-8").replace(REQUIREMENT_TOKEN, REQUIREMENT))
    artifacts = tmp_path / "artifacts"
    env = {
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path / "home"),
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_RUN_NUMBER": "7",
        "PIP_NO_INDEX": "1",
        "PIP_DRY_RUN": "1",
        "PIP_NO_DEPS": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_FIND_LINKS": str(_stand_in_wheel(tmp_path / "wheels")),
        # the push goes to the bare repository instead of GitHub (git reads this from the environment)
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.{remote}.insteadOf",
        "GIT_CONFIG_VALUE_0": f"https://x-access-token:{GH_CANARY}@github.com/{REPOSITORY}.git",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    (tmp_path / "home").mkdir()
    context = {
        "vars.HUB_DATASET": "owner/board-data",
        "secrets.HF_TOKEN": HF_CANARY,
        "github.token": GH_CANARY,
    }
    jobs = yaml.safe_load(workflow.read_text("utf-8"))["jobs"]
    logs = []
    for name in jobs:  # in the order written: needs: keeps it so
        workspace, temp = tmp_path / f"workspace-{name}", tmp_path / f"runner-temp-{name}"
        temp.mkdir()
        workspace.mkdir()
        job_context = {**context, "runner.temp": str(temp)}

        def checkout(step, workspace=workspace):
            workspace.rmdir()
            _git(tmp_path, "clone", "-q", str(origin), str(workspace))

        def upload(step, job_context=job_context):
            source = Path(_expand(step["with"]["path"], job_context))
            (artifacts / step["with"]["name"]).mkdir(parents=True)
            shutil.copy2(source, artifacts / step["with"]["name"] / source.name)

        def download(step, job_context=job_context):
            shutil.copytree(artifacts / step["with"]["name"], Path(_expand(step["with"]["path"], job_context)))

        actions = {
            "actions/checkout": checkout,
            "actions/setup-python": lambda step: None,
            "actions/upload-artifact": upload,
            "actions/download-artifact": download,
        }
        job_env = {**env, "RUNNER_TEMP": str(temp), "GITHUB_WORKSPACE": str(workspace)}
        results = run_job(load_steps(workflow, name), workspace, job_env, job_context, actions)
        logs += [f"--- {name}: {r.name} (ran={r.ran}, exit {r.returncode})\n{r.output}" for r in results]
        assert all(r.ran and r.returncode == 0 for r in results), "\n".join(logs)

    assert sorted(p.name for p in out.iterdir()) == [], "planted code ran:\n" + "\n".join(logs)
    leaked = [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and not p.is_symlink() and any(c.encode() in p.read_bytes() for c in (HF_CANARY, GH_CANARY))
    ]
    assert leaked == [], "a canary was written to a file"
    assert _git(remote, "rev-parse", "gh-pages"), "the site was pushed"
    calls = [yaml.safe_load(line) for line in log.read_text().splitlines()]
    [publish] = [c for c in calls if c["args"][0] == "publish"]
    assert publish["token"] and not Path(publish["cwd"]).is_relative_to(tmp_path / "workspace-build")
    assert [c["token"] for c in calls if c["args"][0] != "publish"] == [False, False]
