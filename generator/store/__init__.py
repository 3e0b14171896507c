"""The store: where accepted runs live (a local folder, or a Hub dataset).

Both stores hold the same logical tree::

    benchmarks/<benchmark>/benchmark.yaml, questions.jsonl[, human_labels.csv]
    runs/<benchmark>/<run_id>/predictions.jsonl, metadata.yaml
    verdicts/<grader>/<shard>.parquet     (the grading stage's verdict cache)
"""

from generator.store.base import IngestResult, Store
from generator.store.local import LocalStore

__all__ = ["IngestResult", "LocalStore", "Store"]
