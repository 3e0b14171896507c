"""Publish a release to the Hub: scored Parquet, verdict cache and dataset card, then a tag.

The dataset card's ``configs:`` lets ``datasets.load_dataset(repo, <benchmark>,
split="scored")`` find the Parquet files. Split names must match
``^\\w+(\\.\\w+)*$`` (the Hub refuses others), so benchmark and run names live
in config names and columns, never in split names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

import yaml

from generator.errors import DualboardError
from generator.store.base import VERDICTS, StagedFile
from generator.store.hub import HubStore

SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")
VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
SCORED = "scored"
VERDICT_TABLE_SUFFIX = ".verdicts"


@dataclass(frozen=True)
class PublishResult:
    """What a publish pushed."""

    revision: str
    """The tagged commit."""
    version: str
    """The release tag."""
    files: tuple[str, ...]
    """Paths written in the commit (unchanged files are skipped by the Hub client)."""


def publish(store: HubStore, scored_dir: Path, verdicts_dir: Path | None, version: str) -> PublishResult:
    """Push ``scored_dir/*.parquet``, the verdict cache and a dataset card in one commit, then tag it ``version``."""
    store.head(create=True)
    _check_version(store, version)
    tables = sorted(scored_dir.glob("*.parquet")) if scored_dir.is_dir() else []
    if not tables:
        raise DualboardError(f"{scored_dir}: no scored Parquet files — run `dualboard grade` (or build) before publishing")
    files = [StagedFile(f"{SCORED}/{p.name}", p.read_bytes()) for p in tables]
    files += _verdict_files(verdicts_dir)
    files.append(StagedFile("README.md", dataset_card(store.repo_id, version, [p.name for p in tables]).encode("utf-8")))
    revision = store.commit(files, f"Release {version}", parent=store.head())
    store.tag(version, revision)
    return PublishResult(revision, version, tuple(f.path for f in files))


def _check_version(store: HubStore, version: str) -> None:
    if not VERSION.match(version):
        raise DualboardError(f"release {version!r} is not a valid tag — use letters, digits, '.', '_' or '-', e.g. 2026.1 or v1.0")
    if version in store.tags():
        raise DualboardError(f"{store.repo_id}: release {version!r} already exists — releases are frozen; publish a new version")


def _verdict_files(verdicts_dir: Path | None) -> list[StagedFile]:
    if verdicts_dir is None or not verdicts_dir.is_dir():
        return []
    return [StagedFile(f"{VERDICTS}/{p.relative_to(verdicts_dir).as_posix()}", p.read_bytes())
            for p in sorted(verdicts_dir.rglob("*")) if p.is_file() and not p.name.startswith(".")]


def dataset_card(repo_id: str, version: str, table_names: list[str]) -> str:
    """The README.md of the dataset: YAML ``configs:`` front matter, then the text template."""
    configs = [_config(name) for name in table_names]
    check_split_names(configs)
    front = yaml.safe_dump({"configs": configs, "tags": ["leaderboard", "dualboard"]}, sort_keys=False)
    template = Template(resources.files("generator.store").joinpath("templates/dataset_card.md").read_text("utf-8"))
    body = template.substitute(
        title=f"{repo_id} — scored answers", repo_id=repo_id, version=version, first_config=configs[0]["config_name"],
        config_list="\n".join(f"- `{c['config_name']}`: `{c['data_files'][0]['path']}`" for c in configs))
    return f"---\n{front}---\n\n{body}"


def check_split_names(configs: list[dict]) -> None:
    """Raise if a split name would make the Hub refuse the card (``^\\w+(\\.\\w+)*$``: no hyphens)."""
    for config in configs:
        for data_file in config["data_files"]:
            if not SPLIT_NAME.match(data_file["split"]):
                raise DualboardError(f"config {config['config_name']!r}: split name {data_file['split']!r} does not match "
                                     f"{SPLIT_NAME.pattern} — put run ids in columns, not in split names")


def _config(table_name: str) -> dict:
    """One ``configs:`` entry: a benchmark's scored table, or its verdict table."""
    stem = table_name.removesuffix(".parquet")
    return {"config_name": stem.replace(VERDICT_TABLE_SUFFIX, "_verdicts"),
            "data_files": [{"split": SCORED, "path": f"{SCORED}/{table_name}"}]}
