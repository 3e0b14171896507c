"""What a release folder holds, where each of its files is served, and how to read one back.

A foundation module (see :data:`dualboard.LAYERS`): the release stage writes
these folders and the render stage reads them for the Downloads and
Changelog pages, so what both must agree on lives here, before either.
Nothing here writes files.

``releases/VERSION/`` (written by :mod:`dualboard.release.freeze`)::

    README.md                      the dataset card: configs for ``datasets`` and the Hub viewer
    manifest.json, SHA256SUMS      what was frozen, and the checksum of every other file
    <table>/<benchmark>.parquet    one per table of TABLES (scored, answers, verdicts), and the same
    <table>/<benchmark>.csv        rows as CSV safe to open in a spreadsheet
    stats/<benchmark>/*.csv        the statistics tables (and notes.json)

A table too large for one file under :data:`SHARD_LIMIT` is written as parts,
``<benchmark>-00000-of-00003.parquet`` and ``.csv``, holding the same rows.

The same folder is served in three places:

* each file up to :data:`SITE_FILE_LIMIT` is part of the site the release
  deploys, among the data files every version shares
  (``/shared/<sha256>/<name>``, :mod:`dualboard.render.shared_files`);
* ``dualboard publish`` uploads the folder unchanged to ``releases/VERSION/``
  of the Hub dataset (the verdict cache of the store keeps its own
  ``verdicts/`` at the dataset's root) and tags the commit VERSION;
* without a Hub dataset, the larger files stay in the release folder, to be
  attached to the repository's GitHub release.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd

from dualboard import scored_files
from dualboard.errors import DualboardError
from dualboard.names import HUB_REPO_ID
from dualboard.safe_read import read_regular, untrusted_findings

MANIFEST = "manifest.json"
CHECKSUMS = "SHA256SUMS"
CARD = "README.md"
TABLES = tuple(t.name for t in scored_files.TABLES)
"""Tables of a release (scored, answers, verdicts): each is a ``datasets`` config and a folder of the release."""
STATS = "stats"
SITE_FILE_LIMIT = 50 * 1000**2
"""Largest release file (bytes) the site carries; GitHub Pages sites should stay small."""
SHARD_LIMIT = 100 * 1000**2
"""Every release file stays below this many bytes: GitHub refuses files of 100 MiB in a repository or on Pages."""
MARKDOWN_SUFFIX = ".md"
"""MkDocs turns every Markdown file of the docs into a page, so the site carries the card as ``README.md.txt``."""
VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]{0,63}")
"""A release name. It names a folder, a path on the site and a Hub tag, so match it whole (``fullmatch``)."""
RESERVED = frozenset({"latest", "versions.json", "index.html", "shared"})
"""Names mike and the shared data files (``render.shared_files.SHARED_DIR``) use on the gh-pages branch, so no
release can take them."""
HUB_ENDPOINT = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~-]+)*/?")
"""A Hub address a release may link to: http(s), a host, a port and a plain path; nothing a link could abuse."""


def hub_folder(version: str) -> str:
    """The folder of release ``version`` inside the Hub dataset."""
    return f"releases/{version}/"


def hub_file_url(endpoint: str, repo_id: str, version: str, name: str) -> str:
    """Download address of release file ``name`` at the dataset's tag ``version``."""
    return f"{endpoint.rstrip('/')}/datasets/{repo_id}/resolve/{version}/{hub_folder(version)}{name}"


def site_file(name: str) -> str:
    """Name of release file ``name`` in the site: Markdown gets ``.txt``.

    Examples
    --------
    >>> site_file("README.md"), site_file("scored/demo.parquet")
    ('README.md.txt', 'scored/demo.parquet')
    """
    return name + ".txt" if name.endswith(MARKDOWN_SUFFIX) else name


def carried_in_site(size: int) -> bool:
    """Whether a release file of ``size`` bytes is copied into its site version."""
    return size <= SITE_FILE_LIMIT


def table_of(name: str) -> str | None:
    """The table (config) a release file belongs to, for its Parquet files; else None.

    Examples
    --------
    >>> table_of("scored/demo-00000-of-00002.parquet"), table_of("scored/demo.csv")
    ('scored', None)
    >>> table_of("stats/demo/models.csv") is None
    True
    """
    head, _, rest = name.partition("/")
    return head if head in TABLES and rest.endswith(".parquet") and "/" not in rest else None


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


def run_standings(models: pd.DataFrame) -> dict[str, dict[str, dict[str, float | int | None]]]:
    """Each run's rank, simultaneous rank interval and score (to one decimal, as shown) under both gradings
    (models.csv): the changelog lists every rank and every score that moves."""
    out = {}
    for row in models.to_dict("records"):
        out[row["run_id"]] = {
            g: {
                "rank": _int(row[f"rank_{g}"]),
                "low": _int(row.get(f"rank_ci_low_{g}")),
                "high": _int(row.get(f"rank_ci_high_{g}")),
                "score": _rounded(row.get(f"{g}_mean")),
            }
            for g in ("traditional", "answer_key")
        }
    return out


def _rounded(value: Any) -> float | None:
    """A score as the site shows it (one decimal); None when the run has none."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return round(float(value), 1)


def _int(value: Any) -> int | None:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return int(value)
