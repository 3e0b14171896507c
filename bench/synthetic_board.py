"""Synthetic leaderboards for the speed and memory scripts: the demo's graders over any size.

A board is the bundled demo (its ``benchmark.yaml``, graders and site sources) with
``n_questions`` synthetic questions (half multiple choice, five categories, one-word keys) and
``n_runs`` simulated models, each answering every question ``rounds`` times, written by the seeded
simulator. ``pad_responses`` then lengthens every response with made-up prose (no digit, no capital,
no answer), so the graders read the same verdicts as before, and the answers weigh and compress as
real ones do.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import yaml

from dualboard.simulation import simulate_benchmark

REPO = Path(__file__).resolve().parents[1]
BENCHMARK = "demo"
CATEGORIES = ("arithmetic", "units", "facts", "reasoning", "language")
SIMULATION_SEED = 7
WORDS = 1000
"""Words of the padding's vocabulary, drawn with Zipf weights 1/rank^ZIPF: with these, answers padded to 1,200
characters gzip like the published releases' answers (level 1: 0.30 of their size, level 6: 0.24; the releases'
answers: 0.29 and 0.24), where repeated sentences would compress far better than real answers do."""
ZIPF = 1.45


def _vocabulary(seed: int = 11) -> list[str]:
    """:data:`WORDS` made-up lowercase words, each syllables of a consonant and a vowel: no digit, no capital, and
    no word a grader reads (every key and marker word of the board starts with a vowel or holds a digit)."""
    rng = np.random.default_rng(seed)
    consonants, vowels = "bcdfghjklmnprstvwz", "aeiou"
    words = []
    for _ in range(WORDS):
        syllables = [consonants[rng.integers(18)] + vowels[rng.integers(5)] for _ in range(rng.integers(1, 4))]
        words.append("".join(syllables) + (consonants[rng.integers(18)] if rng.random() < 0.5 else ""))
    return words


VOCABULARY = _vocabulary()
WEIGHTS = 1 / np.arange(1, WORDS + 1) ** ZIPF
WEIGHTS /= WEIGHTS.sum()


def padding(rng: np.random.Generator, chars: int) -> str:
    """About ``chars`` characters of made-up prose (:data:`VOCABULARY`), in sentences, ending with a line break."""
    words = rng.choice(WORDS, size=chars // 5 + 1, p=WEIGHTS)
    text = " ".join(VOCABULARY[w] + ("." if i % 14 == 13 else "") for i, w in enumerate(words))
    return text[:chars].rstrip() + "\n"


def copy_demo(root: Path) -> None:
    """Copy the bundled demo board (data/, submissions/, site_src/, mkdocs.yml) into ``root``."""
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


def models_yaml(n_runs: int, rounds: int, seed: int = 11, first: int = 0) -> dict:
    """Simulated models ``first`` … ``first + n_runs - 1`` with random true accuracies per category."""
    rng = np.random.default_rng([seed, first])
    models = []
    for i in range(first, first + n_runs):
        base = rng.uniform(0.35, 0.9)
        drop = rng.uniform(0.0, 0.3)
        accuracy = {"traditional": round(float(base), 3), "answer_key": round(float(max(base - drop, 0.05)), 3)}
        models.append(
            {
                "run_id": f"sim-{i:03d}",
                "model": f"sim-model-{i:03d}",
                "rounds": rounds,
                "seed": 1000 + i,
                "accuracy": {c: dict(accuracy) for c in CATEGORIES},
            }
        )
    return {
        "format": 1,
        "defaults": {"decoding": {"temperature": 0.7, "top_p": 0.95, "max_tokens": 512}},
        "models": models,
    }


def make_board(root: Path, n_questions: int | None, n_runs: int, rounds: int) -> Path:
    """Write a synthetic board into ``root`` (``n_questions=None`` keeps the demo's 48 questions)."""
    copy_demo(root)
    shutil.rmtree(root / "submissions")
    bench = root / "data" / "benchmarks" / BENCHMARK
    if n_questions is not None:
        lines = "".join(json.dumps(q) + "\n" for q in synthetic_questions(n_questions))
        (bench / "questions.jsonl").write_text(lines, "utf-8")
    (bench / "human_labels.csv").unlink(missing_ok=True)
    add_runs(root, n_runs, rounds)
    return root


def add_runs(root: Path, n_runs: int, rounds: int, first: int = 0) -> list[Path]:
    """Simulate runs ``first`` … ``first + n_runs - 1`` into ``submissions/`` (other runs stay)."""
    bench = root / "data" / "benchmarks" / BENCHMARK
    (bench / "simulated_models.yaml").write_text(yaml.safe_dump(models_yaml(n_runs, rounds, first=first)), "utf-8")
    return simulate_benchmark(root, BENCHMARK, seed=SIMULATION_SEED)


def add_pull_request_run(root: Path, rounds: int, chars: tuple[int, int]) -> list[Path]:
    """Add one padded simulated run as a pull request adds one: only its folder is new.

    The simulator's settings, which :func:`add_runs` rewrites under ``data/``, are put back byte for
    byte with their times, so a rebuild sees ``data/`` unchanged and redoes only the new run's work.
    """
    settings = root / "data" / "benchmarks" / BENCHMARK / "simulated_models.yaml"
    kept = settings.read_bytes() if settings.exists() else None
    times = settings.stat() if settings.exists() else None
    runs = len(list(root.glob("submissions/*/*/predictions.jsonl")))
    added = add_runs(root, 1, rounds, first=runs)
    pad_responses(added, *chars)
    if kept is None:
        settings.unlink(missing_ok=True)
    else:
        settings.write_bytes(kept)
        os.utime(settings, ns=(times.st_atime_ns, times.st_mtime_ns))
    return added


def pad_responses(run_dirs: list[Path], min_chars: int, max_chars: int, seed: int = 3) -> int:
    """Lengthen each response to a length drawn uniformly from [min_chars, max_chars]; return bytes written."""
    written = 0
    for run_dir in run_dirs:
        rng = np.random.default_rng([seed, *run_dir.name.encode()])
        path = run_dir / "predictions.jsonl"
        rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
        targets = rng.integers(min_chars, max_chars + 1, size=len(rows))
        for row, target in zip(rows, targets):
            need = int(target) - len(row["response"])
            if need > 0:
                row["response"] = padding(rng, need) + row["response"]
        data = "".join(json.dumps(row) + "\n" for row in rows)
        path.write_text(data, "utf-8")
        written += len(data.encode())
    return written
