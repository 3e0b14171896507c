"""Read a YAML configuration file that must hold a mapping.

For the files a leaderboard folder keeps (benchmark.yaml, simulated_models.yaml,
dualboard.yaml). A pull request can edit every one of them, so they are read
like a submission: never through a link, size-capped, and parsed strictly
(:func:`dualboard.intake.untrusted.parse_yaml`). Submitted metadata.yaml goes
through validate.py, which reports instead of raising.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from dualboard.errors import Finding, InvalidInputError
from dualboard.intake.untrusted import decode_utf8, parse_yaml, yaml_field_lines
from dualboard.safe_read import UnsafeFileError, read_regular

MAX_CONFIG_BYTES = 1024 * 1024
"""Largest configuration file read; real ones are a few KB."""


def read_yaml_mapping(path: Path, *, example: str, root: Path | None = None) -> dict[str, Any]:
    """Return the mapping in ``path``; raise InvalidInputError saying how to fix it.

    ``example`` names a file to copy from when this one is missing. ``root``
    is the trusted folder above it (default: the file's own folder): no
    component between the two may be a link.
    """
    return read_yaml_fields(path, example=example, root=root)[0]


def read_yaml_fields(
    path: Path, *, example: str, root: Path | None = None
) -> tuple[dict[str, Any], dict[str, int], str]:
    """:func:`read_yaml_mapping`, the line of every field (for findings about them; see ``yaml_field_lines``),
    and the sha256 of the bytes parsed (a store that keeps the file keeps these bytes or refuses)."""
    if not path.is_file() and not path.is_symlink():
        raise InvalidInputError(
            [Finding(str(path), None, "-", "file is missing", f"create it (see {example} for an example)")]
        )
    try:
        raw = read_regular(path, root=root or path.parent, limit=MAX_CONFIG_BYTES)
    except UnsafeFileError as exc:
        raise InvalidInputError([exc.finding()]) from exc
    data, text = parse_yaml_mapping(raw, str(path))
    return data, yaml_field_lines(text), hashlib.sha256(raw).hexdigest()


def parse_yaml_mapping(raw: bytes, file: str) -> tuple[dict[str, Any], str]:
    """The mapping in the YAML bytes ``raw`` and their text; raise InvalidInputError naming ``file``.

    For bytes read elsewhere than from a file, such as a git commit's dualboard.yaml.
    """
    if len(raw) > MAX_CONFIG_BYTES:
        raise InvalidInputError(
            [Finding(file, None, "-", f"larger than {MAX_CONFIG_BYTES} bytes", "keep the file short")]
        )
    text, problem = decode_utf8(raw, file)
    if problem is None:
        data, problem = parse_yaml(text, file)
    if problem is not None:
        raise InvalidInputError([problem])
    if not isinstance(data, dict):
        raise InvalidInputError(
            [Finding(file, 1, "-", "expected a mapping at the top level", "write key: value pairs")]
        )
    return data, text
