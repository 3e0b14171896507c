"""Releases share one gh-pages/shared/ folder: data files are committed once, beside the version folders."""

from __future__ import annotations

import os
import posixpath
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dualboard.release_files import RESERVED
from dualboard.render import gh_pages
from dualboard.render.shared_files import SHARED_DIR
from dualboard.render.site import SiteDeployError, deploy_site
from tests.conftest import GIT_ENV, PROBE_PAGE, write_shared_probe, write_tiny_board

pytestmark = pytest.mark.slow  # builds a board for the module: only make test-all runs it

GIT = {**os.environ, **GIT_ENV}
PROBE_HTML = PROBE_PAGE.removesuffix(".md") + "/index.html"


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=GIT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def dualboard(root: Path, *args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", *args, "--root", str(root)], capture_output=True, text=True, env=GIT
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def tree(root: Path, rev: str = "gh-pages") -> dict[str, tuple[str, str]]:
    """Every file of ``rev``: path → (mode, blob id)."""
    entries = (line.split("\t", 1) for line in git(root, "ls-tree", "-r", "-z", rev).split("\0") if line)
    return {path: (meta.split()[0], meta.split()[2]) for meta, path in entries}


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> dict:
    """Three releases of a tiny board, the last two pushed: 1.0 with one shared file, 1.1 with a second, 1.2
    unchanged. Yields the folder, the bare remote, the shared files and gh-pages' tip after each release."""
    root = write_tiny_board(tmp_path_factory.mktemp("board"))
    remote = tmp_path_factory.mktemp("remote") / "pages.git"
    git(root.parent, "init", "-q", "--bare", str(remote))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "board")
    git(root, "remote", "add", "origin", str(remote))
    dualboard(root, "build", "--no-progress")
    tips, shared = {}, {}
    for version, widths, push in (("1.0", [3], []), ("1.1", [3, 5], ["--push"]), ("1.2", [3, 5], ["--push"])):
        shared[version] = write_shared_probe(root, widths)
        dualboard(root, "release", version, "--date", "2026-11-30", *push)
        tips[version] = git(root, "rev-parse", "gh-pages").strip()
    return {"root": root, "remote": remote, "shared": shared, "tips": tips}


def test_every_shared_file_is_on_the_branch_once_beside_the_versions(history):
    files = tree(history["root"])
    shared = [p for p in files if "/shared/" in f"/{p}"]
    assert all(p.startswith(f"{SHARED_DIR}/") for p in shared), shared  # only at the root, each file once
    assert set(history["shared"]["1.1"]) <= set(shared)  # the probe's, beside the answers' data files
    assert all(not p.startswith(f"{v}/{SHARED_DIR}/") for p in files for v in ("1.0", "1.1", "1.2", "latest"))
    assert files["latest"][0] == "120000"  # mike's symlink alias: latest/../shared is the same folder
    assert git(history["root"], "cat-file", "-p", files["latest"][1]) == "1.2"


def test_every_version_page_finds_its_shared_files(history):
    files = tree(history["root"])
    for version in ("1.0", "1.1", "1.2", "latest"):
        page = git(history["root"], "show", f"gh-pages:{'1.2' if version == 'latest' else version}/{PROBE_HTML}")
        sources = re.findall(r'<img class="shared-probe" alt="" src="([^"]+)"', page)
        url = posixpath.dirname(f"/{version}/{PROBE_HTML}")
        resolved = sorted(posixpath.normpath(posixpath.join(url, s)).lstrip("/") for s in sources)
        assert resolved == sorted(history["shared"]["1.0" if version == "1.0" else "1.1"]), (version, sources)
        assert all(p in files for p in resolved)


VERSION_FILES = {"manifest.json", "README.md.txt", "SHA256SUMS"}
"""The downloads that name their release (manifest, dataset card, checksums): new in every release."""


def _added_data(root: Path, old: str, new: str) -> list[str]:
    """Shared files added between two tips of gh-pages, but for the downloads that name their release."""
    added = git(root, "diff", "--name-only", old, new, "--", f"{SHARED_DIR}/").split()
    return [p for p in added if posixpath.basename(p) not in VERSION_FILES]


def test_a_release_of_unchanged_data_adds_no_shared_data_file(history):
    root, tips = history["root"], history["tips"]
    assert _added_data(root, tips["1.1"], tips["1.2"]) == [], "the tables and pages' data are shared"
    assert _added_data(root, tips["1.0"], tips["1.1"]) == [
        history["shared"]["1.1"][1]
    ]  # only the probe's new file: the answers did not change
    added = git(root, "diff", "--name-only", tips["1.1"], tips["1.2"], "--", f"{SHARED_DIR}/").split()
    assert sorted(posixpath.basename(p) for p in added) == sorted(VERSION_FILES), added
    subjects = git(root, "log", "--format=%s", "gh-pages").splitlines()
    assert [s for s in subjects if s.startswith("Shared data files")] == [
        "Shared data files of release 1.2",
        "Shared data files of release 1.1",
        "Shared data files of release 1.0",
    ]  # one commit per release, 1.2's holding only the files that name it


def test_push_pushes_the_shared_files_with_the_versions(history):
    remote_tip = git(history["remote"], "rev-parse", "gh-pages").strip()
    assert remote_tip == history["tips"]["1.2"]
    assert set(history["shared"]["1.1"]) <= set(tree(history["remote"]))


def test_mike_delete_leaves_the_shared_files_other_versions_use(history, tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(history["root"]), str(clone))
    git(clone, "branch", "gh-pages", "origin/gh-pages")
    mike = [sys.executable, "-c", "import sys; from mike.driver import main; sys.exit(main())"]
    proc = subprocess.run([*mike, "delete", "1.1", "-b", "gh-pages", "-r", "origin"], cwd=clone, env=GIT)
    assert proc.returncode == 0
    files = tree(clone)
    assert not any(p.startswith("1.1/") for p in files) and "1.2/index.html" in files
    assert set(history["shared"]["1.1"]) <= set(files)  # 1.2 still loads both


def test_no_release_can_be_named_like_the_shared_folder():
    assert SHARED_DIR in RESERVED


# The gh-pages plumbing alone, on small repositories (no site build).


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git repository with one commit on main, a staged change and an untracked file: the user's work."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "a")
    (root / "a.txt").write_text("staged")
    git(root, "add", "a.txt")
    (root / "untracked.txt").write_text("u")
    return root


def shared_folder(tmp_path: Path, files: dict[str, bytes]) -> Path:
    folder = tmp_path / "docs" / SHARED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def test_shared_files_are_committed_without_touching_the_users_work(repo, tmp_path, monkeypatch):
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    status = git(repo, "status", "--porcelain")
    added = gh_pages.add_shared_files(repo, shared_folder(tmp_path, {"x.json": b"1", "y.json": b"2"}), "m1")
    assert added == ["shared/x.json", "shared/y.json"]
    assert git(repo, "show", "gh-pages:shared/y.json") == "2"
    assert git(repo, "status", "--porcelain") == status and git(repo, "branch", "--show-current") == "main\n"
    tip = git(repo, "rev-parse", "gh-pages")
    assert gh_pages.add_shared_files(repo, shared_folder(tmp_path, {}), "m2") == []
    assert git(repo, "rev-parse", "gh-pages") == tip  # nothing new: no commit
    assert gh_pages.add_shared_files(repo, shared_folder(tmp_path, {"z.json": b"3"}), "m3") == ["shared/z.json"]
    assert set(tree(repo)) == {"shared/x.json", "shared/y.json", "shared/z.json"}


def test_a_taken_name_with_other_content_is_refused_and_nothing_moves(repo, tmp_path, monkeypatch):
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    gh_pages.add_shared_files(repo, shared_folder(tmp_path, {"x.json": b"1"}), "m1")
    tip = git(repo, "rev-parse", "gh-pages")
    folder = shared_folder(tmp_path, {"x.json": b"changed", "new.json": b"n"})
    with pytest.raises(gh_pages.GitError, match="shared/x.json with other content"):
        gh_pages.add_shared_files(repo, folder, "m2")
    assert git(repo, "rev-parse", "gh-pages") == tip


def test_a_link_in_the_shared_folder_is_refused(repo, tmp_path):
    folder = shared_folder(tmp_path, {})
    (folder / "env.json").symlink_to("/proc/self/environ")
    with pytest.raises(gh_pages.GitError, match="not a regular file"):
        gh_pages.add_shared_files(repo, folder, "m")
    assert gh_pages.branch_tip(repo) is None


def test_the_branch_follows_its_upstream_when_behind_and_stays_when_diverged(repo, tmp_path, monkeypatch):
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    gh_pages.add_shared_files(repo, shared_folder(tmp_path, {"x.json": b"1"}), "m1")
    behind = git(repo, "rev-parse", "gh-pages").strip()
    gh_pages.add_shared_files(repo, shared_folder(tmp_path, {"y.json": b"2"}), "m2")
    ahead = git(repo, "rev-parse", "gh-pages").strip()
    git(repo, "update-ref", "refs/remotes/origin/gh-pages", ahead)
    git(repo, "update-ref", "refs/heads/gh-pages", behind)
    gh_pages.follow_upstream(repo)
    assert git(repo, "rev-parse", "gh-pages").strip() == ahead
    git(repo, "update-ref", "refs/heads/gh-pages", behind)
    gh_pages.add_shared_files(repo, shared_folder(tmp_path, {"z.json": b"3"}), "m3")  # diverges
    diverged = git(repo, "rev-parse", "gh-pages").strip()
    gh_pages.follow_upstream(repo)
    assert git(repo, "rev-parse", "gh-pages").strip() == diverged


def test_a_deploy_refused_before_mike_says_how_to_release_again_and_leaves_the_branch(repo, tmp_path):
    build = tmp_path / "build"
    (build / "docs" / SHARED_DIR).mkdir(parents=True)
    (build / "docs" / SHARED_DIR / "env.json").symlink_to("/proc/self/environ")
    (build / "mkdocs.yml").write_text("docs_dir: docs\n", "utf-8")
    with pytest.raises(SiteDeployError) as error:
        deploy_site(build / "mkdocs.yml", repo, "1.0", push=False)
    assert "env.json" in str(error.value) and "delete releases/1.0/ and run `dualboard release 1.0`" in str(error.value)
    assert gh_pages.branch_tip(repo) is None
