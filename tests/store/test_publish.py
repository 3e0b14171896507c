"""`dualboard publish`: staged runs, verdict cache, scored Parquet and a card in one commit, then a tag."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from huggingface_hub import snapshot_download

from generator.cli import main
from generator.errors import DualboardError
from generator.store.publish import check_split_names, dataset_card
from tests.conftest import write_run
from tests.store.conftest import TOKEN

REPO = "dualboard/tiny-results"


def stage(root, server, *commands: str) -> None:
    """Run ingest and grade as the CI build does: no token, changes kept in .dualboard/hub-pending/."""
    env = {"HF_TOKEN": None, "DUALBOARD_HUB_ENDPOINT": server.endpoint}
    for command in commands or ("ingest", "grade"):
        extra = ["--no-progress"] if command in ("grade", "build") else []
        result = CliRunner(env=env).invoke(main, [command, "--root", str(root), "--hub", REPO, "--stage", *extra])
        assert result.exit_code == 0, result.output


def publish(root, server, *args):
    env = {"HF_TOKEN": TOKEN, "DUALBOARD_HUB_ENDPOINT": server.endpoint}
    return CliRunner(env=env).invoke(main, ["publish", "--root", str(root), "--hub", REPO, *args])


def test_publish_pushes_runs_verdict_cache_card_and_tag_in_one_commit(tiny_root, hub_server):
    stage(tiny_root, hub_server)
    assert REPO not in hub_server.repos, "the staged build wrote nothing to the Hub"
    result = publish(tiny_root, hub_server, "--release", "2026.1")
    assert result.exit_code == 0, result.output
    repo = hub_server.repos[REPO]
    tagged = repo.resolve("2026.1")
    assert tagged is not None and tagged.oid == repo.branches["main"]
    assert [c.title for c in repo.history("main")] == ["Release 2026.1", "initial commit"]
    assert {"README.md", "scored/tiny.parquet", "scored/tiny.verdicts.parquet", "benchmarks/tiny/questions.jsonl",
            "runs/tiny/run-a/predictions.jsonl"} <= set(tagged.files)
    assert any(p.startswith("verdicts/rules/") and p.endswith(".parquet") for p in tagged.files), "the verdict cache"
    assert "tagged 2026.1" in result.output
    assert hub_server.calls_to("validate_yaml") == 1, "the card passed the Hub's metadata check"
    assert not (tiny_root / ".dualboard" / "hub-pending").exists(), "published changes are no longer pending"


def test_published_release_loads_with_datasets(tiny_root, hub_server, tmp_path):
    datasets = pytest.importorskip("datasets")
    stage(tiny_root, hub_server)
    assert publish(tiny_root, hub_server, "--release", "v1").exit_code == 0
    local = snapshot_download(REPO, repo_type="dataset", revision="v1", endpoint=hub_server.endpoint,
                              token=TOKEN, local_dir=tmp_path / "release")
    cache = tmp_path / "datasets-cache"  # datasets' shared cache may hold a table of the same path from another test run
    scored = datasets.load_dataset(local, "tiny", split="scored", cache_dir=cache)
    assert scored.num_rows == 3 and set(scored["run_id"]) == {"run-a"}
    verdicts = datasets.load_dataset(local, "tiny_verdicts", split="scored", cache_dir=cache)
    assert verdicts.num_rows > 0


def test_release_is_frozen(tiny_root, hub_server):
    stage(tiny_root, hub_server)
    assert publish(tiny_root, hub_server, "--release", "v1").exit_code == 0
    write_run(tiny_root, "run-b")
    stage(tiny_root, hub_server)
    again = publish(tiny_root, hub_server, "--release", "v1")
    assert again.exit_code == 1
    assert "release 'v1' already exists" in again.output


def test_publish_without_hub_or_a_staged_build_says_what_to_do(tiny_root, hub_server):
    no_hub = CliRunner().invoke(main, ["publish", "--root", str(tiny_root), "--release", "v1"])
    assert no_hub.exit_code == 2 and "publish needs --hub ORG/NAME" in no_hub.output
    nothing = publish(tiny_root, hub_server, "--release", "v1")
    assert nothing.exit_code == 1 and f"run `dualboard build --hub {REPO} --stage`" in nothing.output
    bad = publish(tiny_root, hub_server, "--release", "../v1")
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
