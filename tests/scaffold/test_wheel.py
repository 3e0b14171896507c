"""The package as users get it: the sdist and wheel `python -m build` makes, installed outside the checkout.

Package data left out of pyproject's patterns works in the checkout and breaks only for users, so
the wheel's file list is checked against every file of the package here. The slow journey is a
maintainer's: install the wheel into a new venv outside the repository, `dualboard init`,
`dualboard build`, then run the scaffolded validate job's steps as the scripts GitHub would run on a
pull request, starting from its "Install Dualboard" step in a second, empty venv.

No internet is needed: pip installs with ``--no-index`` from the folder the wheel was built into,
and the dependencies come from the environment running the tests, seen through a folder of links
that leaves out Dualboard itself (the checkout's editable install must not stand in for the wheel).
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from generator import REQUIREMENT, __version__

from tests.conftest import REPO
from tests.workflows.job_runner import load_steps, run_job

PACKAGE = "generator"
SOURCES = ("pyproject.toml", "README.md", PACKAGE)
"""What the build reads from the checkout (pyproject names README.md as the long description)."""
NOT_PACKAGED = shutil.ignore_patterns("__pycache__", "*.pyc")
BENCHMARK = "road-signs"


def checkout_package_files() -> set[str]:
    """Every file of the package in the checkout, as a path inside the wheel."""
    root = REPO / PACKAGE
    return {p.relative_to(REPO).as_posix() for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


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
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(work / "dist"), str(work / "src")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return work / "dist"


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
    expected = checkout_package_files()
    assert expected - packaged == set(), "left out of the wheel: add the suffix to [tool.setuptools.package-data]"
    assert packaged - expected == set(), "the wheel holds files the checkout does not"
    assert any(n.startswith(f"{PACKAGE}/scaffold/template/dot-github/workflows/") for n in packaged), \
        "the scaffold's workflows are package data (a hidden .github/ would not be)"
    assert f"\nVersion: {__version__}\n" in metadata
    assert "dualboard = generator.cli:main" in entry_points


def test_sdist_carries_every_package_file(dist):
    [sdist] = dist.glob("*.tar.gz")
    top = f"dualboard-{__version__}/"
    with tarfile.open(sdist) as archive:
        names = {m.name.removeprefix(top) for m in archive.getmembers() if m.isfile()}
    assert {n for n in names if n.startswith(f"{PACKAGE}/")} == checkout_package_files()
    assert {"pyproject.toml", "README.md"} <= names


def _venv(path: Path, env: dict[str, str]) -> Path:
    """A new venv at ``path`` that sees the test environment's packages, Dualboard's own left out."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, env=env, timeout=300)
    deps = path / "test-dependencies"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        ours = entry.name == PACKAGE or entry.name.startswith(("dualboard-", "__editable__"))
        if not ours and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    purelib = subprocess.run([str(path / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True, env=env).stdout.strip()
    Path(purelib, "test-dependencies.pth").write_text(f"{deps}\n", "utf-8")
    return path / "bin"


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(args)}\n{proc.stdout}{proc.stderr}"
    return proc.stdout + proc.stderr


def _clean_env(dist: Path) -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH to the checkout, pip offline on ``dist``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(dist), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _git(board: Path, *args: str) -> str:
    author = ["-c", "user.name=tests", "-c", "user.email=tests@example.org"]
    return subprocess.run(["git", "-C", str(board), *author, *args], check=True, capture_output=True, text=True).stdout.strip()


def _open_pull_request(board: Path, run_id: str, predictions: bytes) -> dict[str, str]:
    """Add the run on a new branch from main; the pull request's values of ``${{ }}`` expressions."""
    _git(board, "checkout", "-q", "-B", "pull-request", "main")
    run = board / "submissions" / BENCHMARK / run_id
    shutil.copytree(board / "submissions" / BENCHMARK / "example-run", run)
    (run / "predictions.jsonl").write_bytes(predictions)
    _git(board, "add", "-A")
    _git(board, "commit", "-q", "-m", f"add {run_id}")
    return {"github.event.pull_request.base.sha": _git(board, "rev-parse", "main"),
            "github.event.pull_request.head.sha": _git(board, "rev-parse", "HEAD"),
            "github.event.pull_request.base.ref": "main", "github.event.pull_request.number": "1",
            "github.workspace": str(board), "github.repository": "someone/board"}


def _pull_request_job(board: Path, venv_bin: Path, env: dict[str, str], context: dict[str, str]):
    """The scaffolded validate.yml's job, as on GitHub: the checkout is ``board``, setup-python the venv."""
    uploaded = []
    actions = {"actions/checkout": lambda step: None, "actions/setup-python": lambda step: None,
               "actions/upload-artifact": lambda step: uploaded.append(board / step["with"]["path"])}
    job_env = {**env, "PATH": f"{venv_bin}{os.pathsep}{env['PATH']}", "GITHUB_WORKSPACE": str(board), "CI": "true"}
    results = run_job(load_steps(board / ".github" / "workflows" / "validate.yml"), board, job_env, context, actions)
    log = "\n".join(f"--- {r.name} (ran={r.ran}, exit {r.returncode})\n{r.output}" for r in results)
    return results, uploaded, log


@pytest.mark.slow
def test_installed_wheel_scaffolds_builds_and_runs_its_pull_request_checks(dist, tmp_path):
    env = _clean_env(dist)
    bin_dir = _venv(tmp_path / "venv", env)
    env_user = {**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}
    _run([str(bin_dir / "python"), "-m", "pip", "install", REQUIREMENT], tmp_path, env_user)
    where = _run([str(bin_dir / "python"), "-c", "import generator; print(generator.__file__)"], tmp_path, env_user)
    assert Path(where.strip()).is_relative_to(tmp_path / "venv"), "the wheel, not the checkout, is imported"
    assert _run(["dualboard", "--version"], tmp_path, env_user).strip() == f"dualboard, version {__version__}"

    _run(["dualboard", "init", "board", "--benchmark", BENCHMARK], tmp_path, env_user)
    board = tmp_path / "board"
    _run(["dualboard", "build", "--no-progress"], board, env_user)
    submit = html.unescape((board / "site" / "submit" / "index.html").read_text("utf-8"))
    assert f'pip install "{REQUIREMENT}"' in submit, "the How to submit page installs the pinned version"
    for built in ("site", "build", ".dualboard"):  # a pull request's checkout starts without them
        shutil.rmtree(board / built)
    _git(board, "init", "-q", "-b", "main")
    _git(board, "add", "-A")
    _git(board, "commit", "-q", "-m", "dualboard init")

    # A pull request adding a valid run: every step of the scaffolded job passes, starting with
    # "Install Dualboard" in a venv that has no Dualboard yet (pip finds the pin in dist/ only).
    ci_bin = _venv(tmp_path / "ci-venv", env)
    example = (board / "submissions" / BENCHMARK / "example-run" / "predictions.jsonl").read_bytes()
    results, uploaded, log = _pull_request_job(board, ci_bin, env, _open_pull_request(board, "second-run", example))
    assert [r.name for r in results if r.ran and r.returncode != 0] == [], log
    [install] = [r for r in results if r.name == "Install Dualboard"]
    assert install.ran and f"Successfully installed dualboard-{__version__}" in install.output, log
    assert uploaded and all(p.is_file() for p in uploaded), log
    assert "second-run" in json.dumps(json.loads(uploaded[0].read_text("utf-8"))), log

    # The same pull request with a broken line: the job fails, and says where.
    _git(board, "clean", "-q", "-fdx")
    results, _, log = _pull_request_job(board, ci_bin, env, _open_pull_request(board, "broken-run", example + b"{not json\n"))
    assert any(r.returncode != 0 for r in results), log
    assert "broken-run/predictions.jsonl" in log, log
