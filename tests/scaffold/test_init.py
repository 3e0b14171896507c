"""`dualboard init`: a new leaderboard folder that validates and builds end to end."""

from __future__ import annotations

import fnmatch
import html
import tomllib

import pytest
import yaml
from click.testing import CliRunner

from generator.cli import main
from generator.intake.benchmark import load_benchmarks
from generator.scaffold import output_name, template_files

from tests.conftest import REPO

EXPECTED = {
    ".github/PULL_REQUEST_TEMPLATE.md", ".github/scripts/preview.py", ".github/scripts/pull_request.py",
    ".github/workflows/comment.yml",
    ".github/workflows/publish.yml", ".github/workflows/validate.yml", ".gitignore", "README.md", "mkdocs.yml",
    "site_src/about.md", "site_src/how-to-submit.md", "data/benchmarks/road-signs/benchmark.yaml",
    "data/benchmarks/road-signs/questions.jsonl", "submissions/road-signs/example-run/metadata.yaml",
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


def test_scaffolded_workflows_are_the_repository_ones(scaffolded):
    for path in (scaffolded / ".github").rglob("*"):
        if path.is_file():
            name = path.relative_to(scaffolded)
            assert path.read_bytes() == (REPO / name).read_bytes(), f"{name} differs from the repository's own"


def test_example_run_validates(scaffolded):
    result = CliRunner().invoke(main, ["validate", "--root", str(scaffolded)])
    assert result.exit_code == 0, result.output
    assert "valid: 1 runs, 2 answers" in result.output


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


def test_every_template_file_is_package_data():
    """Wheels carry only files that match pyproject's package-data patterns (and no hidden folders)."""
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["generator"]
    for relative, _ in template_files():
        path = f"scaffold/template/{relative}"
        assert not any(part.startswith(".") for part in path.split("/")), path
        assert any(fnmatch.fnmatch(path, pattern) for pattern in patterns), f"{path} would be left out of the wheel"
        assert output_name(relative)


@pytest.mark.slow
def test_scaffold_builds_end_to_end(scaffolded):
    result = CliRunner().invoke(main, ["build", "--root", str(scaffolded), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert (scaffolded / "site" / "index.html").is_file()
    board = html.unescape((scaffolded / "site" / "benchmarks" / "road-signs" / "index.html").read_text("utf-8"))
    assert "example-model" in board and "Road Signs" in board
    assert (scaffolded / "site" / "how-to-submit" / "index.html").is_file()
    assert (scaffolded / "build" / "scored" / "road-signs.parquet").is_file()
