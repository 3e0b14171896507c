"""Question pages: the question, its answer key, every run's answer and every grader's verdict.

Question pages are reachable from links only: kept out of the navigation and
out of the search index, because mkdocs-material embeds the whole navigation
in every page (a nav of N pages makes the build O(N²); DESIGN.md, "Rendering").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd

from generator.intake.models import Run
from generator.render.escape import escape_text
from generator.render.html import Cell, Row, paragraph, table
from generator.render.numbers import format_number, sort_key
from generator.render.pages import BenchmarkResults, Page, front_matter, question_slugs, run_slug

PROMPT_PREVIEW = 120
"""Characters of the prompt shown in the question list."""


def question_pages(result: BenchmarkResults) -> list[Page]:
    """The question list (in the navigation) and one page per question (out of it)."""
    slugs = question_slugs(result.benchmark)
    verdicts = _verdict_table(result.verdicts)
    responses = _responses(result.runs)
    models = dict(zip(result.models["run_id"], result.models["model"]))
    by_question = {qid: rows for qid, rows in verdicts.groupby("question_id", sort=False)}
    pages = [question_list(result, slugs)]
    for question in result.benchmark.questions:
        rows = by_question.get(question["id"], verdicts.iloc[0:0])
        pages.append(question_page(result.name, question, slugs[question["id"]], rows, responses, models))
    return pages


def _verdict_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per answer, a score and a detail column per grader (``score:<grader>``, ``detail:<grader>``)."""
    keys = ["run_id", "question_id", "round"]
    if verdicts.empty:
        return pd.DataFrame(columns=keys)
    wide = verdicts.drop_duplicates([*keys, "grader"]).set_index([*keys, "grader"])[["score", "detail"]].unstack("grader")
    wide.columns = [f"{kind}:{grader}" for kind, grader in wide.columns]
    columns = [f"{kind}:{g}" for g in _grader_order(verdicts) for kind in ("score", "detail")]
    return wide[columns].reset_index().sort_values(keys, kind="stable")


def _grader_order(verdicts: pd.DataFrame) -> list[str]:
    """Graders in role order: traditional, answer-key, then human."""
    rank = {"traditional": 0, "answer_key": 1, "human": 2}
    pairs = verdicts[["grader", "role"]].drop_duplicates()
    return [g for g, _ in sorted(zip(pairs["grader"], pairs["role"]), key=lambda p: (rank.get(p[1], 3), p[0]))]


def _responses(runs: tuple[Run, ...]) -> dict[tuple[str, str, int], str]:
    return {(run.run_id, p["question_id"], int(p.get("round", 0))): p.get("response", "")
            for run in runs for p in run.predictions}


def question_list(result: BenchmarkResults, slugs: Mapping[str, str]) -> Page:
    """Every question with its mean score under both gradings across runs."""
    scored = result.scored.assign(answer_key=result.scored["answer_key"].fillna(0.0))
    means = scored.groupby("question_id")[["traditional", "answer_key"]].mean()
    rows = []
    for q in result.benchmark.questions:
        trad, key = (means.loc[q["id"]] if q["id"] in means.index else (float("nan"), float("nan")))
        prompt = str(q.get("prompt", ""))
        rows.append([Cell(str(q["id"]), href=f"{slugs[q['id']]}/"), Cell(str(q.get("category", ""))),
                     Cell(str(q.get("type", ""))),
                     Cell(prompt[:PROMPT_PREVIEW] + ("…" if len(prompt) > PROMPT_PREVIEW else "")),
                     Cell(format_number(trad), sort=sort_key(trad)), Cell(format_number(key), sort=sort_key(key)),
                     Cell(format_number(key - trad), sort=sort_key(key - trad))])
    text = (front_matter(f"Questions: {result.name}", search=False)
            + f"# Questions of {escape_text(result.benchmark.title)}\n\n"
            "Mean score of all runs on each question under both gradings (0–100). Questions where answer-key "
            "grading is far below traditional grading are where strict grading bites; open one to audit the "
            "verdicts.\n\n"
            + table(["Question", "Category", "Type", "Prompt", "Traditional", "Answer-key", "Difference"], rows))
    return Page(f"benchmarks/{result.name}/questions/index.md", text)


def question_page(benchmark: str, question: Mapping[str, Any], slug: str, verdicts: pd.DataFrame,
                  responses: Mapping[tuple[str, str, int], str], models: Mapping[str, str]) -> Page:
    """The page of one question: prompt, answer key, every answer with every verdict."""
    graders = [c.split(":", 1)[1] for c in verdicts.columns if c.startswith("score:") and verdicts[c].notna().any()]
    headers = ["Run", "Round", "Response", *graders]
    rows = [_answer_row(r, graders, responses, models) for r in verdicts.to_dict("records")]
    n_disagree = sum(1 for r in rows if r.css_class)
    text = (
        front_matter(f"Question {slug}", search=False, hide=("toc",))
        + f"<h1>Question {escape_text(question['id'])}</h1>\n\n"
        + f"Benchmark [{escape_text(benchmark)}](../index.md) · [all questions](index.md)\n\n"
        + _question_block(question)
        + "\n## Answers and verdicts\n\n"
        f"Every answer of every run, with each grader's score (0–100) and how it decided. "
        f"{n_disagree} answers are highlighted: their graders disagree on pass/fail (≥ 50 counts as a pass).\n\n"
        + table(headers, rows)
    )
    return Page(f"benchmarks/{benchmark}/questions/{slug}.md", text)


def _question_block(question: Mapping[str, Any]) -> str:
    key = question.get("answer_key") or {}
    fields = [("Category", question.get("category")), ("Type", question.get("type")),
              ("Choices", _choices(question.get("choices"))), ("Correct choice", question.get("correct_choice")),
              ("Answer", key.get("answer")), ("Aliases", ", ".join(map(str, key.get("aliases") or []))),
              ("Patterns", "  ".join(map(str, key.get("patterns") or []))),
              ("Numeric", json.dumps(key.get("numeric")) if key.get("numeric") else None),
              ("Notes", key.get("notes"))]
    rows = [[Cell(name), Cell(str(value))] for name, value in fields if value not in (None, "")]
    reference = key.get("reference")
    return ("## Prompt\n\n" + paragraph(str(question.get("prompt", "")), css_class="dualboard-response")
            + "\n## Answer key\n\n" + table(["Field", "Value"], rows, sortable=False)
            + (("\nReference answer written by a person:\n\n" + paragraph(str(reference), css_class="dualboard-response"))
               if reference else ""))


def _choices(choices: Any) -> str | None:
    if not choices:
        return None
    return "  ".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(choices))


def _answer_row(record: Mapping[str, Any], graders: list[str], responses: Mapping[tuple[str, str, int], str],
                models: Mapping[str, str]) -> Row:
    run_id, round_ = record["run_id"], int(record["round"])
    cells = [Cell(str(models.get(run_id, run_id)), href=f"../../runs/{run_slug(run_id)}/"), Cell(str(round_), sort=round_),
             Cell(responses.get((run_id, record["question_id"], round_), ""), css_class="dualboard-response")]
    passes = set()
    for grader in graders:
        score, detail = record.get(f"score:{grader}"), record.get(f"detail:{grader}")
        if score is not None and score == score:
            passes.add(score >= 50)
        text = "—" if score is None or score != score else f"{format_number(score, 0)}: {detail or ''}"
        cells.append(Cell(text, sort=sort_key(score)))
    return Row(cells, css_class="dualboard-disagree" if len(passes) > 1 else None)
