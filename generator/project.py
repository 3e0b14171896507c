"""Where a leaderboard folder keeps things: one place that knows the paths."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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
        return self.root / ".dualboard" / "store"

    @property
    def build_dir(self) -> Path:
        """Intermediate files: scored/, stats/, docs/."""
        return self.root / "build"

    @property
    def site_dir(self) -> Path:
        """The built static site."""
        return self.root / "site"

    def scored_dir(self) -> Path:
        """``build/scored/``: one Parquet file per benchmark."""
        return self.build_dir / "scored"

    def stats_dir(self, benchmark: str) -> Path:
        """``build/stats/<benchmark>/``: the stats tables as CSV."""
        return self.build_dir / "stats" / benchmark
