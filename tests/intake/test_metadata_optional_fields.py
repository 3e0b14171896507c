"""The optional model metadata of the contract (deployment, parameters_billions, weights, model_license,
model_url, harness): old runs stay valid, good values pass, bad ones are findings naming the file and field.
`dualboard validate` runs as a subprocess, as CI runs it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from dualboard.intake.schemas import load_schema
from tests.conftest import tiny_metadata, write_run

REPO = Path(__file__).resolve().parents[2]
OPTIONAL = {"deployment", "parameters_billions", "weights", "model_license", "model_url", "harness"}
GOOD = {
    "deployment": "Meta-Llama-3-1-405B-Instruct-jjo_eastus_models_ai_azure_com",
    "parameters_billions": 46.7,
    "weights": "closed",
    "model_license": "Llama 3.1 Community License",
    "model_url": "https://huggingface.co/meta-llama/Llama-3.1-405B-Instruct?tab=card#usage",
    "harness": {
        "name": "Inspect AI",
        "version": "0.3.285",
        "task": "tiny",
        "score": "judge",
        "metric": "accuracy",
        "reported": 0.5,
        "reducer": "mean",
    },
}


def validate(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dualboard", "validate", "--root", str(root)], capture_output=True, text=True, cwd=REPO
    )


def test_the_fields_are_optional_and_documented():
    schema = load_schema("metadata")
    assert OPTIONAL <= set(schema["properties"]) and not OPTIONAL & set(schema["required"])
    for name in OPTIONAL:
        assert "Optional" in schema["properties"][name]["description"], name


def test_runs_without_them_stay_valid_and_runs_with_them_are_valid(tiny_root):
    write_run(tiny_root, "run-with-facts", metadata=tiny_metadata(**GOOD))  # run-a has none of them
    proc = validate(tiny_root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 runs" in proc.stdout


BAD = [
    ("model_url", "javascript:alert(1)"),
    ("model_url", "http://example.org/"),
    ("model_url", 'https://example.org/"><script>'),
    ("model_url", "https://example.org/a b"),
    ("weights", "maybe"),
    ("parameters_billions", 0),
    ("parameters_billions", "70B"),
    ("model_license", ""),
    ("deployment", "x" * 201),
    ("harness", {**GOOD["harness"], "reported": 50}),
    ("harness", {**GOOD["harness"], "name": "my-harness"}),
]


def test_every_bad_value_is_a_finding_naming_file_and_field(tiny_root):
    """One run per bad value, one validate pass: each is reported with its line, the good run-a is not."""
    for i, (field, value) in enumerate(BAD):
        write_run(tiny_root, f"run-bad-{i}", metadata=tiny_metadata(**{field: value}))
    proc = validate(tiny_root)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    for i, (field, _) in enumerate(BAD):
        assert re.search(rf"submissions/tiny/run-bad-{i}/metadata\.yaml:\d+: {field}(\.\w+)?: ", output), (
            field,
            output,
        )
    assert "run-a/" not in output
