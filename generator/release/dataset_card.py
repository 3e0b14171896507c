"""The dataset card (README.md) of a release: one card for the release folder and the Hub dataset.

Its ``configs:`` front matter names one config per table of the release
(``scored``, the default, ``verdicts``, ``answers``), each with the single
split ``train`` (the Hub's default, which its dataset viewer expects), so
``datasets.load_dataset`` reads the same rows from the release folder and from
the Hub dataset at the release tag. Benchmarks and run ids stay in columns.
On the Hub the release lies under ``releases/VERSION/``, so the card at the
dataset's root carries that prefix in its paths (:func:`dataset_card`'s
``prefix``); the card inside the folder has none.
"""

from __future__ import annotations

from typing import Any

import yaml

from generator.release.layout import SHARD_LIMIT, STATS, TABLES, hub_folder, table_of
from generator.store.base import BENCHMARKS, RUNS, VERDICTS
SCORED_COLUMNS = {
    "benchmark": "Benchmark name.",
    "run_id": "Run identifier (submission folder).",
    "model": "Model name as submitted.",
    "question_id": "Question identifier.",
    "category": "Question category.",
    "question_type": "multiple_choice or open.",
    "round": "Sampling round (0-based).",
    "traditional": "Score under the benchmark's traditional grading, 0–100.",
    "answer_key": "Score under strict answer-key grading, 0 or 100; empty when no verdict.",
    "traditional_grader": "Grader that produced the traditional score.",
    "answer_key_grader": "Grader that produced the answer-key score.",
    "verdict_parse": "How the verdict was read: ok, recovered or none.",
}


def dataset_card(manifest: dict[str, Any], files: list[str], *, prefix: str = "") -> str:
    """README.md for a release whose folder holds ``files`` (release-relative paths).

    ``prefix`` is where the release folder lies relative to the card: empty
    inside the folder, ``releases/VERSION/`` at the root of the Hub dataset.
    """
    tables = [t for t in TABLES if any(table_of(name) == t for name in files)]
    front = {
        "configs": [{"config_name": t, **({"default": True} if t == "scored" else {}),
                     "data_files": [{"split": "train", "path": f"{prefix}{t}/*.parquet"}]} for t in tables],
        "tags": ["leaderboard", "llm-evaluation", "dualboard"],
        "pretty_name": f"Dualboard release {manifest['version']}",
    }
    version = manifest["version"]
    rows = "\n".join(f"| `{name}` | {meaning} |" for name, meaning in SCORED_COLUMNS.items())
    benchmarks = "\n".join(f"- `{name}` (version {info['version']}): {len(info['runs'])} runs"
                           for name, info in sorted(manifest["benchmarks"].items()))
    hub = manifest.get("hub_dataset")
    source = f'"{hub}"' if hub else '"path/to/the/release/folder"'
    revision = f', revision="{version}"' if hub else ""
    loads = "\n".join(f'{t} = datasets.load_dataset({source}, "{t}"{revision}, split="train")' for t in tables)
    return (
        "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n"
        f"# Dualboard release {version}\n\n"
        f"Released {manifest['released']} by dualboard {manifest['generator_version']} "
        f"from store revision {manifest['store_revision']}.\n\n{benchmarks}\n\n"
        "Every model answer scored under two gradings: the benchmark's traditional grading and strict "
        "answer-key grading against human answer keys.\n\n"
        f"```python\nimport datasets\n{loads}\n```\n\n"
        "The same lines read the release folder (`releases/" + version + "/`) once downloaded.\n\n"
        "## Files\n\n"
        "- `scored/<benchmark>.parquet` (and `.csv`): one row per run × question × round.\n"
        "- `verdicts/<benchmark>.parquet` (and `.csv`): one row per answer × grader (score, parse, detail), so anyone "
        "can audit or rebuild a release without calling a model again.\n"
        "- `answers/<benchmark>.parquet` (and `.csv`), when present: the prompts and responses with both verdicts.\n"
        f"- `{STATS}/<benchmark>/*.csv`: the statistics tables (column meanings on the site's methodology page).\n"
        "- `manifest.json`: content hashes of benchmarks and runs, graders with versions and config hashes.\n"
        "- `SHA256SUMS`: checksums of every other file (`sha256sum -c SHA256SUMS`).\n\n"
        f"A table too large for one file under {SHARD_LIMIT // 1000**2} MB comes in parts, "
        "`<benchmark>-00000-of-00003.parquet` and so on; the configs read them all.\n\n"
        "In the CSV files a text cell that a spreadsheet would run as a formula (such as `=SUM(A1)`) carries a "
        "leading `'`; the Parquet files hold the values as submitted.\n\n"
        "## On the Hub\n\n"
        f"`dualboard publish` puts this folder unchanged under `{hub_folder(version)}` of the dataset, with this "
        "card (its paths prefixed) at the root, and tags the commit with the release name. Next to it lie the "
        f"store: `{BENCHMARKS}/` and `{RUNS}/` as submitted, and the grader verdict cache under `{VERDICTS}/` "
        "(at the root, apart from each release's `verdicts/` tables).\n\n"
        "## Columns of the scored answers\n\n| Column | Meaning |\n|---|---|\n" + rows + "\n"
    )
