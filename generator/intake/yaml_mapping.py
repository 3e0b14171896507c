"""Read a trusted YAML configuration file that must hold a mapping.

For files the project itself keeps (benchmark.yaml, simulated_models.yaml);
submitted metadata.yaml goes through the size-limited reader in validate.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from generator.errors import Finding, InvalidInputError


def read_yaml_mapping(path: Path, *, example: str) -> dict[str, Any]:
    """Return the mapping in ``path``; raise InvalidInputError saying how to fix it.

    ``example`` names a file to copy from when this one is missing.
    """
    if not path.is_file():
        raise InvalidInputError([Finding(str(path), None, "-", "file is missing", f"create it (see {example} for an example)")])
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InvalidInputError([Finding(str(path), None, "-", f"not valid UTF-8 YAML: {exc}", "fix the syntax")]) from exc
    if not isinstance(data, dict):
        raise InvalidInputError([Finding(str(path), None, "-", "expected a mapping at the top level", "write key: value pairs")])
    return data
