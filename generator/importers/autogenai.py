"""Import published results of "Easy Problems That LLMs Get Wrong" (autogenai).

The source repository publishes, per release folder, ``auto_eval_outputs/
auto_eval-<model>.json``: a JSON object keyed "0", "1", … whose records hold
the question, the human answer key, the model's raw answer and the published
score. Two kinds of release exist:

* multiple choice (``*-Multi-Benchmark``): records add ``multiple_choice`` (the
  options as shuffled for that answer), ``correct_answer`` and ``correct_letter``;
  several rounds follow each other in ``level_0`` order, one block of all
  questions per round; ``score`` is 0 or 100.
* open-ended: records add ``eval_response`` (the LLM judge's written
  judgement) and a partial-credit ``score`` (0–100); rounds are ``round_N``
  folders (N from 1), or one round when there are none.

Published scores travel as ``recorded`` (``published`` for multiple choice,
``judge`` for open-ended); the judge's text and the published letter are kept
as provenance in ``provenance.jsonl`` beside each run's predictions. Multiple
choice is graded traditionally by ``mc_letter`` with the source's rule (the
first of several JSON answers counts), which reproduces every published score.

An open-ended release may also carry ``llm_outputs/[round_N/]final_answers-
<model>.json``: the answers with the authors' own ``score``, marked by a
person against the human answer. Those marks become ``human_labels.csv``;
where they cover every answer, ``human`` is the answer-key grader, with
``rules`` beside it for comparison.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from string import ascii_uppercase as LETTERS
from typing import Any

import jsonschema
import pandas as pd
import yaml

from dualboard.grading.human import HumanGrader
from dualboard.importers.run_folders import SourceFormatError, answer_key, jsonl, slug, write_plan, yaml_text
from dualboard.intake.human_labels import (
    LABEL_COLUMNS,
    LABELS_FILE,
    HumanLabelsError,
    parse_human_labels,
    response_sha256,
)
from dualboard.names import RUN_ID_RULE, is_name
from dualboard.stats.published import PUBLISHED_COLUMNS, PUBLISHED_FILE

SOURCE = "autogenai/easy-problems-that-llms-get-wrong"
JUDGE_FIELD = "judge"
"""Name under ``recorded`` of the LLM judge's auto-evaluation score (open-ended releases)."""
SOURCE_MC_GRADER = {"name": "mc_letter", "options": {"json_answer": "first"}}
"""The source's own multiple-choice scoring: its scorer reads the first JSON object of an answer
(one 2024-09-13 answer gives {"ANSWER": "A"} and later {"ANSWER": "C"}; the source scored A)."""
AUTOMATIC_ANSWER_KEY = ({"name": "rules"},)
"""Answer-key graders the importer configures; people's marks go first when they cover every answer."""
_EVAL_FOLDER, _ANSWERS_FOLDER = "auto_eval_outputs", "llm_outputs"
SOURCE_TABLE = Path("tables_and_charts", "final_stats.csv")
"""The release's own summary table, kept as ``published.csv`` (:data:`dualboard.stats.published.PUBLISHED_FILE`)."""
_ROUND_FOLDER = re.compile(r"^round_(\d+)$")
_RELEASE_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")
_HIGH_LATIN1_RUN = re.compile(r"[\u0080-\u00ff]{2,}")


class ReleaseFormatError(SourceFormatError):
    """The source folder does not look like an autogenai release."""


@dataclass(frozen=True)
class ImportSummary:
    """What :func:`import_autogenai` wrote."""

    benchmark: str
    """Benchmark name (``--benchmark``)."""
    version: str
    """Benchmark version: the release date from the folder name."""
    question_type: str
    """``multiple_choice`` or ``open``."""
    n_questions: int
    """Questions written to ``questions.jsonl``."""
    runs: tuple[str, ...]
    """Run ids written under ``submissions/<benchmark>/``."""
    n_predictions: int
    """Predictions written over all runs."""
    paths: tuple[Path, ...]
    """Folders created: the benchmark folder, then one per run."""
    warnings: tuple[str, ...] = ()
    """Inconsistencies found in the source and how they were resolved."""
    n_human_labels: int = 0
    """Authors' marks written to ``human_labels.csv`` (0: none published)."""


@dataclass(frozen=True)
class _Record:
    """One published answer with the model and round it belongs to."""

    model: str
    round: int
    fields: dict[str, Any]
    path: Path
    """The ``auto_eval-<model>.json`` file it was read from."""
    key: str
    """Its key in that file (the question number in open-ended releases)."""


_RunRecords = tuple[str, list[tuple[_Record, dict[str, Any]]]]
"""One run: the published model name and its (record, question) pairs."""


def _undo_latin1(run: str) -> str:
    """Decode a run of Latin-1 characters as the UTF-8 bytes they once were, repeatedly."""
    for _ in range(3):
        try:
            decoded = run.encode("latin-1").decode("utf-8")
        except UnicodeError:
            break
        if decoded == run:
            break
        run = decoded
    return run


def repair_mojibake(text: str) -> str:
    """Undo UTF-8 text that was decoded as Latin-1 (once or twice) by the source's pipeline.

    The 2024-04-28 release has such text ("âwinningâ" for “winning”) in
    human_answer, model_answer and eval_response. Only runs of characters
    U+0080–U+00FF that decode cleanly as UTF-8 change; real accents stay.

    Examples
    --------
    >>> repair_mojibake("chance of \u00e2\u0080\u009cwinning\u00e2\u0080\u009d, café")
    'chance of “winning”, café'
    """
    return _HIGH_LATIN1_RUN.sub(lambda m: _undo_latin1(m.group(0)), text)


def _repaired(value: Any) -> Any:
    if isinstance(value, str):
        return repair_mojibake(value)
    if isinstance(value, list):
        return [_repaired(item) for item in value]
    return value


def _fail(src: Path, problem: str) -> ReleaseFormatError:
    return ReleaseFormatError(f"{src}: {problem} — point SRC at a release folder such as 2024-09-13-Multi-Benchmark")


def load_release_file(path: Path, schema: str = "autogenai_release") -> dict[str, Any]:
    """Read one ``auto_eval-<model>.json`` (or, with ``schema="autogenai_marks"``, one
    ``final_answers-<model>.json``) and check it against its format.

    Raises ReleaseFormatError naming the file, the record and the field, so a
    malformed release never reaches the question and run builders.
    """
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise _fail(path, f"not a UTF-8 JSON file ({type(exc).__name__}: {str(exc)[:120]})") from exc
    error = next(iter(sorted(_validator(schema).iter_errors(data), key=lambda e: list(e.absolute_path))), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "top level"
        raise ReleaseFormatError(
            f"{path}: record {where}: {error.message[:200]} — fix or drop that record in a copy of the release"
        )
    return data


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads(resources.files(__package__).joinpath(f"{name}.schema.json").read_text("utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def _records_in_file(path: Path, round_from_folder: int | None) -> list[_Record]:
    """Read one ``auto_eval-<model>.json`` into records with rounds."""
    model = path.stem.removeprefix("auto_eval-")
    data = load_release_file(path)
    # Open-ended files are keyed "1".."30" by question and carry no index field.
    keys = sorted(data, key=int)
    rows = [{"index": int(key), **data[key]} for key in keys]
    n_questions = len({row["index"] for row in rows})
    records = []
    for position, (key, row) in enumerate(zip(keys, rows, strict=True)):
        level = int(row.get("level_0", position))
        round_ = round_from_folder if round_from_folder is not None else level // n_questions
        fields = {name: _repaired(value) for name, value in row.items()}
        fields["encoding_repaired"] = fields != row
        records.append(_Record(model, round_, fields, path, key))
    return records


def read_release(src: Path) -> list[_Record]:
    """Read every published answer of a release folder, in a stable order."""
    files = sorted(Path(src).rglob("auto_eval-*.json"))
    if not files:
        raise _fail(src, "no auto_eval_outputs/auto_eval-<model>.json files found")
    records = []
    for path in files:
        folders = [int(m.group(1)) for part in path.relative_to(src).parts if (m := _ROUND_FOLDER.match(part))]
        records.extend(_records_in_file(path, folders[-1] - 1 if folders else None))
    return records


def marks_path(src: Path, eval_path: Path) -> Path | None:
    """Return the ``final_answers-<model>.json`` beside an ``auto_eval-<model>.json``, if the release has it.

    Examples
    --------
    >>> marks_path(Path("/nowhere"), Path("/nowhere/auto_eval_outputs/round_1/auto_eval-m.json")) is None
    True
    """
    parts = list(eval_path.relative_to(src).parts)
    if _EVAL_FOLDER not in parts[:-1]:
        return None
    parts[parts.index(_EVAL_FOLDER)] = _ANSWERS_FOLDER
    parts[-1] = "final_answers-" + eval_path.name.removeprefix("auto_eval-")
    path = Path(src, *parts)
    return path if path.is_file() else None


def _load_marks(path: Path, eval_path: Path, expected: set[str]) -> dict[str, Any]:
    """Read one ``final_answers-<model>.json``, refusing one whose keys differ from its auto_eval file's."""
    marks = load_release_file(path, "autogenai_marks")
    if marks.keys() != expected:
        differ = sorted(marks.keys() ^ expected, key=int)[:5]
        raise ReleaseFormatError(
            f"{path}: question(s) {', '.join(differ)} are in only one of it and {eval_path.name} — "
            "each marked answer needs its auto-evaluated answer: fix or remove the file in a copy of the release"
        )
    return marks


def _marked(record: _Record, row: dict[str, Any], path: Path) -> tuple[_Record, str | None]:
    """Add the authors' mark (``human_mark``) to a record, and the answer they marked where it differs."""
    mark = row["score"]
    fields = {**record.fields, "human_mark": None if mark in (None, "") else float(mark)}
    judged = record.fields.get("model_answer") or ""
    answer = repair_mojibake(row["model_answer"] or "")
    if answer == judged:
        return replace(record, fields=fields), None
    # The answer a person marked is the model's output; the auto_eval copy is kept as provenance.
    fields.update(
        model_answer=answer,
        judged_answer=judged,
        encoding_repaired=fields["encoding_repaired"] or answer != row["model_answer"],
    )
    warning = (
        f"question {record.fields['index']} of {record.model} (round {record.round}): the answer in "
        f"{record.path.name} differs from the one in {path.name} that the authors marked; kept the marked answer "
        "as the response, the other is in provenance.jsonl as judged_answer"
    )
    return replace(record, fields=fields), warning


def attach_marks(src: Path, records: list[_Record]) -> tuple[list[_Record], list[str]]:
    """Give each open-ended record the authors' mark from ``llm_outputs``, when the release has one.

    Returns the records (``fields["human_mark"]``: a mark on 0–100, or None
    when the answer was not marked or the model has no marks file) and a
    warning per answer whose marked text differs from the auto-evaluated one.
    """
    keys: dict[Path, set[str]] = defaultdict(set)
    for record in records:
        keys[record.path].add(record.key)
    files = {eval_path: marks_path(src, eval_path) for eval_path in keys}
    loaded = {e: _load_marks(path, e, keys[e]) for e, path in files.items() if path is not None}
    out, warnings = [], []
    for record in records:
        if record.path not in loaded:
            out.append(replace(record, fields={**record.fields, "human_mark": None}))
            continue
        marked, warning = _marked(record, loaded[record.path][record.key], files[record.path])
        out.append(marked)
        warnings += [warning] if warning else []
    return out, warnings


def _is_multiple_choice(records: Iterable[_Record]) -> bool:
    return all("multiple_choice" in r.fields and "correct_answer" in r.fields for r in records)


def _question(record: _Record, multiple_choice: bool) -> dict[str, Any]:
    """Build the questions.jsonl row a record describes."""
    fields = record.fields
    human = str(fields.get("human_answer", "")).strip()
    question: dict[str, Any] = {
        "id": str(fields["index"]),
        "category": str(fields.get("category", "")),
        "prompt": str(fields.get("question", "")).strip(),
        "type": "multiple_choice" if multiple_choice else "open",
    }
    if multiple_choice:
        question["choices"] = [str(c) for c in fields["multiple_choice"]]
        question["correct_choice"] = str(fields["correct_answer"])
    notes = f"imported from {SOURCE}: human_answer" + (" and correct_answer" if multiple_choice else "")
    if multiple_choice:
        question["answer_key"] = answer_key(str(fields["correct_answer"]), [], notes, option=True) | {
            "reference": human
        }
    else:
        question["answer_key"] = answer_key(human, [], notes)
    return question


def _comparable(question: dict[str, Any]) -> str:
    """Serialise a question for comparison, ignoring the order of its options."""
    return json.dumps({**question, "choices": sorted(question.get("choices", []))}, sort_keys=True)


def build_questions(records: list[_Record], multiple_choice: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """Return one question per ``index`` and warnings about records that disagree.

    Real releases are not always consistent (in 2024-04-28 one model's file
    carries a different ``human_answer`` for question 3), so the version most
    records agree on is kept and every dissenting record is named in a
    warning. Options keep the order of the first record (first round, first
    model); each answer's own order travels as ``choice_order``.
    """
    versions: dict[str, dict[str, list[_Record]]] = defaultdict(lambda: defaultdict(list))
    first: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for record in sorted(records, key=lambda r: (r.round, r.model)):
        question = _question(record, multiple_choice)
        text = _comparable(question)
        versions[question["id"]][text].append(record)
        first[question["id"]].setdefault(text, question)
    questions, warnings = [], []
    for question_id, variants in versions.items():
        kept = max(variants, key=lambda text: len(variants[text]))  # ties: the earliest seen
        questions.append(first[question_id][kept])
        for text, dissent in variants.items():
            if text != kept:
                models = sorted({r.model for r in dissent})
                warnings.append(
                    f"question {question_id}: {len(dissent)} record(s) of {', '.join(models)} differ from the "
                    f"{len(variants[kept])} others (e.g. in human_answer); kept the majority version"
                )
    questions.sort(key=lambda q: int(q["id"]) if q["id"].isdigit() else q["id"])
    return questions, warnings


def published_option_order(src: Path) -> dict[str, list[str]]:
    """Return the unshuffled options per question id from ``linguistic_benchmark_multi_choice.json``.

    The file sits in the release folder or the folder above it; without it the
    options keep the order of the first record.
    """
    for folder in (Path(src), Path(src).parent):
        path = folder / "linguistic_benchmark_multi_choice.json"
        if path.is_file():
            try:
                rows = json.loads(path.read_text(encoding="utf-8"))
                rows = rows.values() if isinstance(rows, dict) else rows
                return {str(row["index"]): [str(c) for c in row["multiple_choice"]] for row in rows}
            except (ValueError, TypeError, KeyError) as exc:
                raise _fail(
                    path, f"not the published list of questions with index and multiple_choice ({exc})"
                ) from exc
    return {}


def _reorder_choices(questions: list[dict[str, Any]], published: dict[str, list[str]]) -> None:
    """Put each question's options in the published order when it has the same options."""
    for question in questions:
        order = published.get(question["id"])
        if question.get("choices") and order and sorted(order) == sorted(question["choices"]):
            question["choices"] = order


_DEPLOYMENT = re.compile(r"(?P<model>.+?)-(?P<host>[a-z0-9]+(?:_[a-z0-9]+){2,}_(?:com|net|org|io|ai))")
"""A published name that ends in a serving host with its dots written as underscores (an Azure deployment id)."""


def model_and_deployment(published: str) -> tuple[str, str | None]:
    """Split a published model name into the model's own name and the deployment it names, if any.

    The source names some files after the endpoint that served the model;
    the leaderboard shows the model, and the deployment stays in the run's
    metadata (``deployment``).

    Examples
    --------
    >>> model_and_deployment("Meta-Llama-3-1-405B-Instruct-jjo_eastus_models_ai_azure_com")
    ('Meta-Llama-3-1-405B-Instruct', 'Meta-Llama-3-1-405B-Instruct-jjo_eastus_models_ai_azure_com')
    >>> model_and_deployment("meta_llama3-70b-instruct-v1_0")
    ('meta_llama3-70b-instruct-v1_0', None)
    """
    match = _DEPLOYMENT.fullmatch(published)
    return (match["model"], published) if match else (published, None)


def _correct_choices_as_letters(questions: list[dict[str, Any]]) -> None:
    """Name each correct option by its letter in the final option order (the questions.jsonl contract)."""
    for question in questions:
        if not question.get("choices"):
            continue
        if question["correct_choice"] not in question["choices"]:
            raise ReleaseFormatError(
                f"question {question['id']}: correct_answer {question['correct_choice'][:80]!r} is not one of the "
                f"options {question['choices']!r} — fix correct_answer in a copy of the release"
            )
        question["correct_choice"] = LETTERS[question["choices"].index(question["correct_choice"])]


def _response(record: _Record) -> str:
    """The response a run holds for a published answer: the model's raw answer."""
    answer = record.fields.get("model_answer")
    return "" if answer is None else str(answer)


def _prediction(record: _Record, question: dict[str, Any], score_name: str) -> dict[str, Any]:
    """Build the predictions.jsonl row of one published answer."""
    fields = record.fields
    prediction: dict[str, Any] = {
        "question_id": question["id"],
        "round": record.round,
        "response": _response(record),
    }
    if question["type"] == "multiple_choice":
        letter = {text: LETTERS[i] for i, text in enumerate(question["choices"])}
        prediction["choice_order"] = [letter[str(text)] for text in fields["multiple_choice"]]
    prediction["recorded"] = {score_name: fields["score"]}
    return prediction


def _provenance(record: _Record, question: dict[str, Any]) -> dict[str, Any]:
    keep = ("eval_response", "json_answer_letter", "correct_letter", "judged_answer", "encoding_repaired")
    row = {"question_id": question["id"], "round": record.round}
    row.update({k: record.fields[k] for k in keep if k in record.fields})
    return row


def _metadata(published: str, benchmark: str, version: str, rounds: int, release: str, marked: bool) -> dict[str, Any]:
    where = f"data/benchmarks/{benchmark}/{LABELS_FILE}"
    marks = f" The authors' own marks of these answers are in {where}." if marked else ""
    model, deployment = model_and_deployment(published)
    return {
        "model": model,
        **({"deployment": deployment} if deployment else {}),
        "model_revision": f"as published in {SOURCE} (commit 9e1f52b0), release {release}",
        "submitter": "autogenai (imported by dualboard import autogenai)",
        "date": version if _RELEASE_DATE.match(version) else None,
        "benchmark": benchmark,
        "benchmark_version": version,
        "decoding": {"temperature": None, "top_p": None, "max_tokens": None, "seed": None},
        "rounds": rounds,
        "license": f"as published in {SOURCE}",
        "notes": f"Imported from {SOURCE}, release {release}. Decoding settings were not published. "
        "Published scores are kept under 'recorded'; the judge's text and published letters in provenance.jsonl."
        + marks,
    }


def _benchmarkyaml_text(
    benchmark: str, version: str, multiple_choice: bool, release: str, people_grade: bool
) -> dict[str, Any]:
    """Build benchmark.yaml; ``people_grade``: the authors' marks cover every answer and are the answer-key grading."""
    traditional = (
        {"multiple_choice": dict(SOURCE_MC_GRADER, options=dict(SOURCE_MC_GRADER["options"]))}
        if multiple_choice
        else {"open": {"name": "recorded", "options": {"field": JUDGE_FIELD}}}
    )
    kind = "multiple choice" if multiple_choice else "open-ended"
    graders = ([{"name": HumanGrader.name}] if people_grade else []) + [dict(g) for g in AUTOMATIC_ANSWER_KEY]
    marks = (
        " Traditional grading is the authors' LLM auto-evaluation; answer-key grading is the authors' own marks, "
        "made by a person against the human answer, with the automatic answer-key graders beside them for comparison."
        if people_grade
        else ""
    )
    return {
        "name": benchmark,
        "version": version,
        "title": f"Easy Problems That LLMs Get Wrong ({kind}, {version})",
        "description": f"The linguistic benchmark of Williams & Huckle (arXiv 2405.19616), {kind} release "
        f"{release} as published in {SOURCE}. Answer keys are the authors' human answers." + marks,
        "allow_incomplete": False,
        "graders": {"traditional": traditional, "answer_key": graders},
    }


def _label_text(mark: float) -> str:
    """Write a mark as people write it: 60, not 60.0; 33.5 as it is."""
    return str(int(mark)) if mark.is_integer() else repr(mark)


def human_labels_csv(runs: dict[str, _RunRecords]) -> str | None:
    """Write the authors' marks as ``human_labels.csv`` text (None when the release has none).

    Each label carries the digest of the run's response to that answer (the
    model's raw answer, which the authors marked), so it applies to that response only.

    Reads the text back with the grading stage's parser, so a mark that would
    not come back unchanged (e.g. marks of only 0 and 1 point, read as
    pass/fail) stops the import instead of being misread later.
    """
    rows = [
        (run_id, question["id"], record.round, record.fields["human_mark"], response_sha256(_response(record)))
        for run_id, (_, pairs) in runs.items()
        for record, question in pairs
        if record.fields.get("human_mark") is not None
    ]
    if not rows:
        return None
    frame = pd.DataFrame(rows, columns=list(LABEL_COLUMNS))
    marks = frame["label"].tolist()
    frame["label"] = [_label_text(mark) for mark in marks]
    try:
        unchanged = parse_human_labels(frame.astype(str), LABELS_FILE)["score"].tolist() == marks
    except HumanLabelsError:
        unchanged = False
    if not unchanged:
        raise ReleaseFormatError(
            f"the authors' marks ({', '.join(sorted(set(frame['label'])))}) would not read back unchanged from "
            f"{LABELS_FILE}, which reads a file of only 0 and 1 as pass/fail and refuses a 1 among marks "
            "on 0–100 — "
            "put the marks on 0–100 in a copy of the release"
        )
    return frame.to_csv(index=False, lineterminator="\n")


def _runs(records: list[_Record], by_id: dict[str, dict[str, Any]]) -> dict[str, _RunRecords]:
    """Group records by model into runs: run id -> (model, [(record, question)]) in round, question order."""
    by_model: dict[str, list[_Record]] = defaultdict(list)
    for record in records:
        by_model[record.model].append(record)
    runs: dict[str, _RunRecords] = {}
    for model in sorted(by_model):
        run_id = slug(model_and_deployment(model)[0], runs)
        chosen = sorted(by_model[model], key=lambda r: (r.round, int(r.fields["index"])))
        runs[run_id] = (model, [(r, by_id[str(r.fields["index"])]) for r in chosen])
    return runs


def _coverage_warning(records: list[_Record]) -> list[str]:
    """Say when the authors' marks cover only some answers (they then do not grade the board)."""
    marked = sum(r.fields.get("human_mark") is not None for r in records)
    if marked in (0, len(records)):
        return []
    return [
        (
            f"the authors' marks cover {marked} of {len(records)} answers: written to {LABELS_FILE} for comparison, "
            f"and {AUTOMATIC_ANSWER_KEY[0]['name']} stays the answer-key grader"
        )
    ]


def _run_files(run: _RunRecords, header: dict[str, Any], release: str, score_name: str) -> dict[str, str]:
    """Build the predictions, metadata and provenance of one run."""
    model, pairs = run
    rounds = len({r.round for r, _ in pairs})
    marked = any(r.fields.get("human_mark") is not None for r, _ in pairs)
    metadata = _metadata(model, header["name"], header["version"], rounds, release, marked)
    return {
        "predictions.jsonl": jsonl(_prediction(r, q, score_name) for r, q in pairs),
        "metadata.yaml": yaml_text(metadata),
        "provenance.jsonl": jsonl(_provenance(r, q) for r, q in pairs),
    }


def plan_import(src: Path, benchmark: str) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Return the files to write, as ``{relative folder: {file name: text}}``, and warnings."""
    records = read_release(src)
    multiple_choice = _is_multiple_choice(records)
    records, mark_warnings = (records, []) if multiple_choice else attach_marks(src, records)
    questions, warnings = build_questions(records, multiple_choice)
    _reorder_choices(questions, published_option_order(src))
    _correct_choices_as_letters(questions)
    runs = _runs(records, {q["id"]: q for q in questions})
    release = Path(src).resolve().name
    version = m.group(1) if (m := _RELEASE_DATE.match(release)) else release
    labels = human_labels_csv(runs)
    people_grade = labels is not None and all(r.fields["human_mark"] is not None for r in records)
    header = _benchmarkyaml_text(benchmark, version, multiple_choice, release, people_grade)
    benchmark_files = {"benchmark.yaml": yaml_text(header), "questions.jsonl": jsonl(questions)}
    published, published_warnings = published_csv(src, runs)
    benchmark_files |= ({LABELS_FILE: labels} if labels else {}) | ({PUBLISHED_FILE: published} if published else {})
    plan = {f"data/benchmarks/{benchmark}": benchmark_files}
    score_name = "published" if multiple_choice else JUDGE_FIELD
    for run_id, run in runs.items():
        plan[f"submissions/{benchmark}/{run_id}"] = _run_files(run, header, release, score_name)
    return plan, warnings + mark_warnings + _coverage_warning(records) + published_warnings


def published_csv(src: Path, runs: dict[str, _RunRecords]) -> tuple[str | None, list[str]]:
    """Write the release's own table (``tables_and_charts/final_stats.csv``) as ``published.csv`` text, each row
    with the run id of the model it names; None when the release has no such table.

    Columns are :data:`~dualboard.stats.published.PUBLISHED_COLUMNS`; the numbers are kept as published. A row
    naming no imported model is kept with an empty run id, and a warning says so.
    """
    path = Path(src) / SOURCE_TABLE
    if not path.is_file():
        return None, []
    try:
        table = pd.read_csv(path, encoding="utf-8")
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise _fail(path, f"not a readable CSV table ({type(exc).__name__})") from exc
    missing = [c for c in PUBLISHED_COLUMNS[1:7] if c not in table.columns]
    if missing:
        raise _fail(path, f"the published table has no column {missing[0]!r} — fix its header in a copy of the release")
    run_of = {model: run_id for run_id, (model, _) in runs.items()}
    table.insert(0, "run_id", table["model"].map(run_of).fillna(""))
    stray = table.loc[table["run_id"].eq(""), "model"].tolist()
    warnings = [f"{SOURCE_TABLE}: no answers of model {m!r}; its published row is kept without a run" for m in stray]
    table = table.reindex(columns=list(PUBLISHED_COLUMNS))
    return table.to_csv(index=False, lineterminator="\n"), warnings


def import_autogenai(src: Path, *, benchmark: str, dest: Path, overwrite: bool = False) -> ImportSummary:
    """Convert one autogenai release folder into a benchmark and its runs.

    Parameters
    ----------
    src
        A release folder, e.g. ``2024-09-13-Multi-Benchmark`` or ``2024-04-28-Paper-Benchmark``.
    benchmark
        Name of the benchmark to create (a safe folder name).
    dest
        Repository root: writes ``dest/data/benchmarks/<benchmark>/`` and
        ``dest/submissions/<benchmark>/<run_id>/``.
    overwrite
        Replace folders that already exist (otherwise an error, nothing written).

    Returns
    -------
    ImportSummary
    """
    if not is_name(benchmark):
        raise ReleaseFormatError(f"benchmark name {benchmark!r} is not a safe folder name — use {RUN_ID_RULE}")
    plan, warnings = plan_import(Path(src), benchmark)
    paths = write_plan(plan, Path(dest), overwrite)
    header = yaml.safe_load(plan[f"data/benchmarks/{benchmark}"]["benchmark.yaml"])
    questions = plan[f"data/benchmarks/{benchmark}"]["questions.jsonl"].splitlines()
    runs = tuple(folder.rsplit("/", 1)[1] for folder in plan if folder.startswith("submissions/"))
    n_predictions = sum(
        len(files["predictions.jsonl"].splitlines()) for folder, files in plan.items() if "predictions.jsonl" in files
    )
    kind = json.loads(questions[0])["type"] if questions else "open"
    labels = plan[f"data/benchmarks/{benchmark}"].get(LABELS_FILE, "")
    return ImportSummary(
        benchmark,
        str(header["version"]),
        kind,
        len(questions),
        runs,
        n_predictions,
        tuple(paths),
        tuple(warnings),
        n_human_labels=max(len(labels.splitlines()) - 1, 0),
    )
