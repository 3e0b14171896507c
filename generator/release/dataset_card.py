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

from dualboard.release_files import SHARD_LIMIT, STATS, hub_folder, table_of
from dualboard.scored_files import SCORED, TABLES
from dualboard.stats.kappa import PASS_MARK
from dualboard.store.base import BENCHMARKS, RUNS
from dualboard.store.verdicts import VERDICTS

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
        parts.append(
            f"### `{table.name}/<benchmark>.parquet`: {table.rows}\n\n"
            f"| Column | Type | Meaning |\n|---|---|---|\n{rows}\n"
        )
    return "\n".join(parts)


def duckdb_text(hub_dataset: str | None, version: str) -> str:
    """How to query the Parquet files in place with DuckDB, on disk and on the Hub (under ``releases/VERSION/``)."""
    hub = hub_dataset or "ORG/NAME"
    return (
        "## Query without downloading\n\n"
        "[DuckDB](https://duckdb.org) runs SQL over the Parquet files where they lie. In this folder:\n\n"
        f"```sql\n{ANSWERS_QUERY.format(path='answers/*.parquet', mark=PASS_MARK)}```\n\n"
        f"On the Hugging Face Hub, at this release's tag, the same query reads "
        f"`FROM 'hf://datasets/{hub}@{version}/{hub_folder(version)}answers/*.parquet'` and fetches only the "
        "columns and row groups it needs (DuckDB reads `hf://` paths from huggingface.co only). Each file says "
        "which store revision it was graded from:\n\n"
        "```sql\nSELECT file_name, decode(value) FROM parquet_kv_metadata('scored/*.parquet');\n```\n"
    )


def dataset_card(manifest: dict[str, Any], files: list[str], *, prefix: str = "") -> str:
    """README.md for a release whose folder holds ``files`` (release-relative paths).

    ``prefix`` is where the release folder lies relative to the card: empty
    inside the folder, ``releases/VERSION/`` at the root of the Hub dataset.
    A config is listed for each table the folder holds Parquet files of.
    """
    tables = [t.name for t in TABLES if any(table_of(name) == t.name for name in files)]
    front = {
        "configs": [
            {
                "config_name": t,
                **({"default": True} if t == SCORED.name else {}),
                "data_files": [{"split": "train", "path": f"{prefix}{t}/*.parquet"}],
            }
            for t in tables
        ],
        "tags": ["leaderboard", "llm-evaluation", "dualboard"],
        "pretty_name": f"Dualboard release {manifest['version']}",
    }
    version = manifest["version"]
    benchmarks = "\n".join(
        f"- `{name}` (version {info['version']}): {len(info['runs'])} runs"
        for name, info in sorted(manifest["benchmarks"].items())
    )
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
        + (
            "The same lines read a downloaded copy of this folder: pass its path instead, and no revision.\n\n"
            if hub
            else ""
        )
        + "## Files\n\n"
        "- `scored/<benchmark>.parquet` (and `.csv`): one row per run × question × round.\n"
        "- `answers/<benchmark>.parquet` (and `.csv`): the same rows with the prompt, the answer key and the model's "
        "response.\n"
        "- `verdicts/<benchmark>.parquet` (and `.csv`): one row per answer × grader (score, parse, detail), so anyone "
        "can audit or rebuild a release without calling a model again.\n"
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
        + duckdb_text(manifest.get("hub_dataset"), version)
        + "\n## Columns\n\n"
        + column_tables()
    )
