"""`dualboard validate`: exit codes 0/1/2, text and JSON reports, limits, path escapes."""

from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner

from dualboard.cli import main
from dualboard.intake.validate import Limits
from tests.conftest import tiny_predictions, write_run


def _validate(root, *args):
    return CliRunner().invoke(main, ["validate", "--root", str(root), *args])


def test_valid_submissions_exit_0(tiny_root):
    result = _validate(tiny_root)
    assert result.exit_code == 0, result.output
    assert "valid: 1 runs, 3 answers" in result.output


def test_every_problem_of_every_run_in_one_pass_exit_1(tiny_root):
    write_run(tiny_root, "bad-json", raw_lines=[b"{broken"])
    write_run(tiny_root, "Bad-Id")
    result = _validate(tiny_root)
    assert result.exit_code == 1, result.output
    assert "bad-json/predictions.jsonl:1: -: invalid JSON" in result.output
    assert "Bad-Id: run_id: folder name 'Bad-Id' is not a valid run id" in result.output
    assert "invalid: 2 problem(s)" in result.output


def test_json_format_is_one_document(tiny_root):
    write_run(tiny_root, "bad-json", raw_lines=[b"{broken"])
    result = _validate(tiny_root, "--format", "json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["valid"] is False
    assert report["runs"] == [{"benchmark": "tiny", "run_id": "run-a", "answers": 3}]
    [finding] = report["findings"]
    assert finding["line"] == 1 and finding["field"] == "-" and finding["fix"] and finding["severity"] == "error"


def test_json_format_when_valid(tiny_root):
    result = _validate(tiny_root, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "valid": True,
        "runs": [{"benchmark": "tiny", "run_id": "run-a", "answers": 3}],
        "findings": [],
    }


def test_usage_errors_exit_2(tiny_root):
    assert _validate(tiny_root, "--format", "xml").exit_code == 2
    assert _validate(tiny_root, "--max-response-bytes", "0").exit_code == 2
    assert _validate(tiny_root, str(tiny_root / "no-such-folder")).exit_code == 2


def test_limits_are_options(tiny_root):
    preds = tiny_predictions()
    preds[0]["response"] = "x" * 500
    write_run(tiny_root, "run-a", preds)
    result = _validate(tiny_root, "--max-response-bytes", "100")
    assert result.exit_code == 1, result.output
    assert "response: response is over the 100-byte limit" in result.output
    result = _validate(tiny_root, "--max-predictions-bytes", "10")
    assert result.exit_code == 1, result.output
    assert "over the 10-byte limit" in result.output
    assert _validate(tiny_root, "--max-response-bytes", "1000").exit_code == 0


@pytest.mark.parametrize("option", ["--max-predictions-bytes", "--max-response-bytes"])
def test_validate_takes_no_limit_above_the_builds(tiny_root, option):
    """A run validate passes is one build and preview (which take only the defaults) accept: a limit may only be
    stricter than the build's, and one above it is a usage error that names the largest allowed."""
    largest = Limits.predictions_bytes if option == "--max-predictions-bytes" else Limits.response_bytes
    assert _validate(tiny_root, option, str(largest)).exit_code == 0
    result = _validate(tiny_root, option, str(largest + 1))
    assert result.exit_code == 2
    assert f"1<=x<={largest}" in result.output


def test_a_fix_for_a_response_over_the_limit_names_no_option_the_build_lacks(tiny_root):
    """`build` and `preview` (the pull-request check) refuse what `validate` refuses, without its limit options."""
    preds = tiny_predictions()
    preds[0]["response"] = "x" * (Limits.response_bytes + 1)
    write_run(tiny_root, "run-a", preds)
    run = str(tiny_root / "submissions" / "tiny" / "run-a")
    for command, extra in (("build", []), ("preview", [run])):
        result = CliRunner().invoke(main, [command, "--root", str(tiny_root), "--no-progress", *extra])
        assert result.exit_code == 1, result.output
        assert f"response: response is over the {Limits.response_bytes}-byte limit" in result.output
        offered = set(re.findall(r"--[a-z][a-z-]+", result.output))
        known = {o for p in main.commands[command].params for o in p.opts}
        assert offered <= known, f"{command} output suggests options it does not take: {offered - known}"


def test_symlinked_file_is_refused_and_not_read(tiny_root, tmp_path_factory):
    secret = tmp_path_factory.mktemp("outside") / "secret.txt"
    secret.write_text("TOKEN=hunter2")
    run = write_run(tiny_root, "linked")
    (run / "predictions.jsonl").unlink()
    os.symlink(secret, run / "predictions.jsonl")
    result = _validate(tiny_root)
    assert result.exit_code == 1, result.output
    assert "linked/predictions.jsonl: path: is a symbolic link — commit the real file" in result.output
    assert "hunter2" not in result.output


def test_symlinked_run_folder_escaping_submissions_is_refused(tiny_root, tmp_path_factory):
    outside = write_run(tmp_path_factory.mktemp("elsewhere"), "evil")
    os.symlink(outside, tiny_root / "submissions" / "tiny" / "evil")
    result = _validate(tiny_root)
    assert result.exit_code == 1, result.output
    assert "evil: path: run folder is not at" in result.output
    assert "evil: path: is a symbolic link" in result.output


def test_run_folder_outside_submissions_is_refused(tiny_root):
    stray = write_run(tiny_root / "elsewhere", "stray")
    result = _validate(tiny_root, str(stray))
    assert result.exit_code == 1, result.output
    assert "stray: path: run folder is not at" in result.output


def test_control_characters_are_escaped_in_text_output(tiny_root):
    write_run(tiny_root, "ctl", [{"question_id": "q\x1b[31m", "response": "x"}])
    result = _validate(tiny_root)
    assert result.exit_code == 1, result.output
    assert "\x1b" not in result.output


def test_extra_files_are_a_warning(tiny_root):
    (tiny_root / "submissions" / "tiny" / "run-a" / "notes.txt").write_text("hello")
    result = _validate(tiny_root)
    assert result.exit_code == 0, result.output
    assert "run-a/notes.txt: path: unexpected entry" in result.output
    assert "valid: 1 runs, 3 answers" in result.output
