"""Fixtures of the importer tests: the real releases imported once per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from import_fixtures import MC_RELEASE, OPEN_RELEASE, real_data  # noqa: E402

from generator.intake.importers import import_autogenai  # noqa: E402


@pytest.fixture(scope="session")
def imported_mc(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("mc")
    import_autogenai(real_data() / MC_RELEASE, benchmark="easy-problems-mc", dest=dest)
    return dest


@pytest.fixture(scope="session")
def imported_open(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("open")
    import_autogenai(real_data() / OPEN_RELEASE, benchmark="easy-problems-open", dest=dest)
    return dest
