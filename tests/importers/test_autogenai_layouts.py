"""The autogenai importer on small synthetic releases: layouts, safety, nothing half-written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.importers.import_fixtures import load_imported

from generator.errors import DualboardError
from generator.intake.importers import import_autogenai
from generator.intake.importers.autogenai import repair_mojibake, run_id_for


def _open_record(question: int, answer: str, score: int) -> dict:
    return {
        "category": "Puzzle",
        "question": f"Question {question}?",
        "human_answer": f"Key {question}",
        "model_answer": answer,
        "eval_response": f"judged {score}",
        "score": score,
    }


def _write(path: Path, records: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records), encoding="utf-8")


@pytest.fixture
def open_release(tmp_path: Path) -> Path:
    """Two models, two round_N folders, keyed "1".."2" like the real open release."""
    src = tmp_path / "2025-01-02-Open-Benchmark"
    for round_number in (1, 2):
        for model in ("My Model/v1", "other"):
            records = {str(q): _open_record(q, f"{model} r{round_number} q{q}", 20 * q * round_number) for q in (1, 2)}
            _write(
                src / "auto_eval_outputs" / f"round_{round_number}" / f"auto_eval-{model.replace('/', '_')}.json",
                records,
            )
    return src


def test_round_folders_become_zero_based_rounds(open_release: Path, tmp_path: Path) -> None:
    summary = import_autogenai(open_release, benchmark="toy-open", dest=tmp_path / "repo")
    assert (summary.question_type, summary.n_questions, summary.n_predictions) == ("open", 2, 8)
    assert summary.runs == ("my-model_v1", "other") and summary.version == "2025-01-02"
    benchmark, runs = load_imported(tmp_path / "repo", "toy-open")
    run = runs[0]
    assert [(p["question_id"], p["round"], p["recorded"]["judge"]) for p in run.predictions] == [
        ("1", 0, 20),
        ("2", 0, 40),
        ("1", 1, 40),
        ("2", 1, 80),
    ]
    assert run.metadata["rounds"] == 2 and run.metadata["model"] == "My Model_v1"
    assert benchmark.traditional["open"].options == {"field": "judge"}


def test_existing_folders_are_not_overwritten_and_nothing_is_half_written(open_release: Path, tmp_path: Path) -> None:
    dest = tmp_path / "repo"
    import_autogenai(open_release, benchmark="toy-open", dest=dest)
    before = sorted(p.relative_to(dest) for p in dest.rglob("*"))
    with pytest.raises(DualboardError, match="already exists"):
        import_autogenai(open_release, benchmark="toy-open", dest=dest)
    assert sorted(p.relative_to(dest) for p in dest.rglob("*")) == before
    import_autogenai(open_release, benchmark="toy-open", dest=dest, overwrite=True)
    assert sorted(p.relative_to(dest) for p in dest.rglob("*")) == before


def test_a_bad_score_stops_the_import_before_any_file_is_written(open_release: Path, tmp_path: Path) -> None:
    path = open_release / "auto_eval_outputs" / "round_2" / "auto_eval-other.json"
    records = json.loads(path.read_text())
    records["2"]["score"] = 150
    path.write_text(json.dumps(records))
    with pytest.raises(DualboardError, match="record 2/score: 150 is greater than the maximum of 100"):
        import_autogenai(open_release, benchmark="toy-open", dest=tmp_path / "repo")
    assert not (tmp_path / "repo").exists() or not any((tmp_path / "repo").rglob("*.jsonl"))


@pytest.mark.parametrize("name", ["../escape", "Upper", "", "a/b"])
def test_unsafe_benchmark_names_are_refused(open_release: Path, tmp_path: Path, name: str) -> None:
    with pytest.raises(DualboardError, match="safe folder name"):
        import_autogenai(open_release, benchmark=name, dest=tmp_path)


def test_a_folder_without_results_says_what_to_point_at(tmp_path: Path) -> None:
    with pytest.raises(DualboardError, match="point SRC at a release folder"):
        import_autogenai(tmp_path, benchmark="x", dest=tmp_path / "out")


@pytest.mark.parametrize(
    ("model", "taken", "expected"),
    [
        ("gpt-4o", set(), "gpt-4o"),
        ("../../etc/passwd", set(), "etc-passwd"),
        ("Claude 3 Opus", set(), "claude-3-opus"),
        ("gpt-4o", {"gpt-4o", "gpt-4o-2"}, "gpt-4o-3"),
        ("...", set(), "model"),
        ("_x", set(), "x"),
    ],
)
def test_run_ids_are_safe_and_unique(model: str, taken: set[str], expected: str) -> None:
    assert run_id_for(model, taken) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\u00e2\u0080\u009cwinning\u00e2\u0080\u009d", "\u201cwinning\u201d"),
        ("caf\u00e9", "caf\u00e9"),
        ("\u00c3\u0083\u00c2\u00a9", "\u00e9"),
        ("plain", "plain"),
        ("\u201calready fine\u201d", "\u201calready fine\u201d"),
    ],
)
def test_repair_mojibake(text: str, expected: str) -> None:
    assert repair_mojibake(text) == expected


def test_multiple_choice_records_become_choice_orders(tmp_path: Path) -> None:
    src = tmp_path / "2025-02-03-Multi-Benchmark"
    options = [["One", "Two", "Three", "Unknown"], ["Unknown", "Three", "One", "Two"]]
    records = {
        str(i): {
            "level_0": i,
            "index": 1,
            "category": "Puzzle",
            "question": "How many races?",
            "human_answer": "One race.",
            "correct_answer": "One",
            "multiple_choice": options[i],
            "correct_letter": "AC"[i],
            "model_answer": '{"ANSWER": "C"}',
            "score": [0, 100][i],
            "json_answer_letter": "C",
        }
        for i in range(2)
    }
    _write(src / "auto_eval_outputs" / "auto_eval-m.json", records)
    summary = import_autogenai(src, benchmark="toy-mc", dest=tmp_path / "repo")
    benchmark, (run,) = load_imported(tmp_path / "repo", "toy-mc")
    assert summary.question_type == "multiple_choice" and benchmark.questions[0]["choices"] == options[0]
    assert [(p["round"], p["choice_order"], p["recorded"]) for p in run.predictions] == [
        (0, ["A", "B", "C", "D"], {"published": 0}),
        (1, ["D", "C", "A", "B"], {"published": 100}),
    ]
