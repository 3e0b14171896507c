"""What every command shares: a library error ends it with one clean message, whatever the command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dualboard.cli import EXIT_INVALID, main
from tests.conftest import tiny_metadata, write_run

STORE_COMMANDS = {
    "build": ["--no-progress"],
    "ingest": [],
    "grade": ["--no-progress"],
    "render": [],
    "release": ["v1"],
    "remove": ["tiny/run-a", "--reason", "leaked"],
    "publish": ["--release", "v1"],
    "preview": ["{root}/submissions/tiny/run-a", "--no-progress"],
}
"""Every command that reads the store dualboard.yaml names, with the arguments it needs to get that far."""


def test_the_table_lists_every_command_that_chooses_a_store() -> None:
    chooses = {name for name, command in main.commands.items() if any(p.name == "hub_repo" for p in command.params)}
    assert chooses == set(STORE_COMMANDS)


@pytest.mark.parametrize("command", sorted(STORE_COMMANDS))
def test_every_command_reports_a_library_error_as_a_message(tiny_root: Path, command: str) -> None:
    (tiny_root / "dualboard.yaml").write_text("store:\n  hub: a/b\n  token: hf_secret\n")
    args = [a.format(root=tiny_root) for a in STORE_COMMANDS[command]]
    result = CliRunner().invoke(main, [command, *args, "--root", str(tiny_root)])
    assert result.exit_code == EXIT_INVALID, result.output
    assert isinstance(result.exception, SystemExit), "a message, not a traceback"
    assert result.stderr.startswith("Error: ") and "unknown keys ['token']" in result.stderr
    assert result.stdout == ""


def test_findings_are_relative_and_cannot_drive_the_terminal(tiny_root: Path) -> None:
    """A submitter names a run folder with a carriage return, a colour code and a line break."""
    shutil.rmtree(tiny_root / "submissions" / "tiny" / "run-a")
    # the folder name alone is wrong: the run's model revision is a plain one
    write_run(tiny_root, "run\rok\x1b[31m\nforged", metadata={**tiny_metadata(), "model_revision": "r1"})
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", "build", "--no-progress", "--root", str(tiny_root)],
        capture_output=True,
        env=os.environ,
        timeout=300,
    )
    assert proc.returncode == EXIT_INVALID, proc.stderr
    lines = proc.stderr.decode("utf-8").split("\n")
    assert lines[0] == "Error: 1 problem(s) found; nothing was changed."
    assert lines[1].startswith("submissions/tiny/run\\rok\\x1b[31m\\nforged: run_id: folder name ")
    assert lines[2:] == [""], "one line per finding"
    assert b"\r" not in proc.stderr and b"\x1b" not in proc.stderr and b"Traceback" not in proc.stderr


@pytest.mark.parametrize("date", ["<b>1 March</b>", "2026-02-30", "2026-3-1"])
def test_release_takes_only_a_calendar_date(tiny_root: Path, date: str) -> None:
    result = CliRunner().invoke(main, ["release", "v1", "--date", date, "--root", str(tiny_root)])
    assert result.exit_code == 2, result.output
    assert f"{date!r} is not a date written YYYY-MM-DD" in result.stderr
    assert not (tiny_root / "releases").exists()
