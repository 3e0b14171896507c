"""`dualboard init`: a new leaderboard folder that validates and builds end to end."""

from __future__ import annotations

import html
import re
import subprocess
import sys

import pytest
import yaml
from click.testing import CliRunner

from dualboard import REQUIREMENT, __version__
from dualboard.cli import main
from dualboard.intake.benchmark import load_benchmarks
from dualboard.scaffold import REQUIREMENT_TOKEN, output_name, template_files

EXPECTED = {
    ".github/PULL_REQUEST_TEMPLATE.md",
    ".github/scripts/preview.py",
    ".github/scripts/pull_request.py",
    ".github/workflows/comment.yml",
    ".github/workflows/publish.yml",
    ".github/workflows/validate.yml",
    ".gitignore",
    "README.md",
    "mkdocs.yml",
    "data/benchmarks/road-signs/benchmark.yaml",
    "data/benchmarks/road-signs/questions.jsonl",
    "submissions/road-signs/example-run/metadata.yaml",
    "submissions/road-signs/example-run/predictions.jsonl",
}


def _init(target, *args):
    return CliRunner().invoke(main, ["init", str(target), "--benchmark", "road-signs", *args])


@pytest.fixture
def scaffolded(tmp_path):
    target = tmp_path / "board"
    result = _init(target)
    assert result.exit_code == 0, result.output
    return target


def test_init_writes_the_leaderboard_folder(scaffolded):
    files = {p.relative_to(scaffolded).as_posix() for p in scaffolded.rglob("*") if p.is_file()}
    assert files == EXPECTED
    for path in scaffolded.rglob("*"):
        if path.is_file():
            assert "@@" not in path.read_text("utf-8"), f"{path}: a template token was left"
    benchmark = load_benchmarks(scaffolded / "data")["road-signs"]
    assert benchmark.title == "Road Signs" and len(benchmark.questions) == 2
    assert {q["type"] for q in benchmark.questions} == {"multiple_choice", "open"}
    assert yaml.safe_load((scaffolded / "mkdocs.yml").read_text())["site_name"] == "Road Signs leaderboard"


def test_scaffolded_github_folder_is_the_template_with_the_pin(scaffolded):
    """.github/ is copied as it is, the pinned requirement written in (tests/workflows checks the template)."""
    template = {
        output_name(rel): data.replace(REQUIREMENT_TOKEN.encode(), REQUIREMENT.encode())
        for rel, data in template_files()
        if rel.startswith("dot-github/")
    }
    written = {
        p.relative_to(scaffolded).as_posix(): p.read_bytes() for p in (scaffolded / ".github").rglob("*") if p.is_file()
    }
    assert written == template


def test_scaffold_installs_the_version_that_made_it_everywhere(scaffolded):
    """Workflows and README install exactly this Dualboard (the site's How to submit page is checked in the build)."""
    installs = {}
    for path in scaffolded.rglob("*"):
        if path.is_file():
            for found in re.findall(r"pip install (\S+)", path.read_text("utf-8")):
                installs.setdefault(path.relative_to(scaffolded).as_posix(), set()).add(found)
    assert installs == {
        name: {f'"{REQUIREMENT}"'}
        for name in (".github/workflows/validate.yml", ".github/workflows/publish.yml", "README.md")
    }
    assert REQUIREMENT == f"dualboard=={__version__}"


def test_example_run_validates(scaffolded):
    result = CliRunner().invoke(main, ["validate", "--root", str(scaffolded)])
    assert result.exit_code == 0, result.output
    assert "valid: 1 runs, 2 answers" in result.output


def test_init_fills_the_empty_folder_the_shell_is_in(tmp_path):
    """`mkdir board && cd board && dualboard init .`: before, a traceback (rmdir of '.')."""
    board = tmp_path / "board"
    board.mkdir()
    inode = board.stat().st_ino
    result = subprocess.run(
        [sys.executable, "-m", "dualboard", "init", ".", "--benchmark", "road-signs"],
        cwd=board,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert board.stat().st_ino == inode  # the same folder, so a shell inside it sees the files
    assert {p.relative_to(board).as_posix() for p in board.rglob("*") if p.is_file()} == EXPECTED
    assert [p.name for p in tmp_path.iterdir()] == ["board"]  # no staging folder left beside it


def test_init_refuses_a_used_folder_and_bad_names(tmp_path):
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine")
    result = _init(used)
    assert result.exit_code == 1 and "already exists and is not empty" in result.output
    assert [p.name for p in used.iterdir()] == ["keep.txt"]
    bad = CliRunner().invoke(main, ["init", str(tmp_path / "new"), "--benchmark", "Road Signs"])
    assert bad.exit_code == 1 and "benchmark name 'Road Signs' is not valid" in bad.output
    assert not (tmp_path / "new").exists()
    quoted = _init(tmp_path / "q", "--title", 'say "hi"')
    assert quoted.exit_code == 1 and "quotes" in quoted.output
    assert CliRunner().invoke(main, ["init", str(tmp_path / "x")]).exit_code == 2


@pytest.mark.slow
def test_scaffold_builds_end_to_end(scaffolded):
    result = CliRunner().invoke(main, ["build", "--root", str(scaffolded), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert (scaffolded / "site" / "index.html").is_file()
    board = html.unescape((scaffolded / "site" / "benchmarks" / "road-signs" / "index.html").read_text("utf-8"))
    assert "example-model" in board and "Road Signs" in board
    submit = html.unescape((scaffolded / "site" / "submit" / "index.html").read_text("utf-8"))
    assert f'pip install "{REQUIREMENT}"' in submit
    home = html.unescape((scaffolded / "site" / "index.html").read_text("utf-8"))
    tabs = re.findall(r'class="md-tabs__link[^>]*>\s*([^<]*?)\s*<', home)
    assert tabs.count("How to submit") == 1 and "About this leaderboard" in tabs, tabs
    assert not (scaffolded / "site" / "how-to-submit").exists()
    assert (scaffolded / "build" / "scored" / "road-signs" / "about.json").is_file()
