"""The dataset card (README.md) of a release folder.

Its ``configs:`` front matter lets ``datasets.load_dataset(<release folder>)``
(or the Hub repo) find the Parquet files: the default config is the scored
answers, one row per run × question × round, with the benchmark in a column
(split names cannot hold hyphens, so run ids and benchmarks stay in columns).
"""

from __future__ import annotations

from typing import Any

import yaml

from generator.scored_files import SCORED, TABLES
from generator.stats.kappa import PASS_MARK

ANSWERS_QUERY = """\
-- answers the traditional grading passed and the answer key failed
SELECT benchmark, run_id, question_id, round, traditional, answer_key, key_answer, response
FROM '{path}'
WHERE traditional >= {mark:g} AND answer_key < {mark:g}
ORDER BY benchmark, run_id, question_id, round;
"""
"""The DuckDB query the card and the README show; a pass is a score of at least the mark agreement.csv uses."""


def column_tables() -> str:
    """Every column of the three tables with its type and meaning, one Markdown table each."""
    parts = []
    for table in TABLES:
        rows = "\n".join(f"| `{c.name}` | {c.dtype} | {c.meaning} |" for c in table.columns)
        parts.append(f"### `{table.name}/<benchmark>.parquet`: {table.rows}\n\n"
                     f"| Column | Type | Meaning |\n|---|---|---|\n{rows}\n")
    return "\n".join(parts)


def duckdb_text(hub_dataset: str | None, version: str) -> str:
    """How to query the Parquet files in place with DuckDB, on disk and on the Hub."""
    hub = hub_dataset or "ORG/NAME"
    return (
        "## Query without downloading\n\n"
        "[DuckDB](https://duckdb.org) runs SQL over the Parquet files where they lie. In this folder:\n\n"
        f"```sql\n{ANSWERS_QUERY.format(path='answers/*.parquet', mark=PASS_MARK)}```\n\n"
        f"On the Hugging Face Hub, at this release's tag, the same query reads "
        f"`FROM 'hf://datasets/{hub}@{version}/answers/*.parquet'` and fetches only the columns and row "
        "groups it needs (DuckDB reads `hf://` paths from huggingface.co only). Each file says which store "
        "revision it was graded from:\n\n"
        "```sql\nSELECT file_name, decode(value) FROM parquet_kv_metadata('scored/*.parquet');\n```\n"
    )


def dataset_card(manifest: dict[str, Any]) -> str:
    """README.md with ``configs:`` for the scored answers (default), the answers with their text and the verdicts."""
    front = {
        "configs": [{"config_name": t.name, **({"default": True} if t is SCORED else {}),
                     "data_files": [{"split": "train", "path": f"{t.name}/*.parquet"}]} for t in TABLES],
        "tags": ["leaderboard", "llm-evaluation", "dualboard"],
        "pretty_name": f"Dualboard release {manifest['version']}",
    }
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
        "answers = datasets.load_dataset(\"path/to/this/folder\", \"answers\")[\"train\"]\n"
        "verdicts = datasets.load_dataset(\"path/to/this/folder\", \"verdicts\")[\"train\"]\n```\n\n"
        "## Files\n\n"
        "- `scored/<benchmark>.parquet` and `csv/<benchmark>.csv`: one row per run × question × round.\n"
        "- `answers/<benchmark>.parquet` and `csv/<benchmark>.answers.csv`: the same rows with the prompt, "
        "the answer key and the model's response.\n"
        "- `verdicts/<benchmark>.parquet`: one row per answer × grader (score, parse, detail), so anyone can "
        "audit or rebuild a release without calling a model again.\n"
        "- `stats/<benchmark>/*.csv`: the statistics tables (column meanings on the site's methodology page).\n"
        "- `manifest.json`: content hashes of benchmarks and runs, graders with versions and config hashes.\n"
        "- `SHA256SUMS`: checksums of every other file (`sha256sum -c SHA256SUMS`).\n\n"
        "In the CSV files a text cell that a spreadsheet would run as a formula (such as `=SUM(A1)`) carries a "
        "leading `'`; the Parquet files hold the values as submitted.\n\n"
        + duckdb_text(manifest.get("hub_dataset"), manifest["version"])
        + "\n## Columns\n\n" + column_tables()
    )
