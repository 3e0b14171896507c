"""Publish a release to the Hub: staged runs (and removals), verdict cache, scored Parquet and dataset card, then a tag.

One commit carries everything, and its ``parent_commit`` is the revision the
build read (recorded in ``build/`` by the grading stage): the tag then names
exactly the runs the scored data was graded from. If the dataset moved on
meanwhile, the Hub refuses the commit and nothing is written.

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

from generator.errors import DualboardError, StoreConflictError
from generator.release.history import VERSION
from generator.names import is_name
from generator.safe_read import read_regular
from generator.store.base import StagedFile
from generator.store.hub import COMMIT_ID, NO_COMMIT, HubStore
from generator.store.records import BuildSource, read_source
from generator.store.staged import StagedHubStore

SPLIT_NAME = re.compile(r"\w+(\.\w+)*")
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


def publish(store: StagedHubStore, build_dir: Path, scored_dir: Path, version: str) -> PublishResult:
    """Push the staged runs and verdicts, the scored tables and a card in one commit, then tag it ``version``.

    The commit's parent is the revision the build read (``build/``); the
    overlay is cleared once the commit is tagged.

    Raises
    ------
    DualboardError
        When the build read another store or revision than the one staged,
        or there is nothing to publish; StoreConflictError when the dataset
        moved past that revision. Nothing is written in either case.
    """
    _check_version(store.hub, version)
    base = _revision_the_build_read(store, read_source(build_dir))
    files = store.pending_files() + _release_files(store.hub.repo_id, scored_dir, version)
    parent = _parent_commit(store.hub, base)
    try:
        revision = store.hub.commit(files, f"Release {version}", parent=parent, deletions=store.pending_deletions())
    except StoreConflictError as exc:
        raise StoreConflictError(f"{store.hub.repo_id}: main moved past {parent[:12]}, the revision the build read; "
                                 f"nothing was written — build again (`dualboard build --hub {store.hub.repo_id} "
                                 "--stage`), then publish") from exc
    store.hub.tag(version, revision)
    store.clear()
    return PublishResult(revision, version, tuple(f.path for f in files))


def _release_files(repo_id: str, scored_dir: Path, version: str) -> list[StagedFile]:
    """The release's files: the scored tables and the dataset card describing them."""
    tables = sorted(p for p in scored_dir.glob("*.parquet") if is_name(p.name.removesuffix(".parquet")))
    if not tables:
        raise DualboardError(f"{scored_dir}: no scored Parquet files — run `dualboard grade` (or build) before publishing")
    # read_regular: this step holds the token, so a planted link must not be followed into the upload
    files = [StagedFile(f"{SCORED}/{p.name}", read_regular(p, root=scored_dir)) for p in tables]
    card = dataset_card(repo_id, version, [p.name for p in tables])
    return [*files, StagedFile("README.md", card.encode("utf-8"))]


def _check_version(store: HubStore, version: str) -> None:
    if not VERSION.fullmatch(version):
        raise DualboardError(f"release {version!r} is not a valid tag — use letters, digits, '.', '_' or '-', e.g. 2026.1 or v1.0")
    if store.base_commit() != NO_COMMIT and version in store.tags():
        raise DualboardError(f"{store.repo_id}: release {version!r} already exists — releases are frozen; publish a new version")


def _revision_the_build_read(store: StagedHubStore, source: BuildSource | None) -> str:
    """The Hub commit under the build's data: the staged overlay's base, or the commit it read directly."""
    rebuild = f"run `dualboard build --hub {store.hub.repo_id} --stage` (then publish)"
    if source is None or source.store != store.describe():
        read = "nothing recorded" if source is None else f"it read {source.store}"
        raise DualboardError(f"build/ was not built from {store.describe()} ({read}) — {rebuild}")
    pending = store.pending()
    if pending is not None and pending.revision == source.revision:
        return pending.base
    if pending is None and COMMIT_ID.fullmatch(source.revision):
        return source.revision
    staged = "nothing is staged" if pending is None else f"the staged changes are revision {pending.revision}"
    raise DualboardError(f"build/ was graded from revision {source.revision}, but {staged} — {rebuild}")


def _parent_commit(store: HubStore, base: str) -> str:
    """``base``; for a dataset the build found missing, its first commit (creating it), if still empty."""
    if base != NO_COMMIT:
        return base
    head = store.head(create=True)
    if any(p.is_file() for p in store.snapshot(head).rglob("*")):
        raise StoreConflictError(
            f"{store.repo_id}: the build found no dataset, but it holds runs now (created meanwhile, or private: "
            "the build reads without a token); nothing was written — make the dataset public and build again")
    return head


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
            if not SPLIT_NAME.fullmatch(data_file["split"]):
                raise DualboardError(f"config {config['config_name']!r}: split name {data_file['split']!r} does not match "
                                     f"{SPLIT_NAME.pattern} — put run ids in columns, not in split names")


def _config(table_name: str) -> dict:
    """One ``configs:`` entry: a benchmark's scored table, or its verdict table."""
    stem = table_name.removesuffix(".parquet")
    return {"config_name": stem.replace(VERDICT_TABLE_SUFFIX, "_verdicts"),
            "data_files": [{"split": SCORED, "path": f"{SCORED}/{table_name}"}]}
