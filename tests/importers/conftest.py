"""Fixtures of the importer tests: the real releases imported once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from dualboard.importers import import_autogenai
from tests.importers.import_fixtures import MC_RELEASE, OPEN_RELEASE, real_data


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
