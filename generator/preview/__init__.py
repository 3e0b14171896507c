"""``dualboard preview``: a submitter's runs placed on the current board before merge.

:func:`preview` validates the runs (and everything else a pull request can
change, as ``dualboard validate`` does), grades them together with the
board's stored runs, analyses the whole board and returns the
``dualboard-preview/2`` document that the comment workflow renders.

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
from dualboard.errors import DualboardError, Finding
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.validate import find_run_dirs
from dualboard.preview.board import Board, git_board, store_board
from dualboard.preview.document import document, markdown
from dualboard.preview.git_base import changed_files_outside, changed_run_dirs, resolve_commit
from dualboard.preview.placement import place_runs
from dualboard.project import Project
from dualboard.store import Store

__all__ = ["PreviewResult", "changes_beyond_runs", "markdown", "preview", "runs_changed_since"]

NOT_READ = "(not read)"


@dataclass(frozen=True)
class PreviewResult:
    """What ``dualboard preview`` prints and writes."""

    document: dict
    """The checked ``dualboard-preview/2`` document."""
    ok: bool
    """Validation passed and every run was placed on the board."""


def runs_changed_since(project: Project, revision: str) -> tuple[str, list[Path]]:
    """The commit ``revision`` names, and the run folders the working tree changes since it."""
    commit = resolve_commit(project.root, revision)
    return commit, changed_run_dirs(project.root, commit, project.submissions_dir)


def changes_beyond_runs(project: Project, commit: str) -> list[Finding]:
    """A warning for each file the working tree changes since ``commit`` outside submissions/.

    A pull request that adds a run can also edit the answer keys, graders, site
    or workflows; the preview grades with its version of them, so without a
    word its scores could rest on keys the submitter rewrote. The warnings put
    each such file in front of the maintainer who reads the comment.
    """
    return [
        Finding(
            name,
            None,
            "-",
            "changed by this pull request outside submissions/ (the preview ran with this version)",
            "a submission changes only submissions/<benchmark>/<run_id>/: move this change to a pull request "
            "of its own, for a maintainer to review",
            severity="warning",
        )
        for name in changed_files_outside(project.root, commit, project.submissions_dir)
    ]


def preview(
    project: Project,
    run_dirs: list[Path],
    *,
    warnings: list[Finding] | None = None,
    store: Store | None = None,
    base_commit: str | None = None,
    validate_all: bool = False,
    seed: int,
    progress: bool = True,
) -> PreviewResult:
    """Validate ``run_dirs`` and place them on the board of ``store``, or of git ``base_commit``'s submissions/.

    ``validate_all`` checks every run under submissions/, not only ``run_dirs``
    (CI, where the changed runs come from git); ``warnings`` (from
    :func:`changes_beyond_runs`) are listed after the validation findings. The store is only read, and
    the base commit's runs are extracted into a temporary folder removed
    afterwards. Bad input and a board that cannot be graded end up in the
    document (findings, ``problem``), never as an exception.
    """
    report = pipeline.check_pull_request(project, None if validate_all else run_dirs, new=run_dirs)
    findings = [*report.findings, *(warnings or [])]
    wanted = {(d.parent.name, d.name) for d in find_run_dirs(run_dirs)}  # a benchmark folder stands for its runs
    previewed = [run for run in report.runs if (run.benchmark, run.run_id) in wanted]
    if not report.ok or not previewed:
        return PreviewResult(document(NOT_READ, findings, report.ok, []), report.ok)
    workdir = Path(tempfile.mkdtemp(prefix="dualboard-preview-"))
    try:
        board = _open_board(project, store, base_commit, workdir)
        placements = place_runs(board, load_benchmarks(project.data_dir), previewed, seed=seed, progress=progress)
        return PreviewResult(document(board.description, findings, True, placements), True)
    except DualboardError as exc:
        return PreviewResult(
            document(NOT_READ, findings, True, [], problem=_relative(str(exc), project, workdir)), False
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _open_board(project: Project, store: Store | None, base_commit: str | None, workdir: Path) -> Board:
    if (store is None) == (base_commit is None):
        raise ValueError("preview needs exactly one of store and base_commit")
    return store_board(project, store) if store is not None else git_board(project, base_commit, workdir)


def _relative(message: str, project: Project, workdir: Path) -> str:
    """A message for the comment: the working folder and the leaderboard folder's absolute path left out."""
    return message.replace(f"{workdir}/base/", "(base) ").replace(f"{workdir}/", "").replace(f"{project.root}/", "")
