"""The autogenai importer on small synthetic releases: layouts, safety, nothing half-written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dualboard.errors import DualboardError
from dualboard.importers import import_autogenai
from dualboard.importers.autogenai import repair_mojibake
from dualboard.importers.run_folders import slug
from dualboard.intake.human_labels import response_sha256
from tests.importers.import_fixtures import load_imported, load_labels


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


def _write_marks(src: Path, marks: dict[tuple[int, str], dict[str, object]]) -> None:
    """Write llm_outputs/round_N/final_answers-<model>.json: the answers as the authors marked them."""
    for (round_number, model), scores in marks.items():
        eval_path = src / "auto_eval_outputs" / f"round_{round_number}" / f"auto_eval-{model}.json"
        records = json.loads(eval_path.read_text(encoding="utf-8"))
        answers = {
            key: {"model_answer": records.get(key, {}).get("model_answer"), "score": score}
            for key, score in scores.items()
        }
        _write(src / "llm_outputs" / f"round_{round_number}" / f"final_answers-{model}.json", answers)


def _every_mark(value: object) -> dict[tuple[int, str], dict[str, object]]:
    return {(r, m): {"1": value, "2": 60} for r in (1, 2) for m in ("My Model_v1", "other")}


def test_the_authors_marks_become_the_answer_key_grading(open_release: Path, tmp_path: Path) -> None:
    _write_marks(open_release, _every_mark(0))
    summary = import_autogenai(open_release, benchmark="toy-open", dest=tmp_path / "repo")
    assert summary.n_human_labels == 8 and summary.warnings == ()
    folder = tmp_path / "repo" / "data" / "benchmarks" / "toy-open"
    lines = (folder / "human_labels.csv").read_text().splitlines()
    assert lines[0] == "run,question,round,label,response_sha256"
    assert [line.rsplit(",", 1)[0] for line in lines[1:3]] == ["my-model_v1,1,0,0", "my-model_v1,2,0,60"]
    run = tmp_path / "repo" / "submissions" / "toy-open" / "my-model_v1" / "predictions.jsonl"
    responses = [json.loads(line)["response"] for line in run.read_text().splitlines()]
    assert [line.rsplit(",", 1)[1] for line in lines[1:3]] == [response_sha256(r) for r in responses[:2]]
    benchmark, _ = load_imported(tmp_path / "repo", "toy-open")
    assert [g.name for g in benchmark.answer_key] == ["human", "rules"]
    assert load_labels(tmp_path / "repo", "toy-open").score.tolist() == [0.0, 60.0] * 4


def test_marks_on_some_answers_are_labels_but_not_the_answer_key_grading(open_release: Path, tmp_path: Path) -> None:
    marks = _every_mark(100)
    marks[(2, "other")] = {"1": "", "2": None}
    _write_marks(open_release, marks)
    summary = import_autogenai(open_release, benchmark="toy-open", dest=tmp_path / "repo")
    assert summary.n_human_labels == 6
    assert summary.warnings == (
        (
            "the authors' marks cover 6 of 8 answers: written to human_labels.csv for comparison, "
            "and rules stays the answer-key grader"
        ),
    )
    benchmark, _ = load_imported(tmp_path / "repo", "toy-open")
    assert [g.name for g in benchmark.answer_key] == ["rules"]


def test_a_differing_marked_answer_replaces_the_judged_copy(open_release: Path, tmp_path: Path) -> None:
    _write_marks(open_release, _every_mark(20))
    path = open_release / "llm_outputs" / "round_1" / "final_answers-other.json"
    marks = json.loads(path.read_text())
    marks["2"]["model_answer"] = "the real answer"
    path.write_text(json.dumps(marks))
    summary = import_autogenai(open_release, benchmark="toy-open", dest=tmp_path / "repo")
    assert len(summary.warnings) == 1 and "question 2 of other (round 0)" in summary.warnings[0]
    _, runs = load_imported(tmp_path / "repo", "toy-open")
    assert runs[1].predictions[1]["response"] == "the real answer"
    provenance = (tmp_path / "repo/submissions/toy-open/other/provenance.jsonl").read_text().splitlines()
    assert json.loads(provenance[1])["judged_answer"] == "other r1 q2"


@pytest.mark.parametrize(
    ("marks", "message"),
    [
        ({"1": 150, "2": 0}, "record 1/score: 150 is greater than the maximum of 100"),
        ({"1": "good", "2": 0}, "record 1/score: 'good' does not match"),
        ({"1": 20}, "question\\(s\\) 2 are in only one of it and auto_eval-other.json"),
        ({"1": 20, "2": 20, "3": 20}, "question\\(s\\) 3 are in only one"),
    ],
)
def test_bad_marks_stop_the_import_before_any_file_is_written(
    open_release: Path, tmp_path: Path, marks: dict, message: str
) -> None:
    _write_marks(open_release, {(1, "other"): marks})
    with pytest.raises(DualboardError, match=message):
        import_autogenai(open_release, benchmark="toy-open", dest=tmp_path / "repo")
    assert not (tmp_path / "repo").exists()


def test_marks_that_would_read_back_as_pass_fail_are_refused(open_release: Path, tmp_path: Path) -> None:
    _write_marks(open_release, {(r, m): {"1": 1, "2": 0} for r in (1, 2) for m in ("My Model_v1", "other")})
    with pytest.raises(DualboardError, match=r"marks \(0, 1\) would not read back unchanged"):
        import_autogenai(open_release, benchmark="toy-open", dest=tmp_path / "repo")


def test_importing_twice_writes_the_same_bytes(open_release: Path, tmp_path: Path) -> None:
    _write_marks(open_release, _every_mark(40))
    trees = []
    for name in ("a", "b"):
        import_autogenai(open_release, benchmark="toy-open", dest=tmp_path / name)
        files = (p for p in (tmp_path / name).rglob("*") if p.is_file())
        trees.append({p.relative_to(tmp_path / name): p.read_bytes() for p in files})
    assert trees[0] == trees[1] and Path("data/benchmarks/toy-open/human_labels.csv") in trees[0]


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
    assert slug(model, taken) == expected


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
