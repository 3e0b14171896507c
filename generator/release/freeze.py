"""Freeze the current build as ``releases/VERSION/``, the files a release publishes.

``dualboard release VERSION`` (:func:`dualboard.pipeline.release`) checks the
version name and the build, calls :func:`freeze`, renders the site for the
release and deploys it with mike (:func:`dualboard.render.site.deploy_site`).
Freezing writes, each step reading what the previous wrote:

1. the manifest (content hashes of benchmarks and runs from the store, graders
   from the verdicts, ranks from models.csv);
2. ``releases/VERSION/`` (laid out as :mod:`dualboard.release_files` says):
   scored answers, the answers with their text and the verdicts as Parquet +
   CSV, stats tables, manifest, dataset card and ``SHA256SUMS``, written in a
   staging folder and moved into place in one step.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dualboard.atomic import atomic_write_text
from dualboard.build_cache import file_sha256
from dualboard.csv_download import download_csv
from dualboard.intake.models import Benchmark
from dualboard.project import Project
from dualboard.release.dataset_card import dataset_card
from dualboard.release.manifest import benchmark_entry, manifest, manifest_json
from dualboard.release.tables import write_table
from dualboard.release_files import (
    CARD,
    CHECKSUMS,
    MANIFEST,
    STATS,
    ReleaseError,
    check_version_name,
    load_releases,
    releases_dir,
)
from dualboard.scored_files import TABLES, ScoredFileError, ScoredFolder, read_verdicts
from dualboard.stats.tables import TABLES as STATS_TABLES
from dualboard.stats.tables import read_tables, write_tables
from dualboard.store import Store
from dualboard.store.base import read_removals


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


def check_release(root: Path, version: str) -> None:
    """Refuse a version name that is malformed, reserved or already released."""
    check_version_name(version)
    if (releases_dir(root) / version).exists():
        raise ReleaseError(
            f"release {version} already exists in {releases_dir(root)} — a release is frozen; choose a new version name"
        )


def check_built(project: Project, names: list[str]) -> None:
    """Refuse when a benchmark of ``names`` has no scored table or no statistics in build/."""
    for name in names:
        scored = ScoredFolder.of(project.scored_dir(), name)
        try:
            scored.about()
            built = (project.stats_dir(name) / "models.csv").is_file()
        except ScoredFileError:
            built = False
        if not built:
            raise ReleaseError(f"no build output for benchmark {name!r} ({scored.path}) — run `dualboard build` first")
    if not names:
        raise ReleaseError("the store holds no benchmark — run `dualboard build` first")


def freeze(project: Project, store: Store, version: str, benchmarks: dict[str, Benchmark], *, released: str) -> Path:
    """Write ``releases/VERSION/`` for the stored ``benchmarks``, whose build the caller checked is current.

    With a Hub store the manifest names the dataset, so the Downloads page
    links the files too large for the site at the dataset's tag ``version``
    (``dualboard publish --release VERSION`` puts them there).
    """
    sequence = len(load_releases(project.root)) + 1
    return write_release(project, _manifest(project, store, version, benchmarks, released=released, sequence=sequence))


def _manifest(
    project: Project, store: Store, version: str, benchmarks: dict[str, Benchmark], *, released: str, sequence: int
) -> dict:
    snapshot = store.snapshot()
    entries = {
        name: benchmark_entry(
            snapshot / "benchmarks" / name,
            store.run_dirs(name),
            pd.read_csv(project.stats_dir(name) / "models.csv"),
            read_verdicts(project.scored_dir(), name),
            benchmark.version,
        )
        for name, benchmark in benchmarks.items()
    }
    hub = store.hub_dataset()
    return manifest(
        version,
        released=released,
        sequence=sequence,
        store_revision=store.revision(),
        benchmarks=entries,
        hub_dataset=hub.repo_id if hub else None,
        hub_endpoint=hub.endpoint if hub else None,
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
    scored = ScoredFolder.of(project.scored_dir(), name)
    for table in TABLES:
        write_table(scored.published(table), staging / table.name, name)
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
