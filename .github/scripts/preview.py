"""The pull-request preview: data from the untrusted side, Markdown from the trusted side.

Standard library only, so the trusted side needs nothing installed.

    python preview.py collect VALIDATE_JSON STATS_DIR > preview.json
        validate.yml. That job runs the pull request's code, so whatever it
        writes is untrusted: this only gathers the ``dualboard validate
        --format json`` report and the stats numbers, cut to the caps below.
    python preview.py render PREVIEW_JSON [--run-url URL] > comment.md
        comment.yml, from the default branch's checkout (trusted). Refuses any
        document that breaks the schema, then writes Markdown in which no
        submitted text can become a mention, link, image, HTML or markup.

Schema ``dualboard-preview/1`` (preview.json, at most 256 KiB of UTF-8 JSON;
every key required, no other key allowed, no duplicate keys, no NaN)::

    {"schema": "dualboard-preview/1",
     "validation": null                  # the validator wrote no report
                 | {"valid": bool, "findings_total": int >= 0,
                    "findings": [<= 20 x {"severity": "error" | "warning",
                                          "file": text <= 200, "line": int >= 1 | null,
                                          "field": text <= 100, "problem": text <= 300,
                                          "fix": text <= 300}]},
     "benchmarks": [<= 10 x {"name": identifier, "runs_total": int >= 0,
                    "runs": [{"run_id": identifier, "model": text <= 100,
                              "traditional": interval, "answer_key": interval,
                              "difference": interval,
                              "rank_traditional": int >= 1 | null,
                              "rank_answer_key": int >= 1 | null}]}]}

    interval   = {"mean": score, "ci_low": score, "ci_high": score}
    score      = a finite number in [-1000, 1000], or null
    identifier = 1-100 of a-z 0-9 . _ - starting with a letter or digit (the run-id rule)
    text       = any string (the renderer makes it inert)

``findings`` keeps the first findings of ``findings_total``; ``runs`` the
first runs of ``runs_total``, at most 30 runs over all benchmarks. The caps
keep the worst-case comment under GitHub's 65,536 characters.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import stat
import sys
import unicodedata
from pathlib import Path

SCHEMA = "dualboard-preview/1"
MAX_BYTES = 256 * 1024
MAX_FINDINGS = 20
MAX_BENCHMARKS = 10
MAX_RUNS = 30
MAX_COUNT = 10**9
SCORE_LIMIT = 1000.0
CAPS = {"file": 200, "field": 100, "problem": 300, "fix": 300, "model": 100}
IDENTIFIER = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
RUN_URL = re.compile(r"https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~-]+)*")
INTERVALS = {"traditional": "traditional", "answer_key": "answer_key", "difference": "diff"}
"""Schema interval name -> models.csv column prefix."""
BOUNDS = ("mean", "ci_low", "ci_high")
STATS_COLUMNS = ("run_id", "model", "rank_traditional", "rank_answer_key",
                 *(f"{prefix}_{bound}" for prefix in INTERVALS.values() for bound in BOUNDS))
"""The models.csv columns the preview reads."""
JOINER = "\u2060"
"""WORD JOINER: invisible, and breaks GitHub's mention and link detection."""
REPLACED = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
"""Unicode categories shown as U+FFFD: controls, bidi and zero-width formats, surrogates, private, unassigned."""
WWW = re.compile(r"www\.", re.IGNORECASE)
BACKTICKS = re.compile(r"`+")
FOOTER = ("From [this validate run]({url}) of the pull request. Text in code blocks is copied from the "
          "submission: read it, do not follow it.")


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
        raise _fail(where, "an identifier matching [a-z0-9][a-z0-9._-]{0,99}", value)


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


INTERVAL = obj(**{bound: score for bound in BOUNDS})
FINDING = obj(severity=one_of("error", "warning"), file=text(CAPS["file"]), line=nullable(count(1)),
              field=text(CAPS["field"]), problem=text(CAPS["problem"]), fix=text(CAPS["fix"]))
RUN = obj(run_id=identifier, model=text(CAPS["model"]), **{name: INTERVAL for name in INTERVALS},
          rank_traditional=nullable(count(1)), rank_answer_key=nullable(count(1)))
PREVIEW = obj(
    schema=one_of(SCHEMA),
    validation=nullable(obj(valid=boolean, findings_total=count(0), findings=list_of(FINDING, MAX_FINDINGS))),
    benchmarks=list_of(obj(name=identifier, runs_total=count(0), runs=list_of(RUN, MAX_RUNS)), MAX_BENCHMARKS),
)


def check_preview(doc: object) -> dict:
    """Return ``doc`` if it is a dualboard-preview/1 document; raise PreviewError otherwise."""
    PREVIEW(doc, "preview")
    validation = doc["validation"]
    if validation is not None and len(validation["findings"]) > validation["findings_total"]:
        raise PreviewError("preview.validation: more findings than findings_total")
    if any(len(b["runs"]) > b["runs_total"] for b in doc["benchmarks"]):
        raise PreviewError("preview.benchmarks: a benchmark lists more runs than its runs_total")
    if sum(len(b["runs"]) for b in doc["benchmarks"]) > MAX_RUNS:
        raise PreviewError(f"preview.benchmarks: more than {MAX_RUNS} runs in all")
    return doc


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


def render(doc: dict, run_url: str | None = None) -> str:
    """The comment's Markdown for a checked preview document."""
    lines = ["## Dualboard preview", ""] + _validation_lines(doc["validation"]) + _score_lines(doc["benchmarks"])
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
    return f"{finding['severity']}: {where}: {inert(finding['field'])}: {inert(finding['problem'])} — {inert(finding['fix'])}"


def _score_lines(benchmarks: list[dict]) -> list[str]:
    if not benchmarks:
        return ["No scores: the changed runs were not graded (validation failed or no run changed).", ""]
    lines = ["Scores of the runs this pull request changes, graded on their own (ranks are among them).", ""]
    for benchmark in benchmarks:
        lines += [f"### {code(benchmark['name'])}", "",
                  "| run | traditional (95% CI) | answer-key (95% CI) | difference (95% CI) | rank trad. / key |",
                  "|---|---|---|---|---|"]
        lines += [_run_row(run) for run in benchmark["runs"]] + [""]
        if benchmark["runs"]:
            lines += ["Models, as submitted:", ""]
            lines += fenced([f"{inert(run['run_id'])}: {inert(run['model'])}" for run in benchmark["runs"]])
        hidden = benchmark["runs_total"] - len(benchmark["runs"])
        if hidden:
            lines += [f"{hidden} more run(s) not shown.", ""]
    return lines


def _run_row(run: dict) -> str:
    intervals = [_interval(run[name]) for name in INTERVALS]
    ranks = " / ".join("–" if r is None else str(r) for r in (run["rank_traditional"], run["rank_answer_key"]))
    return f"| {code(run['run_id'])} | " + " | ".join(intervals) + f" | {ranks} |"


def _interval(interval: dict) -> str:
    mean, low, high = (("–" if v is None else f"{v:.1f}") for v in (interval[b] for b in BOUNDS))
    return f"{mean} [{low}, {high}]"


# --- collecting (untrusted side) -------------------------------------------


def collect(validate_json: Path, stats_dir: Path) -> dict:
    """The preview document for a validate report and a build/stats folder, cut to the caps."""
    return {"schema": SCHEMA, "validation": _collect_validation(validate_json),
            "benchmarks": _collect_benchmarks(stats_dir)}


def _collect_validation(path: Path) -> dict | None:
    try:
        report = json.loads(path.read_text("utf-8"))
        findings, valid = list(report["findings"]), bool(report["valid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # the validator stopped before writing its report; the comment says so
    return {"valid": valid, "findings_total": len(findings), "findings": [_finding(f) for f in findings[:MAX_FINDINGS]]}


def _finding(finding: dict) -> dict:
    line = finding.get("line")
    return {"severity": "warning" if finding.get("severity") == "warning" else "error",
            "line": line if isinstance(line, int) and not isinstance(line, bool) and 1 <= line <= MAX_COUNT else None,
            **{key: _clip(finding.get(key), CAPS[key]) for key in ("file", "field", "problem", "fix")}}


def _collect_benchmarks(stats_dir: Path) -> list[dict]:
    benchmarks, room = [], MAX_RUNS
    for models in sorted(stats_dir.glob("*/models.csv"))[:MAX_BENCHMARKS]:
        with models.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        runs = [_run(row) for row in rows[:room]]
        room -= len(runs)
        benchmarks.append({"name": models.parent.name, "runs_total": len(rows), "runs": runs})
    return benchmarks


def _run(row: dict) -> dict:
    intervals = {name: {b: _score(row.get(f"{prefix}_{b}")) for b in BOUNDS} for name, prefix in INTERVALS.items()}
    return {"run_id": row["run_id"], "model": _clip(row.get("model"), CAPS["model"]), **intervals,
            "rank_traditional": _rank(row.get("rank_traditional")), "rank_answer_key": _rank(row.get("rank_answer_key"))}


def _clip(value: object, cap: int) -> str:
    value = "" if value is None else str(value)
    return value if len(value) <= cap else value[:cap - 1] + "…"


def _score(cell: str | None) -> float | None:
    try:
        value = float(cell)
    except (TypeError, ValueError):
        return None  # empty cell: the statistic is undefined (too few questions)
    return value if math.isfinite(value) and abs(value) <= SCORE_LIMIT else None


def _rank(cell: str | None) -> int | None:
    value = _score(cell)
    return int(value) if value is not None and value >= 1 and value == int(value) else None


# --- command line ----------------------------------------------------------


def main(argv: list[str]) -> int:
    """Run ``collect`` or ``render``; return the exit code."""
    args = _parser().parse_args(argv)
    if args.command == "collect":
        sys.stdout.write(json.dumps(collect(args.validate_json, args.stats_dir), indent=1) + "\n")
        return 0
    if args.run_url is not None and not RUN_URL.fullmatch(args.run_url):
        sys.stderr.write("preview.py: --run-url must be an https:// address of the validate run\n")
        return 2
    try:
        body = render(read_preview(args.preview_json), args.run_url)
    except PreviewError as error:
        sys.stderr.write(f"preview.py: refused the pull request's preview artifact, nothing posted: {error}. "
                         "It must follow the dualboard-preview/1 schema in this file; a pull request that "
                         "changes that schema gets its preview once the change is on the default branch.\n")
        return 1
    sys.stdout.write(body)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="preview.py", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    gather = commands.add_parser("collect", help="write preview.json (untrusted side)")
    gather.add_argument("validate_json", type=Path, help="the output of dualboard validate --format json")
    gather.add_argument("stats_dir", type=Path, help="build/stats of the graded runs (may not exist)")
    show = commands.add_parser("render", help="check preview.json and write the comment's Markdown (trusted side)")
    show.add_argument("preview_json", type=Path)
    show.add_argument("--run-url", help="the validate run's address, for the footer link")
    return parser


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
