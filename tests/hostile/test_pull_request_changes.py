"""A pull request may add run folders and nothing else, and the preview says everything it changes.

Each test replays a pull request on a copy of the demo leaderboard: a git
repository with a base commit and the pull request's commit, previewed as
validate.yml does (``dualboard preview --base``). Attacks:

- it adds its own run, ``git rm``s the traditional leader and renames another run's model
  (the preview said "passed, 0 findings", 8 runs, and showed the renamed run as its own);
- it adds a ``.gitattributes`` (``*/predictions.jsonl text eol=crlf``) under submissions/, which
  rewrites every other run at checkout, or one inside its own run folder;
- it adds ``pip.py``, ``sitecustomize.py``, a ``.pth`` and git hooks beside its run (a warning only),
  or widens ``pull_requests.allowed_paths`` in its own dualboard.yaml;
- adding a run moves the other runs' ranks, which the preview never showed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.preview.demo_runs import NEW, add_strong_run, copy_demo, git
from tests.preview.test_preview_cli import dualboard, preview

LEADER = "aurora-lm-70b"
"""The demo's leader under traditional grading."""
RENAMED = "fjord-3b"
GIT_ATTRIBUTES = "*/predictions.jsonl text eol=crlf\n"


def _base(tmp_path: Path, config: dict | None = None) -> Path:
    root = copy_demo(tmp_path / "board")
    if config is not None:
        (root / "dualboard.yaml").write_text(yaml.safe_dump(config), "utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def _commit(root: Path, message: str = "pull request") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def _errors(doc: dict) -> list[tuple[str, str]]:
    return [(f["file"], f["field"]) for f in doc["validation"]["findings"] if f["severity"] == "error"]


@pytest.mark.slow
def test_removing_and_renaming_other_runs_fails_and_every_change_is_listed(tmp_path):
    root = _base(tmp_path)
    add_strong_run(root)
    git(root, "rm", "-rq", f"submissions/demo/{LEADER}")
    metadata = root / "submissions" / "demo" / RENAMED / "metadata.yaml"
    metadata.write_text(metadata.read_text("utf-8").replace(f"model: {RENAMED}", "model: someone-else-3b"), "utf-8")
    _commit(root)
    done, doc = preview(root, "--base", "HEAD~1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert not doc["validation"]["valid"] and doc["benchmarks"] == []
    assert doc["runs_changed"] == {
        "total": 3,
        "runs": [
            {"benchmark": "demo", "run_id": LEADER, "change": "removed"},
            {"benchmark": "demo", "run_id": RENAMED, "change": "changed"},
            {"benchmark": "demo", "run_id": NEW, "change": "added"},
        ],
    }
    assert _errors(doc) == [(f"submissions/demo/{LEADER}", "run"), (f"submissions/demo/{RENAMED}", "run")]
    assert "dualboard remove demo/aurora-lm-70b" in doc["validation"]["findings"][0]["fix"]
    assert f"- removed: `demo` / `{LEADER}`" in done.stdout and f"- changed: `demo` / `{RENAMED}`" in done.stdout


@pytest.mark.slow
def test_git_attributes_anywhere_under_submissions_are_errors(tmp_path):
    root = _base(tmp_path)
    run = add_strong_run(root)
    (root / "submissions" / ".gitattributes").write_text(GIT_ATTRIBUTES, "utf-8")
    (root / "submissions" / "demo" / ".gitignore").write_text("*.log\n", "utf-8")
    (run / ".gitattributes").write_text(GIT_ATTRIBUTES, "utf-8")
    _commit(root)
    done, doc = preview(root, "--base", "HEAD~1")
    assert done.returncode == 1, done.stdout + done.stderr
    flagged = [file for file, field in _errors(doc) if field == "path"]
    assert len(flagged) == len(set(flagged)), "each git file is named once"
    assert set(flagged) == {
        "submissions/.gitattributes",
        "submissions/demo/.gitignore",
        f"submissions/demo/{NEW}/.gitattributes",
    }
    assert doc["runs_changed"]["runs"] == [{"benchmark": "demo", "run_id": NEW, "change": "added"}]


@pytest.mark.slow
def test_git_files_under_submissions_fail_validate_without_git(tmp_path):
    """`dualboard validate` (no git, no base) refuses it too: it is an error, not an unexpected-file warning; and
    so is one above the run folders."""
    root = copy_demo(tmp_path / "board")
    run = add_strong_run(root)
    (run / ".gitattributes").write_text(GIT_ATTRIBUTES, "utf-8")
    (root / "submissions" / ".gitattributes").write_text(GIT_ATTRIBUTES, "utf-8")
    (root / "submissions" / "demo" / ".gitignore").write_text("*.log\n", "utf-8")
    done = dualboard(root, "validate", "--format", "json", f"submissions/demo/{NEW}")
    assert done.returncode == 1, done.stdout + done.stderr
    found = [(f["file"], f["severity"]) for f in json.loads(done.stdout)["findings"] if ".git" in f["file"]]
    assert sorted(found) == [
        ("submissions/.gitattributes", "error"),
        ("submissions/demo/.gitignore", "error"),
        (f"submissions/demo/{NEW}/.gitattributes", "error"),
    ]


@pytest.mark.slow
def test_files_outside_new_run_folders_fail_unless_the_base_allows_them(tmp_path):
    root = _base(tmp_path, {"pull_requests": {"allowed_paths": ["docs/*"]}})
    run = add_strong_run(root)
    planted = ["pip.py", "pip/__main__.py", "sitecustomize.py", "usercustomize.py", "evil.pth", ".githooks/pre-push"]
    for name in planted:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("import os\n", "utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "notes.md").write_text("allowed by the base\n", "utf-8")
    # widening the rule in the pull request's own dualboard.yaml changes nothing: the base's copy rules
    (root / "dualboard.yaml").write_text(yaml.safe_dump({"pull_requests": {"allowed_paths": ["*"]}}), "utf-8")
    (run / "sitecustomize.py").write_text("import os\n", "utf-8")
    _commit(root)
    done, doc = preview(root, "--base", "HEAD~1")
    assert done.returncode == 1, done.stdout + done.stderr
    flagged = [file for file, field in _errors(doc) if field == "path"]
    assert len(flagged) == len(set(flagged)), "each git file is named once"
    assert set(flagged) == {*planted, "dualboard.yaml"}, flagged
    assert "docs/notes.md" not in json.dumps(doc["validation"])


@pytest.mark.slow
def test_allowed_paths_are_read_from_the_base_and_must_be_patterns(tmp_path):
    root = _base(tmp_path, {"pull_requests": {"allowed_paths": ["README.md"]}})
    add_strong_run(root)
    (root / "README.md").write_text("# a board\n", "utf-8")
    _commit(root)
    done, doc = preview(root, "--base", "HEAD~1")
    assert done.returncode == 0 and doc["validation"]["findings"] == [], done.stdout + done.stderr
    (root / "dualboard.yaml").write_text(yaml.safe_dump({"pull_requests": {"allowed_paths": "*"}}), "utf-8")
    done = dualboard(root, "validate")
    assert done.returncode == 1 and "pull_requests.allowed_paths" in done.stdout, done.stdout + done.stderr


@pytest.mark.slow
def test_the_preview_states_how_every_other_run_moves(tmp_path):
    """A new leader pushes every other ranked run one place down: each is listed, before → after."""
    root = _base(tmp_path)
    add_strong_run(root)
    _commit(root)
    done, doc = preview(root, "--base", "HEAD~1")
    assert done.returncode == 0, done.stdout + done.stderr
    [benchmark] = doc["benchmarks"]
    moved = {o["run_id"]: o for o in benchmark["others"]}
    assert benchmark["others_total"] == len(moved) == benchmark["board_runs"] - 1
    for other in moved.values():
        before, after = other["traditional"]["before"], other["traditional"]["after"]
        assert after["rank"] == before["rank"] + 1 and after["mean"] == before["mean"], other
    leader = moved[LEADER]["traditional"]
    assert (leader["before"]["rank"], leader["after"]["rank"]) == (1, 2)
    assert f"| `{LEADER}` | traditional | " in done.stdout and " | 1 → 2 | " in done.stdout
