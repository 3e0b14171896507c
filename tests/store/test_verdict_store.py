"""The verdict cache goes through the Store: every store kind keeps verdicts, none writes into a snapshot.

Contract tests run against the local store, the Hub store and the staged Hub
store (the Hub is tests/store/hub_server.py on 127.0.0.1); a writer killed
mid-part runs in a subprocess killed with SIGKILL.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pandas as pd
import pytest

from dualboard.grading import VerdictCache
from dualboard.grading.rules import RulesGrader
from dualboard.grading.verdict import Verdict
from dualboard.intake.benchmark import load_benchmarks
from dualboard.store import LocalStore
from dualboard.store.staged import StagedHubStore
from dualboard.store.verdicts import PART_COLUMNS, VerdictPartError, VerdictWriteError, part_folder, part_paths
from tests.conftest import REPO, tree_bytes, write_run
from tests.store.conftest import make_hub_store


@pytest.fixture(params=["local", "hub", "staged"])
def store(request, tiny_root, tmp_path):
    """Each store kind, holding run-a."""
    if request.param == "local":
        store = LocalStore(tmp_path / "store")
    else:
        hub = make_hub_store(request.getfixturevalue("hub_server"), tmp_path)
        store = hub if request.param == "hub" else StagedHubStore(hub, tmp_path / "hub-pending")
    store.ingest([tiny_root / "submissions" / "tiny" / "run-a"], load_benchmarks(tiny_root / "data"))
    return store


def _verdicts(n: int, tag: str = "") -> dict[str, Verdict]:
    return {f"key-{tag}{i:04d}": Verdict(float(100 * (i % 2)), "ok", f"detail {tag}{i}") for i in range(n)}


@pytest.mark.slow
def test_saved_verdicts_are_read_back_and_the_snapshot_stays_as_read(store):
    grader, snapshot, revision = RulesGrader(), store.snapshot(), store.revision()
    before = tree_bytes(snapshot)
    VerdictCache(store).store(grader, _verdicts(5))
    assert tree_bytes(snapshot) == before, "no verdict was written into the snapshot"
    assert store.snapshot() == snapshot and store.revision() == revision, "verdicts never change the revision"
    again = VerdictCache(store).lookup(grader, [*_verdicts(5), "key-unknown"])
    assert again == _verdicts(5), "a new cache over the same store finds every verdict, and only those"
    frame = store.load_verdicts(grader.name, grader.config_hash)
    assert list(frame.columns) == list(PART_COLUMNS) and len(frame) == 5


@pytest.mark.slow
def test_parts_are_append_only_and_content_addressed(store):
    grader = RulesGrader()
    path = VerdictCache(store).store(grader, _verdicts(3))
    written = path.read_bytes()
    assert VerdictCache(store).store(grader, _verdicts(3)) is None, "nothing new, nothing written"
    frame = pd.DataFrame(
        {
            "key": list(_verdicts(3)),
            "score": 0.0,
            "verdict_parse": "none",
            "detail": "other",
            "grader": grader.name,
            "grader_version": grader.version,
            "config_hash": grader.config_hash,
        }
    )
    assert store.save_verdicts(grader.name, grader.config_hash, frame) is None, "same keys, other verdicts: same part"
    assert path.read_bytes() == written, "a part is never replaced"
    VerdictCache(store).store(grader, _verdicts(2, tag="b"))
    assert len(part_paths(store.verdict_root())) == 2


def test_a_writer_racing_past_the_existence_check_does_not_replace_the_part(tmp_path, monkeypatch):
    store, grader = LocalStore(tmp_path), RulesGrader()
    first = VerdictCache(store).store(grader, _verdicts(3))
    written = first.read_bytes()
    frame = store.load_verdicts(grader.name, grader.config_hash).assign(detail="judged again, differently")
    monkeypatch.setattr(type(first), "exists", lambda path: False)  # as if both writers checked at once
    assert store.save_verdicts(grader.name, grader.config_hash, frame) is None
    assert first.read_bytes() == written and [p.name for p in first.parent.iterdir()] == [first.name], "no leftover"


def test_a_refused_write_says_where_and_what_to_do(tmp_path):
    store, grader = LocalStore(tmp_path), RulesGrader()
    (tmp_path / "verdicts").write_text("a file where the verdict folder belongs")
    with pytest.raises(VerdictWriteError, match=r"verdicts/rules/[0-9a-f]+: saving verdicts failed .* free disk space"):
        VerdictCache(store).store(grader, _verdicts(2))


def test_a_part_of_another_shape_is_refused_by_name(store):
    grader = RulesGrader()
    folder = part_folder(store.verdict_root(), grader.name, grader.config_hash)
    folder.mkdir(parents=True)
    (folder / "part-truncated.parquet").write_bytes(b"PAR1\x00\x01")
    with pytest.raises(VerdictPartError, match=r"part-truncated\.parquet: not a readable verdict part .*delete it"):
        VerdictCache(store).lookup(grader, ["k"])


def test_a_second_store_object_on_the_same_folders_reads_what_the_first_saved(tiny_root, hub_server, tmp_path):
    hub = make_hub_store(hub_server, tmp_path)
    staged = StagedHubStore(hub, tmp_path / "hub-pending")
    staged.ingest([tiny_root / "submissions" / "tiny" / "run-a"], load_benchmarks(tiny_root / "data"))
    VerdictCache(staged).store(RulesGrader(), _verdicts(4))
    fresh = StagedHubStore(make_hub_store(hub_server, tmp_path), tmp_path / "hub-pending")
    assert len(VerdictCache(fresh).lookup(RulesGrader(), list(_verdicts(4)))) == 4
    assert [f.path.split("/")[:2] for f in fresh.pending_files() if f.path.startswith("verdicts/")] == [
        ["verdicts", "rules"]
    ]


def test_restaging_keeps_the_verdicts_for_the_same_dataset_only(tiny_root, hub_server, tmp_path):
    from dualboard.store.hub import HubStore
    from tests.store.conftest import FAST

    def staged(repo):
        hub = HubStore(repo, endpoint=hub_server.endpoint, cache_dir=tmp_path / "hub-cache", backoff=FAST)
        return StagedHubStore(hub, tmp_path / "hub-pending")

    benchmarks = load_benchmarks(tiny_root / "data")
    run_a, run_b = tiny_root / "submissions" / "tiny" / "run-a", write_run(tiny_root, "run-b")
    store = staged("org/private-one")
    store.ingest([run_a], benchmarks)
    VerdictCache(store).store(RulesGrader(), _verdicts(3))
    store.ingest([run_a, run_b], benchmarks)  # a run merged later: a new overlay on the same dataset
    assert len(VerdictCache(store).lookup(RulesGrader(), list(_verdicts(3)))) == 3
    other = staged("org/public-two")
    other.ingest([run_a], benchmarks)  # the overlay now stages for another dataset
    assert VerdictCache(other).lookup(RulesGrader(), list(_verdicts(3))) == {}
    assert not [f for f in other.pending_files() if f.path.startswith("verdicts/")], "nothing of the first dataset's"


WRITER = """
import sys, pathlib
from dualboard.grading import VerdictCache
from dualboard.grading.rules import RulesGrader
from dualboard.grading.verdict import Verdict
from dualboard.store import LocalStore
cache, grader = VerdictCache(LocalStore(pathlib.Path(sys.argv[1]))), RulesGrader()
print("ready", flush=True)
for batch in range(10**6):
    cache.store(grader, {f"{batch}-{i}": Verdict(100.0, "ok", "x" * 200) for i in range(20000)})
"""


def _kill_at_new_file(root, nth: int) -> None:
    """Start the writer and SIGKILL it the moment the ``nth`` new file name appears under ``root``: mid-write."""
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root)], cwd=REPO, stdout=subprocess.PIPE)
    assert writer.stdout.readline() == b"ready\n"
    seen = {p for p in root.rglob("*") if p.is_file()} if root.exists() else set()
    new: set = set()
    while len(new) < nth:
        assert writer.poll() is None, "the writer stopped by itself"
        new |= {p for p in root.rglob("*") if p.is_file()} - seen if root.exists() else set()
    writer.send_signal(signal.SIGKILL)
    writer.wait()


@pytest.mark.slow
def test_a_writer_killed_mid_part_leaves_only_readable_parts(tmp_path):
    root = tmp_path / "store"
    for nth in (1, 2, 3):
        _kill_at_new_file(root, nth)
    store, grader = LocalStore(root), RulesGrader()
    frame = store.load_verdicts(grader.name, grader.config_hash)
    assert len(frame) == 20000 * len(part_paths(root)), "every part reads whole"
    VerdictCache(store).store(grader, _verdicts(3))
    assert len(VerdictCache(store).lookup(grader, [*frame["key"], *_verdicts(3)])) == len(frame) + 3


@pytest.mark.slow
def test_publish_pushes_the_staged_verdicts_never_the_local_stores(tiny_root, hub_server):
    from click.testing import CliRunner

    from dualboard.cli import main
    from tests.conftest import GIT_ENV, git_repository
    from tests.store.conftest import TOKEN

    local = LocalStore(tiny_root / ".dualboard" / "store")
    VerdictCache(local).store(RulesGrader(), _verdicts(2, tag="local-only"))
    [local_part] = part_paths(local.verdict_root())
    hub = ["--hub", "dualboard/tiny-published", "--hub-endpoint", hub_server.endpoint]
    git_repository(tiny_root)  # `release` deploys its site with mike
    for command in (
        ["build", "--stage", "--no-progress"],
        ["release", "v1", "--stage"],
        ["publish", "--release", "v1"],
    ):
        env = {"HF_TOKEN": TOKEN if command[0] == "publish" else None, **GIT_ENV}
        result = CliRunner(env=env).invoke(main, [command[0], "--root", str(tiny_root), *hub, *command[1:]])
        assert result.exit_code == 0, result.output
    published = {
        p for p in hub_server.repos["dualboard/tiny-published"].resolve("v1").files if p.startswith("verdicts/")
    }
    assert {p.split("/")[1] for p in published} == {"mc_letter", "rules"}, "the staged grade's verdicts"
    assert local_part.name not in {p.rsplit("/", 1)[1] for p in published}, "nothing from the local store"
