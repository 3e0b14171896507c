"""`dualboard publish`: the frozen release folder, staged runs and verdict cache in one commit, then a tag."""

from __future__ import annotations

import html
import json
import re
import shlex
import shutil

import httpx
import pandas as pd
import pytest
from click.testing import CliRunner
from huggingface_hub import snapshot_download

from dualboard.cli import main
from dualboard.errors import DualboardError
from dualboard.release_files import hub_file_url
from tests.conftest import GIT_ENV, git_repository, write_run
from tests.conftest import REPO as REPO_ROOT
from tests.store.conftest import TOKEN

REPO = "dualboard/tiny-results"


def stage(root, server, *commands: str) -> None:
    """Build as the CI build does: no token, changes kept in .dualboard/hub-pending/."""
    env = {"HF_TOKEN": None, "DUALBOARD_HUB_ENDPOINT": server.endpoint}
    for command in commands or ("build",):
        extra = ["--no-progress"] if command in ("grade", "build") else []
        result = CliRunner(env=env).invoke(main, [command, "--root", str(root), "--hub", REPO, "--stage", *extra])
        assert result.exit_code == 0, result.output


def release(root, server, version: str):
    """`dualboard release VERSION` from the staged build, without the token (a git repository for mike)."""
    git_repository(root)
    env = {"HF_TOKEN": None, "DUALBOARD_HUB_ENDPOINT": server.endpoint, **GIT_ENV}
    return CliRunner(env=env).invoke(
        main, ["release", version, "--root", str(root), "--hub", REPO, "--stage", "--date", "2026-12-01"]
    )


def publish(root, server, *args, make_release: bool = True):
    """`dualboard publish` with the token; first `dualboard release` of the version unless it exists or not wanted."""
    version = args[args.index("--release") + 1] if "--release" in args else None
    if make_release and version and not (root / "releases" / version).exists():
        made = release(root, server, version)
        assert made.exit_code == 0, made.output + repr(made.exception)
    env = {"HF_TOKEN": TOKEN, "DUALBOARD_HUB_ENDPOINT": server.endpoint}
    return CliRunner(env=env).invoke(main, ["publish", "--root", str(root), "--hub", REPO, *args])


@pytest.mark.slow
def test_publish_pushes_runs_verdict_cache_card_and_tag_in_one_commit(tiny_root, hub_server):
    stage(tiny_root, hub_server)
    assert REPO not in hub_server.repos, "the staged build wrote nothing to the Hub"
    result = publish(tiny_root, hub_server, "--release", "2026.1")
    assert result.exit_code == 0, result.output
    repo = hub_server.repos[REPO]
    tagged = repo.resolve("2026.1")
    assert tagged is not None and tagged.oid == repo.branches["main"]
    assert [c.title for c in repo.history("main")] == ["Release 2026.1", "initial commit"]
    folder = tiny_root / "releases" / "2026.1"
    frozen = {
        f"releases/2026.1/{p.relative_to(folder).as_posix()}": p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }
    assert {p: tagged.files[p] for p in tagged.files if p.startswith("releases/")} == frozen, (
        "exactly the frozen folder"
    )
    assert {
        "README.md",
        "releases/2026.1/scored/tiny.parquet",
        "releases/2026.1/verdicts/tiny.parquet",
        "benchmarks/tiny/questions.jsonl",
        "runs/tiny/run-a/predictions.jsonl",
    } <= set(tagged.files)
    assert any(p.startswith("verdicts/rules/") and p.endswith(".parquet") for p in tagged.files), "the verdict cache"
    assert b"path: releases/2026.1/scored/*.parquet" in tagged.files["README.md"]
    url = hub_file_url(hub_server.endpoint, REPO, "2026.1", "scored/tiny.parquet")  # the Downloads page's link
    assert httpx.get(url, follow_redirects=True).content == (folder / "scored" / "tiny.parquet").read_bytes()
    assert "tagged 2026.1" in result.output
    assert hub_server.calls_to("validate_yaml") == 1, "the card passed the Hub's metadata check"
    assert not (tiny_root / ".dualboard" / "hub-pending").exists(), "published changes are no longer pending"


@pytest.mark.slow
def test_release_loads_the_same_from_the_folder_and_from_the_hub(tiny_root, hub_server, tmp_path):
    datasets = pytest.importorskip("datasets")
    stage(tiny_root, hub_server)
    assert publish(tiny_root, hub_server, "--release", "v1").exit_code == 0
    hub = snapshot_download(
        REPO,
        repo_type="dataset",
        revision="v1",
        endpoint=hub_server.endpoint,
        token=TOKEN,
        local_dir=tmp_path / "release",
    )
    folder = tiny_root / "releases" / "v1"
    cache = (
        tmp_path / "datasets-cache"
    )  # datasets' shared cache may hold a table of the same path from another test run
    for config in ("scored", "answers", "verdicts"):
        from_folder = datasets.load_dataset(str(folder), config, split="train", cache_dir=cache).to_pandas()
        from_hub = datasets.load_dataset(str(hub), config, split="train", cache_dir=cache).to_pandas()
        pd.testing.assert_frame_equal(from_folder, from_hub)
        assert from_folder.equals(pd.read_parquet(folder / config / "tiny.parquet")), config
    assert set(from_folder["run_id"]) == {"run-a"} and len(from_folder) > 0
    default = datasets.load_dataset(str(hub), split="train", cache_dir=cache).to_pandas()
    assert len(default) == 3 and set(default["run_id"]) == {"run-a"}, "scored is the default config"


@pytest.mark.slow
def test_release_is_frozen(tiny_root, hub_server):
    stage(tiny_root, hub_server)
    assert publish(tiny_root, hub_server, "--release", "v1").exit_code == 0
    write_run(tiny_root, "run-b")
    stage(tiny_root, hub_server)
    again = publish(tiny_root, hub_server, "--release", "v1")
    assert again.exit_code == 1
    assert "release 'v1' already exists" in again.output


@pytest.mark.slow
def test_publish_without_hub_or_a_staged_build_says_what_to_do(tiny_root, hub_server):
    no_hub = CliRunner().invoke(main, ["publish", "--root", str(tiny_root), "--release", "v1"])
    assert no_hub.exit_code == 2 and "publish needs --hub ORG/NAME" in no_hub.output
    nothing = publish(tiny_root, hub_server, "--release", "v1", make_release=False)
    assert nothing.exit_code == 1 and f"run `dualboard build --hub {REPO} --stage`" in nothing.output
    stage(tiny_root, hub_server)
    unreleased = publish(tiny_root, hub_server, "--release", "v1", make_release=False)
    assert unreleased.exit_code == 1 and "no release v1" in unreleased.output
    assert f"dualboard release v1 --hub {REPO}" in unreleased.output
    bad = publish(tiny_root, hub_server, "--release", "../v1", make_release=False)
    assert bad.exit_code == 1 and "not a usable version name" in bad.output


def test_hub_refusing_the_card_changes_nothing(tiny_root, hub_server, tmp_path):
    from dualboard.store.base import StagedFile
    from tests.store.conftest import make_hub_store

    store = make_hub_store(hub_server, tmp_path)
    head = store.head(create=True)
    card = b"---\nconfigs:\n- config_name: tiny\n  data_files:\n  - split: run-a\n    path: scored/tiny.parquet\n---\n"
    with pytest.raises(DualboardError, match=r"(?s)the Hub refused the commit before any upload.*split name 'run-a'"):
        store.commit([StagedFile("README.md", card)], "bad card", parent=head)
    assert store.head() == head and hub_server.calls_to("commit") == 0


@pytest.mark.slow
def test_an_altered_release_folder_is_refused_and_nothing_is_written(tiny_root, hub_server):
    stage(tiny_root, hub_server)
    made = release(tiny_root, hub_server, "v1")
    assert made.exit_code == 0, made.output
    folder = tiny_root / "releases" / "v1"
    card = (folder / "README.md").read_bytes()
    (folder / "README.md").write_bytes(card + b"\nedited\n")
    edited = publish(tiny_root, hub_server, "--release", "v1")
    assert edited.exit_code == 1 and "README.md: its SHA-256 differs from the one in SHA256SUMS" in edited.output
    (folder / "README.md").write_bytes(card)
    (folder / "scored" / "extra.parquet").write_bytes(b"PAR1")
    extra = publish(tiny_root, hub_server, "--release", "v1")
    assert extra.exit_code == 1 and "scored/extra.parquet" in extra.output and "restore it" in extra.output
    assert hub_server.calls_to("commit") == 0 and REPO not in hub_server.repos


@pytest.mark.slow
def test_a_release_of_another_store_or_revision_is_refused(tiny_root, hub_server):
    local = CliRunner(env=GIT_ENV).invoke(main, ["build", "--root", str(tiny_root), "--no-progress"])
    assert local.exit_code == 0, local.output
    git_repository(tiny_root)
    made = CliRunner(env=GIT_ENV).invoke(main, ["release", "local1", "--root", str(tiny_root)])
    assert made.exit_code == 0, made.output
    stage(tiny_root, hub_server)
    refused = publish(tiny_root, hub_server, "--release", "local1")
    assert refused.exit_code == 1 and "release local1 was made from the local store" in refused.output
    assert publish(tiny_root, hub_server, "--release", "v1").exit_code == 0
    write_run(tiny_root, "run-b")
    stage(tiny_root, hub_server)
    made = release(tiny_root, hub_server, "v2")
    assert made.exit_code == 0, made.output
    write_run(tiny_root, "run-c")
    stage(tiny_root, hub_server)  # the build moved on after v2 froze
    moved = publish(tiny_root, hub_server, "--release", "v2")
    assert (
        moved.exit_code == 1
        and "release v2 froze store revision" in moved.output
        and "under a new version" in moved.output
    )
    assert set(hub_server.repos[REPO].tags) == {"v1"}


@pytest.mark.slow
def test_a_release_from_a_hub_store_names_the_dataset_on_its_downloads_page(tiny_root, hub_server):
    """The release records the Hub store it froze, so the deployed Downloads page points readers at the dataset."""
    stage(tiny_root, hub_server)
    made = release(tiny_root, hub_server, "v1")
    assert made.exit_code == 0, made.output
    manifest = json.loads((tiny_root / "releases" / "v1" / "manifest.json").read_text("utf-8"))
    assert (manifest["hub_dataset"], manifest["hub_endpoint"]) == (REPO, hub_server.endpoint)
    page = html.unescape((tiny_root / "build" / "docs" / "downloads.md").read_text("utf-8"))
    assert f"is on the Hugging Face Hub dataset `{REPO}`" in page, "the files' place on the Hub"
    assert f'datasets.load_dataset("{REPO}", "scored", revision="v1"' in page, "loading from the Hub tag"


@pytest.mark.slow
def test_publish_needs_only_what_the_build_job_hands_over(tiny_root, hub_server, tmp_path):
    """publish.yml's publish job checks out nothing: it gets the paths its build job packs (read from the
    workflow's tar line) and publishes from them alone."""
    workflow = (REPO_ROOT / ".github" / "workflows" / "publish.yml").read_text("utf-8")
    [packed] = re.findall(r'-C "\$PWD" (.+)$', workflow, re.MULTILINE)
    stage(tiny_root, hub_server)
    assert release(tiny_root, hub_server, "2026.1").exit_code == 0
    handed = tmp_path / "staged"
    for path in shlex.split(packed.replace("$RELEASE", "2026.1")):
        source = tiny_root / path
        (handed / path).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, handed / path)
    env = {"HF_TOKEN": TOKEN, "DUALBOARD_HUB_ENDPOINT": hub_server.endpoint}
    result = CliRunner(env=env).invoke(main, ["publish", "--root", str(handed), "--hub", REPO, "--release", "2026.1"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    tagged = hub_server.repos[REPO].resolve("2026.1")
    assert "runs/tiny/run-a/predictions.jsonl" in tagged.files and "releases/2026.1/scored/tiny.parquet" in tagged.files
