"""Where a leaderboard folder keeps things: one place that knows the paths."""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dualboard.errors import DualboardError
from dualboard.intake.yaml_mapping import read_yaml_mapping

CONFIG_FILE = "dualboard.yaml"
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
STATE_DIR = ".dualboard"
"""Local state of a leaderboard folder (stores, caches); git-ignored."""


@dataclass(frozen=True)
class StoreSettings:
    """The store a leaderboard folder uses unless the command line says otherwise."""

    hub: str | None = None
    """Hub dataset ``ORG/NAME``; ``None`` keeps the embedded local store."""
    endpoint: str | None = None
    """Hub address; ``None`` means the default (https://huggingface.co)."""


@dataclass(frozen=True)
class PullRequestSettings:
    """What a pull request may change besides adding run folders (``pull_requests:`` in ``dualboard.yaml``).

    Read from the pull request's base commit, never from its own tree: a pull
    request must not widen what it may change.
    """

    allowed_paths: tuple[str, ...] = ()
    """Shell-style patterns (``fnmatch``: ``*`` also matches ``/``) of paths outside submissions/ a pull
    request may add, change or remove, e.g. ``docs/*``. Nothing under submissions/ is ever allowed by them."""

    def allows(self, path: str) -> bool:
        """Whether the pull request may change ``path`` (relative to the leaderboard folder, ``/``-separated)."""
        return any(fnmatch.fnmatchcase(path, pattern) for pattern in self.allowed_paths)


def pull_request_settings(config: dict[str, Any], file: str) -> PullRequestSettings:
    """The ``pull_requests:`` section of a parsed ``dualboard.yaml``; raise DualboardError when it is malformed."""
    section = config.get("pull_requests")
    if section is None:
        return PullRequestSettings()
    if not isinstance(section, dict) or set(section) - {"allowed_paths"}:
        raise DualboardError(
            f"{file}: pull_requests: expected a mapping with only allowed_paths — write e.g. "
            "pull_requests: {allowed_paths: ['docs/*']}"
        )
    patterns = section.get("allowed_paths") or []
    if not isinstance(patterns, list) or not all(isinstance(p, str) and p.strip() for p in patterns):
        raise DualboardError(
            f"{file}: pull_requests.allowed_paths: expected a list of path patterns — write e.g. "
            "allowed_paths: ['docs/*', 'README.md']"
        )
    return PullRequestSettings(tuple(patterns))


@dataclass(frozen=True)
class Project:
    """A leaderboard folder: ``data/``, ``submissions/``, and what builds produce."""

    root: Path
    """The folder holding data/ and submissions/ (``--root``, default: the current one)."""

    @property
    def data_dir(self) -> Path:
        """Benchmark definitions: ``data/benchmarks/<name>/``."""
        return self.root / "data"

    @property
    def submissions_dir(self) -> Path:
        """Submitted runs: ``submissions/<benchmark>/<run_id>/``."""
        return self.root / "submissions"

    @property
    def store_dir(self) -> Path:
        """The embedded local store (default store)."""
        return self.root / STATE_DIR / "store"

    @property
    def hub_cache_dir(self) -> Path:
        """Snapshots of a Hub dataset store, one folder per commit read."""
        return self.root / STATE_DIR / "hub-cache"

    @property
    def hub_pending_dir(self) -> Path:
        """Changes staged for a Hub dataset store by ``--stage``, pushed by ``dualboard publish``."""
        return self.root / STATE_DIR / "hub-pending"

    @property
    def build_cache_file(self) -> Path:
        """What the last builds did, by content hash (:mod:`dualboard.build_cache`): the work a build may skip."""
        return self.root / STATE_DIR / "build-cache.json"

    @property
    def build_dir(self) -> Path:
        """Intermediate files: scored/, stats/, docs/."""
        return self.root / "build"

    @property
    def site_dir(self) -> Path:
        """The built static site."""
        return self.root / "site"

    def scored_dir(self) -> Path:
        """``build/scored/``: a folder per benchmark, a Parquet file per run of each table."""
        return self.build_dir / "scored"

    def stats_root(self) -> Path:
        """``build/stats/``: one folder per benchmark."""
        return self.build_dir / "stats"

    def stats_dir(self, benchmark: str) -> Path:
        """``build/stats/<benchmark>/``: the stats tables as CSV."""
        return self.stats_root() / benchmark

    def generated_dirs(self) -> tuple[Path, ...]:
        """Folders the build writes itself (build/, site/, .dualboard/); never committed."""
        return (self.build_dir, self.site_dir, self.root / STATE_DIR)

    def committed_generated_files(self) -> list[str]:
        """Files under :meth:`generated_dirs` that git tracks, relative to the root.

        The build trusts what it wrote there (a cached Hub snapshot, scored
        tables that publish uploads), so a pull request that commits such a
        file with ``git add -f`` could smuggle unvalidated runs into the board
        or a link to ``/proc/self/environ`` into the release. Empty when the
        folder is not a git checkout (a local build, a test folder).
        """
        relative = [str(d.relative_to(self.root)) for d in self.generated_dirs()]
        try:
            listed = subprocess.run(
                ["git", "-C", str(self.root), "ls-files", "-z", "--", *relative],
                capture_output=True,
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return []
        if listed.returncode != 0:
            return []
        return sorted(name for name in listed.stdout.decode("utf-8", "replace").split("\0") if name)

    def deletion_date(self, run: str) -> str | None:
        """Date (``YYYY-MM-DD``, UTC) of the commit that deleted ``submissions/<benchmark>/<run_id>/``.

        None when the folder is not a git checkout or the deletion is not
        committed yet. A removal dated this way is the same on every build of
        the same history.
        """
        try:
            found = subprocess.run(
                [
                    "git",
                    "-C",
                    str(self.root),
                    "log",
                    "-1",
                    "--diff-filter=D",
                    "--format=%cd",
                    "--date=format-local:%Y-%m-%d",
                    "--",
                    f"{self.submissions_dir.name}/{run}/",
                ],
                capture_output=True,
                timeout=60,
                check=False,
                env={**os.environ, "TZ": "UTC"},
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        date = found.stdout.decode("ascii", "replace").strip()
        return date if found.returncode == 0 and DATE.fullmatch(date) else None

    def store_settings(self) -> StoreSettings:
        """Read ``store:`` from ``dualboard.yaml`` (optional). Tokens never live there: HF_TOKEN only."""
        path = self.root / CONFIG_FILE
        if not path.is_file():
            return StoreSettings()
        store = read_yaml_mapping(path, example="the README's 'Store' section").get("store") or {}
        unknown = sorted(set(store) - {"hub", "endpoint"}) if isinstance(store, dict) else ["(not a mapping)"]
        if unknown:
            raise DualboardError(
                f"{path}: store: unknown keys {unknown} — use only 'hub: ORG/NAME' and 'endpoint: URL' "
                "(the token comes from the HF_TOKEN environment variable)"
            )
        wrong = [key for key, value in store.items() if not isinstance(value, str)]
        if wrong:
            raise DualboardError(
                f"{path}: store.{wrong[0]}: expected text, got {store[wrong[0]]!r} — "
                "write e.g. hub: my-org/my-leaderboard"
            )
        return StoreSettings(hub=store.get("hub"), endpoint=store.get("endpoint"))

    def pull_request_settings(self) -> PullRequestSettings:
        """Read ``pull_requests:`` from this folder's ``dualboard.yaml`` (checked on review; the preview
        obeys the base commit's copy, see :func:`pull_request_settings`)."""
        path = self.root / CONFIG_FILE
        if not path.is_file():
            return PullRequestSettings()
        return pull_request_settings(read_yaml_mapping(path, example="the README's 'Store' section"), str(path))
