"""The dataset card (README.md) of a release folder.

Its ``configs:`` front matter lets ``datasets.load_dataset(<release folder>)``
(or the Hub repo) find the Parquet files: the default config is the scored
answers, one row per run × question × round, with the benchmark in a column
(split names cannot hold hyphens, so run ids and benchmarks stay in columns).
"""

from __future__ import annotations

from typing import Any

import yaml

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


def dataset_card(manifest: dict[str, Any]) -> str:
    """README.md with ``configs:`` for the scored answers (default) and the verdicts."""
    front = {
        "configs": [
            {"config_name": "scored", "default": True,
             "data_files": [{"split": "train", "path": "scored/*.parquet"}]},
            {"config_name": "verdicts", "data_files": [{"split": "train", "path": "verdicts/*.parquet"}]},
        ],
        "tags": ["leaderboard", "llm-evaluation", "dualboard"],
        "pretty_name": f"Dualboard release {manifest['version']}",
    }
    rows = "\n".join(f"| `{name}` | {meaning} |" for name, meaning in SCORED_COLUMNS.items())
    benchmarks = "\n".join(f"- `{name}` (version {info['version']}): {len(info['runs'])} runs"
                           for name, info in sorted(manifest["benchmarks"].items()))
    return (
        "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n"
        f"# Dualboard release {manifest['version']}\n\n"
        f"Released {manifest['released']} by dualboard {manifest['generator_version']} "
        f"from store revision {manifest['store_revision']}.\n\n{benchmarks}\n\n"
        "Every model answer scored under two gradings: the benchmark's traditional grading and strict "
        "answer-key grading against human answer keys.\n\n"
        "```python\nimport datasets\nscored = datasets.load_dataset(\"path/to/this/folder\")[\"train\"]\n"
        "verdicts = datasets.load_dataset(\"path/to/this/folder\", \"verdicts\")[\"train\"]\n```\n\n"
        "## Files\n\n"
        "- `scored/<benchmark>.parquet` and `csv/<benchmark>.csv`: one row per run × question × round.\n"
        "- `verdicts/<benchmark>.parquet`: one row per answer × grader (score, parse, detail), so anyone can "
        "audit or rebuild a release without calling a model again.\n"
        "- `stats/<benchmark>/*.csv`: the statistics tables (column meanings on the site's methodology page).\n"
        "- `manifest.json`: content hashes of benchmarks and runs, graders with versions and config hashes.\n"
        "- `SHA256SUMS`: checksums of every other file (`sha256sum -c SHA256SUMS`).\n\n"
        "In the CSV files a text cell that a spreadsheet would run as a formula (such as `=SUM(A1)`) carries a "
        "leading `'`; the Parquet files hold the values as submitted.\n\n"
        "## Columns of the scored answers\n\n| Column | Meaning |\n|---|---|\n" + rows + "\n"
    )
