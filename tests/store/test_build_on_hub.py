"""`dualboard build --hub`: the whole pipe with a Hub dataset as the store (loopback test Hub)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from dualboard.cli import main
from dualboard.scored_files import read_scored
from tests.conftest import GIT_ENV, git_repository
from tests.store.conftest import TOKEN


@pytest.mark.slow
def test_build_with_hub_store_ingests_and_builds_from_the_hub(tiny_root, hub_server, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    args = [
        "build",
        "--root",
        str(tiny_root),
        "--no-progress",
        "--hub",
        "dualboard/tiny-board",
        "--hub-endpoint",
        hub_server.endpoint,
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "1 added" in result.output
    assert "runs/tiny/run-a/predictions.jsonl" in hub_server.repos["dualboard/tiny-board"].resolve("main").files
    scored = read_scored(tiny_root / "build" / "scored", "tiny")
    assert sorted(scored["question_id"]) == ["q1", "q2", "q3"]
    assert (tiny_root / "site" / "benchmarks" / "tiny" / "index.html").is_file()
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert "0 added, 0 replaced, 1 unchanged" in again.output


def test_dualboard_yaml_chooses_the_hub_store(tiny_root, hub_server, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    (tiny_root / "dualboard.yaml").write_text(
        f"store:\n  hub: dualboard/from-config\n  endpoint: {hub_server.endpoint}\n"
    )
    result = CliRunner().invoke(main, ["ingest", "--root", str(tiny_root)])
    assert result.exit_code == 0, result.output
    assert "runs/tiny/run-a/metadata.yaml" in hub_server.repos["dualboard/from-config"].resolve("main").files
    assert not (tiny_root / ".dualboard" / "store").exists(), "the local store must stay untouched"


@pytest.mark.slow
def test_release_freezes_the_hub_store_dualboard_yaml_names(tiny_root, hub_server):
    """`dualboard build` then `dualboard release`, as a user runs them, with no store option at all."""
    repo = "dualboard/from-config"
    (tiny_root / "dualboard.yaml").write_text(f"store:\n  hub: {repo}\n  endpoint: {hub_server.endpoint}\n")
    git_repository(tiny_root)  # mike deploys the release's site to gh-pages
    env = {k: v for k, v in os.environ.items() if k != "DUALBOARD_HUB_ENDPOINT"}
    for args in (["build", "--no-progress"], ["release", "v1", "--date", "2026-12-01"]):
        proc = subprocess.run(
            [sys.executable, "-m", "dualboard", *args, "--root", str(tiny_root)],
            capture_output=True,
            text=True,
            env={**env, **GIT_ENV, "HF_TOKEN": TOKEN},
            timeout=600,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    manifest = json.loads((tiny_root / "releases" / "v1" / "manifest.json").read_text("utf-8"))
    head = hub_server.repos[repo].resolve("main").oid
    assert (manifest["hub_dataset"], manifest["hub_endpoint"]) == (repo, hub_server.endpoint)
    assert manifest["store_revision"] == head, "the release froze the dataset's revision the build read"
    assert list(manifest["benchmarks"]["tiny"]["runs"]) == ["run-a"]
    assert not (tiny_root / ".dualboard" / "store").exists(), "the local store was never used"


def test_dualboard_yaml_with_a_token_or_unknown_key_is_refused(tiny_root):
    (tiny_root / "dualboard.yaml").write_text("store:\n  hub: a/b\n  token: hf_secret\n")
    result = CliRunner().invoke(main, ["ingest", "--root", str(tiny_root)])
    assert result.exit_code == 1
    assert "unknown keys ['token']" in result.output and "HF_TOKEN" in result.output
