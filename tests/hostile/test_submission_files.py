"""Hostile submission and benchmark files: each trick is a precise finding, exit 1, never a traceback.

Every case goes through `dualboard validate` as a pull request's files would,
and `dualboard build` must refuse the same tree before it touches the store.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dualboard import pipeline
from dualboard.cli import main
from dualboard.intake.untrusted import parse_json_line, parse_yaml
from dualboard.project import Project
from tests.conftest import LABELS_HEADER, tiny_metadata, tiny_predictions, write_run


def _validate(root: Path, *args: str):
    return CliRunner().invoke(main, ["validate", "--root", str(root), *args])


def _assert_finding(root: Path, expected: str) -> None:
    result = _validate(root)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert expected in result.output, result.output


def _line(**fields) -> bytes:
    return json.dumps({"question_id": "q1", "round": 0, "response": "4", **fields}).encode()


def _run_with_first_line(root: Path, first: bytes) -> None:
    rest = [json.dumps(p).encode() for p in tiny_predictions()[1:]]
    write_run(root, "run-b", raw_lines=[first, *rest])


@pytest.mark.parametrize(
    ("first_line", "expected"),
    [
        (
            b'{"question_id": "q1", "round": 0, "response": "4", "recorded": {"judge": NaN}}',
            ":1: recorded.judge: NaN is not a number",
        ),
        (
            b'{"question_id": "q1", "round": 0, "response": "4", "recorded": {"judge": Infinity}}',
            ":1: recorded.judge: Infinity is not a number",
        ),
        (
            b'{"question_id": "q1", "round": 0, "response": "4", "recorded": {"judge": -Infinity}}',
            ":1: recorded.judge: -Infinity is not a number",
        ),
        (
            b'{"question_id": "q1", "round": 0, "response": "4", "recorded": {"judge": 1e999}}',
            ":1: recorded.judge: 1e999 overflows to infinity",
        ),
        (
            b'{"question_id": "q1", "round": 0, "response": "harmless", "response": "4"}',
            ":1: response: duplicate key 'response'",
        ),
        (
            b'{"question_id": "q1", "round": 0, "response": "a\\ud800b"}',
            ":1: -: a string holds a lone UTF-16 surrogate",
        ),
        (
            b'{"question_id": "q1", "round": 1.0, "response": "4"}',
            ":1: round: 1.0 is a decimal number, not a whole number",
        ),
        (b'{"question_id": "q1", "round": 0, "response": "\xff"}', ":1: -: not UTF-8"),
    ],
)
def test_prediction_tricks_are_findings(tiny_root: Path, first_line: bytes, expected: str) -> None:
    _run_with_first_line(tiny_root, first_line)
    _assert_finding(tiny_root, "run-b/predictions.jsonl" + expected)


def test_a_valid_surrogate_pair_is_accepted(tiny_root: Path) -> None:
    _run_with_first_line(tiny_root, b'{"question_id": "q1", "round": 0, "response": "4 \\ud83d\\ude00"}')
    assert _validate(tiny_root).exit_code == 0


def test_line_separator_does_not_shift_line_numbers(tiny_root: Path) -> None:
    """U+2028 inside a response is text, not a line break: the bad line is still line 2."""
    lines = [
        _line(response="4\u2028still line one"),
        b"{broken",
        *[json.dumps(p).encode() for p in tiny_predictions()[1:]],
    ]
    write_run(tiny_root, "run-b", raw_lines=[json.dumps(json.loads(lines[0]), ensure_ascii=False).encode(), *lines[1:]])
    _assert_finding(tiny_root, "run-b/predictions.jsonl:2: -: invalid JSON")


@pytest.mark.parametrize(
    ("metadata_text", "expected"),
    [
        ("rounds: 1.0\n", "rounds: 1.0 is a decimal number, not a whole number"),
        ("rounds: 1\nrounds: 2\n", "invalid YAML: duplicate key 'rounds'"),
        (
            'notes: !!python/object/apply:os.system ["touch pwned"]\n',
            "metadata.yaml:6: -: invalid YAML: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object/apply:os.system' — remove the tag (the word starting with !) "
            "and write a plain value",
        ),
        ("date: 2026-02-30\n", "unreadable YAML value"),
        ("decoding: {temperature: .nan}\n", "decoding.temperature: nan is not a finite number"),
    ],
)
def test_metadata_tricks_are_findings(tiny_root: Path, metadata_text: str, expected: str) -> None:
    run = write_run(tiny_root, "run-b")
    base = {k: v for k, v in tiny_metadata().items() if k not in ("rounds", "date", "decoding")}
    (run / "metadata.yaml").write_text(
        yaml.safe_dump({**base, "date": "2026-01-02"} if "date" not in metadata_text else base)
        + metadata_text
        + ("rounds: 1\n" if "rounds" not in metadata_text else "")
    )
    _assert_finding(tiny_root, expected)


def _questions_path(root: Path) -> Path:
    return root / "data" / "benchmarks" / "tiny" / "questions.jsonl"


@pytest.mark.parametrize(
    ("extra_line", "expected"),
    [
        (b"\xff\xfe", "questions.jsonl:4: -: not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "questions.jsonl:4: -: invalid JSON: nested too deeply"),
        (b'{"id": ' + b"9" * 5000 + b"}", "questions.jsonl:4: -: unreadable JSON value"),
        (b'{"id": "q9", "id": "q1"}', "questions.jsonl:4: id: duplicate key 'id'"),
    ],
)
def test_question_file_tricks_are_findings(tiny_root: Path, extra_line: bytes, expected: str) -> None:
    path = _questions_path(tiny_root)
    path.write_bytes(path.read_bytes() + extra_line + b"\n")
    _assert_finding(tiny_root, expected)


def test_impossible_date_in_benchmark_yaml_is_a_finding(tiny_root: Path) -> None:
    path = tiny_root / "data" / "benchmarks" / "tiny" / "benchmark.yaml"
    path.write_text(path.read_text() + "released: 2026-02-30\n")
    _assert_finding(tiny_root, "benchmark.yaml: -: unreadable YAML value")


HEADER = LABELS_HEADER.encode()
SHA = b"ab" * 32


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (HEADER + b'"run-a,q1,0,pass,' + SHA + b"\n", "human_labels.csv"),
        (HEADER + b"run-a,q1,0,pass," + SHA + b",extra\n", "not a readable CSV"),
        (b"run,question\nrun-a,q1\n", "missing column(s)"),
        (HEADER + b"run-a,q1,zero,pass," + SHA + b"\n", "round must be an integer"),
        (HEADER + b"run-a,q1,0,maybe," + SHA + b"\n", "label"),
        (HEADER + b"run-a,q1,0,\xff," + SHA + b"\n", "not UTF-8"),
        (b"run,question,round,label\nrun-a,q1,0,pass\n", "no response_sha256 column"),
    ],
)
def test_malformed_human_labels_fail_validation(tiny_root: Path, labels: bytes, expected: str) -> None:
    (tiny_root / "data" / "benchmarks" / "tiny" / "human_labels.csv").write_bytes(labels)
    _assert_finding(tiny_root, expected)


def test_build_refuses_what_validate_refuses(tiny_root: Path) -> None:
    (tiny_root / "data" / "benchmarks" / "tiny" / "human_labels.csv").write_bytes(
        HEADER + b"run-a,q1,0,maybe," + SHA + b"\n"
    )
    result = CliRunner().invoke(main, ["build", "--root", str(tiny_root), "--no-progress"])
    assert result.exit_code != 0
    assert "human_labels.csv" in result.output
    assert not (tiny_root / ".dualboard" / "store" / "current").exists()


@pytest.mark.parametrize("link_in", ["human_labels.csv", "questions.jsonl", "benchmark.yaml"])
def test_links_in_data_are_findings(tiny_root: Path, link_in: str) -> None:
    path = tiny_root / "data" / "benchmarks" / "tiny" / link_in
    path.unlink(missing_ok=True)
    path.symlink_to("/proc/self/environ")
    _assert_finding(tiny_root, f"tiny/{link_in}: path: is a symbolic link")


def test_relative_link_to_git_config_is_a_finding(tiny_root: Path) -> None:
    (tiny_root / ".git").mkdir()
    (tiny_root / ".git" / "config").write_text("[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n")
    (tiny_root / "data" / "benchmarks" / "tiny" / "human_labels.csv").symlink_to("../../../.git/config")
    result = _validate(tiny_root)
    assert result.exit_code == 1 and "human_labels.csv: path: is a symbolic link" in result.output
    assert "c2VjcmV0" not in result.output


def test_link_anywhere_in_submissions_is_a_finding(tiny_root: Path) -> None:
    (tiny_root / "submissions" / "tiny" / "notes.txt").symlink_to("/proc/self/environ")
    _assert_finding(tiny_root, "submissions/tiny/notes.txt: path: is a symbolic link")


def test_run_one_level_too_deep_is_a_finding(tiny_root: Path) -> None:
    deep = tiny_root / "submissions" / "tiny" / "team" / "run-b"
    deep.mkdir(parents=True)
    for name in ("metadata.yaml", "predictions.jsonl"):
        (deep / name).write_bytes((tiny_root / "submissions" / "tiny" / "run-a" / name).read_bytes())
    _assert_finding(tiny_root, "team/run-b: path: run folder is nested too deep")


@pytest.mark.parametrize("twin", ["run_a", "run.a", "run--a"])
def test_run_ids_that_share_a_page_are_refused(tiny_root: Path, twin: str) -> None:
    write_run(tiny_root, twin)
    first, last = sorted(["run-a", twin])
    _assert_finding(
        tiny_root, f"submissions/tiny/{last}: run_id: run id {last} of tiny names the same run page as {first}"
    )


def test_a_new_run_id_clashing_with_one_on_the_board_is_reported_at_the_new_run(tiny_root: Path) -> None:
    """run--a sorts before run-a, already on the board: the finding is the new run's, and names the other,
    whether the new run is named (validate PATHS, a local preview) or all runs are checked (the CI's preview)."""
    new = write_run(tiny_root, "run--a")
    expected = "submissions/tiny/run--a: run_id: run id run--a of tiny names the same run page as run-a"
    result = _validate(tiny_root, str(new))
    assert result.exit_code == 1 and expected in result.output, result.output
    assert "submissions/tiny/run-a:" not in result.output
    report = pipeline.check_pull_request(Project(tiny_root), None, new=[new])
    assert [str(f) for f in report.findings if f.field == "run_id"] == [
        f"{expected} (ids are compared ignoring case, '.', '_' and '-') — rename this run so its id differs "
        "from run-a in letters or digits"
    ]


def test_a_clash_is_placed_by_the_runs_a_benchmark_folder_holds_and_a_clash_on_the_board_is_not_the_prs(
    tiny_root: Path,
) -> None:
    """``preview submissions/tiny`` names the benchmark folder: its runs are the new ones. A clash between two runs
    the pull request did not touch (run--a and run-a, both on the board) is not reported against its new run-z."""
    write_run(tiny_root, "run--a")
    project = Project(tiny_root)
    report = pipeline.check_pull_request(project, None, new=[tiny_root / "submissions" / "tiny"])
    assert {f.file for f in report.findings if f.field == "run_id"} == {
        "submissions/tiny/run--a",
        "submissions/tiny/run-a",
    }
    new = write_run(tiny_root, "run-z")
    report = pipeline.check_pull_request(project, None, new=[new])
    assert [f for f in report.findings if f.field == "run_id"] == []


def test_run_id_with_trailing_newline_is_refused(tiny_root: Path) -> None:
    write_run(tiny_root, "run-b\n")
    _assert_finding(tiny_root, "is not a valid run id")


def test_provenance_is_validated_and_capped(tiny_root: Path) -> None:
    run = tiny_root / "submissions" / "tiny" / "run-a"
    (run / "provenance.jsonl").write_bytes(b'{"question_id": "q1", "round": 0, "note": {"nested": 1}}\n')
    _assert_finding(tiny_root, "provenance.jsonl:1: note")
    (run / "provenance.jsonl").write_bytes(b"\x00" * 2048)
    _assert_finding(tiny_root, "provenance.jsonl:1: -: invalid JSON")
    (run / "provenance.jsonl").write_bytes(b'{"question_id": "q1", "round": 0, "eval": "fine"}\n')
    assert _validate(tiny_root).exit_code == 0


def test_oversized_provenance_is_refused_without_reading_it(tiny_root: Path) -> None:
    run = tiny_root / "submissions" / "tiny" / "run-a"
    with (run / "provenance.jsonl").open("wb") as handle:
        handle.truncate(60 * 1024 * 1024)  # sparse: the check reads the size, never the bytes
    _assert_finding(tiny_root, "over the 52428800-byte limit")


def test_parsers_never_raise_on_garbage() -> None:
    for raw in (b"", b"\x00", b"[]" * 3, b'"\\ud800"', b"{" * 50_000):
        value, problem = parse_json_line(raw, "f", 1)
        assert (value is None) != (problem is None) or raw == b""
    for text in ("a: *x", "&a [*a, *a]", "a: !!python/object:os.system x", "- " * 5000, "{a: 1, a: 1}"):
        value, problem = parse_yaml(text, "f")
        assert problem is not None, text


def test_validate_reports_site_source_links(tiny_root: Path) -> None:
    """``site_src/x.txt -> /proc/self/environ`` would put the token on the site: validate says so first."""
    (tiny_root / "site_src").mkdir()
    (tiny_root / "site_src" / "x.txt").symlink_to("/proc/self/environ")
    _assert_finding(tiny_root, "site_src/x.txt: path: is a symbolic link")
    result = CliRunner().invoke(main, ["build", "--root", str(tiny_root), "--no-progress"])
    assert result.exit_code != 0 and "site_src/x.txt" in result.output
