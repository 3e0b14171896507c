"""Publishing with a write token: the token reaches one step, one endpoint, and one consistent commit.

- The build reads the dataset without a token and writes nothing to the Hub;
  ``publish`` pushes runs, verdict cache and release in ONE commit whose
  parent is the revision the build read, and tags it.
- If the dataset moved on after the build read it, publish refuses (the
  Hub's parent_commit check) instead of tagging a commit whose runs/ and
  release disagree; nothing is written, no tag is made.
- An endpoint written into dualboard.yaml by a pull request never receives
  anything while the workflow names the endpoint explicitly.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from dualboard.cli import main
from dualboard.intake.benchmark import load_benchmarks
from dualboard.store.records import SOURCE_FILE
from tests.conftest import GIT_ENV, git_repository, write_run
from tests.store.conftest import TOKEN, hub_server, make_hub_store  # noqa: F401 — hub_server is a fixture
from tests.store.hub_server import HubServer

REPO = "dualboard/tiny-store"


def _cli(root, server, *args, token: str | None = None, endpoint: bool = True):
    """Run dualboard in-process; HF_TOKEN is unset unless given, as in the workflow's build step."""
    extra = ["--hub-endpoint", server.endpoint] if endpoint else []
    result = CliRunner(env={"HF_TOKEN": token, "DUALBOARD_HUB_ENDPOINT": None}).invoke(
        main, [args[0], "--root", str(root), "--hub", REPO, *extra, *args[1:]]
    )
    return result


def _build(root, server, *, endpoint: bool = True, release: str = "v1", token: str | None = None):
    """The workflow's steps before publish: build and release (no token unless given: then no --stage)."""
    staged = () if token else ("--stage",)
    for step in (("build", *staged, "--no-progress"), ("release", release, *staged)):
        git_repository(root)
        result = CliRunner(env={"HF_TOKEN": token, "DUALBOARD_HUB_ENDPOINT": None, **GIT_ENV}).invoke(
            main,
            [
                step[0],
                "--root",
                str(root),
                "--hub",
                REPO,
                *(["--hub-endpoint", server.endpoint] if endpoint else []),
                *step[1:],
            ],
        )
        assert result.exit_code == 0, result.output


@pytest.fixture
def dataset(tiny_root, hub_server, tmp_path):  # noqa: F811 — the imported fixture
    """The public dataset holds run-a; run-b was just merged into submissions/."""
    make_hub_store(hub_server, tmp_path / "writer").ingest(
        [tiny_root / "submissions" / "tiny" / "run-a"], load_benchmarks(tiny_root / "data")
    )
    write_run(tiny_root, "run-b")
    return hub_server.repos[REPO]


@pytest.mark.slow
def test_token_less_build_then_one_commit_on_the_revision_it_read(dataset, tiny_root, hub_server):  # noqa: F811
    read = dataset.branches["main"]
    posts = len([c for c in hub_server.calls if c[0] == "POST"])
    _build(tiny_root, hub_server)
    assert len([c for c in hub_server.calls if c[0] == "POST"]) == posts, (
        "the build and release wrote nothing to the Hub"
    )
    assert dataset.branches["main"] == read
    source = json.loads((tiny_root / "build" / SOURCE_FILE).read_text())
    assert (
        source["revision"].startswith(f"{read}+") and source["store"] == f"Hub dataset {REPO} on {hub_server.endpoint}"
    )
    commits = hub_server.calls_to("commit")
    published = _cli(tiny_root, hub_server, "publish", "--release", "v1", token=TOKEN)
    assert published.exit_code == 0, published.output
    assert hub_server.calls_to("commit") == commits + 1, "runs, verdict cache and release in one commit"
    release = dataset.resolve("v1")
    assert release.parent == read and release.oid == dataset.branches["main"]
    assert {"runs/tiny/run-b/predictions.jsonl", "releases/v1/scored/tiny.parquet", "README.md"} <= set(release.files)
    assert any(p.startswith("verdicts/") for p in set(release.files) - set(dataset.commits[read].files))


@pytest.mark.slow
def test_publish_refuses_when_the_dataset_moved_after_the_build_read_it(dataset, tiny_root, hub_server, tmp_path):  # noqa: F811
    _build(tiny_root, hub_server)
    read = dataset.branches["main"]
    write_run(tiny_root, "run-c")
    make_hub_store(hub_server, tmp_path / "other").ingest(
        [tiny_root / "submissions" / "tiny" / "run-c"], load_benchmarks(tiny_root / "data")
    )
    moved = dataset.branches["main"]
    result = _cli(tiny_root, hub_server, "publish", "--release", "v1", token=TOKEN)
    assert result.exit_code == 1, result.output
    assert (
        f"main moved past {read[:12]}, the revision the build read; nothing was written — build again" in result.output
    )
    assert dataset.branches["main"] == moved and dataset.tags == {}, "no commit, no tag"
    _build(tiny_root, hub_server, release="v2")
    assert _cli(tiny_root, hub_server, "publish", "--release", "v2", token=TOKEN).exit_code == 0
    assert dataset.resolve("v2").parent == moved, "rebuilt on the new head, released and published on it"


@pytest.mark.slow
def test_publish_refuses_a_build_of_another_store_or_of_other_staged_runs(dataset, tiny_root, hub_server):  # noqa: F811
    local = CliRunner().invoke(main, ["grade", "--root", str(tiny_root), "--no-progress"])
    assert local.exit_code == 0, local.output
    result = _cli(tiny_root, hub_server, "publish", "--release", "v1", token=TOKEN)
    assert result.exit_code == 1 and f"build/ was not built from Hub dataset {REPO}" in result.output
    assert "(it read local store" in result.output
    _build(tiny_root, hub_server)
    write_run(tiny_root, "run-c")  # staged after grading: the scored data does not hold it
    assert _cli(tiny_root, hub_server, "ingest", "--stage").exit_code == 0
    result = _cli(tiny_root, hub_server, "publish", "--release", "v1", token=TOKEN)
    assert result.exit_code == 1 and "but the staged changes are revision" in result.output
    assert dataset.tags == {} and "runs/tiny/run-c/metadata.yaml" not in dataset.resolve("main").files


@pytest.mark.slow
def test_direct_build_publishes_on_the_commit_it_read(dataset, tiny_root, hub_server):  # noqa: F811
    _build(tiny_root, hub_server, token=TOKEN)
    read = dataset.branches["main"]
    assert _cli(tiny_root, hub_server, "publish", "--release", "v1", token=TOKEN).exit_code == 0
    assert dataset.resolve("v1").parent == read


@pytest.mark.slow
def test_endpoint_in_dualboard_yaml_never_gets_the_token(dataset, tiny_root, hub_server):  # noqa: F811
    attacker = HubServer().start()
    try:
        (tiny_root / "dualboard.yaml").write_text(f"store:\n  hub: {REPO}\n  endpoint: {attacker.endpoint}\n")
        _build(tiny_root, hub_server)
        result = _cli(tiny_root, hub_server, "publish", "--release", "v1", token=TOKEN)
        assert result.exit_code == 0, result.output
        assert attacker.calls == [], "the explicit --hub-endpoint wins over dualboard.yaml"
    finally:
        attacker.stop()


@pytest.mark.slow
def test_a_dataset_the_build_could_not_see_is_not_overwritten(tiny_root, hub_server, tmp_path):  # noqa: F811
    _build(tiny_root, hub_server)  # no dataset yet (or a private one: the build reads without a token)
    make_hub_store(hub_server, tmp_path / "other").ingest(
        [tiny_root / "submissions" / "tiny" / "run-a"], load_benchmarks(tiny_root / "data")
    )
    head = hub_server.repos[REPO].branches["main"]
    result = _cli(tiny_root, hub_server, "publish", "--release", "v1", token=TOKEN)
    assert result.exit_code == 1 and "the build found no dataset, but it holds runs now" in result.output
    assert hub_server.repos[REPO].branches["main"] == head and hub_server.repos[REPO].tags == {}
