"""The autogenai importer and mc_letter on the real published results (the shared easy-problems releases)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dualboard.grading import grade_benchmark
from dualboard.grading.choices import LETTERS
from dualboard.importers.autogenai import model_and_deployment
from dualboard.importers.run_folders import KEY_ANSWER_MAX_WORDS
from dualboard.names import is_name
from tests.importers.import_fixtures import (
    MC_RELEASE,
    OPEN_RELEASE,
    load_imported,
    load_labels,
    real_data,
)

# The one answer with two different JSON answers: it opens with {"ANSWER": "A"}, argues, then ends
# "So, the correct answer is: {"ANSWER": "C"}". The source scored the first; the correct letter is D.
TWO_JSON_ANSWERS = ("Meta-Llama-3-1-70B-Instruct", "18", 2)


def _published_records() -> pd.DataFrame:
    rows = []
    for path in sorted((real_data() / MC_RELEASE / "auto_eval_outputs").glob("auto_eval-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for key in sorted(data, key=int):
            record = data[key]
            rows.append(
                {
                    "model": model_and_deployment(path.stem.removeprefix("auto_eval-"))[0],
                    "question_id": str(record["index"]),
                    "round": int(record["level_0"]) // 30,
                    "published": float(record["score"]),
                    "published_letter": record["json_answer_letter"] or "",
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def mc_graded(imported_mc: Path) -> pd.DataFrame:
    benchmark, runs = load_imported(imported_mc, "easy-problems-mc")
    tables = grade_benchmark(benchmark, runs)
    mc = tables.verdicts[tables.verdicts.grader == "mc_letter"][["run_id", "question_id", "round", "detail"]]
    scored = tables.scored.merge(mc, on=["run_id", "question_id", "round"])
    return scored.merge(_published_records(), on=["model", "question_id", "round"], how="outer", indicator=True)


def test_mc_release_imports_every_answer(imported_mc: Path) -> None:
    benchmark, runs = load_imported(imported_mc, "easy-problems-mc")
    assert len(benchmark.questions) == 30 and len(runs) == 13
    assert all(len(run.predictions) == 300 for run in runs)
    assert all(sorted({p["round"] for p in run.predictions}) == list(range(10)) for run in runs)
    assert all(is_name(run.run_id) for run in runs)
    for question in benchmark.questions:
        assert (
            question["type"] == "multiple_choice" and question["correct_choice"] in LETTERS[: len(question["choices"])]
        )
    for run in runs:
        for prediction in run.predictions:
            assert sorted(prediction["choice_order"]) == ["A", "B", "C", "D"]
            assert prediction["recorded"]["published"] in (0, 100)


def test_mc_letter_reproduces_every_published_score(mc_graded: pd.DataFrame) -> None:
    """Traditional grading is the source's own rule: all 3,900 published scores, exactly."""
    assert (mc_graded["_merge"] == "both").all() and len(mc_graded) == 3900
    disagreements = mc_graded.loc[mc_graded.traditional != mc_graded.published]
    assert disagreements.empty, disagreements[["model", "question_id", "round", "traditional", "published", "detail"]]


def test_mc_letter_reads_every_published_letter(mc_graded: pd.DataFrame) -> None:
    """The letter read equals the source's json_answer_letter on all 3,900 answers ("" where it read none),
    including the answer with two JSON answers, where the importer's json_answer: first takes the source's."""
    ours = mc_graded.detail.str.extract(r"chose ([A-Z])", expand=False).fillna("")
    differ = mc_graded.loc[ours != mc_graded.published_letter, ["model", "question_id", "round", "detail"]]
    assert differ.empty, differ


def test_two_json_answers_are_flagged_by_both_gradings(mc_graded: pd.DataFrame, imported_mc: Path) -> None:
    model, question_id, round_ = TWO_JSON_ANSWERS
    row = mc_graded[
        (mc_graded.model == model) & (mc_graded.question_id == question_id) & (mc_graded["round"] == round_)
    ]
    assert row.detail.item().startswith("2 different answers given (A, C), took the first; chose A")
    assert row.verdict_parse.item() == "recovered" and row.traditional.item() == row.published.item() == 0.0
    benchmark, runs = load_imported(imported_mc, "easy-problems-mc")
    verdicts = grade_benchmark(benchmark, [r for r in runs if r.model == model]).verdicts
    rules = verdicts[
        (verdicts.grader == "rules") & (verdicts.question_id == question_id) & (verdicts["round"] == round_)
    ]
    assert rules.verdict_parse.item() == "recovered" and "2 different answers given (A, C)" in rules.detail.item()


def test_empty_answers_are_counted_as_unparsed_zeros(mc_graded: pd.DataFrame) -> None:
    empty = mc_graded[mc_graded.missing]
    # 20 published answers are empty (Llama 3.1 70B: 5, Gemini 1.5 Pro: 6, Mixtral 8x22B: 9); the source scored them 0.
    assert empty.groupby("model").size().to_dict() == {
        "Meta-Llama-3-1-70B-Instruct": 5,
        "gemini-1_5-pro": 6,
        "open-mixtral-8x22b": 9,
    }
    assert (empty.traditional == 0).all() and (empty.verdict_parse == "none").all()


def test_mc_recorded_means_equal_final_stats(imported_mc: Path) -> None:
    _, runs = load_imported(imported_mc, "easy-problems-mc")
    means = {run.model: sum(p["recorded"]["published"] for p in run.predictions) / len(run.predictions) for run in runs}
    final = pd.read_csv(real_data() / MC_RELEASE / "tables_and_charts" / "final_stats.csv")
    for published, mean_score in zip(final.model, final.mean_score, strict=True):
        model = model_and_deployment(published)[0]
        assert means[model] == pytest.approx(mean_score, abs=1e-9), model


def _open_release_csv_means() -> dict[str, float]:
    """Means of the published CSV copies (cp1252 text, so read as latin-1): a second source."""
    means = {}
    for path in sorted((real_data() / OPEN_RELEASE / "auto_eval_outputs").glob("auto_eval-*.csv")):
        means[path.stem.removeprefix("auto_eval-")] = pd.read_csv(path, encoding="latin-1")["score"].mean()
    return means


@pytest.fixture(scope="module")
def open_graded(imported_open: Path) -> pd.DataFrame:
    """The open release graded as `dualboard grade` grades it: human labels from human_labels.csv."""
    benchmark, runs = load_imported(imported_open, "easy-problems-open")
    return grade_benchmark(benchmark, runs, human_labels=load_labels(imported_open, "easy-problems-open"))


def test_open_release_imports_recorded_scores_intact(imported_open: Path, open_graded) -> None:
    benchmark, runs = load_imported(imported_open, "easy-problems-open")
    assert len(benchmark.questions) == 30 and len(runs) == 7
    assert {run.model for run in runs} >= {"mistal-8x22b"}  # names kept as published, typo included
    ours = open_graded.scored.groupby("model").traditional.mean()
    for model, mean in _open_release_csv_means().items():
        assert ours[model] == pytest.approx(mean, abs=1e-9), model
    assert set(open_graded.scored.traditional.unique()) <= {0.0, 20.0, 40.0, 60.0, 80.0, 100.0}
    assert set(open_graded.scored.traditional_grader) == {"recorded"}


def _published_marks() -> pd.DataFrame:
    """The authors' marks as published in llm_outputs/final_answers-<model>.json: a cross-check only."""
    rows = []
    for path in sorted((real_data() / OPEN_RELEASE / "llm_outputs").glob("final_answers-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        model = path.stem.removeprefix("final_answers-")
        rows += [{"model": model, "question_id": key, "mark": float(data[key]["score"])} for key in data]
    return pd.DataFrame(rows)


def test_open_release_marks_are_the_answer_key_grading(imported_open: Path, open_graded) -> None:
    """Every answer's answer-key score is the authors' mark, partial credit unchanged, graded by `human`."""
    header = yaml.safe_load((imported_open / "data/benchmarks/easy-problems-open/benchmark.yaml").read_text())
    assert header["graders"]["answer_key"] == [{"name": "human"}, {"name": "rules"}]
    assert header["graders"]["traditional"] == {"open": {"name": "recorded", "options": {"field": "judge"}}}
    scored = open_graded.scored.merge(_published_marks(), on=["model", "question_id"], validate="1:1")
    assert len(scored) == 210 and set(scored.answer_key_grader) == {"human"}
    assert scored.answer_key.tolist() == scored.mark.tolist()
    assert set(scored.answer_key) == {0.0, 20.0, 40.0, 60.0, 80.0, 100.0}
    roles = open_graded.verdicts.groupby("grader")["role"].agg(set).to_dict()
    assert roles == {"human": {"human"}, "recorded": {"traditional"}, "rules": {"answer_key"}}


def test_open_release_human_marks_reproduce_final_stats(open_graded) -> None:
    """The published final_stats.csv comes from the authors' marks, now Dualboard's answer-key grading.

    Per model over its 30 answers: mean, sd (ddof=1) and z_interval_error = 1.96·sd/√30,
    rounded to whole points as the table is. (Its ci_lower/ci_upper are not mean ± that
    half-width, e.g. 23 and 55 around 38 for gpt-4-turbo, and are not checked.)
    """
    scores = open_graded.scored.groupby("model").answer_key
    ours = pd.DataFrame({"mean_score": scores.mean(), "std_dev_score": scores.std(ddof=1), "n": scores.size()})
    ours["z_interval_error"] = 1.96 * ours.std_dev_score / np.sqrt(ours.n)
    final = pd.read_csv(real_data() / OPEN_RELEASE / "tables_and_charts" / "final_stats.csv").set_index("model")
    columns = ["mean_score", "std_dev_score", "z_interval_error"]
    print("\nours (unrounded):\n" + ours[columns].round(2).to_string() + "\npublished:\n" + final[columns].to_string())
    assert sorted(ours.index) == sorted(final.index) and (ours.n == 30).all()
    pd.testing.assert_frame_equal(ours.loc[final.index, columns].round(0), final[columns], check_names=False)


def test_open_release_keeps_the_judges_text_as_provenance(imported_open: Path) -> None:
    folder = imported_open / "submissions" / "easy-problems-open" / "gpt-4-turbo"
    rows = [json.loads(line) for line in (folder / "provenance.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 30 and all(row["eval_response"] for row in rows)


def test_open_release_responses_are_the_answers_the_authors_marked(imported_open: Path) -> None:
    """One auto_eval record (gpt-4-turbo, question 6) holds a copy of the answer key instead of the model's answer.

    The answer the authors marked (llm_outputs) is the response; the auto_eval copy stays as provenance.
    Everywhere else the two files hold the same answer once the mojibake is repaired.
    """
    benchmark, runs = load_imported(imported_open, "easy-problems-open")
    judged = {}
    for folder in sorted((imported_open / "submissions" / "easy-problems-open").iterdir()):
        for line in (folder / "provenance.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "judged_answer" in row:
                judged[(folder.name, row["question_id"])] = row["judged_answer"]
    assert list(judged) == [("gpt-4-turbo", "6")]
    assert judged["gpt-4-turbo", "6"] == benchmark.question("6")["answer_key"]["reference"]
    response = next(p for r in runs if r.run_id == "gpt-4-turbo" for p in r.predictions if p["question_id"] == "6")
    assert response["response"].startswith("If the robot originally has 8 arms")


def _same_text(a: str, b: str) -> bool:
    return a.strip().rstrip(".") == b.strip().rstrip(".")


def test_open_release_keys_match_the_published_question_file(imported_open: Path) -> None:
    """Keys come from the records, repaired (mojibake, question 3's odd record) to match the question file.

    The question file is from a later commit; it differs from the April records only by a final
    period (question 8) and trailing whitespace (question 25).
    """
    benchmark, _ = load_imported(imported_open, "easy-problems-open")
    published = json.loads((real_data() / "linguistic_benchmark.json").read_text(encoding="utf-8"))
    by_index = {str(q["index"]): q for q in published}
    for question in benchmark.questions:
        source = by_index[question["id"]]
        key = question["answer_key"]
        assert _same_text(key["reference"], source["human_answer"]), question["id"]
        # a key of a few words is an answer the rules check; a sentence is only a reference, which they do not
        assert ("answer" in key) == (len(source["human_answer"].split()) <= KEY_ANSWER_MAX_WORDS), question["id"]
        assert _same_text(question["prompt"], source["question"]) and question["category"] == source["category"]


def test_metadata_and_benchmark_yaml_follow_the_contracts(imported_mc: Path) -> None:
    header = yaml.safe_load((imported_mc / "data/benchmarks/easy-problems-mc/benchmark.yaml").read_text())
    assert list(header) == ["name", "version", "title", "description", "allow_incomplete", "graders"]
    assert header["version"] == "2024-09-13" and header["graders"]["answer_key"] == [{"name": "rules"}]
    assert not (imported_mc / "data/benchmarks/easy-problems-mc/human_labels.csv").exists(), "MC marks are letters"
    source_rule = {"name": "mc_letter", "options": {"json_answer": "first"}}
    assert header["graders"]["traditional"] == {"multiple_choice": source_rule}
    metadata = yaml.safe_load((imported_mc / "submissions/easy-problems-mc/o1-preview/metadata.yaml").read_text())
    assert set(metadata) == {
        "model",
        "model_revision",
        "submitter",
        "date",
        "benchmark",
        "benchmark_version",
        "decoding",
        "rounds",
        "license",
        "notes",
    }
    assert set(metadata["decoding"]) == {"temperature", "top_p", "max_tokens", "seed"}
    assert (metadata["model"], metadata["date"], metadata["rounds"]) == ("o1-preview", "2024-09-13", 10)


def test_deployment_ids_become_model_names(imported_mc: Path) -> None:
    """Files named after an Azure deployment show the model; the deployment stays in the metadata."""
    _, runs = load_imported(imported_mc, "easy-problems-mc")
    published = sorted(
        p.stem.removeprefix("auto_eval-")
        for p in (real_data() / MC_RELEASE / "auto_eval_outputs").glob("auto_eval-*.json")
    )
    deployed = {run.run_id: (run.model, run.metadata.get("deployment")) for run in runs if "deployment" in run.metadata}
    assert deployed == {
        "meta-llama-3-1-405b-instruct": (
            "Meta-Llama-3-1-405B-Instruct",
            "Meta-Llama-3-1-405B-Instruct-jjo_eastus_models_ai_azure_com",
        ),
        "meta-llama-3-1-70b-instruct": (
            "Meta-Llama-3-1-70B-Instruct",
            "Meta-Llama-3-1-70B-Instruct-ostu_eastus_models_ai_azure_com",
        ),
    }
    assert sorted(run.metadata.get("deployment", run.model) for run in runs) == published
    assert all(len(run.run_id) <= 40 for run in runs), [run.run_id for run in runs]


def test_letters_use_the_shuffled_order(imported_mc: Path) -> None:
    benchmark, runs = load_imported(imported_mc, "easy-problems-mc")
    data = json.loads((real_data() / MC_RELEASE / "auto_eval_outputs" / "auto_eval-gpt-4o.json").read_text())
    run = next(r for r in runs if r.model == "gpt-4o")
    for record, prediction in zip((data[k] for k in sorted(data, key=int)), run.predictions, strict=True):
        question = benchmark.question(prediction["question_id"])
        shown = [question["choices"][LETTERS.index(letter)] for letter in prediction["choice_order"]]
        assert shown == record["multiple_choice"]
        correct_text = question["choices"][LETTERS.index(question["correct_choice"])]
        assert LETTERS[shown.index(correct_text)] == record["correct_letter"]


# Where strict answer-key grading and the letter part ways on the MC release, and why.
# Everywhere else the key is the correct option's text, so the two gradings agree.
STRICT_DISAGREEMENTS = {
    # The letter D is right, but the stated final answer "Distance from starting
    # point: 0m" drops the key's "0m elevation": strict grading fails it.
    ("gpt-4o-mini-2024-07-18", "13", 6): "final answer omits part of the key",
}


def test_rules_matches_mc_letter_on_the_mc_release(mc_graded: pd.DataFrame) -> None:
    """The MC answer key is the correct option's text, so strict grading equals the letter grading but where listed."""
    differ = mc_graded[mc_graded.answer_key != mc_graded.traditional]
    found = {(r.run_id, str(r.question_id), int(r.round)) for r in differ.itertuples()}
    assert found == set(STRICT_DISAGREEMENTS), found ^ set(STRICT_DISAGREEMENTS)
