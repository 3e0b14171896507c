"""``dualboard release VERSION``: freeze the current build as a version.

It refuses a build that was not made from the store's current revision
(:func:`dualboard.pipeline.check_current`), so a manifest never names runs
its scored data lacks. Steps, each reading what the previous wrote:

1. the manifest (content hashes of benchmarks and runs from the store, graders
   from the verdicts, ranks from models.csv);
2. ``releases/VERSION/`` (laid out as :mod:`dualboard.release.layout` says):
   scored answers, the answers with their text and the verdicts as Parquet +
   CSV, stats tables, manifest, dataset card and ``SHA256SUMS``, written in a
   staging folder and moved into place in one step;
3. the site rendered again with the new changelog, the version selector and
   a Downloads page that carries the release's small files;
4. ``mike deploy --update-aliases VERSION latest`` to the ``gh-pages`` branch
   of the leaderboard folder's git repository (``--push`` optional).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dualboard import pipeline
from dualboard.atomic import atomic_write_text
from dualboard.project import Project
from dualboard.release.csv_download import download_csv
from dualboard.release.dataset_card import dataset_card
from dualboard.release.history import CHECKSUMS, MANIFEST, ReleaseError, check_version_name, load_releases, releases_dir
from dualboard.release.layout import CARD, STATS, write_table
from dualboard.release.manifest import benchmark_entry, file_sha256, manifest, manifest_json
from dualboard.scored_files import SCORED, TABLES, read_verdicts, table_revision
from dualboard.stats.tables import TABLES as STATS_TABLES
from dualboard.stats.tables import read_tables, write_tables
from dualboard.store import Store
from dualboard.store.base import read_removals

# -P: mike runs in the leaderboard folder, whose files must not shadow Python modules (see render.site.build_site).
MIKE = [sys.executable, "-P", "-c", "import sys; from mike.driver import main; sys.exit(main())"]


@dataclass(frozen=True)
class ReleaseResult:
    """What a release wrote."""

    version: str
    """The version name."""
    folder: Path
    """``releases/VERSION/``."""
    files: int
    """Files in the release folder."""
    pushed: bool
    """Whether gh-pages was pushed to the remote."""


def release(project: Project, store: Store, version: str, *, released: str, push: bool = False) -> ReleaseResult:
    """Freeze the current build as ``version``; see the module docstring for the steps.

    With a Hub store the manifest names the dataset, so the Downloads page
    links the files too large for the site at the dataset's tag ``version``
    (``dualboard publish --release VERSION`` puts them there).
    """
    check_version(project, version)
    _check_git(project.root)
    previous = load_releases(project.root)
    data = _manifest(project, store, version, released=released, sequence=len(previous) + 1)
    folder = write_release(project, data)
    pipeline.render(project, store, release=version)
    deploy(project.build_dir / "mkdocs.yml", project.root, version, push=push)
    return ReleaseResult(version, folder, sum(1 for p in folder.rglob("*") if p.is_file()), push)


def check_version(project: Project, version: str) -> None:
    """Reject a version name that is malformed, reserved or already released."""
    check_version_name(version)
    if (releases_dir(project.root) / version).exists():
        raise ReleaseError(
            f"release {version} already exists in {releases_dir(project.root)} — a release is frozen; "
            "choose a new version name"
        )


def _check_git(root: Path) -> None:
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "--git-dir"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise ReleaseError(
            f"{root} is not in a git repository; mike deploys the site to its gh-pages branch — "
            "run `git init` there (and commit) first"
        )


def _manifest(project: Project, store: Store, version: str, *, released: str, sequence: int) -> dict:
    benchmarks = {}
    snapshot = store.snapshot()
    stored = pipeline.stored_benchmarks(store)
    for name in stored:
        scored = SCORED.path(project.scored_dir(), name)
        if not scored.is_file() or not (project.stats_dir(name) / "models.csv").is_file():
            raise ReleaseError(f"no build output for benchmark {name!r} ({scored}) — run `dualboard build` first")
    pipeline.check_current(project, store, list(stored))
    for name, (benchmark, _runs) in stored.items():
        verdicts = read_verdicts(project.scored_dir(), name)
        models = pd.read_csv(project.stats_dir(name) / "models.csv")
        benchmarks[name] = benchmark_entry(
            snapshot / "benchmarks" / name, store.run_dirs(name), models, verdicts, benchmark.version
        )
    if not benchmarks:
        raise ReleaseError("the store holds no benchmark — run `dualboard build` first")
    hub = getattr(store, "hub", store)  # a staged Hub store reads through its HubStore
    repo_id, endpoint = getattr(hub, "repo_id", None), getattr(hub, "endpoint", None)
    return manifest(
        version,
        released=released,
        sequence=sequence,
        store_revision=store.revision(),
        benchmarks=benchmarks,
        hub_dataset=repo_id,
        hub_endpoint=endpoint,
        removed=read_removals(snapshot),
    )


def write_release(project: Project, data: dict) -> Path:
    """Write ``releases/VERSION/`` completely in a staging folder, then move it into place."""
    target = releases_dir(project.root) / data["version"]
    staging = target.with_name(f".{target.name}-{uuid.uuid4().hex}")
    try:
        for name in sorted(data["benchmarks"]):
            _copy_benchmark(project, name, staging)
        atomic_write_text(staging / MANIFEST, manifest_json(data))
        files = [p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file()]
        atomic_write_text(staging / CARD, dataset_card(data, files))
        atomic_write_text(staging / CHECKSUMS, checksums(staging))
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _copy_benchmark(project: Project, name: str, staging: Path) -> None:
    """One benchmark's three tables (Parquet with their metadata, and CSV; in parts when large) and its statistics."""
    scored_dir = project.scored_dir()
    for table in TABLES:
        table_revision(table, scored_dir, name)  # a regular file holding that table, not a link planted in build/
        write_table(table.path(scored_dir, name), staging / table.name, name)
    _copy_stats(project.stats_dir(name), staging / STATS / name)


def _copy_stats(stats_dir: Path, target: Path) -> None:
    """The statistics tables as downloads: read through the stats loader, written by :func:`download_csv`.

    Only the known tables and notes are copied, so nothing else that lies in
    build/stats (a stray file, a link) reaches the release.
    """
    tables = read_tables(stats_dir)
    for path in write_tables(tables, target):
        if path.stem in STATS_TABLES:  # the stats stage names each table's file after it
            atomic_write_text(path, download_csv(getattr(tables, path.stem)))


def checksums(folder: Path) -> str:
    """``sha256sum``-format lines for every file of a folder but SHA256SUMS itself, sorted by path."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != CHECKSUMS)
    return "".join(f"{file_sha256(p)}  {p.relative_to(folder).as_posix()}\n" for p in files)


def deploy(config: Path, root: Path, version: str, *, push: bool) -> None:
    """Deploy the site as ``version`` with mike, move ``latest`` to it, and make ``latest`` the default."""
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    extra = ["--push"] if push else []
    for args in (
        ["deploy", "--config-file", str(config), "--update-aliases", "-m", f"Release {version}", version, "latest"],
        ["set-default", "--config-file", str(config), "-m", "Default version: latest", "latest"],
    ):
        proc = subprocess.run(MIKE + args + extra, cwd=root, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise ReleaseError(
                f"mike {args[0]} failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}\n"
                "The release folder was written; fix the problem above (git identity, remote for "
                f"--push) and deploy again with: mike deploy --config-file {config} "
                f"--update-aliases {version} latest"
            )
