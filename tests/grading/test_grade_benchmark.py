"""grade_benchmark, write_scored and the verdict cache."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from dualboard.grading import SCORED_COLUMNS, VERDICT_COLUMNS, VerdictCache, grade_benchmark, write_scored
from dualboard.grading.errors import GraderConfigError, GradingInputError
from dualboard.grading.exact import NumericGrader
from dualboard.grading.mc_letter import McLetterGrader
from dualboard.grading.rules import RulesGrader
from dualboard.intake.human_labels import parse_human_labels
from dualboard.intake.models import GraderSpec
from dualboard.scored_files import TABLES, ScoredFileError
from dualboard.store import LocalStore
from tests.grading.grading_fixtures import labels_of, make_benchmark, make_run


@pytest.fixture
def benchmark(mc_question, open_question):
    return make_benchmark([mc_question, open_question])


@pytest.fixture
def runs():
    return [
        make_run(
            "beta",
            [
                {"question_id": "horses", "response": '{"ANSWER": "A"}'},
                {"question_id": "horses", "round": 1, "response": ""},
                {"question_id": "capital", "response": "Final answer: Paris", "recorded": {"judge": 80}},
            ],
        ),
        make_run(
            "alpha",
            [
                {"question_id": "capital", "response": "Lyon", "recorded": {"judge": 20}},
                {"question_id": "horses", "response": "Answer: B", "choice_order": ["B", "A", "C", "D"]},
            ],
            model="Alpha 1",
        ),
    ]


def test_scored_table_has_the_contract_columns_and_one_row_per_answer(benchmark, runs) -> None:
    scored = grade_benchmark(benchmark, runs).scored
    assert tuple(scored.columns) == SCORED_COLUMNS
    assert list(zip(scored.run_id, scored.question_id, scored["round"], strict=True)) == [
        ("alpha", "horses", 0),
        ("alpha", "capital", 0),
        ("beta", "horses", 0),
        ("beta", "horses", 1),
        ("beta", "capital", 0),
    ]
    assert scored.model.tolist()[:2] == ["Alpha 1", "Alpha 1"]
    assert scored.traditional.tolist() == [100.0, 20.0, 100.0, 0.0, 80.0]
    assert scored.answer_key.tolist() == [100.0, 0.0, 100.0, 0.0, 100.0]
    assert scored.traditional_grader.tolist() == ["mc_letter", "recorded", "mc_letter", "mc_letter", "recorded"]
    assert set(scored.answer_key_grader) == {"rules"}
    assert scored.verdict_parse.tolist() == ["recovered", "ok", "ok", "none", "ok"]
    assert scored.missing.tolist() == [False, False, False, True, False]
    assert scored.dtypes["traditional"] == "float64" and scored.dtypes["round"] == "int64"


def test_verdicts_table_is_long_with_one_row_per_grader(benchmark, runs) -> None:
    verdicts = grade_benchmark(benchmark, runs).verdicts
    assert tuple(verdicts.columns) == VERDICT_COLUMNS
    assert len(verdicts) == 5 * 2
    assert verdicts.groupby("role").size().to_dict() == {"answer_key": 5, "traditional": 5}
    rules = verdicts[verdicts.grader == "rules"].iloc[0]
    assert rules.config_hash == RulesGrader().config_hash and rules.grader_version == RulesGrader.version
    assert verdicts.detail.str.len().gt(0).all()


def test_empty_response_is_counted_not_dropped(benchmark) -> None:
    runs = [make_run("r", [{"question_id": "horses", "response": "   "}, {"question_id": "capital", "response": ""}])]
    scored = grade_benchmark(benchmark, runs).scored
    assert len(scored) == 2 and scored.missing.all()
    assert scored.loc[scored.question_id == "horses", ["traditional", "verdict_parse"]].values.tolist() == [
        [0.0, "none"]
    ]
    assert scored.answer_key.tolist() == [0.0, 0.0]


def test_answer_key_is_nan_without_answer_key_graders(mc_question) -> None:
    bench = make_benchmark([mc_question], answer_key=())
    scored = grade_benchmark(bench, [make_run("r", [{"question_id": "horses", "response": "A"}])]).scored
    assert math.isnan(scored.answer_key.iloc[0]) and scored.answer_key_grader.iloc[0] == ""


def test_unknown_question_and_duplicates_are_refused(benchmark) -> None:
    with pytest.raises(GradingInputError, match="does not have"):
        grade_benchmark(benchmark, [make_run("r", [{"question_id": "nope", "response": "A"}])])
    twice = [{"question_id": "horses", "response": "A"}, {"question_id": "horses", "response": "B"}]
    with pytest.raises(GradingInputError, match="twice"):
        grade_benchmark(benchmark, [make_run("r", twice)])


def test_missing_traditional_grader_for_a_question_type(mc_question, open_question) -> None:
    bench = make_benchmark([mc_question, open_question], traditional={"multiple_choice": GraderSpec("mc_letter")})
    with pytest.raises(GraderConfigError, match="graders.traditional.open"):
        grade_benchmark(bench, [make_run("r", [{"question_id": "capital", "response": "x"}])])


def test_human_labels_become_human_verdict_rows(benchmark, runs) -> None:
    labels = parse_human_labels(
        labels_of(
            runs,
            {
                "run": ["alpha", "beta"],
                "question": ["capital", "horses"],
                "round": [0, 1],
                "label": ["pass", "0"],
            },
        )
    )
    verdicts = grade_benchmark(benchmark, runs, human_labels=labels).verdicts
    human = verdicts[verdicts.role == "human"]
    assert list(zip(human.run_id, human.question_id, human["round"], human.score, strict=True)) == [
        ("alpha", "capital", 0, 100.0),
        ("beta", "horses", 1, 0.0),
    ]
    typo = parse_human_labels(labels_of(runs, {"run": ["alpha"], "question": ["capitol"], "round": [0], "label": [1]}))
    with pytest.raises(GradingInputError, match="no run has"):
        grade_benchmark(benchmark, runs, human_labels=typo)


def test_labels_of_a_run_not_graded_are_set_aside_with_a_note(benchmark, runs) -> None:
    """A run that left the store (or a preview left out) keeps its labels in the file; grading sets them aside."""
    labels = parse_human_labels(
        labels_of(
            runs,
            {
                "run": ["alpha", "zeta", "zeta"],
                "question": ["capital", "capital", "horses"],
                "round": [0, 0, 1],
                "label": ["pass", "fail", "pass"],
            },
        )
    )
    tables = grade_benchmark(benchmark, runs, human_labels=labels)
    human = tables.verdicts[tables.verdicts.role == "human"]
    assert list(human.run_id) == ["alpha"]
    assert tables.notes == (
        "human_labels.csv: 2 label(s) of 1 run(s) not graded ('zeta') set aside; they stay in the file",
    )


def test_progress_counts_cache_hits_as_done(benchmark, runs, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    for _ in ("cold", "warm"):
        seen.clear()
        grade_benchmark(benchmark, runs, cache=VerdictCache(LocalStore(tmp_path)), progress=lambda *r: seen.append(r))
        assert (seen[0], seen[-1]) == ((0, 10), (10, 10))


def test_write_scored_round_trips_and_leaves_no_temporary_files(benchmark, runs, tmp_path: Path) -> None:
    tables = grade_benchmark(benchmark, runs)
    folder = write_scored(tables, tmp_path / "build" / "scored", "demo", "000001")
    run_ids = sorted(set(tables.scored["run_id"]))
    for table, frame in zip(TABLES, (tables.scored, tables.answers, tables.verdicts), strict=True):
        names = sorted(p.name for p in (folder.path / table.name).iterdir())
        assert names == [f"{run_id}.parquet" for run_id in run_ids], table.name
        read = pd.concat([pd.read_parquet(folder.path / table.name / name) for name in names], ignore_index=True)
        pd.testing.assert_frame_equal(read, frame[list(table.stored_names)], check_dtype=False)
    assert sorted(p.name for p in folder.path.iterdir()) == ["about.json", "answers", "scored", "verdicts"]
    with pytest.raises(ScoredFileError, match="cannot name a folder"):
        write_scored(tables, tmp_path, "../evil", "000001")


class _Counter:
    """Count calls of a grader class's grade_many by patching it."""

    def __init__(self, monkeypatch, cls) -> None:
        self.items = 0
        original = cls.grade_many

        def counting(grader, items):
            self.items += len(items)
            return original(grader, items)

        monkeypatch.setattr(cls, "grade_many", counting)


def test_second_grading_with_the_cache_makes_zero_grader_calls(benchmark, runs, tmp_path: Path, monkeypatch) -> None:
    mc, rules = _Counter(monkeypatch, McLetterGrader), _Counter(monkeypatch, RulesGrader)
    first = grade_benchmark(benchmark, runs, cache=VerdictCache(LocalStore(tmp_path / "store")))
    assert (mc.items, rules.items) == (3, 5)
    second = grade_benchmark(benchmark, runs, cache=VerdictCache(LocalStore(tmp_path / "store")))
    assert (mc.items, rules.items) == (3, 5)
    pd.testing.assert_frame_equal(first.scored, second.scored)
    pd.testing.assert_frame_equal(first.verdicts, second.verdicts)
    assert list((tmp_path / "store" / "verdicts").glob("*/*/part-*.parquet"))


def test_a_new_submission_grades_only_its_answers(benchmark, runs, tmp_path: Path, monkeypatch) -> None:
    rules = _Counter(monkeypatch, RulesGrader)
    grade_benchmark(benchmark, runs, cache=VerdictCache(LocalStore(tmp_path)))
    newcomer = make_run("gamma", [{"question_id": "capital", "response": "Paris", "recorded": {"judge": 100}}])
    grade_benchmark(benchmark, [*runs, newcomer], cache=VerdictCache(LocalStore(tmp_path)))
    assert rules.items == 5 + 1


def test_changing_an_option_invalidates_only_that_graders_verdicts(
    numeric_question, tmp_path: Path, monkeypatch
) -> None:
    numeric, rules = _Counter(monkeypatch, NumericGrader), _Counter(monkeypatch, RulesGrader)
    runs = [make_run("r", [{"question_id": "speed", "response": "Final answer: 8.2"}])]

    def bench(tolerance):
        return make_benchmark([numeric_question], traditional={"open": GraderSpec("numeric", {"tolerance": tolerance})})

    assert grade_benchmark(bench(0.1), runs, cache=VerdictCache(LocalStore(tmp_path))).scored.traditional.tolist() == [
        0.0
    ]
    after = grade_benchmark(bench(0.2), runs, cache=VerdictCache(LocalStore(tmp_path))).scored
    assert after.traditional.tolist() == [100.0]
    assert (numeric.items, rules.items) == (2, 1)


def test_verdict_parse_rates_count_outcomes_per_grader(benchmark, runs) -> None:
    from dualboard.grading import verdict_parse_rates

    rates = verdict_parse_rates(grade_benchmark(benchmark, runs).verdicts)
    assert rates.grader.tolist() == ["mc_letter", "recorded", "rules"]
    mc = rates[rates.grader == "mc_letter"].iloc[0]
    assert (mc.n, mc.n_ok, mc.n_recovered, mc.n_none) == (3, 1, 1, 1)
    assert mc.no_verdict_rate == pytest.approx(1 / 3)
    assert (rates.n_ok + rates.n_recovered + rates.n_none == rates.n).all()


def test_one_traditional_grader_may_serve_every_type(mc_question, open_question) -> None:
    bench = make_benchmark([mc_question, open_question], traditional={"*": GraderSpec("rules")})
    runs = [
        make_run("r", [{"question_id": "horses", "response": "A"}, {"question_id": "capital", "response": "Paris"}])
    ]
    scored = grade_benchmark(bench, runs).scored
    assert scored.traditional_grader.tolist() == ["rules", "rules"] and scored.traditional.tolist() == [100.0, 100.0]
