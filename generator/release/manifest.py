"""The release manifest: what exactly a release froze, by content hash.

Everything in it comes from files (the store snapshot, build/scored,
build/stats) and from the arguments; nothing from the clock, so the same
inputs give the same manifest.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd

from dualboard import __version__
from dualboard.build_cache import file_sha256
from dualboard.release_files import run_standings
from dualboard.store.base import Removal

FORMAT_VERSION = 2
"""2: tables as <table>/<benchmark>.parquet and .csv (1: csv/<benchmark>.csv); the Hub endpoint is recorded."""
GRADER_FIELDS = ["grader", "grader_version", "config_hash", "role"]


def tree_hash(folder: Path) -> str:
    """SHA-256 over every file below ``folder``: relative path and content, in path order.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.txt").write_text("x")
    >>> tree_hash(d)[:12]
    '6d85f3faa10a'
    """
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(bytes.fromhex(file_sha256(path)))
    return digest.hexdigest()


def graders(verdicts: pd.DataFrame) -> list[dict[str, str]]:
    """Every grader that produced verdicts: name, version, config hash and role, sorted."""
    rows = verdicts[GRADER_FIELDS].drop_duplicates().sort_values(GRADER_FIELDS)
    return [
        {"name": r.grader, "version": str(r.grader_version), "config_hash": r.config_hash, "role": r.role}
        for r in rows.itertuples(index=False)
    ]


def benchmark_entry(
    benchmark_dir: Path, run_dirs: list[Path], models: pd.DataFrame, verdicts: pd.DataFrame, version: str
) -> dict[str, Any]:
    """The manifest entry of one benchmark."""
    model_names = dict(zip(models["run_id"], models["model"]))
    return {
        "version": version,
        "content_hash": tree_hash(benchmark_dir),
        "runs": {
            d.name: {"model": str(model_names.get(d.name, d.name)), "content_hash": tree_hash(d)}
            for d in sorted(run_dirs)
        },
        "graders": graders(verdicts),
        "ranks": run_standings(models),
    }


def manifest(
    version: str,
    *,
    released: str,
    sequence: int,
    store_revision: str,
    benchmarks: dict[str, dict[str, Any]],
    hub_dataset: str | None = None,
    hub_endpoint: str | None = None,
    removed: list[Removal] = (),
) -> dict[str, Any]:
    """Assemble the manifest of a release; ``hub_dataset`` and ``hub_endpoint`` name the Hub store, if any;
    ``removed``: the store's removal records (the changelog gives their reasons)."""
    return {
        "format_version": FORMAT_VERSION,
        "version": version,
        "sequence": sequence,
        "released": released,
        "generator_version": __version__,
        "store_revision": store_revision,
        "hub_dataset": hub_dataset,
        "hub_endpoint": hub_endpoint,
        "benchmarks": benchmarks,
        "removed": {r.run: {"date": r.date, "reason": r.reason} for r in removed},
    }


def manifest_json(data: dict[str, Any]) -> str:
    """Serialise a manifest deterministically."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
