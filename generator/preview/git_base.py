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
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from dualboard.errors import DualboardError, Finding
from dualboard.intake.yaml_mapping import parse_yaml_mapping
from dualboard.names import is_git_file
from dualboard.project import CONFIG_FILE, PullRequestSettings, pull_request_settings

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


@dataclass(frozen=True)
class RunChange:
    """One run folder a pull request touches."""

    benchmark: str
    run_id: str
    change: str
    """``added`` (a run the base does not have), ``changed`` (some of its files) or ``removed`` (the folder)."""


@dataclass(frozen=True)
class PullRequestChanges:
    """What a pull request changes, as git sees it against its base commit."""

    runs: tuple[RunChange, ...]
    """Every run folder it adds, changes or removes, sorted."""
    findings: tuple[Finding, ...]
    """Errors: a change to a run already on the board, a file outside a new run folder the base's
    dualboard.yaml does not allow, a git attribute, ignore or configuration file."""


def pull_request_changes(root: Path, commit: str, submissions: Path) -> PullRequestChanges:
    """Compare the working tree with ``commit``: every run it adds, changes or removes, and what it may not do.

    What a pull request may change beyond adding run folders comes from ``commit``'s
    dualboard.yaml (``pull_requests.allowed_paths``), read from git, never from the pull
    request's tree. Untracked files count under ``submissions`` only: in CI every change is committed, and a
    local checkout holds untracked output (the preview's own JSON) that no pull request carries.
    """
    relative = submissions.relative_to(root).as_posix()
    changed = _git_names(root, "diff", "--name-only", "-z", "--no-renames", "--relative", commit, "--", ".")
    changed += _git_names(root, "ls-files", "-z", "--others", "--exclude-standard", "--", relative)
    listed = _git_names(root, "ls-tree", "-r", "-z", "--name-only", commit, "--", relative)
    base_runs = {tuple(name.split("/")[1:3]) for name in listed if name.count("/") >= 3}
    present = {run for run in base_runs if (submissions / run[0] / run[1]).is_dir()}
    return classify_changes(sorted(set(changed)), base_runs, present, base_settings(root, commit), relative)


def base_settings(root: Path, commit: str) -> PullRequestSettings:
    """``pull_requests:`` of ``commit``'s dualboard.yaml (none: nothing allowed beyond new run folders)."""
    where = f"{commit[:12]}:{CONFIG_FILE}"
    if _git(root, "cat-file", "-e", f"{commit}:{CONFIG_FILE}").returncode != 0:
        return PullRequestSettings()
    shown = _git(root, "cat-file", "blob", f"{commit}:{CONFIG_FILE}")
    try:
        if shown.returncode != 0:
            raise DualboardError(f"{where}: git could not read it")
        return pull_request_settings(parse_yaml_mapping(shown.stdout, where)[0], where)
    except DualboardError as exc:
        raise GitBaseError(
            f"the base commit's {CONFIG_FILE} cannot be read ({exc}) — a maintainer corrects it on the default branch"
        ) from exc


def classify_changes(
    paths: list[str],
    base_runs: set[tuple[str, ...]],
    present: set[tuple[str, ...]],
    settings: PullRequestSettings,
    submissions: str = "submissions",
) -> PullRequestChanges:
    """The run changes and findings of a pull request that changes ``paths`` (relative, ``/``-separated).

    ``base_runs``: the (benchmark, run id) folders of the base; ``present``: those of them still in the
    working tree.

    Examples
    --------
    >>> found = classify_changes(
    ...     ["submissions/demo/new/predictions.jsonl", "submissions/demo/old/metadata.yaml", "pip.py"],
    ...     {("demo", "old")}, {("demo", "old")}, PullRequestSettings())
    >>> [(r.run_id, r.change) for r in found.runs], [f.file for f in found.findings]
    ([('new', 'added'), ('old', 'changed')], ['pip.py', 'submissions/demo/old'])
    """
    touched: dict[tuple[str, ...], list[str]] = defaultdict(list)
    findings = []
    for path in paths:
        parts = path.split("/")
        if parts[0] == submissions and len(parts) >= 4:  # submissions/<benchmark>/<run_id>/<file>
            touched[tuple(parts[1:3])].append("/".join(parts[3:]))
            if any(is_git_file(part) for part in parts[3:]):
                findings.append(_git_file(path, allowable=False))
        elif parts[0] == submissions or not settings.allows(path):
            allowable = parts[0] != submissions
            findings.append(_git_file(path, allowable) if any(map(is_git_file, parts)) else _outside(path, allowable))
    runs = [RunChange(*run, _change(run, base_runs, present)) for run in sorted(touched)]
    findings += [
        _run_finding(change, touched[(change.benchmark, change.run_id)], submissions)
        for change in runs
        if change.change != "added"
    ]
    return PullRequestChanges(tuple(runs), tuple(findings))


def _change(run: tuple[str, ...], base_runs: set[tuple[str, ...]], present: set[tuple[str, ...]]) -> str:
    if run not in base_runs:
        return "added"
    return "changed" if run in present else "removed"


def _run_finding(change: RunChange, files: list[str], submissions: str) -> Finding:
    """An existing run's folder changed or removed: only a maintainer may replace or withdraw a run."""
    shown = ", ".join(sorted(files)[:5]) + (", …" if len(files) > 5 else "")
    return Finding(
        f"{submissions}/{change.benchmark}/{change.run_id}",
        None,
        "run",
        f"this pull request {change.change} a run already on the board ({shown})",
        "a pull request only adds run folders: restore this run as it is on the base; to replace or withdraw "
        f"a run, a maintainer runs `dualboard remove {change.benchmark}/{change.run_id} --reason …` and the "
        "new answers come under a new run id",
    )


def _outside(path: str, allowable: bool) -> Finding:
    where = "outside a run folder" if not allowable else "outside submissions/"
    allow = f", or a maintainer allows the path in the base branch's {CONFIG_FILE} (pull_requests.allowed_paths)"
    return Finding(
        path,
        None,
        "path",
        f"changed by this pull request {where}: a submission adds only submissions/<benchmark>/<new run>/",
        "move this change to a pull request of its own, for a maintainer to review" + (allow if allowable else ""),
    )


def _git_file(path: str, allowable: bool) -> Finding:
    allow = f" (or a maintainer allows the path in the base branch's {CONFIG_FILE}, pull_requests.allowed_paths)"
    return Finding(
        path,
        None,
        "path",
        "a git attribute, ignore, hook or configuration file: it changes how git checks out, archives or "
        "runs on other files",
        "remove it from the pull request" + (allow if allowable else ""),
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
