"""Measure the site: build time, site size and the leaderboard page's transfer size.

Usage: python bench/site.py [--scenarios demo,runs50,q500,q2000]

Scenarios (each built from scratch in a temporary folder):

* ``demo``   — the bundled demo leaderboard (48 questions, 7 runs);
* ``runs50`` — the demo questions answered by 50 simulated runs (the issue's
  page-weight target: leaderboard page ≤ 300 KB without plotly.js);
* ``q500`` / ``q2000`` — a synthetic benchmark of 500 / 2,000 questions × 20
  runs, written by the seeded simulator: the question pages stay out of the
  navigation, so render time and site size should grow about linearly.

The leaderboard transfer size is its HTML plus its chart JSON files
(plotly.js, ~4.6 MB, is cached once per site and excluded; so is the theme).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from synthetic_board import copy_demo, make_board  # noqa: E402

SCENARIOS = {"demo": None, "runs50": (None, 50), "q500": (500, 20), "q2000": (2000, 20)}


def dualboard(root: Path, *args: str) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", *args, "--root", str(root)], capture_output=True, text=True, cwd=REPO
    )
    if proc.returncode != 0:
        sys.exit(proc.stdout + proc.stderr)
    return time.perf_counter() - started


def make_scenario(root: Path, name: str) -> None:
    if SCENARIOS[name] is None:
        copy_demo(root)
        return
    n_questions, n_runs = SCENARIOS[name]
    make_board(root, n_questions, n_runs, rounds=1 if n_questions else 3)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(name: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_scenario(root, name)
        answers = sum(1 for p in (root / "submissions").rglob("predictions.jsonl") for _ in p.open())
        build = dualboard(root, "build", "--no-progress")
        render = dualboard(root, "render")
        site = root / "site"
        board = site / "benchmarks" / "demo"
        page = (board / "index.html").stat().st_size + folder_bytes(board / "charts")
        questions = list((board / "questions").glob("*/index.html"))
        return {
            "scenario": name,
            "answers": answers,
            "pages": len(list(site.rglob("index.html"))),
            "build_s": build,
            "render_s": render,
            "site_mb": folder_bytes(site) / 1e6,
            "leaderboard_kb": page / 1e3,
            "question_page_kb": np.mean([q.stat().st_size for q in questions]) / 1e3,
            "plotly_mb": (site / "javascripts" / "plotly.min.js").stat().st_size / 1e6,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", default="demo,runs50,q500,q2000")
    names = parser.parse_args().scenarios.split(",")
    print(
        f"{'scenario':<8} {'answers':>8} {'pages':>6} {'build s':>8} {'render s':>9} {'site MB':>8} "
        f"{'leaderboard KB':>15} {'question KB':>12}"
    )
    for name in names:
        r = measure(name)
        print(
            f"{r['scenario']:<8} {r['answers']:>8} {r['pages']:>6} {r['build_s']:>8.1f} {r['render_s']:>9.1f} "
            f"{r['site_mb']:>8.1f} {r['leaderboard_kb']:>15.0f} {r['question_page_kb']:>12.1f}",
            flush=True,
        )
    print(
        "leaderboard KB = its HTML + chart JSON (plotly.js, written once per site, excluded); "
        "render s = `dualboard render` alone (pages + mkdocs build --strict)."
    )


if __name__ == "__main__":
    main()
