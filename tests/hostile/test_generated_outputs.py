"""What the build writes itself is never taken from a pull request, and no secret leaves through it.

A contributor can commit ignored folders with ``git add -f``: a planted
``build/scored/x.parquet -> /proc/self/environ`` would be uploaded by the
step that holds the Hub token, a planted ``.dualboard/hub-cache`` snapshot
would put unvalidated runs on the board. And benchmark.yaml, which a pull
request edits, must not name a secret for the judge to send away.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from dualboard.cli import main
from dualboard.errors import DualboardError
from dualboard.release.publish import upload_files
from dualboard.release_files import ReleaseError, load_release, load_releases
from dualboard.safe_read import UnsafeFileError
from dualboard.scored_files import read_scored


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), *args],
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "HOME": str(root),
            "PATH": "/usr/bin:/bin",
        },
    )


@pytest.mark.parametrize(
    "planted",
    [
        "build/scored/env/verdicts/run.parquet",
        ".dualboard/hub-cache/snapshots/x/runs/tiny/ghost/metadata.yaml",
        "site/index.html",
    ],
)
def test_committed_generated_files_are_findings(tiny_root: Path, planted: str) -> None:
    (tiny_root / ".gitignore").write_text("build/\nsite/\n.dualboard/\n")
    path = tiny_root / planted
    path.parent.mkdir(parents=True)
    path.write_text("planted")
    _git(tiny_root, "init", "-q")
    _git(tiny_root, "add", "-A")
    _git(tiny_root, "add", "-f", planted)
    result = CliRunner().invoke(main, ["validate", "--root", str(tiny_root)])
    assert result.exit_code == 1, result.output
    assert f"{planted}: path: is a generated file committed to the repository" in result.output
    build = CliRunner().invoke(main, ["build", "--root", str(tiny_root), "--no-progress"])
    assert build.exit_code != 0 and planted in build.output
    assert not (tiny_root / ".dualboard" / "store" / "current").exists()


def test_untracked_local_outputs_are_fine(tiny_root: Path) -> None:
    """A maintainer's own earlier build is not a finding: only what git tracks is."""
    (tiny_root / ".gitignore").write_text("build/\n")
    (tiny_root / "build" / "scored").mkdir(parents=True)
    (tiny_root / "build" / "scored" / "old.parquet").write_bytes(b"x")
    _git(tiny_root, "init", "-q")
    _git(tiny_root, "add", "-A")
    assert CliRunner().invoke(main, ["validate", "--root", str(tiny_root)]).exit_code == 0


@pytest.mark.slow
def test_grade_removes_scored_tables_it_did_not_write(tiny_root: Path) -> None:
    scored = tiny_root / "build" / "scored"
    scored.mkdir(parents=True)
    (scored / "stale.parquet").write_bytes(b"not parquet")
    (scored / "env.verdicts.parquet").symlink_to("/proc/self/environ")
    (scored / "gone").mkdir()
    (scored / "gone" / "about.json").write_text("{}", "utf-8")
    (scored / "tiny").symlink_to(tiny_root)  # a link where the benchmark's folder goes
    result = CliRunner().invoke(main, ["build", "--root", str(tiny_root), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in scored.iterdir()) == ["tiny"]
    assert not (scored / "tiny").is_symlink()
    assert len(read_scored(scored, "tiny")) == 3


@pytest.mark.slow
@pytest.mark.parametrize("link", ["build/scored", "build/scored/tiny/answers", "build/scored/tiny/evidence"])
def test_grade_writes_and_deletes_only_inside_build_scored(tiny_root: Path, tmp_path: Path, link: str) -> None:
    """A link where build/scored or a table's folder goes is removed, never written or emptied through."""
    assert CliRunner().invoke(main, ["build", "--root", str(tiny_root), "--no-progress"]).exit_code == 0
    victim = tmp_path / "victim"
    (victim / "photos").mkdir(parents=True)
    (victim / "notes.txt").write_text("precious", "utf-8")
    planted = tiny_root / link
    shutil.rmtree(planted)
    planted.symlink_to(victim)
    result = CliRunner().invoke(main, ["build", "--root", str(tiny_root), "--no-progress", "--force"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in victim.iterdir()) == ["notes.txt", "photos"]
    assert not planted.is_symlink() and len(read_scored(tiny_root / "build" / "scored", "tiny")) == 3


def _release_folder(root: Path) -> Path:
    """A small frozen release folder: a table, a manifest and the checksums of both."""
    folder = root / "releases" / "1.0"
    (folder / "scored").mkdir(parents=True)
    pd.DataFrame({"a": [1]}).to_parquet(folder / "scored" / "tiny.parquet")
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "version": "1.0",
                "released": "2026-01-01",
                "generator_version": "0",
                "store_revision": "r",
                "benchmarks": {},
            }
        )
    )
    names = ["manifest.json", "scored/tiny.parquet"]
    (folder / "SHA256SUMS").write_text(
        "".join(f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n" for n in names)
    )
    return folder


def test_publish_never_follows_a_link_into_the_upload(tmp_path: Path) -> None:
    folder = _release_folder(tmp_path)
    record = load_release(folder)
    assert [f.path for f in upload_files(record)] == [
        "releases/1.0/SHA256SUMS",
        "releases/1.0/manifest.json",
        "releases/1.0/scored/tiny.parquet",
        "README.md",
    ]
    (folder / "scored" / "tiny.parquet").unlink()
    (folder / "scored" / "tiny.parquet").symlink_to("/proc/self/environ")  # planted after the release was read
    with pytest.raises(UnsafeFileError, match="symbolic link"):
        upload_files(record)
    with pytest.raises(ReleaseError, match="symbolic link"):
        load_releases(tmp_path)


def test_publish_uploads_only_the_files_the_release_froze(tmp_path: Path) -> None:
    folder = _release_folder(tmp_path)
    (folder / "scored" / "secret.parquet").write_bytes(b"secret")
    with pytest.raises(DualboardError, match=r"not \['scored/secret.parquet'\]"):
        upload_files(load_release(folder))


@pytest.mark.parametrize(
    "variable", ["HF_TOKEN", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "DUALBOARD_JUDGE_", "dualboard_judge_key"]
)
def test_benchmark_cannot_send_a_build_secret_to_the_judge(tiny_root: Path, variable: str) -> None:
    path = tiny_root / "data" / "benchmarks" / "tiny" / "benchmark.yaml"
    config = yaml.safe_load(path.read_text())
    config["graders"]["answer_key"].append(
        {"name": "llm", "options": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": variable}}
    )
    path.write_text(yaml.safe_dump(config))
    result = CliRunner().invoke(main, ["validate", "--root", str(tiny_root)])
    assert result.exit_code == 1, result.output
    assert "graders.llm" in result.output and "DUALBOARD_JUDGE_" in result.output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("store: [\n", "invalid YAML"),
        ("store: {hub: 3}\n", "store.hub: expected text"),
        ("store: {token: x}\n", "unknown keys"),
    ],
)
def test_broken_dualboard_yaml_fails_validation(tiny_root: Path, text: str, expected: str) -> None:
    (tiny_root / "dualboard.yaml").write_text(text)
    result = CliRunner().invoke(main, ["validate", "--root", str(tiny_root)])
    assert result.exit_code == 1, result.output
    assert expected in result.output


def test_linked_dualboard_yaml_fails_validation(tiny_root: Path) -> None:
    (tiny_root / "dualboard.yaml").symlink_to("/proc/self/environ")
    result = CliRunner().invoke(main, ["validate", "--root", str(tiny_root)])
    assert result.exit_code == 1 and "dualboard.yaml: path: is a symbolic link" in result.output
