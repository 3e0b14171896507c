"""Write the Markdown preview of a pull request's submissions (standard library only).

Usage: python preview.py VALIDATE_JSON STATS_DIR > preview.md

Every value shown comes from the submission (untrusted): each table cell is
reduced to one line and every ASCII punctuation character is written as an HTML
entity, so nothing in it can become a link, an image, a mention or markup.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

MAX_FINDINGS = 50
MAX_CELL = 200


def cell(value: object) -> str:
    """One table cell: a single line, printable, every punctuation character inert."""
    text = " ".join(str(value).split())[:MAX_CELL]
    out = []
    for char in text:
        if not char.isprintable():
            continue
        out.append(f"&#{ord(char)};" if char.isascii() and not char.isalnum() and char != " " else char)
    return "".join(out) or "&#8203;"


def number(row: dict, key: str) -> str:
    try:
        return f"{float(row[key]):.1f}"
    except (KeyError, TypeError, ValueError):
        return "–"


def validation_section(path: Path) -> list[str]:
    try:
        report = json.loads(path.read_text("utf-8"))
        findings = list(report["findings"])
    except (OSError, ValueError, KeyError, TypeError):
        return ["**Validation:** the validator produced no report — see the workflow log.", ""]
    errors = [f for f in findings if isinstance(f, dict) and f.get("severity") == "error"]
    lines = [f"**Validation:** {'passed' if not errors else f'{len(errors)} problem(s) found'}", ""]
    if findings:
        lines += ["| file | line | field | problem | fix |", "|---|---|---|---|---|"]
        for f in findings[:MAX_FINDINGS]:
            if isinstance(f, dict):
                lines.append("| " + " | ".join(cell(f.get(k, "")) for k in ("file", "line", "field", "problem", "fix")) + " |")
        if len(findings) > MAX_FINDINGS:
            lines.append(f"\n{len(findings) - MAX_FINDINGS} more problem(s) not shown.")
        lines.append("")
    return lines


def scores_section(stats_dir: Path) -> list[str]:
    lines = []
    for models in sorted(stats_dir.glob("*/models.csv")) if stats_dir.is_dir() else []:
        with models.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        lines += [f"### {cell(models.parent.name)}", "",
                  "| run | model | traditional (95% CI) | answer-key (95% CI) | difference (95% CI) | rank trad. / key |",
                  "|---|---|---|---|---|---|"]
        for r in rows:
            trad = f"{number(r, 'traditional_mean')} [{number(r, 'traditional_ci_low')}, {number(r, 'traditional_ci_high')}]"
            key = f"{number(r, 'answer_key_mean')} [{number(r, 'answer_key_ci_low')}, {number(r, 'answer_key_ci_high')}]"
            diff = f"{number(r, 'diff_mean')} [{number(r, 'diff_ci_low')}, {number(r, 'diff_ci_high')}]"
            rank = f"{cell(r.get('rank_traditional', '–'))} / {cell(r.get('rank_answer_key', '–'))}"
            lines.append(f"| {cell(r.get('run_id', ''))} | {cell(r.get('model', ''))} | {trad} | {key} | {diff} | {rank} |")
        lines.append("")
    if not lines:
        return ["No scores: the changed runs were not graded (validation failed or no run changed).", ""]
    return ["Scores of the runs changed by this pull request, graded on their own (ranks are among them).", ""] + lines


def main(argv: list[str]) -> int:
    validate_json, stats_dir = Path(argv[1]), Path(argv[2])
    lines = ["## Dualboard preview", ""] + validation_section(validate_json) + scores_section(stats_dir)
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
