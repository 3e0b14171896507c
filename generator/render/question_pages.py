"""Question pages: the question, its answer key, every run's answer and every grader's verdict.

Question pages are reachable from links only: kept out of the navigation and
out of the search index, because mkdocs-material embeds the whole navigation
in every page (a nav of N pages makes the build O(N²); docs/architecture.md, "Rendering").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd

from dualboard.grading.choices import LETTERS, correct_index, shown_options
from dualboard.grading.errors import GradingInputError
from dualboard.intake.models import Run
from dualboard.kappa import PASS_MARK
from dualboard.render.escape import escape_text
from dualboard.render.html import Cell, Header, Row, paragraph, table
from dualboard.render.numbers import format_number, sort_key
from dualboard.render.pages import BenchmarkResults, Page, front_matter, question_slugs, run_slug
from dualboard.scored_files import ANSWER_SLOT

PROMPT_PREVIEW = 60
"""Characters of a prompt shown where a page lists every question of a run (the question list shows it whole)."""


def question_pages(result: BenchmarkResults) -> list[Page]:
    """The question list (in the navigation) and one page per question (out of it)."""
    slugs = question_slugs(result.benchmark)
    verdicts = _verdict_table(result.verdicts)
    answers = _answers(result.runs)
    models = dict(zip(result.models["run_id"], result.models["model"]))
    by_question = {qid: rows for qid, rows in verdicts.groupby("question_id", sort=False)}
    pages = [question_list(result, slugs)]
    for question in result.benchmark.questions:
        rows = by_question.get(question["id"], verdicts.iloc[0:0])
        pages.append(question_page(result.name, question, slugs[question["id"]], rows, answers, models))
    return pages


def _verdict_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per answer, a score and a detail column per grader (``score:<grader>``, ``detail:<grader>``)."""
    keys = list(ANSWER_SLOT)
    if verdicts.empty:
        return pd.DataFrame(columns=keys)
    wide = (
        verdicts.drop_duplicates([*keys, "grader"]).set_index([*keys, "grader"])[["score", "detail"]].unstack("grader")
    )
    wide.columns = [f"{kind}:{grader}" for kind, grader in wide.columns]
    columns = [f"{kind}:{g}" for g in _grader_order(verdicts) for kind in ("score", "detail")]
    return wide[columns].reset_index().sort_values(keys, kind="stable")


def _grader_order(verdicts: pd.DataFrame) -> list[str]:
    """Graders in role order: traditional, answer-key, then human."""
    rank = {"traditional": 0, "answer_key": 1, "human": 2}
    pairs = verdicts[["grader", "role"]].drop_duplicates()
    return [g for g, _ in sorted(zip(pairs["grader"], pairs["role"]), key=lambda p: (rank.get(p[1], 3), p[0]))]


def _answers(runs: tuple[Run, ...]) -> dict[tuple[str, str, int], Mapping[str, Any]]:
    """Every prediction row (response, choice order) by (run, question, round)."""
    return {(run.run_id, p["question_id"], int(p.get("round", 0))): p for run in runs for p in run.predictions}


def question_list(result: BenchmarkResults, slugs: Mapping[str, str]) -> Page:
    """Every question with its mean score under both gradings across runs."""
    scored = result.scored.assign(answer_key=result.scored["answer_key"].fillna(0.0))
    means = scored.groupby("question_id")[["traditional", "answer_key"]].mean()
    rows = []
    for q in result.benchmark.questions:
        trad, key = means.loc[q["id"]] if q["id"] in means.index else (float("nan"), float("nan"))
        rows.append(
            [
                Cell(str(q["id"]), href=f"{slugs[q['id']]}/"),
                Cell(str(q.get("category", ""))),
                Cell(str(q.get("type", ""))),
                Cell(str(q.get("prompt", "")), css_class="dualboard-wrap"),
                Cell(format_number(trad), sort=sort_key(trad)),
                Cell(format_number(key), sort=sort_key(key)),
                Cell(format_number(key - trad), sort=sort_key(key - trad)),
            ]
        )
    headers = [
        Header("Question", key="question"),
        Header("Category", key="category", filter=True),
        Header("Type", key="type", filter=True),
        Header("Prompt", key="prompt"),
        Header("Traditional", key="traditional", title="Mean traditional score of all runs on the question (0–100)."),
        Header("Answer-key", key="answer_key", title="Mean answer-key score of all runs on the question (0–100)."),
        Header("Difference", key="difference", title="Answer-key − traditional."),
    ]
    # In the search index (unlike the question pages): the site's search finds a question by its text here.
    text = (
        front_matter(f"Questions: {result.name}") + f"# Questions of {escape_text(result.benchmark.title)}\n\n"
        "Every question with its full text and the mean score of all runs under both gradings (0–100). "
        "Questions where answer-key grading is far below traditional grading are where strict grading bites; "
        "open one to audit the verdicts. The site's search finds a question by any word of its text.\n\n"
        + table(headers, rows, filterable=True)
    )
    return Page(f"benchmarks/{result.name}/questions/index.md", text)


def prompt_preview(question: Mapping[str, Any], length: int = PROMPT_PREVIEW) -> str:
    """The first ``length`` characters of a question's prompt, with … when cut."""
    prompt = str(question.get("prompt", ""))
    return prompt[:length] + ("…" if len(prompt) > length else "")


def question_page(
    benchmark: str,
    question: Mapping[str, Any],
    slug: str,
    verdicts: pd.DataFrame,
    answers: Mapping[tuple[str, str, int], Mapping[str, Any]],
    models: Mapping[str, str],
) -> Page:
    """The page of one question: prompt, answer key, every answer with every verdict.

    On a multiple-choice question each answer shows the options in the order
    that round showed them, with the correct one's letter in that order: a
    grader's "chose C … correct D" is in that order, not the answer key's.
    """
    graders = [c.split(":", 1)[1] for c in verdicts.columns if c.startswith("score:") and verdicts[c].notna().any()]
    choices = bool(question.get("choices"))
    headers = ["Run", "Round", *(["Options as shown"] if choices else []), "Response", *graders]
    rows = [_answer_row(r, question, graders, answers, models) for r in verdicts.to_dict("records")]
    n_disagree = sum(1 for r in rows if r.css_class)
    text = (
        front_matter(f"Question {slug}", search=False, hide=("toc",))
        + f"<h1>Question {escape_text(question['id'])}</h1>\n\n"
        + f"Benchmark [{escape_text(benchmark)}](../index.md) · [all questions](index.md)\n\n"
        + _question_block(question)
        + "\n## Answers and verdicts\n\n"
        "Every answer of every run, with each grader's score (0–100) and how it decided. "
        + (
            "*Options as shown* gives the options in the order that round showed them (runs may shuffle them), and "
            "the correct option's letter in that order; the graders' letters refer to that order. "
            if choices
            else ""
        )
        + f"{n_disagree} answers are highlighted: their graders disagree on pass/fail (≥ 50 counts as a pass).\n\n"
        + table(headers, rows)
    )
    return Page(f"benchmarks/{benchmark}/questions/{slug}.md", text)


def _question_block(question: Mapping[str, Any]) -> str:
    key = question.get("answer_key") or {}
    fields = [
        ("Category", question.get("category")),
        ("Type", question.get("type")),
        ("Choices", _choices(question.get("choices"))),
        ("Correct choice", _correct_choice(question)),
        ("Answer", key.get("answer")),
        ("Aliases", ", ".join(map(str, key.get("aliases") or []))),
        ("Patterns", "  ".join(map(str, key.get("patterns") or []))),
        ("Numeric", json.dumps(key.get("numeric")) if key.get("numeric") else None),
        ("Notes", key.get("notes")),
    ]
    rows = [[Cell(name), Cell(str(value))] for name, value in fields if value not in (None, "")]
    reference = key.get("reference")
    return (
        "## Prompt\n\n"
        + paragraph(str(question.get("prompt", "")), css_class="dualboard-response")
        + "\n## Answer key\n\n"
        + table(["Field", "Value"], rows, sortable=False)
        + (
            ("\nReference answer written by a person:\n\n" + paragraph(str(reference), css_class="dualboard-response"))
            if reference
            else ""
        )
    )


def _choices(choices: Any) -> str | None:
    if not choices:
        return None
    return "  ".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(choices))


def _correct_choice(question: Mapping[str, Any]) -> str | None:
    """The correct option, said to be in the order listed here (a shuffled round shows its own order)."""
    correct = question.get("correct_choice")
    if correct in (None, ""):
        return None
    return f"{correct} (in the order listed above; each answer below shows the order its round used)"


def options_as_shown(question: Mapping[str, Any], prediction: Mapping[str, Any]) -> Cell:
    """The options in the order one answer saw them, and the correct option's letter in that order.

    Examples
    --------
    >>> q = {"id": "q", "choices": ["96", "102", "112"], "correct_choice": "B"}
    >>> cell = options_as_shown(q, {"choice_order": ["C", "B", "A"]})
    >>> cell.text, cell.note
    ('A. 112  B. 102  C. 96', 'correct here: B')
    """
    try:
        shown = shown_options(dict(question), dict(prediction))
    except GradingInputError:  # validation refuses such an order; never fail the page over it
        return Cell("—")
    correct = correct_index(dict(question), shown)
    letters = "  ".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(shown))
    return Cell(letters, note=f"correct here: {LETTERS[correct]}" if correct is not None else None)


def _answer_row(
    record: Mapping[str, Any],
    question: Mapping[str, Any],
    graders: list[str],
    answers: Mapping[tuple[str, str, int], Mapping[str, Any]],
    models: Mapping[str, str],
) -> Row:
    run_id, round_ = record["run_id"], int(record["round"])
    prediction = answers.get((run_id, record["question_id"], round_), {})
    cells = [
        Cell(str(models.get(run_id, run_id)), href=f"../../runs/{run_slug(run_id)}/"),
        Cell(str(round_), sort=round_),
        *([options_as_shown(question, prediction)] if question.get("choices") else []),
        Cell(str(prediction.get("response", "")), css_class="dualboard-response"),
    ]
    passes = set()
    for grader in graders:
        score, detail = record.get(f"score:{grader}"), record.get(f"detail:{grader}")
        if score is not None and score == score:
            passes.add(score >= PASS_MARK)
        text = "—" if score is None or score != score else f"{format_number(score, 0)}: {detail or ''}"
        cells.append(Cell(text, sort=sort_key(score)))
    return Row(cells, css_class="dualboard-disagree" if len(passes) > 1 else None)
