"""Fixtures of the statistics tests."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.stats.stats_builders import simulated_runs


@pytest.fixture
def three_runs() -> pd.DataFrame:
    return simulated_runs({"a": (0.9, 0.7), "b": (0.6, 0.5), "c": (0.3, 0.3)}, 40, 3)
