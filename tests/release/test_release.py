"""`dualboard release`: the frozen folder, its checksums and dataset card, mike versions, the changelog."""

from __future__ import annotations

import hashlib
import html
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from dualboard import __version__
from dualboard.cli import main
from dualboard.csv_download import FORMULA_TRIGGERS
from dualboard.release_files import ReleaseRecord, load_releases, run_standings
from dualboard.render.changelog import changelog_page, compare, history
from dualboard.stats.scores import GRADINGS

pytestmark = pytest.mark.slow  # builds a board for the module: only make test-all runs it

REPO = Path(__file__).resolve().parents[2]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Dualboard tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "Dualboard tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def invoke(*args: str):
    result = CliRunner().invoke(main, list(args))
    return result


def make_leaderboard(root: Path) -> Path:
    """A git repository holding a copy of the demo leaderboard."""
    for name in ("data", "submissions", "site_src"):
        shutil.copytree(REPO / name, root / name)
    shutil.copyfile(REPO / "mkdocs.yml", root / "mkdocs.yml")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "leaderboard")
    return root


def add_run(root: Path, source: str, run_id: str) -> None:
    """Resubmit an existing run under a new id and model name (a new run for the changelog)."""
    target = root / "submissions" / "demo" / run_id
    shutil.copytree(root / "submissions" / "demo" / source, target)
    meta = yaml.safe_load((target / "metadata.yaml").read_text("utf-8"))
    meta["model"] = f"{meta['model']}-v2"
    (target / "metadata.yaml").write_text(yaml.safe_dump(meta), "utf-8")


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """Two releases of the demo leaderboard: 0.1, then 0.2 with one more run."""
    for key, value in GIT_ENV.items():
        os.environ.setdefault(key, value)
    root = make_leaderboard(tmp_path_factory.mktemp("leaderboard"))
    for version, date in (("0.1", "2026-11-01"), ("0.2", "2026-11-15")):
        if version == "0.2":
            add_run(root, "borealis-13b-chat", "borealis-13b-chat-v2")
        result = invoke("build", "--root", str(root), "--no-progress")
        assert result.exit_code == 0, result.output
        result = invoke("release", version, "--root", str(root), "--date", date)
        assert result.exit_code == 0, result.output + str(result.exception)
    return root


def test_release_folder_holds_every_download_with_checksums(released):
    folder = released / "releases" / "0.1"
    expected = {
        "README.md",
        "manifest.json",
        "SHA256SUMS",
        "scored/demo.parquet",
        "scored/demo.csv",
        "verdicts/demo.parquet",
        "verdicts/demo.csv",
        "answers/demo.parquet",
        "answers/demo.csv",
        *(f"stats/demo/{t}.csv" for t in ("models", "pairwise", "agreement", "power", "equator", "labelling")),
        "stats/demo/notes.json",
    }
    assert {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} == expected
    lines = (folder / "SHA256SUMS").read_text().splitlines()
    assert len(lines) == len(expected) - 1
    for line in lines:
        digest, name = line.split("  ", 1)
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
    scored = pd.read_parquet(folder / "scored/demo.parquet")
    assert len(pd.read_csv(folder / "scored/demo.csv")) == len(scored)
    assert len(pd.read_csv(folder / "verdicts/demo.csv")) == len(pd.read_parquet(folder / "verdicts/demo.parquet"))


def test_manifest_names_contents_graders_and_versions(released):
    manifest = json.loads((released / "releases/0.1/manifest.json").read_text())
    assert manifest["version"] == "0.1" and manifest["sequence"] == 1 and manifest["released"] == "2026-11-01"
    assert manifest["generator_version"] == __version__
    assert manifest["store_revision"]
    demo = manifest["benchmarks"]["demo"]
    assert len(demo["content_hash"]) == 64
    assert set(demo["runs"]) == {p.name for p in (REPO / "submissions/demo").iterdir() if p.is_dir()}
    assert all(len(r["content_hash"]) == 64 for r in demo["runs"].values())
    verdicts = pd.read_parquet(released / "releases/0.1/verdicts/demo.parquet")
    assert {(g["name"], g["role"]) for g in demo["graders"]} == set(zip(verdicts["grader"], verdicts["role"]))
    assert all(len(g["config_hash"]) == 64 for g in demo["graders"])
    assert set(demo["ranks"]["aurora-lm-70b"]) == {"traditional", "answer_key"}


def test_dataset_card_loads_offline_with_datasets(released, tmp_path):
    folder = released / "releases" / "0.1"
    script = (
        "import datasets, sys\n"
        "scored = datasets.load_dataset(sys.argv[1])['train']\n"
        "verdicts = datasets.load_dataset(sys.argv[1], 'verdicts', split='train')\n"
        "answers = datasets.load_dataset(sys.argv[1], 'answers', split='train')\n"
        "print(answers.num_rows, ','.join(answers.column_names))\n"
        "print(scored.num_rows, verdicts.num_rows, ','.join(scored.column_names))\n"
    )
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(folder)], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    answer_rows, answer_columns, rows, verdict_rows, columns = proc.stdout.split()[-5:]
    assert int(answer_rows) == int(rows) and "response" in answer_columns.split(",")
    assert int(rows) == len(pd.read_parquet(folder / "scored/demo.parquet"))
    assert int(verdict_rows) == len(pd.read_parquet(folder / "verdicts/demo.parquet"))
    assert {"run_id", "question_id", "traditional", "answer_key"} <= set(columns.split(","))


def test_mike_versions_on_gh_pages(released):
    versions = json.loads(git(released, "show", "gh-pages:versions.json"))
    assert [(v["version"], v["aliases"]) for v in versions] == [("0.2", ["latest"]), ("0.1", [])]
    tree = git(released, "ls-tree", "-r", "--name-only", "gh-pages").splitlines()
    assert "0.1/index.html" in tree and "0.2/benchmarks/demo/index.html" in tree
    assert not [f for f in tree if "/downloads/files/" in f], "no version carries a copy of its release's files"
    for version in ("0.1", "0.2"):  # the site carries every release's files (all small in the demo), in shared/
        folder = released / "releases" / version
        sums = (folder / "SHA256SUMS").read_text("utf-8").splitlines()
        names = [line.split("  ", 1)[1] for line in sums] + ["SHA256SUMS"]
        for name in names:
            data = (folder / name).read_bytes()
            path = f"shared/{hashlib.sha256(data).hexdigest()}/{name + '.txt' if name.endswith('.md') else name}"
            assert path in tree, path
            shown = subprocess.run(["git", "-C", str(released), "show", f"gh-pages:{path}"], capture_output=True)
            assert shown.stdout == data, path


def test_changelog_lists_the_new_run(released):
    page = (released / "site" / "changelog" / "index.html").read_text("utf-8")
    assert "demo/borealis-13b-chat-v2" in page
    records = load_releases(released)
    changes = compare(records[0].manifest, records[1].manifest)
    assert changes.new_runs == [("demo", "borealis-13b-chat-v2")] and changes.removed_runs == []


def test_a_release_is_frozen(released):
    result = invoke("release", "0.1", "--root", str(released))
    assert result.exit_code == 1
    assert "already exists" in result.output and "choose a new version" in result.output


@pytest.mark.parametrize("version", ["latest", "../x", "", "a b"])
def test_bad_version_names_are_rejected(released, version):
    result = invoke("release", version, "--root", str(released))
    assert result.exit_code != 0
    assert "not a usable version name" in result.output


def test_release_outside_git_says_what_to_do(tmp_path):
    result = invoke("release", "1.0", "--root", str(tmp_path))
    assert result.exit_code == 1
    assert "git init" in result.output


def _manifest(version: str, ranks: dict, runs: dict) -> dict:
    return {
        "version": version,
        "released": "2026-01-01",
        "benchmarks": {"b": {"content_hash": "h", "graders": [], "runs": runs, "ranks": ranks}},
    }


def test_rank_changes_are_significant_only_outside_the_new_interval():
    before = _manifest(
        "1",
        {
            "x": {"answer_key": {"rank": 1, "low": 1, "high": 2}},
            "y": {"answer_key": {"rank": 2, "low": 1, "high": 2}},
            "z": {"answer_key": {"rank": 5, "low": 4, "high": 6}},
        },
        {
            "x": {"content_hash": "1"},
            "y": {"content_hash": "2"},
            "z": {"content_hash": "3"},
            "gone": {"content_hash": "4"},
        },
    )
    after = _manifest(
        "2",
        {
            "x": {"answer_key": {"rank": 2, "low": 1, "high": 3}},
            "y": {"answer_key": {"rank": 1, "low": 1, "high": 3}},
            "z": {"answer_key": {"rank": 1, "low": 1, "high": 2}},
        },
        {"x": {"content_hash": "1"}, "y": {"content_hash": "changed"}, "z": {"content_hash": "3"}},
    )
    changes = compare(before, after)
    assert changes.removed_runs == [("b", "gone")] and changes.changed_runs == [("b", "y")]
    moves = {c.run_id: c.significant for c in changes.rank_changes}
    assert moves == {"x": False, "y": False, "z": True}


def _first_sql_block(markdown: str) -> str:
    return markdown.split("```sql\n", 1)[1].split("```", 1)[0]


def _submitted_responses(root: Path) -> dict[tuple[str, str, int], str]:
    """Every response as submitted, read from the predictions files (not through Dualboard)."""
    out = {}
    for path in (root / "submissions" / "demo").glob("*/predictions.jsonl"):
        for line in path.read_text("utf-8").splitlines():
            p = json.loads(line)
            out[(path.parent.name, p["question_id"], p.get("round", 0))] = p["response"]
    return out


def test_documented_duckdb_query_finds_the_answers_the_judge_passed_and_the_key_failed(released):
    folder = released / "releases" / "0.2"
    query = _first_sql_block((REPO / "README.md").read_text("utf-8"))
    assert _first_sql_block((folder / "README.md").read_text("utf-8")) == query, "README and dataset card differ"
    con = duckdb.connect()
    con.execute("SET file_search_path = ?", [str(folder)])
    found = con.sql(query).df()
    scored = pd.read_parquet(folder / "scored" / "demo.parquet")
    expected = scored[(scored.traditional >= 50) & (scored.answer_key < 50)]
    keys = list(zip(found.run_id, found.question_id, found["round"], strict=True))
    assert len(keys) > 10 and sorted(keys) == sorted(
        zip(expected.run_id, expected.question_id, expected["round"], strict=True)
    )
    submitted = _submitted_responses(released)
    assert found.response.tolist() == [submitted[k] for k in keys]


def test_released_tables_record_the_store_revision_the_manifest_names(released):
    revisions = []
    for version in ("0.1", "0.2"):
        folder = released / "releases" / version
        rows = duckdb.sql(
            f"SELECT decode(value) FROM parquet_kv_metadata('{folder}/*/demo.parquet') WHERE decode(key) = 'dualboard'"
        ).fetchall()
        assert sorted(json.loads(v)["table"] for (v,) in rows) == ["answers", "scored", "verdicts"]
        manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
        assert {json.loads(v)["store_revision"] for (v,) in rows} == {manifest["store_revision"]}
        revisions.append(manifest["store_revision"])
    assert revisions[0] != revisions[1]


def test_answers_csv_is_the_answers_parquet_made_spreadsheet_safe(released):
    folder = released / "releases" / "0.1"
    answers = pd.read_parquet(folder / "answers" / "demo.parquet")
    csv = pd.read_csv(folder / "answers" / "demo.csv", keep_default_na=False, dtype={"response": str})
    assert csv.columns.tolist() == answers.columns.tolist()
    assert csv.response.tolist() == ["'" + r if r.startswith(FORMULA_TRIGGERS) else r for r in answers.response]


def test_a_grader_version_bump_lists_every_score_that_moved():
    """A new rules version re-grades every answer: the changelog names it and lists each score that moved,
    even where no rank moved (issue 25 §3)."""
    rules = {"name": "rules", "role": "answer_key", "config_hash": "c"}

    def release(version: str, grader: str, x: float, y: float) -> dict:
        scores = {"x": x, "y": y}
        ranks = {
            r: {"answer_key": {"rank": i + 1, "low": 1, "high": 2, "score": scores[r]}} for i, r in enumerate("xy")
        }
        manifest = _manifest(version, ranks, {"x": {"content_hash": "1"}, "y": {"content_hash": "2"}})
        manifest["benchmarks"]["b"]["graders"] = [{**rules, "version": grader}]
        return manifest

    changes = compare(release("1", "4", 70.7, 64.6), release("2", "5", 67.5, 64.6))
    assert changes.grader_changes == ["b: rules 4 → 5"]
    assert [(c.run_id, c.before, c.after) for c in changes.score_changes] == [("x", 70.7, 67.5)]
    assert changes.rank_changes == []
    page = html.unescape(changelog_page([changes]).content)
    assert "rules 4 → 5" in page and "70.7" in page and "67.5" in page and "No rank changed" in page


def test_the_manifest_records_each_score_as_shown():
    models = pd.DataFrame(
        [{"run_id": "x", **{c: v for g in GRADINGS for c, v in ((f"rank_{g}", 1), (f"{g}_mean", 67.54))}}]
    )
    assert run_standings(models)["x"]["answer_key"]["score"] == 67.5


def test_a_release_made_before_manifests_held_scores_gives_them_from_its_models_table(tmp_path):
    """The first release after a grader version bump compares with one whose manifest has ranks only."""
    (tmp_path / "stats" / "b").mkdir(parents=True)
    columns = {c: v for g in GRADINGS for c, v in ((f"rank_{g}", 1), (f"{g}_mean", 70.71))}
    pd.DataFrame([{"run_id": "x", **columns}]).to_csv(tmp_path / "stats" / "b" / "models.csv", index=False)
    old = _manifest("1", {"x": {"answer_key": {"rank": 1, "low": 1, "high": 1}}}, {"x": {"content_hash": "1"}})
    new = _manifest(
        "2", {"x": {"answer_key": {"rank": 1, "low": 1, "high": 1, "score": 67.5}}}, old["benchmarks"]["b"]["runs"]
    )
    records = [ReleaseRecord("1", old, {}, tmp_path), ReleaseRecord("2", new, {}, tmp_path / "none")]
    [latest, _] = history(records)
    assert [(c.run_id, c.before, c.after) for c in latest.score_changes] == [("x", 70.7, 67.5)]
