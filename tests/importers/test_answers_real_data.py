"""The answers table on the real paper release: which answers did the LLM judge pass and the authors fail?

In the 2024-04-28 open-ended release of "Easy Problems That LLMs Get Wrong", the traditional score
is the authors' LLM judge and the answer key is the authors' own marks. The documented DuckDB query
over the answers table must find exactly the answers where the two disagree that way, with the
text the authors marked, computed here independently from the imported files.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from dualboard.grading import grade_benchmark
from dualboard.kappa import PASS_MARK
from dualboard.release.dataset_card import ANSWERS_QUERY
from dualboard.scored_files import ANSWERS, write_scored
from tests.importers.import_fixtures import load_imported, load_labels

NAME = "easy-problems-open"


def _judge_passed_key_failed(dest: Path) -> dict[tuple[str, str, int], str]:
    """(run, question, round) → response, from predictions.jsonl and human_labels.csv as imported."""
    responses, judge = {}, {}
    for path in (dest / "submissions" / NAME).glob("*/predictions.jsonl"):
        for line in path.read_text("utf-8").splitlines():
            p = json.loads(line)
            key = (path.parent.name, p["question_id"], p.get("round", 0))
            responses[key], judge[key] = p["response"], p["recorded"]["judge"]
    with (dest / "data" / "benchmarks" / NAME / "human_labels.csv").open(encoding="utf-8") as handle:
        marks = {(r["run"], r["question"], int(r["round"])): float(r["label"]) for r in csv.DictReader(handle)}
    return {k: responses[k] for k in responses if judge[k] >= PASS_MARK and marks[k] < PASS_MARK}


def test_documented_query_finds_the_answers_the_judge_passed_and_the_authors_failed(imported_open: Path, tmp_path):
    benchmark, runs = load_imported(imported_open, NAME)
    tables = grade_benchmark(benchmark, runs, human_labels=load_labels(imported_open, NAME))
    published = tmp_path / "answers.parquet"  # as a release publishes the answers table
    pq.write_table(write_scored(tables, tmp_path, NAME, "real-data").published(ANSWERS), published)
    query = ANSWERS_QUERY.format(path=str(published), mark=PASS_MARK)
    found = duckdb.sql(query).df()

    expected = _judge_passed_key_failed(imported_open)
    keys = list(zip(found.run_id, found.question_id, found["round"], strict=True))
    assert len(expected) > 20, "the judge is lenient on this release: many such answers"
    assert sorted(keys) == sorted(expected) and keys == sorted(keys)
    assert found.response.tolist() == [expected[k] for k in keys]
    assert set(found.key_answer) <= {
        q["answer_key"].get("answer", q["answer_key"]["reference"]) for q in benchmark.questions
    }
