"""The ``gh-pages`` branch beside mike: one ``shared/`` folder at its root for every version.

mike writes each release into its own version folder, so a file every version
carries would be copied ten times by ten releases. The content-addressed data
files (:mod:`dualboard.render.shared_files`) are left out of the version
folders instead, and this module commits them to ``gh-pages/shared/``: files
already there are kept, new ones added. A file's name is its SHA-256, so a
release of unchanged data adds nothing, and a file an older version uses is
never replaced.

Everything here is git plumbing on the branch (``hash-object``, a private
index, ``write-tree``, ``commit-tree``, ``update-ref``): the user's working
tree, index and checked-out branch are never touched.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from dualboard.errors import DualboardError
from dualboard.render.shared_files import SHARED_DIR

BRANCH = "gh-pages"
"""The branch mike deploys to (its default; the render never sets another)."""
REMOTE = "origin"
"""The remote mike compares the branch with and ``--push`` pushes to (mike's default)."""
REF = f"refs/heads/{BRANCH}"
FILE_MODE = "100644"
"""Git's mode for a plain, non-executable file."""


class GitError(DualboardError):
    """A git command on the gh-pages branch failed; the message carries git's output."""


def git(root: Path, *args: str, stdin: str | None = None, index: Path | None = None) -> str:
    """Run ``git ARGS`` in ``root`` (``index``: a private index file instead of the user's); return stdout."""
    env = {**os.environ, "GIT_INDEX_FILE": str(index)} if index else None
    proc = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])} failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def branch_tip(root: Path, ref: str = REF) -> str | None:
    """The commit ``ref`` points at, or None when there is no such ref."""
    try:
        return git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
    except GitError:
        return None


def follow_upstream(root: Path) -> None:
    """Move the local branch up to ``origin/gh-pages`` when it is behind it, as mike does before it commits.

    Committing the shared files on a stale branch would make it diverge from
    the remote, and mike would then refuse to deploy. A branch that has
    already diverged is left as it is: mike reports that, with its fix.
    """
    upstream = branch_tip(root, f"refs/remotes/{REMOTE}/{BRANCH}")
    if upstream is None:
        return
    local = branch_tip(root)
    if local is None or _is_ancestor(root, local, upstream):
        git(root, "update-ref", REF, upstream, *([local] if local else []))


def _is_ancestor(root: Path, older: str, newer: str) -> bool:
    proc = subprocess.run(["git", "-C", str(root), "merge-base", "--is-ancestor", older, newer], capture_output=True)
    return proc.returncode == 0


def shared_entries(root: Path, commit: str | None) -> dict[str, str]:
    """Every file under ``shared/`` at ``commit``: branch path → blob id (empty without a commit)."""
    if commit is None:
        return {}
    listing = git(root, "ls-tree", "-r", "-z", commit, "--", f"{SHARED_DIR}/")
    entries = (line.split("\t", 1) for line in listing.split("\0") if line)
    return {path: meta.split()[2] for meta, path in entries}


def local_files(folder: Path) -> dict[str, Path]:
    """The files of ``folder`` (a site's ``shared/``) by the branch path they take: ``shared/<relative path>``.

    Raises :class:`GitError` on a symbolic link or anything but a regular file
    or folder: the render wrote this folder, and a link would publish
    whatever it points at.
    """
    if not folder.is_dir():
        return {}
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not (path.is_file() or path.is_dir()) or "\n" in path.name:
            raise GitError(
                f"{str(path)!r}: not a regular file with a one-line name — the shared data folder holds only "
                "the files the render wrote; remove it"
            )
        if path.is_file():
            files[f"{SHARED_DIR}/{path.relative_to(folder).as_posix()}"] = path
    return files


def add_shared_files(root: Path, folder: Path, message: str) -> list[str]:
    """Commit the files of ``folder`` that ``gh-pages:shared/`` lacks, in one commit; return their branch paths.

    The files the branch already holds stay as they are. A path already
    there with other bytes is refused (shared files are immutable: their
    name is their content's hash), before anything is committed. Nothing is
    committed when nothing is new. The branch moves only if no one moved it
    meanwhile (``update-ref`` with the old tip).
    """
    files = local_files(folder)
    if not files:
        return []
    tip = branch_tip(root)
    present = shared_entries(root, tip)
    paths = list(files)
    blobs = git(root, "hash-object", "-w", "--stdin-paths", stdin="".join(f"{files[p]}\n" for p in paths)).split()
    changed = [p for p, blob in zip(paths, blobs) if p in present and present[p] != blob]
    if changed:
        raise GitError(
            f"{BRANCH} already holds {', '.join(changed)} with other content — shared files are named by "
            "their content and never replaced; give the new file another name"
        )
    new = [(p, blob) for p, blob in zip(paths, blobs) if p not in present]
    if new:
        _commit_files(root, tip, new, message)
    return [p for p, _ in new]


def _commit_files(root: Path, tip: str | None, files: list[tuple[str, str]], message: str) -> None:
    """Commit the blobs ``files`` (branch path, blob id) on top of ``tip`` through a private index."""
    with tempfile.TemporaryDirectory(prefix="dualboard-gh-pages-") as tmp:
        index = Path(tmp) / "index"
        if tip:
            git(root, "read-tree", tip, index=index)
        entries = "".join(f"{FILE_MODE} {blob}\t{path}\0" for path, blob in files)
        git(root, "update-index", "--add", "-z", "--index-info", stdin=entries, index=index)
        tree = git(root, "write-tree", index=index).strip()
    commit = git(root, "commit-tree", tree, *(["-p", tip] if tip else []), "-m", message).strip()
    git(root, "update-ref", "-m", message, REF, commit, tip or "")


def push(root: Path) -> None:
    """Push the branch to ``origin``: the shared files and mike's versions together."""
    git(root, "push", "--", REMOTE, BRANCH)
