"""The pull-request preview's trusted side: check the untrusted JSON, render inert Markdown.

Standard library only, so the trusted side needs nothing installed.

    python preview.py render PREVIEW_JSON [--files FILES_JSONL] [--run-url URL] > comment.md
        comment.yml, from the default branch's checkout (trusted). Refuses any
        document that breaks the schema, then writes Markdown in which no
        submitted text can become a mention, link, image, HTML or markup.
        FILES_JSONL is GitHub's list of the pull request's files, one
        {"status", "filename"} object a line (``gh api --paginate
        repos/OWNER/NAME/pulls/N/files --jq '.[] | {status, filename}'``): the
        one part of the comment the default branch's code checks itself.

The document comes from ``dualboard preview --json FILE`` in validate.yml,
which runs the pull request's code: whatever it wrote is untrusted. The same
renderer prints the Markdown of ``dualboard preview`` in a terminal (the
package carries this file as ``generator/scaffold/template/dot-github/scripts/preview.py.txt``).

Schema ``dualboard-preview/3`` (preview.json, at most 256 KiB of UTF-8 JSON;
every key required, no other key allowed, no duplicate keys, no NaN)::

    {"schema": "dualboard-preview/3",
     "board": text <= 300,              # where the current board came from
     "problem": null | text <= 2000,    # why there are no scores, when the preview stopped
     "validation": null                 # the validator wrote no report
                 | {"valid": bool, "findings_total": int >= 0,
                    "findings": [<= 12 x {"severity": "error" | "warning",
                                          "file": text <= 200, "line": int >= 1 | null,
                                          "field": text <= 100, "problem": text <= 300,
                                          "fix": text <= 300}]},
     "runs_changed": {"total": int >= 0,          # every run folder the pull request touches
                      "runs": [<= 20 x {"benchmark": identifier, "run_id": identifier,
                                        "change": "added" | "changed" | "removed"}]},
     "benchmarks": [<= 10 x {"name": identifier,
                    "board_runs": int >= 0,        # runs on the board: stored ones plus the previewed
                    "runs_total": int >= 0,        # previewed runs of this benchmark
                    "others_total": int >= 0,      # other runs whose numbers the pull request moves
                    "others": [{"run_id": identifier, "traditional": move, "answer_key": move}],
                    "runs": [{"run_id": identifier, "model": text <= 100, "note": text <= 300,
                              "traditional": grading, "answer_key": grading,
                              "difference": {"mean": score, "ci_low": score, "ci_high": score,
                                             "p_value": probability}}]}]}

    grading     = {"mean": score, "ci_low": score, "ci_high": score,
                   "rank": int >= 1 | null,         # null: not ranked (coverage, or answers, under the threshold)
                   "ranked_runs": int >= 0,         # the M of "rank N of M"
                   "rank_ci_low": int >= 1 | null, "rank_ci_high": int >= 1 | null,
                   "coverage_percent": int 0-100 | null, "grader": text <= 100,
                   "versus": null | {"run_id": identifier, "role": "leader" | "runner-up",
                                     "mean": score, "ci_low": score, "ci_high": score,
                                     "p_value": probability, "p_holm": probability}}
    move        = {"before": standing, "after": standing}   # the board without, and with, the pull request
    standing    = {"mean": score, "rank": int >= 1 | null, "grader": text <= 40}
    score       = a finite number in [-1000, 1000], or null
    probability = a number in [0, 1], or null
    identifier  = 1-100 of a-z 0-9 . _ - starting with a letter or digit (the run-id rule)
    text        = any string (the renderer makes it inert)

``versus`` is the paired difference run − other run over shared questions:
the other run is the leader of that grading (role "leader", also a run tied
for first with it), or the runner-up when the previewed run leads alone.
``findings`` keeps the first findings of
``findings_total``; ``runs`` the first runs of ``runs_total``, at most 10 runs
over all benchmarks; ``others`` the first of ``others_total``, at most 10 over
all. The caps keep the worst-case comment under GitHub's 65,536 characters.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
import unicodedata
from pathlib import Path

SCHEMA = "dualboard-preview/3"
MAX_BYTES = 256 * 1024
MAX_FINDINGS = 12
MAX_BENCHMARKS = 10
MAX_RUNS = 10
MAX_CHANGES = 20
MAX_OTHERS = 10
MAX_COUNT = 10**9
SCORE_LIMIT = 1000.0
CAPS = {
    "file": 200,
    "field": 100,
    "problem": 300,
    "fix": 300,
    "model": 100,
    "note": 300,
    "grader": 100,
    "moved_grader": 40,
    "board": 300,
    "stopped": 2000,
}
"""Longest text of each kind, in characters (``stopped`` is the document's ``problem``)."""
GRADINGS = {"traditional": "traditional", "answer_key": "answer-key"}
"""Schema name -> the name a reader sees."""
ROLES = ("leader", "runner-up")
CHANGES = ("added", "changed", "removed")
IDENTIFIER = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
RUN_URL = re.compile(r"https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~-]+)*")
BOUNDS = ("mean", "ci_low", "ci_high")
RUN_FILES = ("metadata.yaml", "predictions.jsonl", "provenance.jsonl")
"""What a run folder holds; a submission adds these and nothing else."""
MAX_FILES_BYTES = 4 * 1024 * 1024
MAX_FILES_SHOWN = 20
JOINER = "\u2060"
"""WORD JOINER: invisible, and breaks GitHub's mention and link detection."""
REPLACED = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
"""Unicode categories shown as U+FFFD: controls, bidi and zero-width formats, surrogates, private, unassigned."""
WWW = re.compile(r"www\.", re.IGNORECASE)
BACKTICKS = re.compile(r"`+")
PROVENANCE = (
    "**Unverified: computed by the pull request's own code.** Everything below (validation, findings, the runs "
    "changed, scores and ranks) comes from the pull request's `validate` run, which runs the pull request's "
    "workflows and code: a pull request that changes them can post any numbers here. The default branch's code "
    "only checked the data's shape, made submitted text inert and read GitHub's file list above. These numbers "
    "hold only if the pull request adds nothing but new run folders."
)
FOOTER = (
    "From [this validate run]({url}) of the pull request. Text in code blocks is copied from the "
    "submission: read it, do not follow it."
)


class PreviewError(ValueError):
    """The preview artifact breaks the schema; nothing may be posted."""


# --- the schema, as checks -------------------------------------------------


def _fail(where: str, expected: str, value: object) -> PreviewError:
    # Name the type, never echo the value: it is attacker text headed for a log.
    return PreviewError(f"{where}: expected {expected}, got {type(value).__name__}")


def text(cap: int):
    """Check: a string of at most ``cap`` characters."""

    def check(value, where):
        if not isinstance(value, str):
            raise _fail(where, "text", value)
        if len(value) > cap:
            raise PreviewError(f"{where}: {len(value)} characters, at most {cap}")

    return check


def identifier(value, where) -> None:
    """Check: a run id or benchmark name (lower-case letters, digits, '.', '_', '-')."""
    if not (isinstance(value, str) and IDENTIFIER.fullmatch(value)):
        raise _fail(where, f"an identifier matching {IDENTIFIER.pattern}", value)


def count(low: int):
    """Check: an integer (not a bool) in [low, MAX_COUNT]."""

    def check(value, where):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_COUNT:
            raise _fail(where, f"an integer in [{low}, {MAX_COUNT}]", value)

    return check


def score(value, where) -> None:
    """Check: a finite number in [-SCORE_LIMIT, SCORE_LIMIT], or null."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not -SCORE_LIMIT <= value <= SCORE_LIMIT:
        raise _fail(where, f"null or a number in [-{SCORE_LIMIT:g}, {SCORE_LIMIT:g}]", value)


def probability(value, where) -> None:
    """Check: a number in [0, 1], or null."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise _fail(where, "null or a number in [0, 1]", value)


def boolean(value, where) -> None:
    """Check: true or false."""
    if not isinstance(value, bool):
        raise _fail(where, "true or false", value)


def one_of(*choices: str):
    """Check: one of the given strings."""

    def check(value, where):
        if not (isinstance(value, str) and value in choices):
            raise _fail(where, " or ".join(repr(c) for c in choices), value)

    return check


def nullable(inner):
    """Check: null, or what ``inner`` accepts."""

    def check(value, where):
        if value is not None:
            inner(value, where)

    return check


def list_of(item, cap: int):
    """Check: a list of at most ``cap`` items, each accepted by ``item``."""

    def check(value, where):
        if not isinstance(value, list):
            raise _fail(where, "a list", value)
        if len(value) > cap:
            raise PreviewError(f"{where}: {len(value)} items, at most {cap}")
        for i, element in enumerate(value):
            item(element, f"{where}[{i}]")

    return check


def obj(**fields):
    """Check: an object with exactly these keys, each value accepted by its check."""

    def check(value, where):
        if not isinstance(value, dict):
            raise _fail(where, "an object", value)
        if set(value) != set(fields):
            missing, extra = sorted(set(fields) - set(value)), len(set(value) - set(fields))
            raise PreviewError(f"{where}: missing keys {missing}, {extra} unexpected key(s)")
        for key, inner in fields.items():
            inner(value[key], f"{where}.{key}")

    return check


INTERVAL = {bound: score for bound in BOUNDS}
FINDING = obj(
    severity=one_of("error", "warning"),
    file=text(CAPS["file"]),
    line=nullable(count(1)),
    field=text(CAPS["field"]),
    problem=text(CAPS["problem"]),
    fix=text(CAPS["fix"]),
)
STANDING = obj(mean=score, rank=nullable(count(1)), grader=text(CAPS["moved_grader"]))
OTHER = obj(run_id=identifier, **{name: obj(before=STANDING, after=STANDING) for name in ("traditional", "answer_key")})
CHANGE = obj(benchmark=identifier, run_id=identifier, change=one_of(*CHANGES))
VERSUS = obj(run_id=identifier, role=one_of(*ROLES), **INTERVAL, p_value=probability, p_holm=probability)
GRADING = obj(
    **INTERVAL,
    rank=nullable(count(1)),
    ranked_runs=count(0),
    rank_ci_low=nullable(count(1)),
    rank_ci_high=nullable(count(1)),
    coverage_percent=nullable(count(0)),
    grader=text(CAPS["grader"]),
    versus=nullable(VERSUS),
)
RUN = obj(
    run_id=identifier,
    model=text(CAPS["model"]),
    note=text(CAPS["note"]),
    **{name: GRADING for name in GRADINGS},
    difference=obj(**INTERVAL, p_value=probability),
)
PREVIEW = obj(
    schema=one_of(SCHEMA),
    board=text(CAPS["board"]),
    problem=nullable(text(CAPS["stopped"])),
    validation=nullable(obj(valid=boolean, findings_total=count(0), findings=list_of(FINDING, MAX_FINDINGS))),
    runs_changed=obj(total=count(0), runs=list_of(CHANGE, MAX_CHANGES)),
    benchmarks=list_of(
        obj(
            name=identifier,
            board_runs=count(0),
            runs_total=count(0),
            others_total=count(0),
            others=list_of(OTHER, MAX_OTHERS),
            runs=list_of(RUN, MAX_RUNS),
        ),
        MAX_BENCHMARKS,
    ),
)


def check_preview(doc: object) -> dict:
    """Return ``doc`` if it is a dualboard-preview/3 document; raise PreviewError otherwise."""
    PREVIEW(doc, "preview")
    validation = doc["validation"]
    if validation is not None and len(validation["findings"]) > validation["findings_total"]:
        raise PreviewError("preview.validation: more findings than findings_total")
    if any(len(b["runs"]) > b["runs_total"] or len(b["others"]) > b["others_total"] for b in doc["benchmarks"]):
        raise PreviewError("preview.benchmarks: a benchmark lists more runs than its runs_total or others_total")
    if len(doc["runs_changed"]["runs"]) > doc["runs_changed"]["total"]:
        raise PreviewError("preview.runs_changed: more runs than its total")
    for benchmark in doc["benchmarks"]:
        _check_counts(benchmark)
    if sum(len(b["runs"]) for b in doc["benchmarks"]) > MAX_RUNS:
        raise PreviewError(f"preview.benchmarks: more than {MAX_RUNS} runs in all")
    if sum(len(b["others"]) for b in doc["benchmarks"]) > MAX_OTHERS:
        raise PreviewError(f"preview.benchmarks: more than {MAX_OTHERS} other runs in all")
    return doc


def _check_counts(benchmark: dict) -> None:
    """Counts that must agree: previewed runs are on the board, ranks within the ranked runs, coverage a percent."""
    where = f"preview.benchmarks ({benchmark['name']})"
    if benchmark["runs_total"] > benchmark["board_runs"]:
        raise PreviewError(f"{where}: more previewed runs than runs on the board")
    for run in benchmark["runs"]:
        for grading in (run[name] for name in GRADINGS):
            if grading["ranked_runs"] > benchmark["board_runs"] or (grading["rank"] or 0) > grading["ranked_runs"]:
                raise PreviewError(f"{where}: run {run['run_id']} is ranked beyond the runs on the board")
            if (grading["coverage_percent"] or 0) > 100:
                raise PreviewError(f"{where}: run {run['run_id']} has a coverage above 100 %")


# --- reading the artifact --------------------------------------------------


def read_preview(path: Path) -> dict:
    """Read and check preview.json: a regular file (never a link or a pipe), small, strict JSON."""
    try:
        # O_NONBLOCK: opening a FIFO must not hang; fstat below refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        raise PreviewError(f"{path}: cannot open ({error.strerror}); a link is refused") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise PreviewError(f"{path}: not a regular file")
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise PreviewError(f"{path}: larger than {MAX_BYTES} bytes")
    return check_preview(parse_json(data))


def parse_json(data: bytes) -> object:
    """Parse UTF-8 JSON, refusing duplicate keys, NaN, Infinity and deep nesting."""
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except PreviewError:
        raise
    except UnicodeDecodeError:
        raise PreviewError("preview: not UTF-8") from None
    except RecursionError:
        raise PreviewError("preview: nested too deeply") from None
    except ValueError as error:  # JSONDecodeError names a position, not content
        raise PreviewError(f"preview: not JSON ({str(error)[:100]})") from None


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise PreviewError("preview: an object repeats a key")
    return dict(pairs)


def _no_constant(name: str) -> None:
    raise PreviewError(f"preview: {name} is not a number JSON allows")


# --- rendering (trusted side) ----------------------------------------------


def inert(value: str) -> str:
    """One line of submitted text that GitHub cannot turn into a mention, link or markup.

    It is meant for a code block or code span (see ``fenced``, ``code``): whitespace
    runs become one space, so a newline cannot end the block; controls, bidi and
    zero-width characters, surrogates and unassigned code points become U+FFFD, so a
    reader sees that something was there; a word joiner after each ``@``, before each
    ``://`` and inside ``www.`` stops mentions, e-mail and URL autolinks even outside code.
    """
    line = " ".join(value.split())
    line = "".join("\ufffd" if unicodedata.category(c) in REPLACED else c for c in line)
    line = line.replace("@", "@" + JOINER).replace("://", JOINER + "://")
    return WWW.sub(lambda match: match.group()[:3] + JOINER + ".", line)


def fenced(lines: list[str]) -> list[str]:
    """A code block of inert lines, fenced by more backticks than any run inside, so none closes it."""
    longest = max((len(run) for line in lines for run in BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "text", *lines, fence, ""]


def code(name: str) -> str:
    """An identifier (checked: no backticks, pipes or spaces) as a code span."""
    return f"`{inert(name)}`"


def render(doc: dict, run_url: str | None = None, files: list[tuple[str, str]] | None = None) -> str:
    """The comment's Markdown for a checked preview document; ``run_url`` for a comment (it then says who
    computed what), ``files`` GitHub's (status, path) list of the pull request's files (:func:`read_files`)."""
    lines = ["## Dualboard preview", ""]
    if files is not None:
        lines += _files_lines(files)
    if run_url is not None:
        lines += [PROVENANCE, ""]
    lines += _validation_lines(doc["validation"]) + _changes_lines(doc["runs_changed"]) + _score_lines(doc)
    if run_url is not None:
        lines += ["---", FOOTER.format(url=run_url)]
    return "\n".join(lines) + "\n"


def _validation_lines(validation: dict | None) -> list[str]:
    if validation is None:
        return ["**Validation:** no report — the validator stopped early; see the validate run's log.", ""]
    total, findings = validation["findings_total"], validation["findings"]
    verdict = "passed" if validation["valid"] else "failed"
    lines = [f"**Validation:** {verdict}, {total} finding(s).", ""]
    if findings:
        lines += ["Findings (`severity: file:line: field: problem — fix`):", ""]
        lines += fenced([_finding_line(f) for f in findings])
    if total > len(findings):
        lines += [f"{total - len(findings)} more finding(s) not shown: run `dualboard validate` to see all.", ""]
    return lines


def _finding_line(finding: dict) -> str:
    where = inert(finding["file"]) + (f":{finding['line']}" if finding["line"] is not None else "")
    field, problem, fix = (inert(finding[key]) for key in ("field", "problem", "fix"))
    return f"{finding['severity']}: {where}: {field}: {problem} — {fix}"


def read_files(path: Path) -> list[tuple[str, str]]:
    """GitHub's list of the pull request's files: (status, path) pairs, read strictly (see the module's usage)."""
    data = path.read_bytes()
    if len(data) > MAX_FILES_BYTES:
        raise PreviewError(f"{path}: larger than {MAX_FILES_BYTES} bytes")
    files = []
    for number, line in enumerate(data.splitlines(), 1):
        item = parse_json(line)
        if not (
            isinstance(item, dict)
            and set(item) == {"status", "filename"}
            and all(isinstance(value, str) for value in item.values())
        ):
            raise PreviewError(f"{path}:{number}: expected an object with text status and filename")
        files.append((item["status"], item["filename"]))
    return files


def new_run_file(status: str, path: str) -> tuple[str, str] | None:
    """(benchmark, run id) when ``path`` is a file a submission adds: a run file of a run folder, added."""
    parts = path.split("/")
    if status != "added" or len(parts) != 4 or parts[0] != "submissions" or parts[3] not in RUN_FILES:
        return None
    return (parts[1], parts[2]) if all(IDENTIFIER.fullmatch(part) for part in parts[1:3]) else None


def _files_lines(files: list[tuple[str, str]]) -> list[str]:
    """What the default branch's code found in GitHub's file list: run folders added to, and every other change."""
    runs = sorted({run for status, path in files if (run := new_run_file(status, path))})
    others = [f"{status}: {inert(path)}" for status, path in files if new_run_file(status, path) is None]
    added = ", ".join(f"{code(b)} / {code(r)}" for b, r in runs[:MAX_FILES_SHOWN]) or "none"
    lines = [
        "**Checked by the default branch's code**, from GitHub's list of this pull request's "
        f"{len(files)} file(s): run files added to {len(runs)} run folder(s): {added}"
        + (" …" if len(runs) > MAX_FILES_SHOWN else "")
        + ".",
        "",
    ]
    if not others:
        return lines + ["It changes nothing else (whether each folder is new is checked below, by its own run).", ""]
    lines += [f"**Read these by eye:** {len(others)} change(s) a submission never makes:", ""]
    lines += fenced([inert(line) for line in others[:MAX_FILES_SHOWN]])
    return lines + ([f"{len(others) - MAX_FILES_SHOWN} more not shown.", ""] if len(others) > MAX_FILES_SHOWN else [])


def _changes_lines(changed: dict) -> list[str]:
    """Every run folder the pull request adds, changes or removes (only adding is allowed)."""
    if not changed["total"]:
        return ["**Runs changed:** none.", ""]
    lines = [f"**Runs changed:** {changed['total']} (a pull request may only add runs):", ""]
    lines += [f"- {item['change']}: {code(item['benchmark'])} / {code(item['run_id'])}" for item in changed["runs"]]
    hidden = changed["total"] - len(changed["runs"])
    return lines + ([f"- {hidden} more not shown", ""] if hidden else [""])


def _others_lines(benchmark: dict) -> list[str]:
    """The other runs whose score, rank or grader the pull request moves, before → after."""
    if not benchmark["others_total"]:
        return [f"No other run of {code(benchmark['name'])} moves.", ""]
    lines = [
        f"Other runs of {code(benchmark['name'])} this pull request moves ({benchmark['others_total']}), "
        "before → after:",
        "",
        "| run | grading | score | rank | grader |",
        "|---|---|---|---|---|",
    ]
    for other in benchmark["others"]:
        for name, label in GRADINGS.items():
            before, after = other[name]["before"], other[name]["after"]
            lines.append(
                f"| {code(other['run_id'])} | {label} | {_mean(before)} → {_mean(after)} "
                f"| {_number(before['rank'])} → {_number(after['rank'])} "
                f"| {_grader(before)} → {_grader(after)} |"
            )
    hidden = benchmark["others_total"] - len(benchmark["others"])
    return lines + ["", *([f"{hidden} more run(s) moved, not shown.", ""] if hidden else [])]


def _mean(standing: dict) -> str:
    return "–" if standing["mean"] is None else f"{standing['mean']:.1f}"


def _grader(standing: dict) -> str:
    """A grader name list is submitted text (it names graders of the pull request's benchmark.yaml)."""
    name = inert(standing["grader"]).replace("`", "'").replace("|", "/")
    return f"`{name or '(none)'}`"


def _score_lines(doc: dict) -> list[str]:
    if doc["problem"] is not None:
        return ["**No scores:** the preview stopped:", "", *fenced([inert(doc["problem"])])]
    if not doc["benchmarks"]:
        return [
            "**No scores:** no run to place on the board (validation failed, or the pull request changes no run).",
            "",
        ]
    lines = [
        "Each run is placed on the current board: the stored runs, with this pull request's runs added "
        "(or replacing the stored run of the same id). The stored runs came from:",
        "",
    ]
    lines += fenced([inert(doc["board"])])
    for benchmark in doc["benchmarks"]:
        for run in benchmark["runs"]:
            lines += _run_lines(benchmark, run)
        lines += _others_lines(benchmark)
        hidden = benchmark["runs_total"] - len(benchmark["runs"])
        if hidden:
            lines += [f"{hidden} more run(s) of {code(benchmark['name'])} not shown.", ""]
    return lines


def _run_lines(benchmark: dict, run: dict) -> list[str]:
    lines = [
        f"### {code(run['run_id'])} on {code(benchmark['name'])} ({benchmark['board_runs']} runs on the board)",
        "",
        "| grading | score (95% CI) | rank (95% CI) | paired difference (95% CI) | p (Holm) | grader coverage |",
        "|---|---|---|---|---|---|",
    ]
    lines += [_grading_row(label, run[name]) for name, label in GRADINGS.items()]
    difference = run["difference"]
    lines += [
        "",
        f"Answer-key − traditional, question by question: {_interval(difference)}, p = {_p(difference['p_value'])}.",
        "",
        "The model as submitted, the graders that judged it and the notes on its numbers:",
        "",
    ]
    lines += fenced(
        [
            f"model: {inert(run['model'])}",
            *(f"{label} grader: {inert(run[name]['grader'])}" for name, label in GRADINGS.items()),
            f"note: {inert(run['note']) or '(none)'}",
        ]
    )
    return lines


def _grading_row(label: str, grading: dict) -> str:
    if grading["rank"] is None:
        rank = f"not ranked (of {grading['ranked_runs']}): see the note"
    else:
        interval = f"[{_number(grading['rank_ci_low'])}, {_number(grading['rank_ci_high'])}]"
        rank = f"{grading['rank']} of {grading['ranked_runs']} {interval}"
    versus = grading["versus"]
    if versus is None:
        difference, p = "– (no other run)", "–"
    else:
        difference = f"{_interval(versus)} vs {versus['role']} {code(versus['run_id'])}"
        p = f"{_p(versus['p_value'])} ({_p(versus['p_holm'])})"
    coverage = "–" if grading["coverage_percent"] is None else f"{grading['coverage_percent']} %"
    return f"| {label} | {_interval(grading)} | {rank} | {difference} | {p} | {coverage} |"


def _interval(interval: dict) -> str:
    mean, low, high = (("–" if v is None else f"{v:.1f}") for v in (interval[b] for b in BOUNDS))
    return f"{mean} [{low}, {high}]"


def _number(value: int | None) -> str:
    return "–" if value is None else str(value)


def _p(value: float | None) -> str:
    if value is None:
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


# --- command line ----------------------------------------------------------


def main(argv: list[str]) -> int:
    """Run ``render``; return the exit code."""
    args = _parser().parse_args(argv)
    if args.run_url is not None and not RUN_URL.fullmatch(args.run_url):
        sys.stderr.write("preview.py: --run-url must be an https:// address of the validate run\n")
        return 2
    try:
        files = None if args.files is None else read_files(args.files)
        body = render(read_preview(args.preview_json), args.run_url, files)
    except PreviewError as error:
        sys.stderr.write(
            f"preview.py: refused the pull request's preview artifact, nothing posted: {error}. "
            f"It must follow the {SCHEMA} schema in this file; a pull request that "
            "changes that schema gets its preview once the change is on the default branch.\n"
        )
        return 1
    sys.stdout.write(body)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="preview.py", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("render", help="check preview.json and write the comment's Markdown (trusted side)")
    show.add_argument("preview_json", type=Path)
    show.add_argument("--run-url", help="the validate run's address, for the footer link")
    show.add_argument("--files", type=Path, help="GitHub's list of the pull request's files (JSON lines)")
    return parser


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
