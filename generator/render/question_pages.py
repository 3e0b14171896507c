"""Question pages: the question, its answer key, every run's answer and every grader's verdict.

Question pages are reachable from links only: kept out of the navigation and
out of the search index, because mkdocs-material embeds the whole navigation
in every page (a nav of N pages makes the build O(N²); docs/architecture.md, "Rendering").
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dualboard.grading.choices import LETTERS, correct_index, shown_options
from dualboard.grading.errors import GradingInputError
from dualboard.kappa import PASS_MARK
from dualboard.render.answer_shards import shard_groups, shard_keys
from dualboard.render.answer_texts import orders_by_slot, question_slices, texts_by_slice
from dualboard.render.escape import escape_text
from dualboard.render.html import Cell, Header, paragraph, table
from dualboard.render.kept_files import KeptFiles
from dualboard.render.lazy_tables import Column, LazyTable, data_document, number, sharded_table
from dualboard.render.numbers import format_number, sort_key
from dualboard.render.pages import BenchmarkResults, Page, front_matter, question_slugs, run_slug
from dualboard.render.shared_files import SharedFiles
from dualboard.scored_files import ANSWER_SLOT

PROMPT_PREVIEW = 60
"""Characters of a prompt shown where a page lists every question of a run (the question list shows it whole)."""


def question_pages(
    result: BenchmarkResults, shared: SharedFiles, shards: KeptFiles | None = None
) -> tuple[list[Page], list[LazyTable]]:
    """The question list (in the navigation), one page per question (out of it), and their answers' lazy tables.

    The answers' data files go to ``shared``, one per question and shard (:mod:`dualboard.render.answer_shards`);
    with ``shards``, a shard whose key is what it was in the last render keeps its files, unread.
    """
    slugs = question_slugs(result.benchmark)
    graders = question_graders(result.verdicts)
    files = _answer_files(result, graders, shared, shards)
    pages, tables = [question_list(result, slugs)], []
    for question in result.benchmark.questions:
        qid = question["id"]
        page, lazy = question_page(result.name, question, slugs[qid], graders.get(qid, []), files.get(qid, []))
        pages.append(page)
        tables.append(lazy)
    return pages, tables


def question_graders(verdicts: pd.DataFrame) -> dict[str, list[str]]:
    """The graders each question's page shows, in :func:`_grader_order`: those with a score for any of its answers."""
    if verdicts.empty:
        return {}
    order = _grader_order(verdicts)
    scored = verdicts.loc[verdicts["score"].notna(), ["question_id", "grader"]].drop_duplicates()
    present = scored.groupby("question_id", sort=False)["grader"].agg(set).to_dict()
    return {qid: [g for g in order if g in found] for qid, found in present.items()}


def _answer_files(
    result: BenchmarkResults, graders: Mapping[str, list[str]], shared: SharedFiles, shards: KeptFiles | None
) -> dict[str, list[str]]:
    """The data files of each question's answers (docs paths), in shard order: kept where the shard's key is
    unchanged, made otherwise."""
    if result.verdicts.empty:
        return {}
    if result.answers is None:
        raise ValueError(f"benchmark {result.name!r}: the question pages need the answers table (answers=)")
    groups = shard_groups(list(result.verdicts["run_id"].astype(str).unique()))
    models = {str(k): str(v) for k, v in zip(result.models["run_id"], result.models["model"])}
    keys = {}
    if shards is not None:
        keys = shard_keys(groups, models, result.benchmark.questions, graders, result.verdicts, shards)
    by_shard: dict[int, dict[str, str]] = {}
    for shard, key in keys.items():
        kept = shards.reuse(str(shard), key, shared)
        if kept is not None:
            by_shard[shard] = kept["files"]
    todo = {shard: run_ids for shard, run_ids in groups.items() if shard not in by_shard}
    for shard, made in _make_shards(result, graders, todo, models, shared).items():
        by_shard[shard] = {qid: path for qid, (path, _size) in made.items()}
        if shard in keys:
            shards.record(str(shard), keys[shard], made)
    if shards is not None:
        shards.save()
    files: dict[str, list[str]] = {}
    for shard in sorted(by_shard):
        for qid, path in by_shard[shard].items():
            files.setdefault(qid, []).append(path)
    return files


def _make_shards(
    result: BenchmarkResults,
    graders: Mapping[str, list[str]],
    groups: Mapping[int, Sequence[str]],
    models: Mapping[str, str],
    shared: SharedFiles,
) -> dict[int, dict[str, tuple[str, int]]]:
    """Make the data files of the shards ``groups`` (shard → its run ids), handing them to ``shared``.

    Returns each shard's files: question id → (docs path, bytes). The answers of these runs are read a slice of
    questions at a time (:mod:`dualboard.render.answer_texts`), so their text is never in memory at once.
    """
    made: dict[int, dict[str, tuple[str, int]]] = {shard: {} for shard in groups}
    if not groups:
        return made
    shard_by_run = {run_id: shard for shard, run_ids in groups.items() for run_id in run_ids}
    links = {
        shard: {
            run_id: (i, (models.get(run_id, run_id), f"../../runs/{run_slug(run_id)}/")) for i, run_id in enumerate(ids)
        }
        for shard, ids in groups.items()
    }
    verdicts = result.verdicts[result.verdicts["run_id"].isin(list(shard_by_run))]
    rows_of = verdicts.groupby("question_id", sort=False).indices
    orders = orders_by_slot([run for run in result.runs if run.run_id in shard_by_run])
    scored = result.scored[result.scored["run_id"].isin(list(shard_by_run))]
    questions = result.benchmark.questions
    slices = question_slices([q["id"] for q in questions], scored["question_id"].value_counts().to_dict())
    by_id = {q["id"]: q for q in questions}
    order = _grader_order(result.verdicts)
    for ids, texts in zip(slices, texts_by_slice(result.answers, slices, runs=list(shard_by_run)), strict=True):
        rows = [rows_of[qid] for qid in ids if qid in rows_of]
        if not rows:
            continue
        table = _verdict_table(verdicts.iloc[np.concatenate(rows)], order)
        table = table.merge(texts.to_pandas(), on=list(ANSWER_SLOT), how="left", sort=False)
        slots = zip(table["run_id"], table["question_id"], table["round"])
        table["choice_order"] = [orders.get((run_id, qid, int(round_))) for run_id, qid, round_ in slots]
        table["shard"] = table["run_id"].map(shard_by_run)
        for (qid, shard), answers in _answers_by_question(table).items():
            question = by_id[qid]
            rows = _answer_rows(answers, question, graders.get(qid, []), links[shard])
            path, data = data_document(
                answer_columns(question, graders.get(qid, [])), rows, [link for _, link in links[shard].values()]
            )
            shared.add(path, data)
            made[shard][qid] = (path, len(data))
    return made


def _answers_by_question(table: pd.DataFrame) -> dict[tuple[str, int], dict[str, list[Any]]]:
    """The answers of each question and shard as columns of plain values (column name → one value per answer),
    by run and round.

    The table is turned into lists once and cut by question and shard: slicing a DataFrame 2,000 times took
    longer than writing every page.
    """
    table = table.sort_values(["question_id", "shard", "run_id", "round"], kind="stable")
    columns = {c: table[c].tolist() for c in table.columns}
    keys = list(zip(columns["question_id"], columns["shard"]))
    out, start = {}, 0
    for end in range(1, len(keys) + 1):
        if end == len(keys) or keys[end] != keys[start]:
            out[keys[start]] = {c: values[start:end] for c, values in columns.items()}
            start = end
    return out


def _verdict_table(verdicts: pd.DataFrame, graders: list[str]) -> pd.DataFrame:
    """One row per answer, a score and a detail column per grader (``score:<grader>``, ``detail:<grader>``).

    ``graders``: every grader of the benchmark, in :func:`_grader_order` (one absent from ``verdicts`` has
    empty columns).
    """
    keys = list(ANSWER_SLOT)
    if verdicts.empty:
        return pd.DataFrame(columns=keys)
    wide = (
        verdicts.drop_duplicates([*keys, "grader"]).set_index([*keys, "grader"])[["score", "detail"]].unstack("grader")
    )
    wide.columns = [f"{kind}:{grader}" for kind, grader in wide.columns]
    columns = [f"{kind}:{g}" for g in graders for kind in ("score", "detail")]
    return wide.reindex(columns=columns).reset_index().sort_values(keys, kind="stable")


def _grader_order(verdicts: pd.DataFrame) -> list[str]:
    """Graders in role order: traditional, answer-key, then human."""
    rank = {"traditional": 0, "answer_key": 1, "human": 2}
    pairs = verdicts[["grader", "role"]].drop_duplicates()
    return [g for g, _ in sorted(zip(pairs["grader"], pairs["role"]), key=lambda p: (rank.get(p[1], 3), p[0]))]


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


def answer_columns(question: Mapping[str, Any], graders: Sequence[str]) -> list[Column]:
    """The columns of a question's answers: run, round, the options as shown (multiple choice), response, each
    grader in ``graders``."""
    return [
        Column("Run", "link"),
        Column("Round", "number"),
        *([Column("Options as shown", "options")] if question.get("choices") else []),
        Column("Response", "response"),
        *[Column(g, "verdict") for g in graders],
    ]


def question_page(
    benchmark: str, question: Mapping[str, Any], slug: str, graders: Sequence[str], paths: Sequence[str]
) -> tuple[Page, LazyTable]:
    """The page of one question (prompt, answer key) and the lazy table of its answers with every verdict.

    ``graders``: the graders with a verdict on the question (:func:`question_graders`); ``paths``: the data
    files of its answers, in shard order (:func:`_make_shards`). The page's HTML does not grow with the
    answers: they are in the data files, which the page loads.

    On a multiple-choice question each answer shows the options in the order
    that round showed them, with the correct one's letter in that order: a
    grader's "chose C … correct D" is in that order, not the answer key's.
    """
    choices = bool(question.get("choices"))
    path = f"benchmarks/{benchmark}/questions/{slug}.md"
    lazy = sharded_table(path, answer_columns(question, graders), paths, noun="answers")
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
        + "Highlighted answers are those whose graders disagree on pass/fail "
        f"(≥ {format_number(PASS_MARK, 0)} counts as a pass).\n\n" + lazy.html
    )
    return Page(path, text), lazy


def _answer_rows(
    answers: Mapping[str, Sequence[Any]],
    question: Mapping[str, Any],
    graders: list[str],
    runs: Mapping[str, tuple[int, tuple[str, str]]],
) -> list[list[Any]]:
    """The data rows of a question's answers: run, round, options as shown (MC), response, each verdict.

    Built a column at a time, each column's distinct values worked out once (a question has a handful of option
    orders and scores however many answers show them): a million answers take one pass per column, not one
    function call per cell.
    """
    columns: list[list[Any]] = [
        [runs[run_id][0] for run_id in answers.get("run_id", ())],
        [int(round_) for round_ in answers.get("round", ())],
    ]
    if question.get("choices"):
        keys = [tuple(order) if isinstance(order, (list, tuple)) else None for order in answers["choice_order"]]
        shown = {key: list(options_as_shown(question, {"choice_order": list(key) if key else None})) for key in keys}
        columns.append([shown[key] for key in keys])
    columns.append([r if isinstance(r, str) else "" for r in answers.get("response", ())])
    columns += [_verdicts(answers[f"score:{g}"], answers[f"detail:{g}"]) for g in graders]
    return [list(row) for row in zip(*columns, strict=True)]


def _verdicts(scores: Sequence[Any], details: Sequence[Any]) -> list[list[Any]]:
    """:func:`_verdict` of each (score, detail), each distinct score's number and text worked out once."""
    numbers: dict[Any, tuple[Any, str]] = {}
    out = []
    for score, detail in zip(scores, details, strict=True):
        # Only floats are cached (1 and 1.0 are one key but two JSON numbers); NaN never equals a key.
        known = numbers.get(score) if score.__class__ is float else None
        if known is None:
            cell = _verdict(score, detail)
            if cell[0] is not None and score.__class__ is float:
                numbers[score] = (cell[0], format_number(cell[0], 0))
            out.append(cell)
        else:
            out.append([known[0], f"{known[1]}: {detail if isinstance(detail, str) else ''}"])
    return out


def _verdict(score: Any, detail: Any) -> list[Any]:
    """A grader's verdict as the data holds it: [score or null, "score: how it decided"] ("—": no verdict)."""
    value = number(score)
    if value is None:
        return [None, "—"]
    return [value, f"{format_number(value, 0)}: {detail if isinstance(detail, str) else ''}"]


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


def options_as_shown(question: Mapping[str, Any], prediction: Mapping[str, Any]) -> tuple[str, str | None]:
    """The options in the order one answer saw them, and the correct option's letter in that order.

    Examples
    --------
    >>> q = {"id": "q", "choices": ["96", "102", "112"], "correct_choice": "B"}
    >>> options_as_shown(q, {"choice_order": ["C", "B", "A"]})
    ('A. 112  B. 102  C. 96', 'correct here: B')
    """
    try:
        shown = shown_options(dict(question), dict(prediction))
    except GradingInputError:  # validation refuses such an order; never fail the page over it
        return "—", None
    correct = correct_index(dict(question), shown)
    letters = "  ".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(shown))
    return letters, (f"correct here: {LETTERS[correct]}" if correct is not None else None)
