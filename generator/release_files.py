"""Past releases: read their manifests and say what changed from one to the next.

A release lives in ``<root>/releases/<VERSION>/`` with ``manifest.json`` and
``SHA256SUMS``. The render stage reads the history to write the changelog and
downloads pages; nothing here writes files.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from dualboard.errors import DualboardError
from dualboard.names import HUB_REPO_ID, is_run_name
from dualboard.safe_read import read_regular, untrusted_findings
from dualboard.store.base import Removal

MANIFEST = "manifest.json"
CHECKSUMS = "SHA256SUMS"
GRADINGS = ("traditional", "answer_key")
VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]{0,63}")
"""A release name. It names a folder, a path on the site and a Hub tag, so match it whole (``fullmatch``)."""
RESERVED = frozenset({"latest", "versions.json", "index.html"})
"""Names mike uses on the gh-pages branch, so no release can take them."""
HUB_ENDPOINT = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~-]+)*/?")
"""A Hub address a release may link to: http(s), a host, a port and a plain path; nothing a link could abuse."""


class ReleaseError(DualboardError):
    """A release cannot be made or read (bad version, missing build, broken manifest)."""


@dataclass(frozen=True)
class ReleaseRecord:
    """One frozen release as found on disk."""

    version: str
    """Version name, e.g. ``2026.11``."""
    manifest: dict[str, Any]
    """Parsed ``manifest.json`` (see :func:`dualboard.release.manifest.manifest`)."""
    files: dict[str, tuple[int, str]]
    """Release-relative path → (bytes, SHA-256) from ``SHA256SUMS`` and the files."""
    folder: Path
    """The release folder."""

    def folder_bytes(self, name: str) -> bytes | None:
        """Content of a file of the release, or None when it is not on this machine."""
        path = self.folder / name
        return read_regular(path, root=self.folder) if path.is_file() else None

    @property
    def hub(self) -> tuple[str, str] | None:
        """(endpoint, dataset) of the Hub store the release was built from, or None for a local store."""
        repo_id, endpoint = self.manifest.get("hub_dataset"), self.manifest.get("hub_endpoint")
        return (endpoint, repo_id) if repo_id and endpoint else None

    @property
    def sequence(self) -> int:
        """Position in the release history (1 = first release)."""
        return int(self.manifest.get("sequence", 0))


@dataclass(frozen=True)
class RankChange:
    """A run whose rank under one grading moved between two releases."""

    benchmark: str
    run_id: str
    grading: str
    before: int
    after: int
    interval: tuple[int, int] | None
    """The new release's simultaneous 95 % rank interval, when it has one."""

    @property
    def significant(self) -> bool:
        """The old rank lies outside the new rank interval, so the data say the run really moved."""
        return self.interval is not None and not self.interval[0] <= self.before <= self.interval[1]


@dataclass(frozen=True)
class ReleaseChanges:
    """What a release changed compared with the previous one."""

    version: str
    previous: str | None
    released: str
    new_runs: list[tuple[str, str]]
    """(benchmark, run id) present now and not before."""
    removed_runs: list[tuple[str, str]]
    """(benchmark, run id) present before and not now."""
    removals: dict[tuple[str, str], Removal]
    """Why and when each of ``removed_runs`` left, where the store recorded it (manifest ``removed``)."""
    changed_runs: list[tuple[str, str]]
    """(benchmark, run id) in both releases whose submitted files changed."""
    changed_benchmarks: list[str]
    """Benchmarks whose questions or grading configuration changed."""
    rank_changes: list[RankChange]
    """Every rank that moved; :attr:`RankChange.significant` says which moves the data support."""


def check_version_name(version: str) -> None:
    """Raise ReleaseError unless ``version`` can name a release (folder, site version and Hub tag)."""
    if not VERSION.fullmatch(version) or version in RESERVED:
        raise ReleaseError(
            f"{version!r} is not a usable version name — use letters, digits, '.', '_' or '-' "
            f"(e.g. 2026.11 or v1.2), not {sorted(RESERVED)}"
        )


def releases_dir(root: Path) -> Path:
    """Where a leaderboard folder keeps its releases."""
    return Path(root) / "releases"


def load_releases(root: Path) -> list[ReleaseRecord]:
    """Every release under ``<root>/releases/``, oldest first.

    A pull request can add files there, and the downloads page publishes
    them, so a link or special file anywhere under ``releases/`` is refused
    before anything is read.
    """
    folder = releases_dir(root)
    unsafe = untrusted_findings(folder)
    if unsafe:  # a link would publish whatever it points at
        raise ReleaseError("\n".join(f"{f.file}: {f.problem} — {f.fix}" for f in unsafe))
    if not folder.is_dir():
        return []
    records = [load_release(p) for p in sorted(folder.iterdir()) if (p / MANIFEST).is_file()]
    return sorted(records, key=lambda r: (r.sequence, r.version))


def load_release(folder: Path) -> ReleaseRecord:
    """Read one release folder; its name is the version, and the manifest must say the same."""
    if not VERSION.fullmatch(folder.name):
        raise ReleaseError(
            f"{folder}: {folder.name!r} is not a release version — remove the folder or rename it "
            "to letters, digits, '.', '_' or '-'"
        )
    try:
        manifest = json.loads(read_regular(folder / MANIFEST, root=folder))
    except (OSError, ValueError) as exc:
        raise ReleaseError(
            f"{folder / MANIFEST}: cannot read the manifest ({exc}) — restore it from the gh-pages "
            "branch or remove the release folder"
        ) from exc
    if not isinstance(manifest, dict) or manifest.get("version", folder.name) != folder.name:
        raise ReleaseError(
            f"{folder / MANIFEST}: does not describe release {folder.name!r} — restore it from the "
            "gh-pages branch or remove the release folder"
        )
    _check_hub_fields(folder / MANIFEST, manifest)
    return ReleaseRecord(folder.name, manifest, _files(folder), folder)


def _check_hub_fields(path: Path, manifest: dict[str, Any]) -> None:
    """The Hub dataset and address a release names become download links: refuse anything but a plain name and URL."""
    for field, pattern in (("hub_dataset", HUB_REPO_ID), ("hub_endpoint", HUB_ENDPOINT)):
        value = manifest.get(field)
        if value is not None and not (isinstance(value, str) and pattern.fullmatch(value)):
            raise ReleaseError(
                f"{path}: {field}: {value!r} is not a Hub dataset name (ORG/NAME) or address (https://host) "
                "— restore the manifest from the gh-pages branch or remove the release folder"
            )


def _files(folder: Path) -> dict[str, tuple[int, str]]:
    sums = folder / CHECKSUMS
    if not sums.is_file():
        return {}
    text = read_regular(sums, root=folder)
    out = {}
    for number, line in enumerate(text.decode("utf-8", "replace").split("\n"), start=1):
        if not line:
            continue
        digest, _, name = line.partition("  ")
        if PurePosixPath(name).is_absolute() or ".." in PurePosixPath(name).parts or "\\" in name or not name:
            raise ReleaseError(
                f"{sums}:{number}: {name!r} is not a path inside the release — restore SHA256SUMS "
                "from the gh-pages branch"
            )
        path = folder / name
        out[name] = (path.stat().st_size if path.is_file() else 0, digest)
    out[CHECKSUMS] = (len(text), hashlib.sha256(text).hexdigest())
    return out


def compare(previous: dict[str, Any] | None, current: dict[str, Any]) -> ReleaseChanges:
    """Compare two manifests (``previous`` None for the first release)."""
    before = _runs(previous) if previous else {}
    after = _runs(current)
    return ReleaseChanges(
        version=str(current["version"]),
        previous=str(previous["version"]) if previous else None,
        released=str(current.get("released", "")),
        new_runs=sorted(set(after) - set(before)),
        removed_runs=sorted(set(before) - set(after)),
        removals={k: r for k, r in _removals(current).items() if k in set(before) - set(after)},
        changed_runs=sorted(
            k for k in set(after) & set(before) if after[k]["content_hash"] != before[k]["content_hash"]
        ),
        changed_benchmarks=_changed_benchmarks(previous, current),
        rank_changes=_rank_changes(previous, current) if previous else [],
    )


def history(records: list[ReleaseRecord]) -> list[ReleaseChanges]:
    """The changes of every release against the one before it, newest first."""
    changes, previous = [], None
    for record in records:
        changes.append(compare(previous, record.manifest))
        previous = record.manifest
    return changes[::-1]


def _runs(manifest: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (b, r): info for b, bench in manifest.get("benchmarks", {}).items() for r, info in bench.get("runs", {}).items()
    }


def _removals(manifest: dict[str, Any]) -> dict[tuple[str, str], Removal]:
    """The removal records a manifest carries (``removed``: ``benchmark/run`` → date and reason)."""
    out = {}
    for run, info in (manifest.get("removed") or {}).items():
        if isinstance(info, dict) and is_run_name(run):
            out[tuple(run.split("/"))] = Removal(run, str(info.get("date", "")), str(info.get("reason", "")))
    return out


def removed_since(records: list[ReleaseRecord], removals: list[Removal]) -> list[Removal]:
    """The removals not yet in a release: runs the last release holds and the store has since removed
    (every removal when nothing was released yet)."""
    if not records:
        return list(removals)
    released = _runs(records[-1].manifest)
    return [r for r in removals if tuple(r.run.split("/")) in released]


def _changed_benchmarks(previous: dict[str, Any] | None, current: dict[str, Any]) -> list[str]:
    if not previous:
        return []
    old = previous.get("benchmarks", {})
    return sorted(
        b
        for b, info in current.get("benchmarks", {}).items()
        if b in old
        and (info.get("content_hash") != old[b].get("content_hash") or info.get("graders") != old[b].get("graders"))
    )


def _rank_changes(previous: dict[str, Any], current: dict[str, Any]) -> list[RankChange]:
    changes = []
    for bench, info in current.get("benchmarks", {}).items():
        old_ranks = previous.get("benchmarks", {}).get(bench, {}).get("ranks", {})
        for run_id, ranks in info.get("ranks", {}).items():
            for grading in GRADINGS:
                old, new = old_ranks.get(run_id, {}).get(grading), ranks.get(grading)
                if (
                    not old
                    or not new
                    or old.get("rank") is None
                    or new.get("rank") is None
                    or old["rank"] == new["rank"]
                ):
                    continue
                interval = (
                    (new["low"], new["high"]) if new.get("low") is not None and new.get("high") is not None else None
                )
                changes.append(RankChange(bench, run_id, grading, int(old["rank"]), int(new["rank"]), interval))
    return changes
