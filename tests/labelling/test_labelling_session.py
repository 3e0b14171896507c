"""``dualboard label``'s session: the queue, the labeller's file, resuming, and what the next build makes of it."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from dualboard.intake.human_labels import load_labels
from dualboard.labelling.session import LabellingError, label_text, open_session
from dualboard.scored_files import VERDICTS, read_table
from tests.labelling.boards import BENCHMARK, dualboard, write_board


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    return write_board(tmp_path_factory.mktemp("board"))


@pytest.fixture
def board(graded: Path, tmp_path: Path) -> Path:
    """A fresh copy of the graded board, so each test labels from nothing."""
    import shutil

    shutil.copytree(graded, tmp_path / "board", symlinks=True)
    return tmp_path / "board"


def session(root: Path, labeller: str = "ada", **options):
    found, _ = open_session(root / "data", root / "build" / "scored", BENCHMARK, labeller, **options)
    return found


def label_next(s, verdict="pass") -> dict:
    item = s.next()
    s.label(item["question_id"], item["response_sha256"], verdict)
    return item


def file_rows(s) -> pd.DataFrame:
    return pd.read_csv(s.path, dtype=str, keep_default_na=False)


@pytest.mark.slow
def test_identical_responses_are_one_item_and_its_label_covers_every_answer(board: Path) -> None:
    s = session(board)
    twice = s.items[s.items["n_answers"].eq(2)].iloc[0]
    revealed = s.label(twice["question_id"], twice["response_sha256"], "fail")
    rows = file_rows(s)
    assert sorted(rows["run"]) == ["model-0", "model-1"] and set(rows["label"]) == {"fail"}
    assert rows["time"].nunique() == 1 and set(rows["stratum"]) == {twice["stratum"]}
    assert set(revealed) == {"recorded", "rules"} and rows["grader_versions"].iloc[0].startswith("recorded ")
    dualboard(board, "ingest")
    dualboard(board, "grade", "--no-progress")
    verdicts = read_table(VERDICTS, board / "build" / "scored", BENCHMARK)
    human = verdicts[verdicts["role"].eq("human")]
    assert sorted(human["run_id"]) == ["model-0", "model-1"] and set(human["score"]) == {0.0}


def test_the_queue_draws_where_graders_disagree_first_then_every_stratum_twice(board: Path) -> None:
    s = session(board)
    strata = s.items.groupby("stratum")["disagree"].first()
    sizes = s.items.groupby("stratum").size()
    drawn = [label_next(s)["stratum"] for _ in range(2 * len(strata))]
    disagreeing = [x for x in strata.index if strata[x]]
    assert disagreeing and set(drawn[: len(disagreeing)]) <= set(disagreeing)
    counts = pd.Series(drawn).value_counts()
    assert all(counts.get(x, 0) >= min(2, sizes[x]) for x in strata.index)


def test_undo_takes_back_the_last_label_and_shows_its_answer_again(board: Path) -> None:
    s = session(board)
    first, second = label_next(s), label_next(s, "fail")
    back = s.undo()
    assert (back["question_id"], back["response_sha256"]) == (second["question_id"], second["response_sha256"])
    rows = file_rows(s)
    assert set(rows["response_sha256"]) == {first["response_sha256"]}
    assert s.next()["response_sha256"] == second["response_sha256"]


def test_a_new_session_resumes_where_the_last_stopped(board: Path) -> None:
    s = session(board)
    done = [label_next(s) for _ in range(5)]
    again = session(board)
    assert again.progress()["mine"] == 5
    labelled = {(d["question_id"], d["response_sha256"]) for d in done}
    following = again.next()
    assert (following["question_id"], following["response_sha256"]) not in labelled
    assert following == s.next()


def test_a_crash_while_writing_loses_only_that_label(board: Path) -> None:
    s = session(board)
    label_next(s)
    label_next(s)
    with open(s.path, "ab") as handle:
        handle.write(b"model-0,cap-fr,0,pa")  # killed in the middle of a line
    found, cut = open_session(board / "data", board / "build" / "scored", BENCHMARK, "ada")
    assert cut == len(b"model-0,cap-fr,0,pa")
    assert found.progress()["mine"] == 2 and len(load_labels(board / "data" / "benchmarks" / BENCHMARK)) >= 2


def test_skip_passes_over_an_answer_for_this_session_only(board: Path) -> None:
    s = session(board)
    item = s.next()
    s.skip(item["question_id"], item["response_sha256"])
    assert s.next()["response_sha256"] != item["response_sha256"]
    assert session(board).next() == item


@pytest.mark.slow
def test_a_second_labeller_is_given_the_overlap_share_and_people_are_compared(board: Path) -> None:
    ada = session(board, "ada", overlap=1.0)
    first = [label_next(ada, "pass") for _ in range(12)]
    bo = session(board, "bo", overlap=1.0)
    again = bo.next()
    assert (again["question_id"], again["response_sha256"]) == (first[0]["question_id"], first[0]["response_sha256"])
    for _ in range(12):
        label_next(bo, "fail")
    assert session(board, "cy", overlap=0.0).next()["response_sha256"] not in {f["response_sha256"] for f in first}
    dualboard(board, "ingest")
    dualboard(board, "grade", "--no-progress")
    dualboard(board, "stats")
    table = pd.read_csv(board / "build" / "stats" / BENCHMARK / "labelling.csv")
    people = table[table["design"].eq("overlap")].iloc[0]
    assert (people["grader"], people["compared_with"], people["n_labels"]) == ("ada", "bo", 12)
    assert people["accuracy"] == 0.0
    # the human grader reads the first label of each answer: ada's pass, not bo's later fail
    verdicts = read_table(VERDICTS, board / "build" / "scored", BENCHMARK)
    human = verdicts[verdicts["role"].eq("human")]
    assert set(human["score"]) == {100.0}


@pytest.mark.parametrize("mark", [1, -5, 101, "maybe"])
def test_a_mark_that_could_be_misread_is_refused(board: Path, mark) -> None:
    s = session(board)
    item = s.next()
    with pytest.raises(LabellingError):
        s.label(item["question_id"], item["response_sha256"], mark)
    assert not s.path.exists()


def test_label_text_writes_pass_fail_and_marks() -> None:
    assert [label_text(x) for x in ("pass", "fail", 0, 100, 60.0)] == ["pass", "fail", "fail", "pass", "60"]


def test_a_labeller_name_that_is_not_a_file_name_is_refused(board: Path) -> None:
    with pytest.raises(LabellingError, match="not a usable name"):
        session(board, "../ada")


@pytest.mark.slow
def test_labelling_needs_a_graded_board(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "benchmarks" / BENCHMARK
    folder.mkdir(parents=True)
    write_board(tmp_path / "other", runs=1)
    for name in ("benchmark.yaml", "questions.jsonl"):
        (folder / name).write_bytes((tmp_path / "other/data/benchmarks" / BENCHMARK / name).read_bytes())
    with pytest.raises(LabellingError, match="run `dualboard build`"):
        session(tmp_path)


@pytest.mark.slow
def test_validate_refuses_a_badly_named_or_linked_labeller_file(board: Path) -> None:
    folder = board / "data" / "benchmarks" / BENCHMARK / "human_labels"
    s = session(board)
    label_next(s)
    (folder / "Ada Lovelace.csv").write_bytes(s.path.read_bytes())
    proc = dualboard_failing(board, "validate")
    assert "human_labels/Ada Lovelace.csv" in proc and "not a labeller's file" in proc
    (folder / "Ada Lovelace.csv").unlink()
    os.symlink("/etc/passwd", folder / "eve.csv")
    proc = dualboard_failing(board, "validate")
    assert "eve.csv" in proc and "link" in proc


def dualboard_failing(root: Path, *args: str) -> str:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", *args, "--root", str(root)], capture_output=True, text=True, check=False
    )
    assert proc.returncode != 0, proc.stdout
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_the_graders_page_says_what_the_design_table_holds(board: Path) -> None:
    import html
    import re

    s = session(board)
    for k in range(24):
        label_next(s, "pass" if k % 3 else "fail")
    dualboard(board, "build", "--no-progress")
    table = pd.read_csv(board / "build" / "stats" / BENCHMARK / "labelling.csv", keep_default_na=False)
    page = html.unescape(
        re.sub(r"<[^>]+>", "", (board / "site/benchmarks" / BENCHMARK / "graders/index.html").read_text())
    )
    assert "By the labelling design" in page
    for row in table.itertuples():
        if row.estimable:
            low, high = float(row.kappa_ci_low), float(row.kappa_ci_high)
            assert f"κ({row.grader} vs people) = {float(row.kappa):.2f} [{low:.2f}, {high:.2f}] after" in page
        else:
            assert f"κ({row.grader} vs people): not estimable yet: {row.reason}" in page
    assert table["estimable"].astype(str).eq("True").any(), "some grader is estimable after 24 labels"
