"""Store fixtures: a Hub-compatible test server, and every store kind for contract tests."""

from __future__ import annotations

import pytest

from dualboard.store import LocalStore
from dualboard.store.hub import Backoff, HubStore
from tests.store.hub_server import HubServer

TOKEN = "hf_test_token"
FAST = Backoff(attempts=4, first_wait_s=0.01, max_wait_s=0.05)


@pytest.fixture
def hub_server():
    """The in-memory Hub on 127.0.0.1:<free port> (tests only; see tests/store/hub_server.py)."""
    server = HubServer(token=TOKEN).start()
    yield server
    server.stop()


def make_hub_store(server: HubServer, tmp_path, **kwargs) -> HubStore:
    return HubStore(
        "dualboard/tiny-store",
        endpoint=server.endpoint,
        token=TOKEN,
        cache_dir=tmp_path / "hub-cache",
        backoff=FAST,
        **kwargs,
    )


@pytest.fixture(params=["local", "hub"])
def store(request, tmp_path):
    """Each store kind in turn: the same contract tests run against both."""
    if request.param == "local":
        return LocalStore(tmp_path / "store")
    server = request.getfixturevalue("hub_server")
    return make_hub_store(server, tmp_path)
