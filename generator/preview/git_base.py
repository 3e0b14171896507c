"""The base of a pull request, read from git: which runs it changes, and the board before it.

A leaderboard with a local store has no published board in CI (``.dualboard/``
is never committed), so the preview builds it from the base commit's
``submissions/``. Every call runs ``git`` with an argument list (no shell), in
the leaderboard folder, and only reads the repository.
"""

from __future__ import annotations

import re
import subprocess
import tarfile
from pathlib import Path

from dualboard.errors import DualboardError

REVISION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/~^@{}+-]{0,199}")
"""What ``--base`` accepts: a branch, tag, commit or ``HEAD~1``; never an option (a leading ``-``)."""
GIT_TIMEOUT_S = 300


class GitBaseError(DualboardError):
    """The base revision cannot be read from git."""


def resolve_commit(root: Path, revision: str) -> str:
    """Return the commit id ``revision`` names in the git checkout holding ``root``.

    Raises
    ------
    GitBaseError
        When it is not a revision name, or git knows no such commit.
    """
    if not REVISION.fullmatch(revision):
        raise GitBaseError(
            f"--base {revision[:100]!r} is not a git revision name — pass a branch, tag or commit, "
            "e.g. --base origin/main"
        )
    done = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}")
    if done.returncode != 0:
        raise GitBaseError(
            f"--base {revision}: no such commit in the git checkout at {root} — fetch it first "
            "(git fetch origin main, or actions/checkout with fetch-depth: 0)"
        )
    return done.stdout.decode("ascii").strip()


def changed_run_dirs(root: Path, commit: str, submissions: Path) -> list[Path]:
    """Run folders under ``submissions`` that differ from ``commit``: changed, added (also uncommitted) or untracked.

    A run the working tree no longer has (deleted since ``commit``) is left out.
    """
    relative = submissions.relative_to(root).as_posix()
    changed = _git_names(root, "diff", "--name-only", "-z", "--no-renames", "--relative", commit, "--", relative)
    untracked = _git_names(root, "ls-files", "-z", "--others", "--exclude-standard", "--", relative)
    runs = set()
    for name in changed + untracked:
        parts = Path(name).relative_to(relative).parts
        if len(parts) >= 3:  # <benchmark>/<run_id>/<file>
            runs.add(submissions / parts[0] / parts[1])
    return sorted(path for path in runs if path.is_dir() and not path.is_symlink())


def changed_files_outside(root: Path, commit: str, submissions: Path) -> list[str]:
    """Files (relative to ``root``) that differ from ``commit`` outside ``submissions``: changed, added or deleted.

    Untracked files are left out: in CI every change is committed, and a local
    checkout holds untracked output (the preview's own JSON) that no pull
    request carries.
    """
    exclude = f":(exclude){submissions.relative_to(root).as_posix()}"
    return sorted(
        _git_names(root, "diff", "--name-only", "-z", "--no-renames", "--relative", commit, "--", ".", exclude)
    )


def extract_submissions(root: Path, commit: str, submissions: Path, target: Path) -> Path:
    """Write the ``submissions/`` folder of ``commit`` under ``target``; return it (empty when ``commit`` has none).

    Read through ``git archive`` into a fresh folder; the ``data`` extraction
    filter refuses absolute paths, ``..`` and links out of ``target``, and the
    runs are validated again before they are graded (a link inside is a finding).
    """
    out = target / "submissions"
    out.mkdir(parents=True)
    tree = f"{commit}:{submissions.relative_to(root).as_posix()}"
    if _git(root, "cat-file", "-e", tree).returncode != 0:
        return out  # the base has no runs yet
    with subprocess.Popen(
        ["git", "-C", str(root), "archive", "--format=tar", tree], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as archive:
        try:
            with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
                tar.extractall(out, filter="data")
        except (tarfile.TarError, OSError) as exc:
            archive.kill()
            raise GitBaseError(
                f"--base {commit[:12]}: could not read submissions/ from git ({exc}) — check the "
                "checkout (git fsck) and that the disk has room"
            ) from exc
        error = archive.stderr.read().decode("utf-8", "replace").strip()
    if archive.returncode != 0:
        raise GitBaseError(f"--base {commit[:12]}: git archive failed ({error[:300]}) — check the checkout")
    return out


def _git_names(root: Path, *args: str) -> list[str]:
    done = _git(root, *args)
    if done.returncode != 0:
        raise GitBaseError(
            f"git {args[0]} failed in {root}: {done.stderr.decode('utf-8', 'replace').strip()[:300]} "
            "— run the preview in a git checkout of the leaderboard"
        )
    return [name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitBaseError(f"could not run git ({exc}) — install git, or pass RUN_DIR without --base") from exc
