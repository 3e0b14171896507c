"""For every malformed release file, the autogenai importer answers with a DualboardError.

Hypothesis writes ``auto_eval_outputs/auto_eval-<model>.json`` files holding
broken JSON, wrong types, huge numbers and strings, control characters and
deep nesting, and calls :func:`plan_import` (what ``dualboard import
autogenai`` runs before writing anything). It may succeed or refuse with a
DualboardError naming the file; any other exception is a bug.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dualboard.errors import DualboardError
from dualboard.importers.autogenai import plan_import

EXAMPLES = 600
texts = st.text(max_size=30)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | texts
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3), max_leaves=8
)
record = st.fixed_dictionaries(
    {"model_answer": values, "score": values},
    optional={
        "index": values,
        "level_0": values,
        "multiple_choice": values,
        "correct_answer": values,
        "correct_letter": values,
        "question": values,
        "human_answer": values,
        "eval_response": values,
    },
)
keys = st.integers(min_value=-3, max_value=40).map(str) | texts
release_files = st.dictionaries(keys, record | values, max_size=5).map(json.dumps).map(str.encode) | st.binary(
    max_size=60
)


@pytest.fixture(scope="module")
def release():
    memory = Path("/dev/shm")
    root = Path(tempfile.mkdtemp(prefix="dualboard-import-", dir=memory if memory.is_dir() else None))
    folder = root / "2024-09-13-Multi-Benchmark" / "auto_eval_outputs"
    folder.mkdir(parents=True)
    yield folder
    shutil.rmtree(root)


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate],
)
@given(files=st.lists(release_files, min_size=1, max_size=2))
def test_malformed_releases_are_refused_cleanly(release, files):
    for old in release.glob("*.json"):
        old.unlink()
    for number, data in enumerate(files):
        (release / f"auto_eval-model-{number}.json").write_bytes(data)
    try:
        plan_import(release.parent, "easy")
    except DualboardError as exc:
        assert " — " in str(exc), f"the message must say the fix: {exc}"
