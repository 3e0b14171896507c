"""A run that names its model like another's, replayed as pull requests on the demo board (issue 25, item 7).

Before: a run ``aurora-lm-70b-rerun`` whose metadata named the model ``aurora-lm-70b`` validated with no
finding, and its perfect answers made the home page say "Leader: aurora-lm-70b (100.0)" (the demo's real
aurora-lm-70b scores 55.4); ``delta\\u200b-mind-34b`` and a right-to-left override rendered as exact look-alikes.
Now the same name needs two distinct ``model_revision``\\ s (and the site shows both), and hidden characters and
TR39 look-alikes are findings.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.render.html_tables import item_page

AURORA = REPO / "submissions" / "demo" / "aurora-lm-70b"


def dualboard(root: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "dualboard", *args, "--root", str(root)]
    return subprocess.run(command, capture_output=True, text=True, cwd=root)


def demo_board(root: Path) -> Path:
    for name in ("data", "submissions", "site_src"):
        shutil.copytree(REPO / name, root / name)
    shutil.copyfile(REPO / "mkdocs.yml", root / "mkdocs.yml")
    return root


def key_answers() -> list[dict]:
    """The demo's answer keys as responses, every round: a run that ranks first."""
    questions = [json.loads(line) for line in (REPO / "data/benchmarks/demo/questions.jsonl").open(encoding="utf-8")]
    return [
        {"question_id": q["id"], "round": r, "response": f"Final answer: {q['answer_key']['answer']}"}
        for q in questions
        for r in range(4)
    ]


def add_run(root: Path, run_id: str, model: str, revision: str | None = None, *, perfect: bool = False) -> Path:
    """A pull request's run: aurora-lm-70b's files, under ``run_id``, naming ``model`` (and ``revision``)."""
    run = root / "submissions" / "demo" / run_id
    shutil.copytree(AURORA, run)
    metadata = yaml.safe_load((run / "metadata.yaml").read_text("utf-8"))
    metadata.pop("model_revision")
    metadata.update(model=model, **({"model_revision": revision} if revision else {}))
    (run / "metadata.yaml").write_text(yaml.safe_dump(metadata, allow_unicode=True), "utf-8")
    if perfect:
        (run / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in key_answers()), "utf-8")
    return run


def findings(root: Path, run: Path) -> list[dict]:
    proc = dualboard(root, "validate", "--format", "json", str(run))
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)["findings"]


IMPERSONATIONS = [
    ("aurora-lm-70b-rerun", "aurora-lm-70b", None, "is the name, without two distinct model_revisions"),
    ("aurora-lm-70b-rerun", "Aurora-LM-70B", None, "is the name, without two distinct model_revisions"),
    ("aurora-lm-70b-rerun", "ａｕｒｏｒａ-lm-70b", None, "is the name, without two distinct model_revisions"),
    ("aurora-lm-70b-same", "aurora-lm-70b", "aurora-lm-70b@sim-2026-01", "without two distinct model_revisions"),
    ("aurora-cyrillic", "\u0430urora-lm-70b", None, "looks like (the same Unicode TR39 skeleton as) 'aurora-lm-70b'"),
    ("delta-digit", "de1ta-mind-34b", None, "looks like (the same Unicode TR39 skeleton as) 'delta-mind-34b'"),
    # found by an attacker's walk after the first fix: a trailing space, capitals that TR39 maps only uncased,
    # a revision that looks like the other run's
    ("aurora-space", "aurora-lm-70b ", None, "is the name, without two distinct model_revisions"),
    ("aurora-capital-i", "aurora-Im-70b", None, "looks like (the same Unicode TR39 skeleton as) 'aurora-lm-70b'"),
    ("aurora-capital-o", "AURORA-LM-7OB", None, "looks like (the same Unicode TR39 skeleton as) 'aurora-lm-70b'"),
    ("aurora-same-look", "aurora-lm-70b", "aurora-Im-70b@sim-2026-0l", "without two distinct model_revisions"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("run_id", "model", "revision", "problem"), IMPERSONATIONS)
def test_a_run_named_like_a_board_run_is_a_finding_at_the_new_run(
    tmp_path: Path, run_id: str, model: str, revision: str | None, problem: str
) -> None:
    root = demo_board(tmp_path)
    run = add_run(root, run_id, model, revision, perfect=True)
    found = findings(root, run)
    assert [(f["file"], f["field"]) for f in found] == [(f"submissions/demo/{run_id}/metadata.yaml", "model")], found
    assert problem in found[0]["problem"] and found[0]["line"] is not None, found[0]
    refused = dualboard(root, "build", "--no-progress")
    assert refused.returncode != 0 and problem in refused.stdout + refused.stderr


@pytest.mark.parametrize(
    ("model", "hidden"),
    [
        ("delta\u200b-mind-34b", "U+200B ZERO WIDTH SPACE"),
        ("\u202eb43-dnim-atled", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("delta-mind-34b\u2066", "U+2066 LEFT-TO-RIGHT ISOLATE"),
        ("delta\x7f-mind", "U+007F"),
        ("delta-mind-34b\u3164", "U+3164 HANGUL FILLER"),  # a letter (Lo) that shows as nothing
    ],
)
def test_hidden_characters_in_a_model_name_are_a_finding(tmp_path: Path, model: str, hidden: str) -> None:
    root = demo_board(tmp_path)
    run = add_run(root, "delta-mind-34b-v2", model, "v2")
    [found] = findings(root, run)
    assert (found["file"], found["field"]) == ("submissions/demo/delta-mind-34b-v2/metadata.yaml", "model")
    assert found["line"] is not None
    assert hidden in found["problem"], found


def test_a_hidden_character_in_the_revision_is_a_finding(tmp_path: Path) -> None:
    """Distinct revisions must be told apart by eye too: this one is refused, so the shared name has none."""
    root = demo_board(tmp_path)
    run = add_run(root, "aurora-lm-70b-rerun", "aurora-lm-70b", "aurora-lm-70b@sim-2026-01\u200b")
    found = [(f["field"], "U+200B" in f["problem"]) for f in findings(root, run)]
    assert found == [("model_revision", True), ("model", False)]


@pytest.fixture(scope="module")
def two_revisions(tmp_path_factory) -> Path:
    """The demo board plus a re-run of aurora-lm-70b under a new revision, built."""
    root = demo_board(tmp_path_factory.mktemp("revisions"))
    run = add_run(root, "aurora-lm-70b-rerun", "aurora-lm-70b", "2026-04 checkpoint", perfect=True)
    assert findings(root, run) == []
    proc = dualboard(root, "build", "--no-progress")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


OLD = "aurora-lm-70b (aurora-lm-70b@sim-2026-01)"
NEW = "aurora-lm-70b (2026-04 checkpoint)"


def page_text(root: Path, path: str) -> str:
    """The page's HTML with entities read back (the render writes submitted text as character references)."""
    import html

    return html.unescape((root / "site" / path).read_text("utf-8"))


def run_title(root: Path, slug: str) -> str:
    """The title (the page's heading) of a run's page document."""
    return item_page(root / "site", "benchmarks/demo/runs", slug).split("\n", 1)[0].removeprefix("# ")


@pytest.mark.slow
def test_two_runs_of_one_name_with_distinct_revisions_are_both_shown_with_their_revisions(two_revisions: Path) -> None:
    board = page_text(two_revisions, "benchmarks/demo/index.html")
    assert OLD in board and NEW in board
    assert f"{NEW} (100.0)" in page_text(two_revisions, "index.html"), "the home page's leader names the revision"
    assert run_title(two_revisions, "aurora-lm-70b-rerun") == NEW
    assert run_title(two_revisions, "aurora-lm-70b") == OLD
    chart = (two_revisions / "site/benchmarks/demo/charts/scores.json").read_text("utf-8")
    assert '"aurora-lm-70b"' in chart and '"aurora-lm-70b-rerun"' in chart, "the charts label runs by their ids"
    assert run_title(two_revisions, "fjord-3b") == "fjord-3b", "a name no other run shares is shown alone"


@pytest.mark.slow
def test_the_preview_names_a_shared_model_with_its_revision(tiny_root: Path) -> None:
    from tests.conftest import tiny_metadata, write_run
    from tests.preview.demo_runs import git
    from tests.preview.test_preview_cli import preview

    write_run(tiny_root, "run-a", metadata=tiny_metadata(model_revision="r1"))
    git(tiny_root, "init", "-q", "-b", "main")
    git(tiny_root, "add", "-A")
    git(tiny_root, "commit", "-qm", "base")
    write_run(tiny_root, "run-b", metadata=tiny_metadata(model="Tiny-Model", model_revision="r2"))
    done, doc = preview(tiny_root, "--base", "main")
    assert done.returncode == 0, done.stdout + done.stderr
    [run] = doc["benchmarks"][0]["runs"]
    assert (run["run_id"], run["model"]) == ("run-b", "Tiny-Model (r2)")
