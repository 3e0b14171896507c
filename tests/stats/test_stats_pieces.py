"""Pieces (dualboard.stats.pieces): a run added, changed or removed computes only its own pieces and
its pairs with the other runs, and every table equals the one computed from scratch, frame by frame."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dualboard.stats import analyse
from dualboard.stats.pieces import PIECES_DIR, Pieces, by_run, columns_digest, run_digests
from dualboard.stats.tables import TABLES, StatsTables
from tests.conftest import tiny_predictions, tree_bytes, write_run
from tests.stats.stats_builders import simulated_runs
from tests.stats.test_stats_real_data import SOURCE, load_run

N_BOOT = 300
MEANS = {f"run{i}": (0.85 - 0.08 * i, 0.75 - 0.07 * i) for i in range(6)}


def assert_same_tables(got: StatsTables, fresh: StatsTables) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(got, name), getattr(fresh, name), check_exact=True)
    assert got.notes == fresh.notes


def with_categories(scored: pd.DataFrame) -> pd.DataFrame:
    """Give the questions three categories, so agreement has per-category rows besides the per-run ones."""
    number = scored["question_id"].str[1:].astype(int)
    return scored.assign(category=number.mod(3).map({0: "logic", 1: "maths", 2: "words"}))


def analysed_with(scored: pd.DataFrame, path: Path) -> tuple[StatsTables, Pieces]:
    """Analyse with the pieces saved at ``path`` (read back from the file), then save them."""
    pieces = Pieces.load(path)
    tables = analyse(scored, n_boot=N_BOOT, pieces=pieces)
    pieces.save()
    return tables, pieces


@pytest.fixture(scope="module")
def scored() -> pd.DataFrame:
    return with_categories(simulated_runs(MEANS, 40, 3))


def test_one_more_run_computes_only_its_pieces_and_equals_a_fresh_analysis(scored, tmp_path):
    path = tmp_path / "pieces.json"
    five = scored[scored["run_id"] != "run5"]
    first, pieces = analysed_with(five, path)
    assert (pieces.reused, pieces.asked) == (0, 10)  # a models row and an agreement row per run
    assert pieces.tally["pairwise"] == [20, 20]  # 10 pairs in each grading
    assert_same_tables(first, analyse(five, n_boot=N_BOOT))
    added, pieces = analysed_with(scored, path)
    assert (pieces.reused, pieces.asked) == (10, 12)
    assert pieces.tally["pairwise"] == [30, 10]  # only run5's 5 pairs per grading are compared
    assert_same_tables(added, analyse(scored, n_boot=N_BOOT))


def test_a_removed_run_takes_its_pieces_and_the_rest_are_reused(scored, tmp_path):
    path = tmp_path / "pieces.json"
    analysed_with(scored, path)
    four = scored[~scored["run_id"].isin(["run1", "run4"])]
    removed, pieces = analysed_with(four, path)
    assert (pieces.reused, pieces.asked) == (8, 8)
    assert pieces.tally["pairwise"] == [12, 0]
    assert_same_tables(removed, analyse(four, n_boot=N_BOOT))
    assert len(json.loads(path.read_text("utf-8"))["pieces"]) == 8 + 12  # the two runs' pieces and pairs left the file


@pytest.mark.slow
def test_a_changed_run_or_option_is_computed_again(scored, tmp_path):
    path = tmp_path / "pieces.json"
    analysed_with(scored, path)
    changed = scored.copy()
    first = changed.index[changed["run_id"] == "run2"][0]
    changed.loc[first, "answer_key"] = 100.0 - changed.loc[first, "answer_key"]
    again, pieces = analysed_with(changed, path)
    assert (pieces.reused, pieces.asked) == (10, 12)
    assert pieces.tally["pairwise"] == [30, 5]  # run2's answer-key pairs; its traditional scores are unchanged
    assert_same_tables(again, analyse(changed, n_boot=N_BOOT))
    other_seed = Pieces.load(path)
    tables = analyse(changed, n_boot=N_BOOT, seed=7, pieces=other_seed)
    assert other_seed.reused == 6  # the models rows need no seed; every κ bootstrap does
    assert_same_tables(tables, analyse(changed, n_boot=N_BOOT, seed=7))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "computed"),
    [
        ("a traditional score that keeps its verdict", 2),  # score_a: the mean |difference| reads it
        ("an answer-key verdict", 2),  # verdict_b and score_b
        ("two answers' order", 1),  # the same question means: only the agreement row reads the order
        ("a question id", 2),
    ],
)
def test_each_input_of_a_runs_agreement_row_computes_it_again(scored, tmp_path, change, computed):
    """A run's agreement piece is keyed by every value pair_stats reads of its rows (PAIR_STATS_COLUMNS):
    each one changed in run2 alone recomputes run2's row (and its models row where its question means
    moved), reuses the others' rows, and the tables equal a fresh analysis."""
    path = tmp_path / "pieces.json"
    analysed_with(scored, path)
    changed = scored.copy()
    rows = changed.index[changed["run_id"] == "run2"]
    if change.startswith("a traditional"):
        at = rows[changed.loc[rows, "traditional"].eq(100.0).to_numpy()][0]
        changed.loc[at, "traditional"] = 90.0
    elif change.startswith("an answer-key"):
        changed.loc[rows[0], "answer_key"] = 100.0 - changed.loc[rows[0], "answer_key"]
    elif change.startswith("two"):
        first = rows[changed.loc[rows, "answer_key"].ne(changed.loc[rows[0], "answer_key"]).to_numpy()][0]
        order = list(changed.index)
        i, j = order.index(rows[0]), order.index(first)
        order[i], order[j] = order[j], order[i]
        changed = changed.loc[order].reset_index(drop=True)
    else:
        changed.loc[rows[0], "question_id"] = "q-new"
    again, pieces = analysed_with(changed, path)
    agreement = pieces.asked - len(MEANS)  # the models rows come first in asked, one per run
    assert agreement == len(MEANS)
    assert pieces.computed == computed  # run2's agreement row, and its models row when its question means moved
    assert_same_tables(again, analyse(changed, n_boot=N_BOOT))


def test_a_run_with_a_new_question_leaves_the_other_runs_pieces(scored, tmp_path):
    """A run's agreement piece numbers its questions within the run (agreement._within_runs): a question id
    that sorts before every other, answered by a new run alone, moves every question's place in the benchmark
    and none in the other runs, whose pieces are reused."""
    path = tmp_path / "pieces.json"
    analysed_with(scored, path)
    last = scored.loc[scored["run_id"] == "run0", "question_id"].max()
    new = scored[scored["run_id"] == "run0"].assign(  # run0's answers, its last question now sorting first
        run_id="run6", model="m6", question_id=lambda f: f["question_id"].mask(f["question_id"] == last, "a-first")
    )
    more = pd.concat([scored, new], ignore_index=True)
    tables, pieces = analysed_with(more, path)
    assert (pieces.computed, pieces.asked) == (2, 14)  # run6's models and agreement rows
    assert_same_tables(tables, analyse(more, n_boot=N_BOOT))


def test_runs_are_sliced_as_groupby_splits_them_in_any_row_order(scored):
    shuffled = scored.sample(frac=1.0, random_state=4).reset_index(drop=True)
    grouped, rows = by_run(shuffled)
    split = dict(tuple(shuffled.groupby("run_id")))
    assert list(rows) == sorted(split)
    for run, part in split.items():
        pd.testing.assert_frame_equal(grouped.iloc[rows[run]], part)
    assert_same_tables(analyse(shuffled, n_boot=N_BOOT, pieces=Pieces(None)), analyse(scored, n_boot=N_BOOT))


def test_a_column_digest_tells_apart_every_value_and_its_place():
    ids = np.array(["a", "bc"], dtype=object)
    base = columns_digest({"q": ids, "x": np.array([1.0, 2.0])})
    assert columns_digest({"q": np.array(["ab", "c"], dtype=object), "x": np.array([1.0, 2.0])}) != base
    assert columns_digest({"q": ids, "x": np.array([2.0, 1.0])}) != base
    assert columns_digest({"q": ids, "y": np.array([1.0, 2.0])}) != base
    assert columns_digest({"q": ids, "x": np.array([1, 2])}) != base
    assert columns_digest({"q": np.array(["a", None], dtype=object), "x": np.array([1.0, 2.0])}) != base


@pytest.mark.parametrize("dtype", [object, "str"])
def test_a_runs_digest_covers_its_strings_and_their_order_not_the_other_runs(dtype):
    """run_digests numbers a column of strings once, then hashes each run's numbers within the run and its
    distinct strings: the same rows give the same digest whatever the other runs hold; any other string,
    order or a missing value gives another."""

    def digests(r: list, s: list) -> list[str]:
        frame = pd.DataFrame({"run_id": ["r"] * len(r) + ["s"] * len(s), "q": pd.Series(r + s, dtype=dtype)})
        grouped, rows = by_run(frame.assign(x=np.arange(len(frame)) < len(r)))
        return run_digests(grouped, rows, ["r", "s", "none"], ["q", "x"])

    base = digests(["a", "bc", "a"], ["a"])
    assert digests(["a", "bc", "a"], ["zz", "bc", "a"])[0] == base[0]  # other runs' strings are not read
    for other in (["ab", "c", "a"], ["bc", "a", "a"], ["a", "bc", "bc"], ["a", None, "a"], ["a", "bc"]):
        assert digests(other, ["a"])[0] != base[0], other
    assert base[2] == digests([], ["a"])[2] != base[0]  # a run without rows


@pytest.mark.parametrize("garbage", [b"", b"{not json", b'{"format": 99, "pieces": {}}', b'{"format": 1, "pieces": 3}'])
def test_a_corrupt_pieces_file_reads_as_empty(scored, tmp_path, garbage):
    path = tmp_path / "pieces.json"
    path.write_bytes(garbage)
    tables, pieces = analysed_with(scored, path)
    assert pieces.reused == 0
    assert_same_tables(tables, analyse(scored, n_boot=N_BOOT))
    assert len(json.loads(path.read_text("utf-8"))["pieces"]) == 12 + 30


@pytest.mark.skipif(not (SOURCE / "auto_eval_outputs").is_dir(), reason="shared real data absent")
def test_real_runs_added_one_at_a_time_equal_a_fresh_analysis(tmp_path):
    """The easy-problems Multi-Benchmark (13 published runs × 30 questions × 10 rounds)."""
    runs = [load_run(p) for p in sorted((SOURCE / "auto_eval_outputs").glob("auto_eval-*.json"))]
    path = tmp_path / "pieces.json"
    analysed_with(pd.concat(runs[:-1], ignore_index=True), path)
    every = pd.concat(runs, ignore_index=True)
    tables, pieces = analysed_with(every, path)
    assert pieces.reused == pieces.asked - 2 == 2 * (len(runs) - 1)
    pairs = len(runs) * (len(runs) - 1) // 2
    # The last run's pairs only; the source has one grading, loaded as both, so they are compared once.
    assert pieces.tally["pairwise"] == [2 * pairs, len(runs) - 1]
    assert_same_tables(tables, analyse(every, n_boot=N_BOOT))


def dualboard(root: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", *args, "--root", str(root)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_the_stats_command_reuses_pieces_and_writes_what_a_fresh_one_writes(tiny_root):
    write_run(tiny_root, "run-b")
    for command in ("ingest", "grade", "stats"):
        dualboard(tiny_root, command)
    write_run(tiny_root, "run-c", [{**p, "response": "Final answer: 5"} for p in tiny_predictions()])
    dualboard(tiny_root, "ingest")
    dualboard(tiny_root, "grade")
    line = dualboard(tiny_root, "stats")
    assert "tables for tiny (3 runs)" in line
    assert reused_of(line) == (6, 9)  # a models row and two agreement rows per run: run-c's are new
    assert "; 2 of 6 run pairs reused" in line  # in each grading run-a vs run-b is known; run-c's two pairs are new
    again = tree_bytes(tiny_root / "build" / "stats")
    for folder in (tiny_root / "build" / "stats", tiny_root / "build" / PIECES_DIR):
        shutil.rmtree(folder)
    # From scratch: run-b's verdicts are run-a's, so its models row and two agreement rows are run-a's.
    assert reused_of(dualboard(tiny_root, "stats")) == (3, 9)
    assert tree_bytes(tiny_root / "build" / "stats") == again


def reused_of(line: str) -> tuple[int, int]:
    """(reused, asked) of a stats line: '…; 4 of 6 per-run results reused'."""
    found = re.search(r"; (\d+) of (\d+) per-run results reused", line)
    return (int(found[1]), int(found[2])) if found else (0, 0)


@pytest.mark.slow
def test_after_a_run_is_added_changed_or_removed_stats_writes_what_stats_force_writes(tiny_root):
    """Through the CLI: the tables kept pieces give are byte for byte those of `dualboard stats --force`."""
    other = [{**p, "response": "Final answer: 5"} for p in tiny_predictions()]
    write_run(tiny_root, "run-b", other)
    for command in ("ingest", "grade", "stats"):
        dualboard(tiny_root, command)
    steps = {
        "added": lambda: write_run(tiny_root, "run-c", [{**p, "response": "no idea"} for p in tiny_predictions()]),
        "changed": lambda: write_run(tiny_root, "run-b", tiny_predictions()),
        "removed": lambda: shutil.rmtree(tiny_root / "submissions" / "tiny" / "run-a"),
    }
    stats_dir = tiny_root / "build" / "stats"
    for what, step in steps.items():
        step()
        dualboard(tiny_root, "ingest")
        dualboard(tiny_root, "grade")
        line = dualboard(tiny_root, "stats")
        assert "run pairs reused" in line, (what, line)
        kept = tree_bytes(stats_dir)
        forced = dualboard(tiny_root, "stats", "--force")
        # From scratch, only runs with the same verdicts within this analysis share their pieces.
        assert reused_of(forced)[0] < reused_of(line)[0], (what, line, forced)
        assert tree_bytes(stats_dir) == kept, what
