"""The store: where accepted runs live (a local folder, or a Hub dataset).

``LocalStore`` (here) is the embedded default; ``dualboard.store.hub.HubStore``
keeps the same tree in a Hugging Face Hub dataset (imported only when asked
for, since it loads huggingface_hub); the release stage
(``dualboard.release.publish``) pushes releases to it.

Both stores hold the same logical tree::

    benchmarks/<benchmark>/benchmark.yaml, questions.jsonl[, human_labels.csv]
    runs/<benchmark>/<run_id>/predictions.jsonl, metadata.yaml
    verdicts/<grader>/<config_hash>/part-*.parquet   (the verdict cache, in the Hub dataset)

The verdict cache is content-addressed, so it is not tied to a revision: the
grading stage reads and adds verdicts through ``Store.load_verdicts`` and
``save_verdicts`` (layout: ``dualboard.store.verdicts``), never into a
snapshot, and never change a revision. The local store keeps them in
``<root>/verdicts/``; a Hub store saves them in ``.dualboard/hub-pending/`` for
the next commit, that of ``dualboard publish``.
"""

from dualboard.store.base import IngestResult, Store
from dualboard.store.local import LocalStore

__all__ = ["IngestResult", "LocalStore", "Store"]
