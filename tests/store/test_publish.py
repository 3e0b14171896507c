"""`dualboard publish`: scored Parquet, verdict cache and a dataset card that `datasets` can load, then a tag."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner
from huggingface_hub import snapshot_download

from generator.cli import main
from generator.errors import DualboardError
from generator.intake.benchmark import load_benchmarks
from generator.project import Project
from generator.store import LocalStore
from generator.store.publish import check_split_names, dataset_card

from tests.store.conftest import TOKEN

REPO = "dualboard/tiny-results"


def _scored(root):
    scored = root / "build" / "scored"
    scored.mkdir(parents=True)
    pd.DataFrame({"benchmark": ["tiny"] * 2, "run_id": ["run-a", "run-b"], "model": ["m1", "m2"],
                  "question_id": ["q1", "q1"], "category": ["c", "c"], "round": [0, 0],
                  "traditional": [100.0, 0.0], "answer_key": [100.0, 0.0]}).to_parquet(scored / "tiny.parquet")
    pd.DataFrame({"key": ["k1"], "verdict": [1]}).to_parquet(scored / "tiny.verdicts.parquet")
    return scored


def _publish(root, server, *args):
    env = {"HF_TOKEN": TOKEN, "DUALBOARD_HUB_ENDPOINT": server.endpoint}
    return CliRunner(env=env).invoke(main, ["publish", "--root", str(root), "--hub", REPO, *args])


def test_publish_pushes_card_tables_verdict_cache_and_tag(tiny_root, hub_server, tmp_path):
    _scored(tiny_root)
    local = LocalStore(Project(tiny_root).store_dir)
    local.ingest([tiny_root / "submissions" / "tiny" / "run-a"], load_benchmarks(tiny_root / "data"))
    cached = local.snapshot() / "verdicts" / "rules" / "ab12.parquet"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"cached verdicts")
    result = _publish(tiny_root, hub_server, "--release", "2026.1")
    assert result.exit_code == 0, result.output
    repo = hub_server.repos[REPO]
    tagged = repo.resolve("2026.1")
    assert tagged is not None and tagged.oid == repo.branches["main"]
    assert {"README.md", "scored/tiny.parquet", "scored/tiny.verdicts.parquet"} <= set(tagged.files)
    assert tagged.files["verdicts/rules/ab12.parquet"] == b"cached verdicts"
    assert "tagged 2026.1" in result.output
    assert hub_server.calls_to("validate_yaml") == 1, "the card passed the Hub's metadata check"


def test_published_release_loads_with_datasets(tiny_root, hub_server, tmp_path):
    datasets = pytest.importorskip("datasets")
    _scored(tiny_root)
    assert _publish(tiny_root, hub_server, "--release", "v1").exit_code == 0
    local = snapshot_download(REPO, repo_type="dataset", revision="v1", endpoint=hub_server.endpoint,
                              token=TOKEN, local_dir=tmp_path / "release")
    scored = datasets.load_dataset(local, "tiny", split="scored")
    assert scored.num_rows == 2 and scored["run_id"] == ["run-a", "run-b"]
    verdicts = datasets.load_dataset(local, "tiny_verdicts", split="scored")
    assert verdicts.num_rows == 1


def test_release_is_frozen(tiny_root, hub_server):
    _scored(tiny_root)
    assert _publish(tiny_root, hub_server, "--release", "v1").exit_code == 0
    again = _publish(tiny_root, hub_server, "--release", "v1")
    assert again.exit_code == 1
    assert "release 'v1' already exists" in again.output


def test_publish_without_hub_or_scored_data_says_what_to_do(tiny_root, hub_server):
    no_hub = CliRunner().invoke(main, ["publish", "--root", str(tiny_root), "--release", "v1"])
    assert no_hub.exit_code == 2 and "publish needs --hub ORG/NAME" in no_hub.output
    nothing = _publish(tiny_root, hub_server, "--release", "v1")
    assert nothing.exit_code == 1 and "run `dualboard grade`" in nothing.output
    bad = _publish(tiny_root, hub_server, "--release", "../v1")
    assert bad.exit_code == 1 and "not a valid tag" in bad.output


def test_card_configs_and_split_names():
    card = dataset_card("o/n", "v1", ["my-bench.parquet", "my-bench.verdicts.parquet"])
    assert "config_name: my-bench\n" in card and "config_name: my-bench_verdicts" in card and "split: scored" in card
    check_split_names([{"config_name": "a", "data_files": [{"split": "scored.v1", "path": "p"}]}])
    with pytest.raises(DualboardError, match="split name 'run-a' does not match"):
        check_split_names([{"config_name": "a", "data_files": [{"split": "run-a", "path": "p"}]}])


def test_hub_refusing_the_card_changes_nothing(tiny_root, hub_server, tmp_path):
    from generator.store.base import StagedFile
    from tests.store.conftest import make_hub_store

    store = make_hub_store(hub_server, tmp_path)
    head = store.head(create=True)
    card = b"---\nconfigs:\n- config_name: tiny\n  data_files:\n  - split: run-a\n    path: scored/tiny.parquet\n---\n"
    with pytest.raises(DualboardError, match=r"(?s)the Hub refused the commit before any upload.*split name 'run-a'"):
        store.commit([StagedFile("README.md", card)], "bad card", parent=head)
    assert store.head() == head and hub_server.calls_to("commit") == 0
