"""The package as users get it: the sdist and wheel `python -m build` makes, installed outside the checkout.

Package data left out of pyproject's patterns works in the checkout and breaks only for users, so
the wheel's file list is checked against every file of the package here. The slow journey is a
maintainer's: release.yml's own step installs the wheel into a new venv outside the repository and
runs `dualboard init` and `dualboard build`; then the scaffolded validate job runs, step by step, as
the scripts GitHub would run on a pull request, from its "Install Dualboard" step in another new venv.

No internet is needed: pip installs with ``--no-index`` from the folder the wheel was built into,
and the dependencies come from the environment running the tests, through ``PYTHONPATH`` set to a
folder of links that leaves Dualboard itself out (the checkout must not stand in for the wheel).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from dualboard import REQUIREMENT, __version__
from tests.conftest import REPO, copy_run
from tests.workflows.job_runner import load_steps, run_job
from tests.workflows.test_release import RELEASE

pytestmark = pytest.mark.slow  # builds a board for the module: only make test-all runs it

PACKAGE = "dualboard"
"""The import name, which the wheel installs (pyproject maps it to the folder below)."""
SOURCE_FOLDER = "generator"
SOURCES = ("pyproject.toml", "README.md", SOURCE_FOLDER)
"""What the build reads from the checkout (pyproject names README.md as the long description)."""
NOT_PACKAGED = shutil.ignore_patterns("__pycache__", "*.pyc")


def checkout_package_files() -> set[str]:
    """Every file of the package in the checkout, as a path relative to the source folder."""
    root = REPO / SOURCE_FOLDER
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """``python -m build`` (sdist, then the wheel from it) over a copy of the sources.

    A copy, because setuptools writes ``build/`` (the checkout's own output folder) and an
    ``*.egg-info`` whose stale file list could add files the patterns no longer match.
    ``--no-isolation`` uses the installed setuptools instead of downloading one.
    """
    work = tmp_path_factory.mktemp("package")
    for name in SOURCES:
        source, target = REPO / name, work / "src" / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=NOT_PACKAGED)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(work / "dist"), str(work / "src")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (work / "build.log").write_text(proc.stdout + proc.stderr, "utf-8")
    return work / "dist"


def test_packaging_prints_no_warning(dist):
    """Every folder of the package is listed in pyproject's packages: setuptools warns of none."""
    log = (dist.parent / "build.log").read_text("utf-8")
    warned = [line for line in log.splitlines() if "WARNING" in line or "Warning" in line]
    assert warned == [] and "is absent from the `packages` configuration" not in log


def _wheel(dist: Path) -> Path:
    [wheel] = dist.glob("*.whl")
    assert wheel.name == f"dualboard-{__version__}-py3-none-any.whl"
    return wheel


def test_wheel_carries_every_package_file(dist):
    with zipfile.ZipFile(_wheel(dist)) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(f"dualboard-{__version__}.dist-info/METADATA").decode()
        entry_points = wheel.read(f"dualboard-{__version__}.dist-info/entry_points.txt").decode()
    packaged = {n for n in names if not n.startswith(f"dualboard-{__version__}.dist-info/")}
    expected = {f"{PACKAGE}/{name}" for name in checkout_package_files()}
    assert expected - packaged == set(), "left out of the wheel: add the suffix to [tool.setuptools.package-data]"
    assert packaged - expected == set(), "the wheel holds files the checkout does not"
    assert any(n.startswith(f"{PACKAGE}/scaffold/template/dot-github/workflows/") for n in packaged), (
        "the scaffold's workflows are package data (a hidden .github/ would not be)"
    )
    assert f"\nVersion: {__version__}\n" in metadata
    assert "dualboard = dualboard.cli:main" in entry_points


def test_sdist_carries_every_package_file(dist):
    [sdist] = dist.glob("*.tar.gz")
    top = f"dualboard-{__version__}/"
    with tarfile.open(sdist) as archive:
        names = {m.name.removeprefix(top) for m in archive.getmembers() if m.isfile()}
    assert {
        n.removeprefix(f"{SOURCE_FOLDER}/") for n in names if n.startswith(f"{SOURCE_FOLDER}/")
    } == checkout_package_files()
    assert {"pyproject.toml", "README.md"} <= names


def _dependencies(folder: Path) -> Path:
    """Links to every installed package of the test environment except Dualboard (its dist-info, the
    editable install's hooks, ``dualboard``); ``.pth`` files are left out, so nothing runs at start-up."""
    folder.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        ours = entry.name == PACKAGE or entry.name.startswith(("dualboard-", "__editable__"))
        if not ours and entry.suffix != ".pth":
            (folder / entry.name).symlink_to(entry)
    return folder


@pytest.fixture(scope="module")
def offline_env(dist, tmp_path_factory) -> dict[str, str]:
    """A shell's environment without the checkout: dependencies by PYTHONPATH, pip offline on ``dist``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {
        **env,
        "PYTHONPATH": str(_dependencies(tmp_path_factory.mktemp("deps") / "site-packages")),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(dist),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


@pytest.fixture(scope="module")
def released_board(dist, offline_env, tmp_path_factory) -> Path:
    """release.yml's smoke step, run as GitHub runs it: the wheel in a new venv, then init and build."""
    runner_temp = tmp_path_factory.mktemp("runner-temp")
    [step] = [s for s in load_steps(RELEASE, "build") if "dualboard init" in str(s.get("run", ""))]
    [result] = run_job([step], dist.parent, {**offline_env, "RUNNER_TEMP": str(runner_temp)}, {}, {})
    assert result.returncode == 0, result.output
    return runner_temp / "board"


def test_the_wheel_scaffolds_and_builds_outside_the_checkout(released_board, offline_env):
    python = released_board.parent / "venv" / "bin" / "python"
    where = _run([str(python), "-c", "import dualboard; print(dualboard.__file__)"], released_board, offline_env)
    assert Path(where.strip()).is_relative_to(released_board.parent / "venv"), (
        "the wheel, not the checkout, is imported"
    )
    assert (
        _run([str(python.parent / "dualboard"), "--version"], released_board, offline_env).strip()
        == f"dualboard, version {__version__}"
    )
    scaffolded = [
        p for p in released_board.rglob("*") if p.is_file() and not {"build", "site", ".dualboard"} & set(p.parts)
    ]
    installs = {m for p in scaffolded for m in re.findall(r'pip install "([^"]*)"', p.read_text("utf-8"))}
    assert installs == {REQUIREMENT}, "the scaffold installs the version that made it"
    submit = html.unescape((released_board / "site" / "submit" / "index.html").read_text("utf-8"))
    assert f'pip install "{REQUIREMENT}"' in submit, "the How to submit page installs the pinned version"


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(args)}\n{proc.stdout}{proc.stderr}"
    return proc.stdout + proc.stderr


def _git(board: Path, *args: str) -> str:
    author = ["-c", "user.name=tests", "-c", "user.email=tests@example.org"]
    return subprocess.run(
        ["git", "-C", str(board), *author, *args], check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def repository(released_board) -> Path:
    """The scaffolded board as its maintainer commits it to ``main`` (built files are git-ignored)."""
    _git(released_board, "init", "-q", "-b", "main")
    _git(released_board, "add", "-A")
    _git(released_board, "commit", "-q", "-m", "dualboard init")
    return released_board


def _open_pull_request(board: Path, run_id: str, predictions: bytes) -> dict[str, str]:
    """A fresh checkout of a branch from main that adds a run; the pull request's ``${{ }}`` values."""
    _git(board, "checkout", "-q", "-f", "-B", "pull-request", "main")
    _git(board, "clean", "-q", "-fdx")
    [benchmark] = (board / "submissions").iterdir()
    copy_run(benchmark / "example-run", benchmark / run_id)
    (benchmark / run_id / "predictions.jsonl").write_bytes(predictions)
    _git(board, "add", "-A")
    _git(board, "commit", "-q", "-m", f"add {run_id}")
    return {
        "github.event.pull_request.base.sha": _git(board, "rev-parse", "main"),
        "github.event.pull_request.head.sha": _git(board, "rev-parse", "HEAD"),
        "github.event.pull_request.base.ref": "main",
        "github.event.pull_request.number": "1",
        "github.workspace": str(board),
        "github.repository": "someone/board",
    }


@pytest.fixture(scope="module")
def ci_python(offline_env, tmp_path_factory) -> Path:
    """What actions/setup-python gives the job: a Python without Dualboard (its bin/ folder)."""
    venv = tmp_path_factory.mktemp("ci") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=offline_env, timeout=300)
    return venv / "bin"


def _pull_request_job(board: Path, ci_bin: Path, env: dict[str, str], context: dict[str, str]):
    """The scaffolded validate.yml's job: the checkout is ``board``, setup-python is ``ci_bin`` on PATH."""
    uploaded = []
    actions = {
        "actions/checkout": lambda step: None,
        "actions/setup-python": lambda step: None,
        "actions/upload-artifact": lambda step: uploaded.append(board / step["with"]["path"]),
    }
    job_env = {**env, "PATH": f"{ci_bin}{os.pathsep}{env['PATH']}", "GITHUB_WORKSPACE": str(board), "CI": "true"}
    results = run_job(load_steps(board / ".github" / "workflows" / "validate.yml"), board, job_env, context, actions)
    log = "\n".join(f"--- {r.name} (ran={r.ran}, exit {r.returncode})\n{r.output}" for r in results)
    return results, uploaded, log


def test_scaffolded_pull_request_job_installs_the_pin_and_previews_a_valid_run(repository, ci_python, offline_env):
    example = next(repository.glob("submissions/*/example-run/predictions.jsonl")).read_bytes()
    context = _open_pull_request(repository, "second-run", example)
    results, uploaded, log = _pull_request_job(repository, ci_python, offline_env, context)
    assert [r.name for r in results if r.ran and r.returncode != 0] == [], log
    [install] = [r for r in results if r.name == "Install Dualboard"]
    assert install.ran and f"Successfully installed dualboard-{__version__}" in install.output, log
    assert uploaded and all(p.is_file() for p in uploaded), log
    assert "second-run" in json.dumps(json.loads(uploaded[0].read_text("utf-8"))), log


def test_scaffolded_pull_request_job_fails_on_a_broken_run_and_says_where(repository, ci_python, offline_env):
    example = next(repository.glob("submissions/*/example-run/predictions.jsonl")).read_bytes()
    context = _open_pull_request(repository, "broken-run", example + b"{not json\n")
    results, _, log = _pull_request_job(repository, ci_python, offline_env, context)
    assert any(r.returncode != 0 for r in results), log
    assert "broken-run/predictions.jsonl" in log, log
