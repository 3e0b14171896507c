"""Publish a release to the Hub: the frozen release folder, the staged store changes (runs added and removed,
verdicts) and the card, then a tag.

``dualboard publish --release VERSION`` uploads exactly ``releases/VERSION/``
(as ``dualboard release`` froze it, every file checked against its
SHA256SUMS) to ``releases/VERSION/`` of the dataset, the release's dataset
card to the dataset's root (paths prefixed, so the Hub viewer and
``datasets.load_dataset(ORG/NAME, revision=VERSION)`` read this release), and
the runs and verdict cache the build staged in ``.dualboard/hub-pending/``.
The release's tables keep their own ``verdicts/`` inside the release folder,
apart from the store's verdict cache at the root.

One commit carries everything, and its ``parent_commit`` is the revision the
build read (recorded in ``build/`` by the grading stage), which must be the
revision the release froze: the tag then names exactly the runs the scored
data was graded from. If the dataset moved on meanwhile, the Hub refuses the
commit and nothing is written.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from dualboard.errors import DualboardError, StoreConflictError
from dualboard.release.dataset_card import dataset_card
from dualboard.release_files import CARD, CHECKSUMS, ReleaseRecord, check_version_name, hub_folder, load_releases
from dualboard.safe_read import read_regular
from dualboard.store.base import StagedFile
from dualboard.store.hub import COMMIT_ID, NO_COMMIT, HubStore
from dualboard.store.records import BuildSource, read_source
from dualboard.store.staged import StagedHubStore


@dataclass(frozen=True)
class PublishResult:
    """What a publish pushed."""

    revision: str
    """The tagged commit."""
    version: str
    """The release tag."""
    files: tuple[str, ...]
    """Paths written in the commit (unchanged files are skipped by the Hub client)."""


def publish(store: StagedHubStore, root: Path, build_dir: Path, version: str) -> PublishResult:
    """Push release ``version`` of the leaderboard folder ``root`` with the staged changes in one commit; tag it.

    The commit's parent is the revision the build read (``build/``); the
    overlay is cleared once the commit is tagged.

    Raises
    ------
    DualboardError
        When the release is missing, altered, or made from another store or
        revision than the one staged, or the tag exists; StoreConflictError
        when the dataset moved past that revision. Nothing is written in
        either case.
    """
    check_version_name(version)
    _check_tag_free(store.hub, version)
    source = read_source(build_dir)
    base = _revision_the_build_read(store, source)
    record = _release(store, root, version)
    _check_release_revision(store, record, source)
    files = [*store.pending_files(), *upload_files(record)]
    parent = _parent_commit(store.hub, base)
    try:
        revision = store.hub.commit(files, f"Release {version}", parent=parent, deletions=store.pending_deletions())
    except StoreConflictError as exc:
        raise StoreConflictError(
            f"{store.hub.repo_id}: main moved past {parent[:12]}, the revision the build read; "
            f"nothing was written — build again (`dualboard build --hub {store.hub.repo_id} "
            "--stage`), then release a new version and publish it"
        ) from exc
    store.hub.tag(version, revision)
    store.clear()
    return PublishResult(revision, version, tuple(f.path for f in files))


def upload_files(record: ReleaseRecord) -> list[StagedFile]:
    """The release folder's files under ``releases/VERSION/``, and its card (paths prefixed) at the dataset root.

    Each file is read with :func:`read_regular` (this step holds the token:
    a planted link must not be followed into the upload) and must be exactly
    what SHA256SUMS lists, no file more or less.
    """
    folder, prefix = record.folder, hub_folder(record.version)
    fix = f"the release folder changed after `dualboard release {record.version}` froze it — restore it"
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink()}
    if on_disk != set(record.files):
        extra, missing = sorted(on_disk - set(record.files)), sorted(set(record.files) - on_disk)
        raise DualboardError(f"{folder / CHECKSUMS}: lists {missing or 'every file'} but not {extra or 'more'} — {fix}")
    files = []
    for name, (_size, digest) in sorted(record.files.items()):
        data = read_regular(folder / name, root=folder)
        if hashlib.sha256(data).hexdigest() != digest:
            raise DualboardError(f"{folder / name}: its SHA-256 differs from the one in {CHECKSUMS} — {fix}")
        files.append(StagedFile(f"{prefix}{name}", data))
    card = dataset_card(record.manifest, sorted(record.files), prefix=prefix)
    return [*files, StagedFile(CARD, card.encode("utf-8"))]


def _release(store: StagedHubStore, root: Path, version: str) -> ReleaseRecord:
    """The frozen release ``version``, made from this Hub dataset (its Downloads page links the dataset)."""
    record = next((r for r in load_releases(root) if r.version == version), None)
    again = f"dualboard release {version} --hub {store.hub.repo_id} --hub-endpoint {store.hub.endpoint} --stage"
    if record is None:
        raise DualboardError(
            f"no release {version} in {root / 'releases'} — build with --stage, then run `{again}`, then publish"
        )
    if record.hub != (store.hub.endpoint, store.hub.repo_id):
        made = "the local store" if record.hub is None else f"{record.hub[1]} on {record.hub[0]}"
        raise DualboardError(
            f"release {version} was made from {made}, so its Downloads page does not point to "
            f"{store.hub.repo_id} on {store.hub.endpoint} — publish to that store, or remove "
            f"releases/{version} (and `mike delete {version}`) and run `{again}`"
        )
    return record


def _check_tag_free(store: HubStore, version: str) -> None:
    if store.base_commit() != NO_COMMIT and version in store.tags():
        raise DualboardError(
            f"{store.repo_id}: release {version!r} already exists — releases are frozen; publish a new version"
        )


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


def _check_release_revision(store: StagedHubStore, record: ReleaseRecord, source: BuildSource) -> None:
    """The release must hold the revision the build read: that revision's runs are what the tag names."""
    frozen = record.manifest.get("store_revision")
    if frozen != source.revision:
        raise DualboardError(
            f"release {record.version} froze store revision {frozen}, but build/ was graded from "
            f"{source.revision} — release the current build under a new version "
            f"(`dualboard release NEW --hub {store.hub.repo_id} --stage`), then publish that"
        )


def _parent_commit(store: HubStore, base: str) -> str:
    """``base``; for a dataset the build found missing, its first commit (creating it), if still empty."""
    if base != NO_COMMIT:
        return base
    head = store.head(create=True)
    if any(p.is_file() for p in store.snapshot(head).rglob("*")):
        raise StoreConflictError(
            f"{store.repo_id}: the build found no dataset, but it holds runs now (created meanwhile, or private: "
            "the build reads without a token); nothing was written — make the dataset public and build again"
        )
    return head
