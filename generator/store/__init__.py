"""The store: where accepted runs live (a local folder, or a Hub dataset).

``LocalStore`` (here) is the embedded default; ``generator.store.hub.HubStore``
keeps the same tree in a Hugging Face Hub dataset (imported only when asked
for, since it loads huggingface_hub), and ``generator.store.publish`` pushes
releases to it.

Both stores hold the same logical tree::

    benchmarks/<benchmark>/benchmark.yaml, questions.jsonl[, human_labels.csv]
    runs/<benchmark>/<run_id>/predictions.jsonl, metadata.yaml
    verdicts/<grader>/<shard>.parquet     (the grading stage's verdict cache)
"""

from generator.store.base import IngestResult, Store
from generator.store.local import LocalStore

__all__ = ["IngestResult", "LocalStore", "Store"]
