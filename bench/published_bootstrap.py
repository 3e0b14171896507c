"""How often a reseeded bootstrap reproduces the paper release's published intervals.

Usage::

    python bench/published_bootstrap.py              # 300 seeds
    python bench/published_bootstrap.py --seeds 50

The 2024-04-28 paper release's ``final_stats.csv`` gives ``ci_lower``/``ci_upper`` as the 2.5 and 97.5
percentiles of 10,000 bootstrap means of each model's 30 marks, drawn without a seed and rounded to whole
points. This imports the release (``--release``: its folder), grades it, and redraws the
reconciliation's bootstrap (:func:`dualboard.stats.published.reconcile`) under many seeds. Per published
bound it prints the share of seeds whose rounded percentile equals the published one, and overall the share
of seeds that put every bound within one point after rounding, and within the reconciliation's tolerance.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from dualboard import pipeline
from dualboard.importers import import_autogenai
from dualboard.project import Project
from dualboard.scored_files import read_scored
from dualboard.stats.published import PUBLISHED_FILE, load_published, reconcile
from dualboard.store import LocalStore

RELEASE = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "easy-problems" / "2024-04-28-Paper-Benchmark"
)


def bootstrap_rows(release: Path, n_seeds: int) -> pd.DataFrame:
    """The answer-key bootstrap rows of the reconciliation under seeds 0 … n_seeds − 1, with their seed."""
    with tempfile.TemporaryDirectory() as folder:
        project = Project(Path(folder))
        import_autogenai(release, benchmark="paper", dest=project.root)
        store = LocalStore(project.store_dir)
        pipeline.ingest(project, store)
        pipeline.grade(project, store, progress=False)
        scored = read_scored(project.scored_dir(), "paper")
        published = load_published(project.data_dir / "benchmarks" / "paper" / PUBLISHED_FILE, project.data_dir)
    frames = []
    for seed in range(n_seeds):
        table = reconcile(published, scored, seed=seed)
        keep = table["grading"].eq("answer_key") & table["method"].str.startswith("bootstrap")
        frames.append(table[keep].assign(seed=seed))
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=300, help="seeds to redraw the bootstrap with")
    parser.add_argument("--release", type=Path, default=RELEASE, help="the 2024-04-28-Paper-Benchmark folder")
    args = parser.parse_args()
    rows = bootstrap_rows(args.release, args.seeds)
    rows["off"] = (np.round(rows["ours"]) - rows["published"]).abs()
    per_bound = rows.groupby(["run_id", "column"], sort=False).agg(
        published=("published", "first"),
        lowest=("ours", "min"),
        highest=("ours", "max"),
        exact_share=("off", lambda off: float((off == 0).mean())),
    )
    print(per_bound.round(3).to_string())
    by_seed = rows.groupby("seed").agg(worst=("off", "max"), all_match=("matches", "all"))
    print(f"\nseeds: {args.seeds}")
    print(f"every bound exact after rounding: {(by_seed['worst'] == 0).mean():.3f}")
    print(f"every bound within 1 point after rounding: {(by_seed['worst'] <= 1).mean():.3f}")
    print(f"every bound within the reconciliation's tolerance: {by_seed['all_match'].mean():.3f}")


if __name__ == "__main__":
    main()
