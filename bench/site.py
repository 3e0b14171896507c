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
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from dualboard.simulation import simulate_benchmark

REPO = Path(__file__).resolve().parents[1]
CATEGORIES = ("arithmetic", "units", "facts", "reasoning", "language")
SCENARIOS = {"demo": None, "runs50": (None, 50), "q500": (500, 20), "q2000": (2000, 20)}


def dualboard(root: Path, *args: str) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", *args, "--root", str(root)], capture_output=True, text=True, cwd=REPO
    )
    if proc.returncode != 0:
        sys.exit(proc.stdout + proc.stderr)
    return time.perf_counter() - started


def copy_demo(root: Path) -> None:
    for name in ("data", "submissions", "site_src"):
        shutil.copytree(REPO / name, root / name)
    shutil.copyfile(REPO / "mkdocs.yml", root / "mkdocs.yml")


def synthetic_questions(n: int) -> list[dict]:
    """n questions, half multiple choice, spread over five categories, each with a one-word key."""
    questions = []
    for i in range(n):
        key = {
            "answer": f"answer{i}",
            "aliases": [f"alias{i}"],
            "patterns": [],
            "numeric": None,
            "reference": f"The reference answer is answer{i}.",
            "notes": "",
        }
        q = {"id": f"q{i:05d}", "category": CATEGORIES[i % 5], "prompt": f"Synthetic question {i}?", "answer_key": key}
        if i % 2:
            q["type"] = "open"
        else:
            q.update(type="multiple_choice", choices=[f"answer{i}", "w1", "w2", "w3"], correct_choice="A")
        questions.append(q)
    return questions


def models_yaml(n_runs: int, rounds: int, seed: int = 11) -> dict:
    """n_runs simulated models with random true accuracies per category."""
    rng = np.random.default_rng(seed)
    models = []
    for i in range(n_runs):
        base = rng.uniform(0.35, 0.9)
        drop = rng.uniform(0.0, 0.3)
        models.append(
            {
                "run_id": f"sim-{i:03d}",
                "model": f"sim-model-{i:03d}",
                "rounds": rounds,
                "seed": 1000 + i,
                "accuracy": {
                    c: {"traditional": round(float(base), 3), "answer_key": round(float(max(base - drop, 0.05)), 3)}
                    for c in CATEGORIES
                },
            }
        )
    return {
        "format": 1,
        "defaults": {"decoding": {"temperature": 0.7, "top_p": 0.95, "max_tokens": 512}},
        "models": models,
    }


def make_scenario(root: Path, name: str) -> None:
    if SCENARIOS[name] is None:
        copy_demo(root)
        return
    n_questions, n_runs = SCENARIOS[name]
    copy_demo(root)
    shutil.rmtree(root / "submissions")
    bench = root / "data" / "benchmarks" / "demo"
    if n_questions is not None:
        (bench / "questions.jsonl").write_text(
            "".join(json.dumps(q) + "\n" for q in synthetic_questions(n_questions)), "utf-8"
        )
        (bench / "human_labels.csv").unlink(missing_ok=True)
    (bench / "simulated_models.yaml").write_text(
        yaml.safe_dump(models_yaml(n_runs, rounds=1 if n_questions else 3)), "utf-8"
    )
    (bench / "human_labels.csv").unlink(missing_ok=True)
    simulate_benchmark(root, "demo", seed=7)


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
