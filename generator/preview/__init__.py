"""``dualboard preview``: a submitter's runs placed on the current board before merge.

:func:`preview` validates the runs (and everything else a pull request can
change, as ``dualboard validate`` does), grades them together with the
board's stored runs, analyses the whole board and returns the
``dualboard-preview/3`` document that the comment workflow renders.

- :mod:`dualboard.preview.board`: the current board (a store, or a git revision's submissions/)
- :mod:`dualboard.preview.git_base`: the base revision read from git
- :mod:`dualboard.preview.placement`: grading and statistics in a working folder of its own
- :mod:`dualboard.preview.document`: the document, its caps and its Markdown (the trusted renderer)
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dualboard import pipeline
from dualboard.errors import DualboardError
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.validate import find_run_dirs
from dualboard.preview.board import Board, git_board, store_board
from dualboard.preview.document import document, markdown
from dualboard.preview.git_base import PullRequestChanges, changed_run_dirs, pull_request_changes, resolve_commit
from dualboard.preview.placement import place_runs
from dualboard.project import Project
from dualboard.store import Store

__all__ = ["PreviewResult", "changes_since", "markdown", "preview", "runs_changed_since"]

NOT_READ = "(not read)"


@dataclass(frozen=True)
class PreviewResult:
    """What ``dualboard preview`` prints and writes."""

    document: dict
    """The checked ``dualboard-preview/3`` document."""
    ok: bool
    """Validation passed and every run was placed on the board."""


def runs_changed_since(project: Project, revision: str) -> tuple[str, list[Path]]:
    """The commit ``revision`` names, and the run folders the working tree changes since it."""
    commit = resolve_commit(project.root, revision)
    return commit, changed_run_dirs(project.root, commit, project.submissions_dir)


def changes_since(project: Project, commit: str) -> PullRequestChanges:
    """Every run the working tree adds, changes or removes since ``commit``, and the findings against it.

    A pull request may only add run folders: changing or removing a run on the
    board, any file outside submissions/<benchmark>/<new run>/ that the base's
    dualboard.yaml does not allow, and any git attribute, ignore or config file
    are errors. A change to the answer keys, graders or workflows would
    otherwise ride along with a run, and the preview would grade with it.
    """
    return pull_request_changes(project.root, commit, project.submissions_dir)


def preview(
    project: Project,
    run_dirs: list[Path],
    *,
    changes: PullRequestChanges | None = None,
    store: Store | None = None,
    base_commit: str | None = None,
    validate_all: bool = False,
    seed: int,
    progress: bool = True,
) -> PreviewResult:
    """Validate ``run_dirs`` and place them on the board of ``store``, or of git ``base_commit``'s submissions/.

    ``validate_all`` checks every run under submissions/, not only ``run_dirs``
    (CI, where the changed runs come from git); ``changes`` (from :func:`changes_since`):
    its findings follow the validation findings and fail it, its runs are listed. The store is only read, and
    the base commit's runs are extracted into a temporary folder removed
    afterwards. Bad input and a board that cannot be graded end up in the
    document (findings, ``problem``), never as an exception.
    """
    report = pipeline.check_pull_request(project, None if validate_all else run_dirs, new=run_dirs)
    changed = changes or PullRequestChanges((), ())
    named = {(f.file, f.field) for f in report.findings}  # a git file validation found is named once
    findings = [*report.findings, *(f for f in changed.findings if (f.file, f.field) not in named)]
    ok = report.ok and not any(f.severity == "error" for f in changed.findings)
    wanted = {(d.parent.name, d.name) for d in find_run_dirs(run_dirs)}  # a benchmark folder stands for its runs
    previewed = [run for run in report.runs if (run.benchmark, run.run_id) in wanted]
    if not ok or not previewed:
        return PreviewResult(document(NOT_READ, findings, ok, [], runs_changed=changed.runs), ok)
    workdir = Path(tempfile.mkdtemp(prefix="dualboard-preview-"))
    try:
        board = _open_board(project, store, base_commit, workdir)
        placements = place_runs(board, load_benchmarks(project.data_dir), previewed, seed=seed, progress=progress)
        return PreviewResult(document(board.description, findings, True, placements, runs_changed=changed.runs), True)
    except DualboardError as exc:
        problem = _relative(str(exc), project, workdir)
        return PreviewResult(document(NOT_READ, findings, True, [], problem, runs_changed=changed.runs), False)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _open_board(project: Project, store: Store | None, base_commit: str | None, workdir: Path) -> Board:
    if (store is None) == (base_commit is None):
        raise ValueError("preview needs exactly one of store and base_commit")
    return store_board(project, store) if store is not None else git_board(project, base_commit, workdir)


def _relative(message: str, project: Project, workdir: Path) -> str:
    """A message for the comment: the working folder and the leaderboard folder's absolute path left out."""
    return message.replace(f"{workdir}/base/", "(base) ").replace(f"{workdir}/", "").replace(f"{project.root}/", "")
