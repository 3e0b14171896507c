"""The How-to-submit page: an example run that validates, answer formats the real graders read, fields that
explain themselves."""

from __future__ import annotations

import html
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dualboard.grading.registry import describe_graders
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.example_run import example_run
from dualboard.intake.schemas import load_schema
from dualboard.render.answer_formats import ANSWER_FORMATS, APPLIES, grade_example
from dualboard.render.reference_pages import EXAMPLE_LINES_SHOWN, SCHEMA_FILES, submit_page
from tests.conftest import DEMO, REPO


@pytest.fixture(scope="module")
def demo_benchmark():
    return load_benchmarks(REPO / "data")["demo"]


@pytest.fixture(scope="module")
def page(demo_benchmark) -> str:
    return html.unescape(submit_page([demo_benchmark]).content)


def test_the_example_run_validates(tmp_path: Path, demo_benchmark) -> None:
    """Copied as the page shows it (all lines), the example is a valid run: `dualboard validate` exits 0."""
    shutil.copytree(DEMO, tmp_path / "data" / "benchmarks" / "demo")
    example = example_run(demo_benchmark)
    run = tmp_path / example.folder
    run.mkdir(parents=True)
    (run / "metadata.yaml").write_text(example.metadata_yaml, "utf-8")
    (run / "predictions.jsonl").write_text("".join(line + "\n" for line in example.prediction_lines), "utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "dualboard", "validate", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"valid: 1 runs, {len(demo_benchmark.questions)} answers" in result.stdout


def test_the_page_shows_the_example(page: str, demo_benchmark) -> None:
    example = example_run(demo_benchmark)
    assert example.metadata_yaml in page
    assert "\n".join(example.prediction_lines[:EXAMPLE_LINES_SHOWN]) in page
    assert example.prediction_lines[EXAMPLE_LINES_SHOWN] not in page
    for field in ("model:", "submitter:", "date:", "benchmark: demo", "benchmark_version: '1.0'", "rounds: 1"):
        assert field in example.metadata_yaml


@pytest.mark.parametrize("example", ANSWER_FORMATS, ids=[f"{e.kind}-{e.label}" for e in ANSWER_FORMATS])
def test_each_documented_format_is_read_by_the_graders_that_claim_it(example) -> None:
    for grader, kinds in APPLIES.items():
        verdict = grade_example(grader, example)
        if example.kind not in kinds:
            assert verdict is None
            continue
        read = verdict.score is not None and verdict.verdict_parse != "none"
        assert read == (grader in example.read_by), (grader, example.response, verdict)


def test_formats_the_page_tells_submitters_to_use_are_examples_every_grader_reads(page: str) -> None:
    for marker in ("Final answer: …", '{"ANSWER": "…"}', "\\boxed{…}"):
        assert marker in page
    open_graders = {g for g, kinds in APPLIES.items() if "open" in kinds}
    marked = [
        e for e in ANSWER_FORMATS if e.label in ("Final answer:", "a JSON answer", "\\boxed{…}") and e.kind == "open"
    ]
    assert len(marked) == 3 and all(set(e.read_by) == open_graders for e in marked)


def test_the_page_lists_the_benchmarks_graders_with_their_rules(page: str, demo_benchmark) -> None:
    assert "traditional — mc_letter (multiple choice questions), recorded (open questions); answer key — rules" in page
    for grader in describe_graders():
        if grader["name"] in ("mc_letter", "recorded", "rules"):
            assert grader["rule"] in page
        else:
            assert f"**{grader['name']}**" not in page
    mc = page.index("*What is 17 × 6? Options 96, 102, 112, 106; correct B.*")
    open_ = page.index("*What is 15 % of 240? Key: 36.*")
    assert "<th>Format</th><th>Response</th><th>mc_letter</th><th>rules</th></tr>" in page[mc:open_]
    assert "<th>Format</th><th>Response</th><th>rules</th></tr>" in page[open_:]
    assert "<th>exact</th>" not in page  # not a grader of the demo
    assert (
        "<td>no verdict</td>" in page[open_:]
        and "<td>pass</td>" in page[open_:]
        and "<td>unreadable (0)</td>" in page[mc:open_]
    )


def test_every_field_of_every_file_says_what_it_means() -> None:
    """The reference tables print each field's description: none may be blank (the graders row was)."""
    for name in SCHEMA_FILES.values():
        schema = load_schema(name)
        blank = [field for field, spec in schema["properties"].items() if not spec.get("description")]
        assert blank == [], (name, blank)


def test_the_example_comes_after_the_steps_and_the_schemas_last(page: str) -> None:
    order = [
        page.index(h)
        for h in (
            "# How to submit a run",
            "## An example run to copy",
            "## What the graders read",
            "## Reference: the files and their fields",
        )
    ]
    assert order == sorted(order)


def test_the_page_says_how_to_submit_from_a_harness_log_with_commands_that_exist(page: str) -> None:
    """The commands the page gives are the CLI's, with the options it names."""
    assert "Ran Inspect AI or lm-evaluation-harness?" in page
    for command in ("inspect", "lm-eval"):
        assert f"dualboard import {command} " in page
        proc = subprocess.run(
            [sys.executable, "-m", "dualboard", "import", command, "--help"], capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        for option in ("--submitter", "--benchmark"):
            assert option in page and option in proc.stdout
    assert '"dualboard[inspect]==' in page
