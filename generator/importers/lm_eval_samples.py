"""Read lm-evaluation-harness output (``--output_path … --log_samples``) into
:class:`~dualboard.importers.harness.HarnessRun`\\ s.

lm-eval writes, per model, ``results_<time>.json`` (the model arguments, each task's config, version and
reported metrics) and beside it one ``samples_<task>_<time>.jsonl`` per task: a line per document with its
``doc_id``, ``target``, ``arguments``, ``resps``, ``filtered_resps`` and the task's metrics. Reading needs no
lm-eval install: the files are JSON.

* ``multiple_choice`` (log-likelihood) tasks: the response is the option the primary metric picks (the
  highest log-likelihood for ``acc``, per character for ``acc_norm``), written as a final answer naming its
  letter and text (:func:`chosen_response`); the
  log-likelihoods go to ``provenance.jsonl``.
* A question's id is the document's own ``id`` field where the dataset has one, else its ``doc_id``.
* ``generate_until`` tasks: lm-eval scores one text per document, which its filter takes or makes from the
  repeats (``take_first``, a majority vote); that text is the run's one answer to the question, graded by the
  harness's score and by the answer keys alike. lm-eval logs no score per repeat, so repeats cannot be rounds
  without inventing one: they are kept in ``provenance.jsonl`` (``repeat_0``, ``repeat_1``, …).

The files are untrusted: no links, size caps, strict JSON; a duplicate document, a missing target or a
log-likelihood that contradicts the harness's own metric is a finding.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from string import ascii_uppercase as LETTERS
from typing import Any

from dualboard.errors import Finding, InvalidInputError
from dualboard.importers.harness import Answer, HarnessRun, day_of, short_json
from dualboard.importers.run_folders import answer_key
from dualboard.intake.untrusted import iter_json_lines, parse_json_line
from dualboard.safe_read import UnsafeFileError, open_regular, read_regular

HARNESS = "lm-evaluation-harness"
MAX_RESULTS_BYTES = 50 * 1024**2
MAX_SAMPLES_BYTES = 1024**3
_RESULTS = re.compile(r"^results_(?P<stamp>.+)\.json$")
MAX_REPEATS_KEPT = 16
"""Repeats of a document kept in provenance.jsonl (a line holds at most 20 fields)."""
NORMALISED = "acc_norm"
"""The metric whose option is chosen by log-likelihood per character of the option."""


def read_lm_eval_output(folder: Path) -> list[HarnessRun]:
    """Read every (model, task) under ``folder``; raise InvalidInputError with every finding (nothing imported)."""
    folder = Path(folder)
    results = sorted(p for p in _files(folder) if _RESULTS.match(p.name))
    if not results:
        raise InvalidInputError(
            [
                Finding(
                    str(folder),
                    None,
                    "-",
                    "holds no results_*.json",
                    "pass the --output_path folder of an `lm_eval --log_samples` run",
                )
            ]
        )
    runs, findings = [], []
    for path in results:
        try:
            found_runs, found = _runs_of(path, folder)
        except UnsafeFileError as exc:
            found_runs, found = [], [exc.finding()]
        runs += found_runs
        findings += found
    if findings:
        raise InvalidInputError(findings)
    return runs


def _files(folder: Path) -> list[Path]:
    """Every file under ``folder``, links not followed (a linked file is refused when it is read)."""
    return [Path(top) / name for top, _, names in os.walk(folder) for name in names]


def _finding(path: Path | str, line: int | None, field: str, problem: str, fix: str) -> Finding:
    return Finding(str(path), line, field, problem, fix)


def _json_file(path: Path, root: Path) -> tuple[Any, Finding | None]:
    value, problem = parse_json_line(read_regular(path, root=root, limit=MAX_RESULTS_BYTES), str(path), None)
    if problem is None and not isinstance(value, dict):
        problem = _finding(path, None, "-", "is not a JSON object", "pass the results file lm_eval wrote")
    return value, problem


def _runs_of(path: Path, root: Path) -> tuple[list[HarnessRun], list[Finding]]:
    """The runs of one results file: one per task it reports."""
    results, problem = _json_file(path, root)
    if problem is not None:
        return [], [problem]
    stamp = _RESULTS.match(path.name)["stamp"]
    runs, findings = [], []
    configs = results.get("configs") or {}
    for task in sorted(results.get("results") or {}):
        if task not in configs:  # a group's aggregate row, not a task of its own
            continue
        samples = path.parent / f"samples_{task}_{stamp}.jsonl"
        if not samples.is_file():
            findings.append(
                _finding(
                    path,
                    None,
                    f"results.{task}",
                    f"no {samples.name} beside it",
                    "rerun lm_eval with --log_samples and pass its whole --output_path folder",
                )
            )
            continue
        run, found = _run(task, results, samples, path, root)
        findings += found
        runs += [run] if run is not None else []
    return runs, findings


def _model_args(results: dict[str, Any]) -> dict[str, str]:
    """The model arguments, given as a mapping or as lm_eval's ``key=value,key=value`` text."""
    args = (results.get("config") or {}).get("model_args") or {}
    if isinstance(args, str):
        args = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
    return {str(k): str(v) for k, v in args.items()}


def _run(task: str, results: dict, samples: Path, path: Path, root: Path) -> tuple[HarnessRun | None, list[Finding]]:
    config = results["configs"][task]
    metrics = config.get("metric_list") or []
    if not metrics or not isinstance(metrics[0], dict) or not isinstance(metrics[0].get("metric"), str):
        return None, [
            _finding(path, None, f"configs.{task}.metric_list", "names no metric", "give the task a metric_list")
        ]
    primary = metrics[0]["metric"]
    if metrics[0].get("aggregation", "mean") != "mean":
        return None, [
            _finding(
                path,
                None,
                f"configs.{task}.metric_list",
                f"{primary} is aggregated by {metrics[0]['aggregation']!r}, not as a mean of per-document scores",
                "import a task whose first metric is a mean of per-document scores (acc, exact_match)",
            )
        ]
    filters = config.get("filter_list") or [{"name": "none"}]
    kept = str(filters[0].get("name", "none"))
    reported = (results.get("results") or {}).get(task, {}).get(f"{primary},{kept}")
    if not isinstance(reported, int | float) or not 0 <= reported <= 1:
        return None, [
            _finding(
                path,
                None,
                f"results.{task}",
                f"reports no {primary} from 0 to 1 for filter {kept}",
                "import a task whose first metric is a score from 0 to 1",
            )
        ]
    kind = config.get("output_type")
    if kind not in ("multiple_choice", "generate_until"):
        return None, [
            _finding(
                path,
                None,
                f"configs.{task}.output_type",
                f"{kind!r} is not imported",
                "import multiple_choice or generate_until tasks",
            )
        ]
    answers, findings = _answers(task, config, samples, root, kept, primary)
    findings += _missing_documents(results, task, samples, answers, findings)
    args = _model_args(results)
    generation = {**(config.get("generation_kwargs") or {})} if kind == "generate_until" else {}
    repeats = int(config.get("repeats") or 1)
    run = HarnessRun(
        source=str(samples),
        harness=HARNESS,
        harness_version=str(results.get("lm_eval_version") or "unknown"),
        task=task,
        task_version=_version((results.get("versions") or {}).get(task)),
        model=_model(results, args),
        date=day_of(float(results["date"])) if isinstance(results.get("date"), int | float) else "1970-01-01",
        decoding={
            "temperature": _number(generation.get("temperature")),
            "top_p": _number(generation.get("top_p")),
            "max_tokens": _number(generation.get("max_gen_toks")),
            "seed": None,
        },
        score=primary,
        metric=primary,
        reported=float(reported),
        reducer="mean" if repeats == 1 else f"{kept} over {repeats} repeats",
        answers=answers,
        model_revision=args.get("revision"),
    )
    return (None if findings else run), findings


def _model(results: dict, args: dict[str, str]) -> str:
    """The model's name: its ``pretrained`` or ``model`` argument, else the model class lm_eval ran."""
    return args.get("pretrained") or args.get("model") or str((results.get("config") or {}).get("model") or "model")


def _missing_documents(
    results: dict, task: str, samples: Path, answers: list[Answer], findings: list[Finding]
) -> list[Finding]:
    """Documents the harness scored (``n-samples``) that the samples file does not hold: a log must not drop the
    answers it got wrong."""
    expected = ((results.get("n-samples") or {}).get(task) or {}).get("effective")
    held = len({a.question["id"] for a in answers})
    if not isinstance(expected, int) or held >= expected or findings:  # a broken line is a finding already
        return []
    return [
        _finding(
            samples,
            None,
            "doc_id",
            f"holds {held} documents, but lm_eval scored {expected} (n-samples)",
            "import the samples file lm_eval wrote, with every document",
        )
    ]


def _version(value: Any) -> str:
    """A task version as the benchmark's version: 1.0 → "1.0", None → "0"."""
    return "0" if value is None else str(value)


def _number(value: Any) -> float | int | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) else None


def _answers(
    task: str, config: dict, samples: Path, root: Path, kept: str, primary: str
) -> tuple[list[Answer], list[Finding]]:
    """Every answer of a samples file (the lines of the kept filter), and the findings of its lines."""
    answers, findings, seen = [], [], {}
    with open_regular(samples, root=root, limit=MAX_SAMPLES_BYTES) as handle:
        for number, line, problem in iter_json_lines(handle, str(samples)):
            if problem is not None:
                findings.append(problem)
                continue
            if not isinstance(line, dict) or line.get("filter", kept) != kept:
                continue
            doc_id = line.get("doc_id")
            if doc_id in seen:
                findings.append(
                    _finding(
                        samples,
                        number,
                        "doc_id",
                        f"{doc_id!r} is also on line {seen[doc_id]}",
                        "import the samples file of one lm_eval run, unchanged",
                    )
                )
                continue
            seen[doc_id] = number
            found, problems = _document(task, config, line, primary)
            answers += found
            findings += [_finding(samples, number, field, problem, fix) for field, problem, fix in problems]
    return answers, findings


_Problem = tuple[str, str, str]
"""(field, problem, fix) of a line."""


def _document(task: str, config: dict, line: dict, primary: str) -> tuple[list[Answer], list[_Problem]]:
    """The answers of one document (one per repeat), or the problems of its line."""
    if not isinstance(line.get("doc_id"), int):
        return [], [("doc_id", "is not a whole number", "import the samples file lm_eval wrote, unchanged")]
    target = line.get("target")
    if target is None or (isinstance(target, str | list) and not target):
        return [], [("target", "is missing", "give every document its target (doc_to_target)")]
    recorded = {
        name: float(line[name]) * 100
        for name in line.get("metrics") or []
        if isinstance(line.get(name), int | float) and 0 <= line[name] <= 1
    }
    if primary not in recorded:
        return [], [(primary, f"holds no {primary} from 0 to 1", "import the samples file lm_eval wrote, unchanged")]
    arguments = [v for _, v in sorted((line.get("arguments") or {}).items()) if isinstance(v, dict)]
    if not arguments or not isinstance(arguments[0].get("arg_0"), str) or not arguments[0]["arg_0"].strip():
        return [], [("arguments", "hold no prompt", "import the samples file lm_eval wrote, unchanged")]
    question = {"id": _question_id(line), "category": task, "prompt": arguments[0]["arg_0"]}
    provenance = {"doc_id": line["doc_id"]}
    if config.get("output_type") == "multiple_choice":
        return _chosen(question, config, line, arguments, recorded, primary, provenance)
    repeats = (line.get("resps") or [[]])[0]
    scored = (line.get("filtered_resps") or [None])[0]
    if not isinstance(repeats, list) or not repeats or not all(isinstance(r, str) for r in repeats):
        return [], [("resps", "hold no generated text", "import the samples file lm_eval wrote, unchanged")]
    if not isinstance(scored, str):
        return [], [("filtered_resps", "hold no scored text", "import the samples file lm_eval wrote, unchanged")]
    targets = [str(t) for t in target] if isinstance(target, list) else [str(target)]
    question |= {"type": "open", "answer_key": _key(targets[0], targets[1:])}
    # lm-eval scores one text per document, which its filter takes or makes from the repeats: that text is the
    # run's answer, so both gradings judge what the harness judged; every repeat is kept as provenance.
    provenance |= {f"repeat_{r}": text[:100_000] for r, text in enumerate(repeats[:MAX_REPEATS_KEPT])}
    return [Answer(question, 0, scored, recorded, provenance)], []


def _question_id(line: dict) -> str:
    """The document's own ``id`` where the dataset gives one (the id other sources know it by), else its position.

    Examples
    --------
    >>> _question_id({"doc_id": 3, "doc": {"id": "Mercury_7175875"}}), _question_id({"doc_id": 3, "doc": {}})
    ('Mercury_7175875', '3')
    """
    doc = line.get("doc")
    own = doc.get("id") if isinstance(doc, dict) else None
    return (
        str(own)
        if isinstance(own, str | int) and not isinstance(own, bool) and str(own).strip()
        else str(line["doc_id"])
    )


def _key(answer: str, aliases: list[str], *, option: bool = False) -> dict[str, Any]:
    return answer_key(answer, aliases, "the task's target, imported from lm-evaluation-harness samples", option=option)


def _chosen(
    question: dict, config: dict, line: dict, arguments: list[dict], recorded: dict, primary: str, provenance: dict
) -> tuple[list[Answer], list[_Problem]]:
    """A multiple-choice document: the option the primary metric picks, checked against the harness's score."""
    delimiter = str(config.get("target_delimiter", " "))
    options = [str(a.get("arg_1", "")) for a in arguments]
    choices = [o[len(delimiter) :] if o.startswith(delimiter) else o for o in options]
    try:
        likelihoods = [float(r[0]) for r in line.get("filtered_resps") or []]
    except (TypeError, ValueError, IndexError):
        likelihoods = []
    if len(likelihoods) != len(choices) or not 2 <= len(choices) <= len(LETTERS):
        return [], [
            (
                "filtered_resps",
                "do not give one log-likelihood per option",
                "import the samples file lm_eval wrote, unchanged",
            )
        ]
    gold = _gold(line["target"], choices)
    if gold is None:
        return [], [
            (
                "target",
                f"{short_json(line['target'])[:80]} names none of the options",
                "give the target as the index of the correct option",
            )
        ]
    by = [ll / len(c) if primary == NORMALISED and c else ll for ll, c in zip(likelihoods, choices)]
    picked = max(range(len(by)), key=by.__getitem__)
    if primary in ("acc", NORMALISED) and (picked == gold) != (recorded[primary] == 100):
        return [], [
            (
                primary,
                f"the highest log-likelihood picks {LETTERS[picked]}, which contradicts {primary} = "
                f"{recorded[primary] / 100:g}",
                "import the samples file lm_eval wrote, unchanged",
            )
        ]
    question |= {
        "type": "multiple_choice",
        "choices": choices,
        "correct_choice": LETTERS[gold],
        "answer_key": _key(choices[gold], [], option=True),
    }
    provenance |= {"loglikelihoods": short_json(likelihoods), "chosen_by": primary}
    return [Answer(question, 0, chosen_response(LETTERS[picked], choices[picked]), recorded, provenance)], []


def chosen_response(letter: str, text: str) -> str:
    """The response of a log-likelihood answer: the option chosen, as the answer-key graders read a final answer.

    Examples
    --------
    >>> chosen_response("B", "Paris")
    'Final answer: B. Paris'
    """
    return f"Final answer: {letter}. {text}"


def _gold(target: Any, choices: list[str]) -> int | None:
    """The index of the correct option: the target as an index (lm_eval logs it as text) or as the option's text."""
    text = str(target).strip()
    if text.isdigit() and int(text) < len(choices):
        return int(text)
    return choices.index(text) if text in choices else None
