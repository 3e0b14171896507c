"""The preview as a ``dualboard-preview/3`` document, and its Markdown.

The schema, its caps and the Markdown renderer have one home: the trusted
script the comment workflow runs from the default branch
(``.github/scripts/preview.py``, carried in the package as the scaffold's
``dot-github/scripts/preview.py.txt``; a test keeps the two equal). This
module loads that script, fills the document from the statistics tables
within its caps, and checks the result against it before anyone sees it.
"""

from __future__ import annotations

import functools
import json
import math
import types
from importlib import resources

import pandas as pd

from dualboard.errors import Finding
from dualboard.preview.git_base import RunChange
from dualboard.preview.placement import Placement
from dualboard.scaffold import TEMPLATE
from dualboard.stats.scores import GRADINGS, coverage_percent

RENDERER = (TEMPLATE, "dot-github", "scripts", "preview.py.txt")
"""The trusted renderer inside the dualboard.scaffold package."""


@functools.cache
def renderer() -> types.ModuleType:
    """The comment workflow's renderer as a module: ``SCHEMA``, ``CAPS``, ``check_preview``, ``render``…"""
    source = resources.files("dualboard.scaffold").joinpath(*RENDERER).read_text("utf-8")
    module = types.ModuleType("dualboard_preview_renderer")
    exec(compile(source, "/".join(RENDERER), "exec"), module.__dict__)  # our own package file, not input
    return module


def document(
    board: str,
    findings: list[Finding] | None,
    valid: bool,
    placements: list[Placement],
    problem: str | None = None,
    *,
    runs_changed: tuple[RunChange, ...] = (),
) -> dict:
    """The checked preview document; ``findings`` None means validation never ran."""
    r = renderer()
    doc = {
        "schema": r.SCHEMA,
        "board": _clip(board, "board"),
        "problem": None if problem is None else _clip(problem, "stopped"),
        "validation": None if findings is None else _validation(findings, valid),
        "runs_changed": {
            "total": len(runs_changed),
            "runs": [
                {"benchmark": c.benchmark, "run_id": c.run_id, "change": c.change}
                for c in runs_changed[: r.MAX_CHANGES]
            ],
        },
        "benchmarks": _benchmarks(placements),
    }
    return r.check_preview(json.loads(json.dumps(doc)))


def markdown(doc: dict) -> str:
    """The Markdown the comment shows, for a checked document."""
    return renderer().render(doc)


def _validation(findings: list[Finding], valid: bool) -> dict:
    return {
        "valid": valid,
        "findings_total": len(findings),
        "findings": [_finding(f) for f in findings[: renderer().MAX_FINDINGS]],
    }


def _finding(finding: Finding) -> dict:
    line = finding.line if isinstance(finding.line, int) and 1 <= finding.line <= renderer().MAX_COUNT else None
    return {
        "severity": "warning" if finding.severity == "warning" else "error",
        "line": line,
        **{key: _clip(getattr(finding, key), key) for key in ("file", "field", "problem", "fix")},
    }


def _benchmarks(placements: list[Placement]) -> list[dict]:
    """One entry per benchmark, runs cut to the renderer's caps (MAX_RUNS over all, MAX_BENCHMARKS)."""
    entries, room, others_room = [], renderer().MAX_RUNS, renderer().MAX_OTHERS
    for placement in placements[: renderer().MAX_BENCHMARKS]:
        shown = placement.previewed[:room]
        room -= len(shown)
        others = _others(placement)
        entries.append(
            {
                "name": placement.benchmark,
                "board_runs": placement.board_runs,
                "runs_total": len(placement.previewed),
                "others_total": len(others),
                "others": others[:others_room],
                "runs": [_run(placement, run_id) for run_id in shown],
            }
        )
        others_room -= len(entries[-1]["others"])
    return entries


def _others(placement: Placement) -> list[dict]:
    """Every run on the board before the pull request whose score (as shown, to 0.1), rank or grader it
    moves under either grading: before, then after."""
    if placement.before is None:
        return []
    before = _standings(placement.before.models, placement.before_scored)
    after = _standings(placement.stats.models, placement.scored)
    moved = []
    for run_id in sorted(set(before) & set(after) - set(placement.previewed)):
        if before[run_id] != after[run_id]:
            moved.append(
                {"run_id": run_id} | {g: {"before": before[run_id][g], "after": after[run_id][g]} for g in GRADINGS}
            )
    return moved


def _standings(models: pd.DataFrame, scored: pd.DataFrame) -> dict[str, dict]:
    """Each run's score as shown, rank and grader names, per grading."""
    graders = {g: _graders(scored, g) for g in GRADINGS}
    return {
        row["run_id"]: {
            g: {
                "mean": None if _number(row[f"{g}_mean"]) is None else round(_number(row[f"{g}_mean"]), 1),
                "rank": _integer(row[f"rank_{g}"]),
                "grader": _clip(graders[g].get(row["run_id"], ""), "moved_grader"),
            }
            for g in GRADINGS
        }
        for _, row in models.iterrows()
    }


def _graders(scored: pd.DataFrame, g: str) -> dict[str, str]:
    """Each run's graders under grading ``g``, joined (one pass over the scored table's distinct pairs)."""
    pairs = scored[["run_id", f"{g}_grader"]].drop_duplicates()
    return {
        str(run_id): ", ".join(sorted({name for name in names.astype(str) if name}))
        for run_id, names in pairs.groupby("run_id", sort=False, observed=True)[f"{g}_grader"]
    }


def _run(placement: Placement, run_id: str) -> dict:
    models = placement.stats.models.set_index("run_id", drop=False).rename_axis(None)
    row = models.loc[run_id]
    return {
        "run_id": run_id,
        "model": _clip(row["model"], "model"),
        "note": _clip(_text(row["note"]), "note"),
        **{g: _grading(placement, models, run_id, g) for g in GRADINGS},
        "difference": {**_interval(row, "diff"), "p_value": _probability(row["p_value"])},
    }


def _grading(placement: Placement, models: pd.DataFrame, run_id: str, g: str) -> dict:
    row = models.loc[run_id]
    ranked = models[models[f"ranked_{g}"].astype(bool)]
    return {
        **_interval(row, g),
        "rank": _integer(row[f"rank_{g}"]),
        "ranked_runs": len(ranked),
        "rank_ci_low": _integer(row[f"rank_ci_low_{g}"]),
        "rank_ci_high": _integer(row[f"rank_ci_high_{g}"]),
        "coverage_percent": None if _number(row[f"{g}_coverage"]) is None else coverage_percent(row[f"{g}_coverage"]),
        "grader": _clip(_graders(placement.scored, g).get(run_id, ""), "grader"),
        "versus": _versus(placement.stats.pairwise, ranked, run_id, g),
    }


def _versus(pairwise: pd.DataFrame, ranked: pd.DataFrame, run_id: str, g: str) -> dict | None:
    """The paired difference to the best other ranked run of grading ``g``: the leader (or a run tied
    with ``run_id`` for first), the runner-up when ``run_id`` leads alone; None without one."""
    others = ranked[ranked["run_id"] != run_id].sort_values([f"rank_{g}", "run_id"])
    if others.empty:
        return None
    other, other_rank = others.iloc[0][["run_id", f"rank_{g}"]]
    rows = pairwise[
        (pairwise["grading"] == g)
        & (pairwise["run_a"].isin([run_id, other]))
        & (pairwise["run_b"].isin([run_id, other]))
    ]
    if rows.empty:
        return None
    pair = rows.iloc[0]
    sign = 1 if pair["run_a"] == run_id else -1  # the table holds run_a − run_b
    low, high = (_number(pair["diff_ci_low"]), _number(pair["diff_ci_high"]))
    bounds = (low, high) if sign == 1 else (None if high is None else -high, None if low is None else -low)
    mean = _number(pair["diff_mean"])
    return {
        "run_id": other,
        "role": "leader" if other_rank == 1 else "runner-up",  # runner-up: the run leads alone
        "mean": None if mean is None else sign * mean,
        "ci_low": bounds[0],
        "ci_high": bounds[1],
        "p_value": _probability(pair["p_value"]),
        "p_holm": _probability(pair["p_holm"]),
    }


def _interval(row: pd.Series, prefix: str) -> dict:
    return {
        "mean": _number(row[f"{prefix}_mean"]),
        "ci_low": _number(row[f"{prefix}_ci_low"]),
        "ci_high": _number(row[f"{prefix}_ci_high"]),
    }


def _number(value: object) -> float | None:
    """A finite number within the schema's limit, or None (an undefined statistic is an empty cell)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and abs(number) <= renderer().SCORE_LIMIT else None


def _probability(value: object) -> float | None:
    number = _number(value)
    return number if number is not None and 0 <= number <= 1 else None


def _integer(value: object) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number >= 1 and number == int(number) else None


def _text(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _clip(value: object, kind: str) -> str:
    """Text cut to the schema's cap for its kind (a trailing … says it was cut)."""
    cap, value = renderer().CAPS[kind], _text(value)
    return value if len(value) <= cap else value[: cap - 1] + "…"
