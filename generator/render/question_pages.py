"""The questions of a benchmark: their list, and each question's page document (the question, its answer key,
every run's answer and every grader's verdict), which the benchmark's one question page shows by its address
(:mod:`dualboard.render.item_pages`).
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from dualboard.intake.model_names import with_shown_models
from dualboard.kappa import PASS_MARK
from dualboard.render.answer_shards import SHARD_VERDICT_COLUMNS, shard_groups, shard_keys
from dualboard.render.answer_texts import question_slices, texts_by_slice
from dualboard.render.escape import escape_text
from dualboard.render.html import Cell, Header, table
from dualboard.render.item_pages import (
    FROM_ITEM,
    heading,
    item_page,
    page_document,
    table_block,
    text,
)
from dualboard.render.kept_files import KeptFiles, check_unreplaced
from dualboard.render.lazy_tables import Column, IndexedFiles, data_document, number, sharded_table
from dualboard.render.numbers import format_number, sort_key
from dualboard.render.pages import (
    BenchmarkResults,
    GradedBenchmark,
    Page,
    front_matter,
    question_href,
    question_slugs,
    run_href,
    run_slug,
)
from dualboard.render.shared_files import SharedFiles
from dualboard.scored_files import ABOUT, ANSWER_SLOT, VERDICTS, ScoredFolder
from dualboard.workers import default_jobs, process_pool

PROMPT_PREVIEW = 60
"""Characters of a prompt shown where a page lists every question of a run (the question list shows it whole)."""


SHARD_SCORED_COLUMNS = ("run_id", "model", "question_id")
"""What the answers' data files read of the scored table: which runs and questions there are, and the model name
each run's link shows."""
SHARD_VERDICT_CATEGORIES = ("run_id", "question_id", "grader", "role")
"""The verdict columns the answers' shards are keyed and sent by, which only group and compare: read as categoricals
where nothing else reads the table (:func:`dualboard.pipeline.answers_ahead`), so a million answers' strings are
never decoded one by one."""


RENDER_WORKERS = 1
"""The most worker processes that make answer shards, whatever the cores: each holds a shard's answers and
verdicts besides its own pandas and pyarrow (about 0.5 GB at a million answers), and the render's memory,
counted over its process tree, must stay under 2 GB. One worker beside the render's process uses a second core."""


def question_pages(result: BenchmarkResults, answers: AnswerFiles) -> tuple[list[Page], list[IndexedFiles]]:
    """The question list (in the navigation) and the page that shows any one question, and each question's page
    document and the lazy table of its answers.

    ``answers``: the data files of the answers, one per question and shard (:func:`answer_files`).
    """
    slugs = question_slugs(result.benchmark)
    files = answers.files()
    roles = dict(_distinct_pairs(result.verdicts["grader"], result.verdicts["role"])) if len(result.verdicts) else {}
    made: list[IndexedFiles] = []
    for question in result.benchmark.questions:
        qid = question["id"]
        graders = answers.graders.get(qid, [])
        made += question_page(result.name, question, slugs[qid], graders, files.get(qid, []), roles)
    return [question_list(result, slugs), item_page(result.name, "questions", "Question")], made


def question_graders(verdicts: pd.DataFrame) -> dict[str, list[str]]:
    """The graders each question's page shows, in :func:`_grader_order`: those with a score for any of its answers."""
    if verdicts.empty:
        return {}
    order = _grader_order(verdicts)
    judged = verdicts["score"].notna().to_numpy()
    present: dict[str, set[str]] = {}
    for qid, grader in _distinct_pairs(verdicts["question_id"][judged], verdicts["grader"][judged]):
        present.setdefault(qid, set()).add(grader)
    return {qid: [g for g in order if g in found] for qid, found in present.items()}


def _distinct_pairs(a: pd.Series, b: pd.Series) -> list[tuple[Any, Any]]:
    """The distinct pairs of values of ``a`` and ``b``, in the order they first appear (a missing value is one
    value, NaN).

    What ``drop_duplicates`` of the two columns gives, from their integer codes, without hashing every pair of
    strings.

    Examples
    --------
    >>> _distinct_pairs(pd.Series(["q", "q", "r", "q"]), pd.Series(["x", "x", "x", None]))
    [('q', 'x'), ('r', 'x'), ('q', nan)]
    """
    a_codes, a_values = pd.factorize(a, use_na_sentinel=False)
    b_codes, b_values = pd.factorize(b, use_na_sentinel=False)
    width = max(len(b_values), 1)
    pairs = pd.unique(a_codes.astype(np.int64) * width + b_codes)  # hashed, in the order first seen: no sort
    return [(a_values[pair // width], b_values[pair % width]) for pair in pairs]


@dataclass(frozen=True)
class _ShardWork:
    """What making one shard's data files reads, and nothing more: a worker process is sent it whole."""

    shard: int
    runs: Mapping[str, tuple[int, tuple[str, str]]]
    """Each run of the shard: its place in the shard's run list, and its link (model name, run page)."""
    counts: Mapping[str, int]
    """Their answers to each question (to cut the questions into slices)."""
    questions: Sequence[Mapping[str, Any]]
    graders: Mapping[str, list[str]]
    """The graders each question shows (:func:`question_graders`)."""
    order: list[str]
    """Every grader of the benchmark, in :func:`_grader_order`."""
    files: ScoredFolder
    """The graded files the verdicts and responses are read from (a worker reads them: that costs less than
    sending them, and the render's process holds no copy meanwhile)."""


class AnswerFiles:
    """The data files of a benchmark's answers, shard by shard: kept from the last render, made here, or being
    made by worker processes while this one renders other pages (:func:`answer_files`)."""

    def __init__(self, graders: dict[str, list[str]], shared: SharedFiles, kept: KeptFiles | None) -> None:
        self.graders = graders
        """The graders each question shows (:func:`question_graders`)."""
        self.pending: dict[int, tuple[Future, _ShardWork]] = {}
        """The shards being made by workers: each future gives what :func:`_make_shard` returns for its work."""
        self._shared = shared
        self._kept = kept
        self._keys: dict[int, str] = {}
        self._by_shard: dict[int, dict[str, str]] = {}
        self._verdicts: tuple[Path, list[int]] | None = None
        """The ``about.json`` of the files the shards are keyed by and made from, with its status when they were
        read (a grade rewrites it)."""

    def keep_unchanged(self, result: GradedBenchmark) -> dict[int, list[str]]:
        """Keep the files of each shard whose key is what it was in the last render; the others' run ids, by shard."""
        if result.verdicts.empty:
            return {}
        if result.files is None:
            raise ValueError(f"benchmark {result.name!r}: the question pages need the graded files (files=)")
        groups = shard_groups([str(run_id) for run_id in result.verdicts["run_id"].unique()])
        if result.files_status is not None:
            self._verdicts = (result.files.path / ABOUT, result.files_status)
        if self._kept is not None:
            questions, files = result.benchmark.questions, result.files
            self._keys = shard_keys(groups, _model_names(result), questions, self.graders, files)
        for shard, key in self._keys.items():
            reused = self._kept.reuse(str(shard), key, self._shared)
            if reused is not None:
                self._by_shard[shard] = reused["files"]
        return {shard: run_ids for shard, run_ids in groups.items() if shard not in self._by_shard}

    def made(self, shard: int, files: Mapping[str, tuple[str, int]]) -> None:
        """Take the files of a shard just made (question id → (docs path, bytes)), remembering them under its key."""
        self._by_shard[shard] = {qid: path for qid, (path, _size) in files.items()}
        if shard in self._keys:
            self._kept.record(str(shard), self._keys[shard], files)

    def files(self) -> dict[str, list[str]]:
        """The data files of each question's answers (docs paths), in shard order, once every shard is made."""
        for shard, (future, work) in sorted(self.pending.items()):
            try:
                files = future.result()
            except Exception:  # made again here, where the error is raised whole
                files = _make_shard(work, self._shared)
            for path, size in files.values():  # a worker wrote them to the docs folder
                if not self._shared.keep(path, size):
                    raise RuntimeError(f"a worker made {path} ({size} bytes), but the docs folder does not hold it")
            self.made(shard, files)
        self.pending.clear()
        if self._verdicts is not None:
            check_unreplaced(*self._verdicts)
        if self._kept is not None:
            self._kept.save()
        files: dict[str, list[str]] = {}
        for shard in sorted(self._by_shard):
            for qid, path in self._by_shard[shard].items():
                files.setdefault(qid, []).append(path)
        return files


@contextlib.contextmanager
def answer_files(
    result: GradedBenchmark, shared: SharedFiles, kept: KeptFiles | None = None, jobs: int | None = None
) -> Iterator[AnswerFiles]:
    """Start making the data files of one benchmark's answers (:func:`started_answer_files`)."""
    with started_answer_files([result], shared, {result.name: kept}, jobs) as started:
        yield started[result.name]


@contextlib.contextmanager
def started_answer_files(
    graded: Sequence[GradedBenchmark],
    shared: SharedFiles,
    kept: Mapping[str, KeptFiles | None] = MappingProxyType({}),
    jobs: int | None = None,
) -> Iterator[dict[str, AnswerFiles]]:
    """Start making the data files of the answers of every benchmark of ``graded`` (one per question and shard,
    :mod:`dualboard.render.answer_shards`), handing them to ``shared``; yield each benchmark's
    :class:`AnswerFiles`, by name.

    With ``kept`` (by benchmark), a shard whose key is what it was in the last render keeps its files, unread.
    The shards to make go to at most :data:`RENDER_WORKERS` worker process(es) when ``jobs``
    (:func:`~dualboard.workers.default_jobs`, this process being one) leaves a core for them, ``shared`` writes
    to a docs folder and the verdicts were read from a file. The workers read only the grade's tables and the
    runs, so they work while this process goes on (rendering the other pages, or computing the statistics
    first: :func:`dualboard.pipeline.answers_ahead`), until :meth:`AnswerFiles.files` waits for them (one shard,
    as after adding a run, still goes to a worker). Otherwise the shards are made here, at once. When the caller
    fails meanwhile, the shards not yet started are cancelled, and the one being made is waited for (its worker
    writes to the docs folder, which must not change under a later render). The files are the same either way
    (``tests/importers/test_render_by_slices.py``). ``graded`` is not held once this yields: the workers read
    what they need from files.
    """
    jobs = jobs or default_jobs()
    with contextlib.ExitStack() as stack:
        answers = _start(graded, shared, kept, jobs, stack)
        del graded  # not held meanwhile: the tables are read again by whoever needs them
        yield answers


def _start(
    graded: Sequence[GradedBenchmark],
    shared: SharedFiles,
    kept: Mapping[str, KeptFiles | None],
    jobs: int,
    stack: contextlib.ExitStack,
) -> dict[str, AnswerFiles]:
    """Key each benchmark's shards, keep the unchanged ones and make the others, in a worker where
    :func:`started_answer_files` says (its pool entered on ``stack``, which cancels what it has not started
    when it closes), else here."""
    answers = {r.name: AnswerFiles(question_graders(r.verdicts), shared, kept.get(r.name)) for r in graded}
    todo = {r.name: answers[r.name].keep_unchanged(r) for r in graded}
    sent = {r.name for r in graded if todo[r.name] and shared.docs is not None}
    workers = min(jobs - 1, RENDER_WORKERS, sum(len(todo[name]) for name in sent))
    pool = None
    if workers > 0:
        pool = stack.enter_context(process_pool(__name__, workers))
        stack.callback(_cancel_pending, list(answers.values()))
    for result in graded:
        for work in _shard_works(result, answers[result.name].graders, todo[result.name]):
            if pool is not None and result.name in sent:
                future = pool.submit(_make_shard_in_worker, work, shared.docs)
                answers[result.name].pending[work.shard] = (future, work)
            else:
                answers[result.name].made(work.shard, _make_shard(work, shared))
    return answers


def _cancel_pending(answers: Iterable[AnswerFiles]) -> None:
    """Cancel the shards no worker has started (the pool then waits for the ones being made)."""
    for files in answers:
        for future, _work in files.pending.values():
            future.cancel()


def _model_names(result: GradedBenchmark) -> dict[str, str]:
    """The model name each run's link shows, by run id: that of its first scored row, as models.csv has it
    (read from the scored table, so the answers' data files need not wait for the statistics), with its revision
    where runs share it (:func:`~dualboard.intake.model_names.shown_models`)."""
    first = with_shown_models(result.scored.drop_duplicates("run_id"), result.runs)
    return {str(k): str(v) for k, v in zip(first["run_id"], first["model"])}


def _shard_works(
    result: GradedBenchmark, graders: Mapping[str, list[str]], todo: Mapping[int, Sequence[str]]
) -> Iterator[_ShardWork]:
    """What :func:`_make_shard` needs of ``result`` for each shard of ``todo`` (shard → its run ids).

    The verdicts are read again from the files where the shard is made: the render's own table lacks their
    details (:data:`~dualboard.render.pages.READ_VERDICT_COLUMNS`)."""
    models, order = _model_names(result), _grader_order(result.verdicts)
    for shard, run_ids in todo.items():
        runs = {
            run_id: (i, (models.get(run_id, run_id), run_href(run_slug(run_id), FROM_ITEM)))
            for i, run_id in enumerate(run_ids)
        }
        scored = result.scored.loc[result.scored["run_id"].isin(list(runs)), "question_id"]
        yield _ShardWork(
            shard=shard,
            runs=runs,
            counts=scored.value_counts().to_dict(),
            questions=result.benchmark.questions,
            graders=graders,
            order=order,
            files=result.files,
        )


def _make_shard_in_worker(work: _ShardWork, docs: Path) -> dict[str, tuple[str, int]]:
    """:func:`_make_shard` in a worker process, writing to the docs folder ``docs``."""
    return _make_shard(work, SharedFiles(docs))


def _make_shard(work: _ShardWork, shared: SharedFiles) -> dict[str, tuple[str, int]]:
    """Make the data files of one shard, handing them to ``shared``.

    Returns the shard's files: question id → (docs path, bytes). The answers of its runs are read a slice of
    questions at a time (:mod:`dualboard.render.answer_texts`), so their text is never in memory at once.
    """
    made: dict[str, tuple[str, int]] = {}
    verdicts = work.files.read(VERDICTS, SHARD_VERDICT_COLUMNS, runs=list(work.runs)).to_pandas()
    rows_of = verdicts.groupby("question_id", sort=False).indices
    slices = question_slices([q["id"] for q in work.questions], work.counts)
    by_id = {q["id"]: q for q in work.questions}
    links = [link for _, link in work.runs.values()]
    for ids, texts in zip(slices, texts_by_slice(work.files, slices, runs=list(work.runs)), strict=True):
        rows = [rows_of[qid] for qid in ids if qid in rows_of]
        if not rows:
            continue
        table = _verdict_table(verdicts.iloc[np.concatenate(rows)], work.order)
        table = table.merge(texts.to_pandas(), on=list(ANSWER_SLOT), how="left", sort=False)
        for qid, answers in _answers_by_question(table).items():
            question, graders = by_id[qid], work.graders.get(qid, [])
            rows = _answer_rows(answers, question, graders, work.runs)
            path, data = data_document(answer_columns(question, graders), rows, links)
            shared.add(path, data)
            made[qid] = (path, len(data))
    return made


def _answers_by_question(table: pd.DataFrame) -> dict[str, dict[str, list[Any]]]:
    """The answers of each question (of one shard) as columns of plain values (column name → one value per
    answer), by run and round.

    The table is turned into lists once and cut by question: slicing a DataFrame once per question is slow.
    """
    table = table.sort_values(["question_id", "run_id", "round"], kind="stable")
    columns = {c: table[c].tolist() for c in table.columns}
    keys = columns["question_id"]
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
    pairs = _distinct_pairs(verdicts["grader"], verdicts["role"])
    return [g for g, _ in sorted(pairs, key=lambda p: (rank.get(p[1], 3), p[0]))]


def question_list(result: BenchmarkResults, slugs: Mapping[str, str]) -> Page:
    """Every question with its mean score under both gradings across runs, and a heading per question (its id and
    prompt) that the site's search finds."""
    scored = result.scored.assign(answer_key=result.scored["answer_key"].fillna(0.0))
    means = scored.groupby("question_id")[["traditional", "answer_key"]].mean()
    rows = []
    for q in result.benchmark.questions:
        trad, key = means.loc[q["id"]] if q["id"] in means.index else (float("nan"), float("nan"))
        rows.append(
            [
                Cell(str(q["id"]), href=question_href(slugs[q["id"]], "../")),
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
    text_ = (
        front_matter(f"Questions: {result.name}", hide=("toc",))
        + f"# Questions of {escape_text(result.benchmark.title)}\n\n"
        "Every question with its full text and the mean score of all runs under both gradings (0–100). "
        "Questions where answer-key grading is far below traditional grading are where strict grading bites; "
        "open one to audit the verdicts. The site's search finds a question by its id or any word of its text.\n\n"
        # the table is left out of the search index, where it would read as one run-on line: the sections are in it
        + f"<div data-search-exclude>{table(headers, rows, filterable=True).rstrip()}</div>\n"
        + "\n## Each question\n\n"
        + "".join(_search_section(q, slugs[q["id"]]) for q in result.benchmark.questions)
    )
    return Page(f"benchmarks/{result.name}/questions/index.md", text_)


def _search_section(question: Mapping[str, Any], slug: str) -> str:
    """A question's heading and prompt on the list: one entry of the site's search, which links its page."""
    return (
        f'<h3 id="q-{slug}">{escape_text(question["id"])}</h3>\n'
        f"<p>{escape_text(question.get('prompt', ''))} "
        f'<a href="{question_href(slug, "../")}">Open question {escape_text(question["id"])}</a></p>\n\n'
    )


def prompt_preview(question: Mapping[str, Any], length: int = PROMPT_PREVIEW) -> str:
    """The first ``length`` characters of a question's prompt, with … when cut."""
    prompt = str(question.get("prompt", ""))
    return prompt[:length] + ("…" if len(prompt) > length else "")


ROLE_LABELS = {"traditional": "Traditional", "answer_key": "Answer-key", "human": "Human labels"}
"""What a grader's column says first: the grading its verdicts count for (its role), then the grader's name."""


def answer_columns(
    question: Mapping[str, Any], graders: Sequence[str], roles: Mapping[str, str] = MappingProxyType({})
) -> list[Column]:
    """The columns of a question's answers: run, round, the options as shown (multiple choice), response, each
    grader in ``graders``, headed by its role in ``roles`` (grader → role) and its name."""
    return [
        Column("Run", "link"),
        Column("Round", "number"),
        *([Column("Options as shown", "options")] if question.get("choices") else []),
        Column("Response", "response"),
        *[Column(_grader_header(g, roles.get(g)), "verdict") for g in graders],
    ]


def _grader_header(grader: str, role: str | None) -> Header:
    """``Traditional · recorded``: the grading first, so a reader needs not know the graders' names.

    Examples
    --------
    >>> _grader_header("rules", "answer_key").text, _grader_header("x", None).text
    ('Answer-key · rules', 'x')
    """
    label = ROLE_LABELS.get(role or "", role)
    if not label:
        return Header(grader)
    return Header(
        f"{label} · {grader}", title=f"The verdicts of the grader {grader}, which {label.lower()} grading counts."
    )


def question_page(
    benchmark: str,
    question: Mapping[str, Any],
    slug: str,
    graders: Sequence[str],
    paths: Sequence[str],
    roles: Mapping[str, str] = MappingProxyType({}),
) -> tuple[IndexedFiles, IndexedFiles]:
    """The page document of one question (prompt, answer key) and the lazy table of its answers with every verdict.

    ``graders``: the graders with a verdict on the question (:func:`question_graders`); ``paths``: the data
    files of its answers, in shard order (:func:`_make_shards`); ``roles``: each grader's role (grader → role).
    The document does not grow with the answers: they are in the data files, which the page loads.

    On a multiple-choice question each answer shows the options in the order
    that round showed them, with the correct one's letter in that order: a
    grader's "chose C … correct D" is in that order, not the answer key's.
    """
    choices = bool(question.get("choices"))
    path = f"benchmarks/{benchmark}/questions/{slug}.md"
    lazy = sharded_table(path, answer_columns(question, graders, roles), paths, noun="answers")
    blocks = [
        text(
            "Benchmark ",
            Cell(benchmark, href=FROM_ITEM),
            " · ",
            Cell("all questions", href=f"{FROM_ITEM}questions/"),
        ),
        *_question_blocks(question),
        heading("Answers and verdicts"),
        text(
            "Every answer of every run, with each grader's score (0–100) and how it decided. "
            + (
                "Options as shown gives the options in the order that round showed them (runs may shuffle them), "
                "and the correct option's letter in that order; the graders' letters refer to that order. "
                if choices
                else ""
            )
            + "Highlighted answers are those whose graders disagree on pass/fail "
            f"(≥ {format_number(PASS_MARK, 0)} counts as a pass)."
        ),
        lazy.block(),
    ]
    return page_document(path, f"Question {question['id']}", blocks), lazy


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
        pairs = list(zip(answers["options_shown"], answers["correct_letter"], strict=True))
        shown = {pair: [pair[0] or "—", f"correct here: {pair[1]}" if pair[1] else None] for pair in set(pairs)}
        columns.append([shown[pair] for pair in pairs])
    columns.append([r if isinstance(r, str) else "" for r in answers.get("response", ())])
    columns += [_verdicts(answers[f"score:{g}"], answers[f"detail:{g}"]) for g in graders]
    return [list(row) for row in zip(*columns, strict=True)]


def _verdicts(scores: Sequence[Any], details: Sequence[Any]) -> list[list[Any]]:
    """:func:`_verdict` of each (score, detail), each distinct score's number and text worked out once."""
    numbers: dict[Any, tuple[Any, str]] = {}
    out = []
    for score, detail in zip(scores, details, strict=True):
        # Only floats are cached (1 and 1.0 are one key but two JSON numbers), and never -0.0 (it equals the
        # key 0.0 but is written as -0.0); NaN never equals a key.
        cached = score.__class__ is float and (score or math.copysign(1.0, score) > 0)
        known = numbers.get(score) if cached else None
        if known is None:
            cell = _verdict(score, detail)
            if cell[0] is not None and cached:
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


def _question_blocks(question: Mapping[str, Any]) -> list[dict[str, Any]]:
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
    return [
        heading("Prompt"),
        text(str(question.get("prompt", "")), css_class="dualboard-response"),
        heading("Answer key"),
        table_block(["Field", "Value"], rows, sortable=False),
        *(
            [text("Reference answer written by a person:"), text(str(reference), css_class="dualboard-response")]
            if reference
            else []
        ),
    ]


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
