"""The preview bot posts only what GitHub and the trusted renderer say, never attacker text.

comment.yml runs with a token that may comment. These tests hold it to:
- the pull request number comes from GitHub (``pull_request.py`` by head SHA,
  through a stubbed ``gh`` first on PATH), never from the artifact;
- the artifact (``preview.json``, written by ``dualboard preview --json``
  on the untrusted side, cut to the caps) is refused unless it matches the
  schema exactly (types, sizes, no duplicate keys, no NaN, no links or pipes
  as files);
- every submitted string lands inside code and cannot become a mention, link,
  image, HTML or Markdown structure (a corpus of hostile strings, checked
  with a CommonMark parser and character rules for GitHub's autolinks);
- the workflow's own shell steps, run as GitHub runs them, post to the number
  GitHub gave and execute nothing an attacker wrote.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from tests.conftest import REPO, tiny_metadata, write_run

SCRIPTS = REPO / ".github" / "scripts"
SHA = "0123456789abcdef0123456789abcdef01234567"
OTHER_SHA = "f" * 40
REPOSITORY = "owner/board"
RUN_URL = "https://github.com/owner/board/actions/runs/42"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


preview = _module("preview")


# --- a stubbed gh ------------------------------------------------------------

GH_STUB = """#!{python}
import json, os, sys
with open(os.environ["GH_STUB_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
files = any("/files" in arg for arg in sys.argv[1:])  # the pull request's file list, else the pulls list
with open(os.environ["GH_STUB_FILES" if files else "GH_STUB_REPLY"], encoding="utf-8") as reply:
    sys.stdout.write(reply.read())
sys.exit(int(os.environ.get("GH_STUB_EXIT", "0")))
"""


class Gh:
    """A fake ``gh`` first on PATH: records each argv, prints a canned reply (one for the pull request's file
    list, one for anything else)."""

    def __init__(self, folder: Path):
        self.bin, self.log, self.reply = folder / "bin", folder / "gh-calls.jsonl", folder / "gh-reply.txt"
        self.files = folder / "gh-files.jsonl"
        self.answer_files(("added", "submissions/tiny/run-a/metadata.yaml"))
        self.bin.mkdir()
        (self.bin / "gh").write_text(GH_STUB.format(python=sys.executable))
        (self.bin / "gh").chmod(0o755)
        (self.bin / "python3").symlink_to(sys.executable)  # the runner's python3, here the test's
        self.reply.write_text("[]")
        self.exit = 0

    def answer(self, *pages: list[dict]) -> None:
        """Reply as ``gh api --paginate`` does: one JSON array per page, back to back."""
        self.reply.write_text("".join(json.dumps(page) for page in pages) + "\n")

    def answer_files(self, *files: tuple[str, str]) -> None:
        """Reply as ``gh api --paginate .../files --jq '.[] | {status, filename}'`` does: a JSON object a line."""
        self.files.write_text("".join(json.dumps({"status": s, "filename": f}) + "\n" for s, f in files))

    def calls(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
            "GH_TOKEN": "stub-token",
            "GH_STUB_LOG": str(self.log),
            "GH_STUB_REPLY": str(self.reply),
            "GH_STUB_FILES": str(self.files),
            "GH_STUB_EXIT": str(self.exit),
            "HOME": str(self.bin.parent),
            **extra,
        }


@pytest.fixture
def gh(tmp_path: Path) -> Gh:
    return Gh(tmp_path)


def pull(number: int, sha: str, state: str = "open", base: str = REPOSITORY, **extra) -> dict:
    """A pull request as the REST API lists it (the fields the lookup reads, plus any extra)."""
    return {
        "number": number,
        "state": state,
        "head": {"sha": sha, "ref": "feature", "repo": {"full_name": "stranger/board"}},
        "base": {"ref": "main", "repo": {"full_name": base}},
        "title": "a run",
        **extra,
    }


def event(tmp_path: Path, head_sha: str = SHA, kind: str = "pull_request", **run) -> Path:
    """A workflow_run event file for a pull request from a fork (``pull_requests`` empty)."""
    payload = {
        "action": "completed",
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
        "workflow_run": {
            "id": 42,
            "event": kind,
            "head_sha": head_sha,
            "head_branch": "feature",
            "head_repository": {"full_name": "stranger/board"},
            "pull_requests": [],
            "html_url": RUN_URL,
            **run,
        },
    }
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    return path


def lookup(gh: Gh, event_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPTS / "pull_request.py"), str(event_path)],
        check=False,
        capture_output=True,
        text=True,
        env=gh.env(),
        cwd=event_path.parent,
        timeout=60,
    )


def pwned(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if "pwned" in p.name]


# --- the pull request number comes from GitHub --------------------------------


def test_fork_pull_request_is_found_by_head_sha(tmp_path, gh):
    gh.answer([pull(3, OTHER_SHA), pull(5, OTHER_SHA)], [pull(12, SHA)])
    done = lookup(gh, event(tmp_path))
    assert (done.returncode, done.stdout) == (0, "12\n"), done.stderr
    assert gh.calls() == [["api", "--paginate", f"repos/{REPOSITORY}/pulls?state=open&per_page=100"]]


def test_the_event_list_is_not_taken_on_trust(tmp_path, gh):
    """Same-repository runs list their pull requests; the number still comes from the head-SHA lookup."""
    gh.answer([pull(12, SHA)])
    done = lookup(gh, event(tmp_path, pull_requests=[{"number": 99, "head": {"sha": SHA}}]))
    assert done.stdout == "12\n", done.stderr


def test_no_matching_pull_request_posts_nothing(tmp_path, gh):
    gh.answer([pull(7, SHA, state="closed"), pull(8, OTHER_SHA), pull(9, SHA, base="stranger/board")])
    done = lookup(gh, event(tmp_path))
    assert (done.returncode, done.stdout) == (0, "")
    assert f"no open pull request has head {SHA}" in done.stderr and "nothing to post" in done.stderr


def test_two_open_pull_requests_with_one_head_post_nothing(tmp_path, gh):
    gh.answer([pull(12, SHA), pull(13, SHA)])
    done = lookup(gh, event(tmp_path))
    assert (done.returncode, done.stdout) == (1, "")
    assert "[12, 13] share head" in done.stderr


def test_a_run_of_no_pull_request_asks_nothing(tmp_path, gh):
    done = lookup(gh, event(tmp_path, kind="push"))
    assert (done.returncode, done.stdout, gh.calls()) == (0, "", [])


@pytest.mark.parametrize("head_sha", ["$(touch pwned)", SHA + "\n", SHA.upper(), ""])
def test_a_malformed_head_sha_is_refused_before_any_call(tmp_path, gh, head_sha):
    done = lookup(gh, event(tmp_path, head_sha=head_sha))
    assert (done.returncode, done.stdout, gh.calls()) == (1, "", [])
    assert "head_sha is not a commit SHA" in done.stderr and not pwned(tmp_path)


def test_gh_failure_says_what_to_check(tmp_path, gh):
    gh.exit = 1
    done = lookup(gh, event(tmp_path))
    assert (done.returncode, done.stdout) == (1, "")
    assert "gh api failed (exit 1)" in done.stderr and "GH_TOKEN" in done.stderr


def test_gh_printing_garbage_is_refused(tmp_path, gh):
    gh.reply.write_text('[{"number": 12}] <html>')
    done = lookup(gh, event(tmp_path))
    assert (done.returncode, done.stdout) == (1, "") and "not JSON" in done.stderr


@pytest.mark.parametrize("elsewhere", [{"ref": "other-branch"}, {"repo": {"full_name": "victim/board"}}])
def test_a_pull_request_on_the_same_commit_from_elsewhere_gets_nothing(tmp_path, gh, elsewhere):
    """An attacker's validate run on a victim's commit must not post its preview on the victim's pull request."""
    head = {"sha": SHA, "ref": "feature", "repo": {"full_name": "stranger/board"}, **elsewhere}
    gh.answer([pull(7, SHA, head=head)])
    done = lookup(gh, event(tmp_path))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert "no open pull request" in done.stderr


def test_attacker_fields_are_never_executed(tmp_path, gh):
    """Branch names, titles and the fork's name are attacker text: passed around, never run."""
    shell = "$(touch pwned-1) `touch pwned-2`; touch pwned-3 && touch pwned-4"
    gh.answer([pull(12, SHA, title=shell, body=shell, head={"sha": SHA, "ref": shell, "repo": {"full_name": shell}})])
    done = lookup(
        gh,
        event(
            tmp_path,
            head_branch=shell,
            display_title=shell,
            head_repository={"full_name": shell},
            head_commit={"message": shell},
        ),
    )
    assert done.stdout == "12\n", done.stderr
    assert not pwned(tmp_path)
    assert not any("touch" in arg for call in gh.calls() for arg in call)


# --- the artifact is checked strictly -----------------------------------------


def grading(rank: int | None = 1, versus: dict | None = None, **fields) -> dict:
    """One grading of a run as the document holds it (rank 1 of 3, compared with the runner-up)."""
    versus = (
        {
            "run_id": "run-z",
            "role": "runner-up",
            "mean": 2.5,
            "ci_low": -9.0,
            "ci_high": 14.0,
            "p_value": 0.5,
            "p_holm": 1.0,
        }
        if versus is None
        else versus
    )
    return {
        "mean": 71.25,
        "ci_low": 60.0,
        "ci_high": 80.0,
        "rank": rank,
        "ranked_runs": 3,
        "rank_ci_low": 1,
        "rank_ci_high": 3,
        "coverage_percent": 98,
        "grader": "mc_letter, recorded",
        "versus": versus,
        **fields,
    }


def run(run_id: str = "run-a", model: str = "tiny-model", note: str = "answer_key verdicts on 98% of answers") -> dict:
    return {
        "run_id": run_id,
        "model": model,
        "note": note,
        "traditional": grading(),
        "answer_key": grading(rank=None, mean=50, grader="rules") | {"versus": None},
        "difference": {"mean": -21.25, "ci_low": None, "ci_high": None, "p_value": 0.04},
    }


def finding(**text: str) -> dict:
    return {
        "severity": "error",
        "file": "submissions/tiny/run-a/predictions.jsonl",
        "line": 3,
        "field": "question_id",
        "problem": "unknown question id",
        "fix": "use an id from questions.jsonl",
        **text,
    }


def standing(mean: float | None = 71.2, rank: int | None = 1, grader: str = "mc_letter") -> dict:
    return {"mean": mean, "rank": rank, "grader": grader}


def other(run_id: str = "run-z", grader: str = "rules") -> dict:
    """A stored run the pull request moves: one place down under both gradings, its answer-key grader changed."""
    return {
        "run_id": run_id,
        "traditional": {"before": standing(), "after": standing(rank=2)},
        "answer_key": {"before": standing(54.2, 4, "human"), "after": standing(70.7, 2, grader)},
    }


def document(
    findings: list[dict] | None = None, runs: list[dict] | None = None, others: list[dict] | None = None
) -> dict:
    findings = [finding()] if findings is None else findings
    runs = [run()] if runs is None else runs
    others = [other()] if others is None else others
    return {
        "schema": preview.SCHEMA,
        "board": "local store .dualboard/store, revision 000001",
        "problem": None,
        "validation": {"valid": False, "findings_total": len(findings), "findings": findings},
        "runs_changed": {
            "total": len(runs),
            "runs": [{"benchmark": "tiny", "run_id": r["run_id"], "change": "added"} for r in runs],
        },
        "benchmarks": [
            {
                "name": "tiny",
                "board_runs": max(3, len(runs) + len(others)),
                "runs_total": len(runs),
                "others_total": len(others),
                "others": others,
                "runs": runs,
            }
        ],
    }


def test_the_package_renders_with_this_script():
    """`dualboard preview` prints with the scaffold's copy of the script, which equals .github/scripts
    (test_workflows)."""
    from dualboard.preview.document import renderer

    assert renderer().SCHEMA == preview.SCHEMA
    assert renderer().render(document()) == preview.render(document())


def _dualboard_preview(root: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    """Run ``dualboard preview ARGS --json`` in ``root`` as a subprocess; return it and the document it wrote."""
    done = subprocess.run(
        [sys.executable, "-m", "dualboard", "preview", "--no-progress", "--json", "out/preview.json", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return done, json.loads((root / "out" / "preview.json").read_text("utf-8"))


@pytest.mark.slow
def test_the_untrusted_side_writes_what_render_accepts_cut_to_the_caps(tiny_root):
    """A hostile model name is clipped and stays text; the document passes the trusted check; the terminal
    shows it inert."""
    write_run(tiny_root, "run-a", metadata=tiny_metadata(model="@everyone [x](https://evil.example) " + "m" * 150))
    done, doc = _dualboard_preview(tiny_root, "submissions/tiny/run-a")
    assert done.returncode == 0, done.stderr
    assert preview.check_preview(doc) == doc
    [got] = doc["benchmarks"][0]["runs"]
    assert len(got["model"]) == preview.CAPS["model"] and got["model"].endswith("…")
    assert "model: @\u2060everyone [x](https\u2060://evil.example) mmm" in done.stdout
    assert "@everyone" not in done.stdout


@pytest.mark.slow
def test_the_untrusted_side_keeps_the_first_findings_and_counts_all(tiny_root):
    bad = [json.dumps({"question_id": f"nope-{i}", "round": 0, "response": "x" * 1000}).encode() for i in range(25)]
    write_run(tiny_root, "run-a", raw_lines=bad)
    done, doc = _dualboard_preview(tiny_root, "submissions/tiny/run-a")
    assert done.returncode == 1
    validation = preview.check_preview(doc)["validation"]
    assert not validation["valid"] and validation["findings_total"] >= 25
    assert len(validation["findings"]) == preview.MAX_FINDINGS
    assert doc["benchmarks"] == [] and doc["problem"] is None
    assert "**Validation:** failed" in done.stdout and "no run to place on the board" in done.stdout


def _set(path: str, value):
    """A change to a valid document: set the value at a dotted path (list indices as numbers)."""

    def change(doc):
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        for key in parents:
            doc = doc[key]
        doc[last] = value

    return change


MALFORMED = {
    "extra key": _set("comment", "@everyone"),
    "missing key": lambda doc: doc.pop("benchmarks"),
    "missing board": lambda doc: doc.pop("board"),
    "old schema": _set("schema", "dualboard-preview/1"),
    "previous schema": _set("schema", "dualboard-preview/2"),
    "change not listed": _set("runs_changed.runs.0.change", "renamed"),
    "more others than their total": _set("benchmarks.0.others_total", 0),
    "standing without grader": lambda doc: doc["benchmarks"][0]["others"][0]["traditional"]["after"].pop("grader"),
    "bool as count": _set("validation.findings_total", True),
    "line zero": _set("validation.findings.0.line", 0),
    "line as text": _set("validation.findings.0.line", "3"),
    "unknown severity": _set("validation.findings.0.severity", "fatal"),
    "long file": _set("validation.findings.0.file", "a" * 201),
    "text as list": _set("validation.findings.0.problem", ["x"]),
    "too many findings": _set("validation.findings", [finding()] * 21),
    "findings over total": _set("validation.findings_total", 0),
    "long problem": _set("problem", "p" * 2001),
    "long note": _set("benchmarks.0.runs.0.note", "n" * 301),
    "run id with space": _set("benchmarks.0.runs.0.run_id", "Run A"),
    "run id with newline": _set("benchmarks.0.runs.0.run_id", "run-a\n"),
    "run id with pipe": _set("benchmarks.0.runs.0.run_id", "a|b"),
    "leader id with markup": _set("benchmarks.0.runs.0.traditional.versus.run_id", "[x](https://evil.example)"),
    "unknown role": _set("benchmarks.0.runs.0.traditional.versus.role", "@everyone"),
    "p above one": _set("benchmarks.0.runs.0.traditional.versus.p_value", 1.5),
    "p as bool": _set("benchmarks.0.runs.0.difference.p_value", True),
    "benchmark traversal": _set("benchmarks.0.name", "../etc"),
    "score as text": _set("benchmarks.0.runs.0.traditional.mean", "71"),
    "score out of range": _set("benchmarks.0.runs.0.traditional.mean", 1e300),
    "rank zero": _set("benchmarks.0.runs.0.traditional.rank", 0),
    "rank beyond ranked runs": _set("benchmarks.0.runs.0.traditional.rank", 4),
    "ranked runs beyond the board": _set("benchmarks.0.runs.0.answer_key.ranked_runs", 4),
    "coverage above 100": _set("benchmarks.0.runs.0.traditional.coverage_percent", 101),
    "runs over total": _set("benchmarks.0.runs_total", 0),
    "more previewed runs than the board": _set("benchmarks.0.board_runs", 0),
    "too many runs in all": _set(
        "benchmarks", [{"name": f"b{i}", "board_runs": 6, "runs_total": 6, "runs": [run()] * 6} for i in range(2)]
    ),
    "validation as list": _set("validation", []),
}


@pytest.mark.parametrize("change", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_document_off_the_schema_is_refused(change):
    doc = document()
    change(doc)
    with pytest.raises(preview.PreviewError):
        preview.check_preview(doc)


RAW = {
    "NaN": b'{"schema": NaN}',
    "Infinity": b'{"schema": -Infinity}',
    "duplicate key": b'{"schema": "dualboard-preview/1", "schema": "x"}',
    "invalid UTF-8": b'{"schema": "\xff"}',
    "deep nesting": b"[" * 100_000,
    "huge integer": b'{"n": ' + b"9" * 5000 + b"}",
    "not JSON": b"<html>",
    "too large": b'{"schema": "' + b"a" * preview.MAX_BYTES + b'"}',
}


@pytest.mark.parametrize("data", RAW.values(), ids=RAW.keys())
def test_raw_bytes_off_the_schema_are_refused(tmp_path, data):
    (tmp_path / "preview.json").write_bytes(data)
    with pytest.raises(preview.PreviewError):
        preview.read_preview(tmp_path / "preview.json")


def test_links_and_pipes_are_never_read(tmp_path):
    (tmp_path / "real.json").write_text(json.dumps(document()))
    assert preview.read_preview(tmp_path / "real.json")["schema"] == preview.SCHEMA
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    os.mkfifo(tmp_path / "fifo.json")
    for name in ("link.json", "fifo.json", "missing.json"):
        with pytest.raises(preview.PreviewError):
            preview.read_preview(tmp_path / name)


def test_render_refuses_with_a_clear_message_and_prints_nothing(tmp_path, capsys):
    (tmp_path / "preview.json").write_text('{"schema": "dualboard-preview/2", "pr": 1}')
    assert preview.main(["render", str(tmp_path / "preview.json")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "nothing posted" in err and f"{preview.SCHEMA} schema" in err
    assert preview.main(["render", str(tmp_path / "preview.json"), "--run-url", "javascript:alert(1)"]) == 2


# --- submitted text is inert ----------------------------------------------------

HOSTILE = [
    "@everyone please review",
    "@org/team",
    "ping @octocat and a@b.example",
    "@@",
    "＠fullwidth",
    "[click](javascript:alert(1))",
    "[x][ref]\n\n[ref]: https://evil.example",
    "<https://evil.example>",
    "https://evil.example/p?a=1",
    "see www.evil.example now",
    "WWW.EVIL.EXAMPLE",
    "ftp://evil.example",
    "mailto:a@b.example",
    "![x](https://evil.example/p.png)",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<!-- hidden -->",
    "<details open><summary>x</summary>",
    "&lt;b&gt; &#64;everyone",
    "**bold** _em_ ~~strike~~",
    "# heading",
    "> quote",
    "- item",
    "1. item",
    "---",
    "$x^2$",
    "[^1]",
    ":smile:",
    "`",
    "``",
    "```",
    "````````````",
    "~~~",
    "``` x\n## out\n```",
    "a | b",
    "| a | b |\n|---|---|\n| c | d |",
    "line1\nline2\n\n# Heading\n",
    "cr\rlf\r\n",
    "tab\there",
    "sep\u2028arator\u2029",
    "nel\u0085",
    "nul\x00",
    "\x1b[31mred\x1b[0m",
    "rtl\u202eoverride",
    "zero\u200bwidth\ufeff",
    "lone \ud800 surrogate",
    "private \ue000",
    "#1 fixes owner/repo#2 GH-3",
    "::error::workflow command",
    "$(touch pwned) `touch pwned`",
    "\\",
    "\\|",
    "",
]


def hostile_document(text: str, *, stopped: bool = False) -> dict:
    """A document whose every free-text field holds ``text`` (run ids must be identifiers).

    ``stopped``: the preview stopped before any score, and says why in ``problem``.
    """
    doc = document(
        findings=[finding(file=text, field=text, problem=text, fix=text, line=None), finding()],
        runs=[run(model=text, note=text), run(run_id="run-b", model=text, note=text)],
    )
    for r in doc["benchmarks"][0]["runs"]:
        r["traditional"]["grader"] = r["answer_key"]["grader"] = text
    short = text[: preview.CAPS["moved_grader"]]
    doc["benchmarks"][0]["others"] = [other(grader=short), other("run-y", grader=short)]
    doc["benchmarks"][0]["others_total"] = 3
    doc["board"] = text
    doc["benchmarks"][0]["runs_total"] = 3
    doc["validation"]["findings_total"] = 5
    if stopped:
        doc |= {"problem": text, "benchmarks": []}
    return doc


def _shape(tokens) -> list:
    """The token stream with code contents left out: what submitted text must never change."""
    shape = []
    for token in tokens:
        content = None if token.type in ("fence", "code_inline", "inline") else token.content
        shape.append((token.type, token.tag, content, token.info if token.type == "fence" else None, token.attrs))
        shape += _shape(token.children or [])
    return shape


def _code(tokens) -> list[str]:
    out = []
    for token in tokens:
        if token.type in ("fence", "code_inline", "code_block"):
            out.append(token.content)
        out += _code(token.children or [])
    return out


def _parse(body: str):
    return MarkdownIt("commonmark").enable("table").parse(body)


@pytest.mark.parametrize("stopped", [False, True], ids=["scores", "stopped"])
@pytest.mark.parametrize("text", HOSTILE, ids=[ascii(t)[:40] for t in HOSTILE])
def test_submitted_text_changes_only_code_contents(text, stopped):
    body = preview.render(preview.check_preview(hostile_document(text, stopped=stopped)), RUN_URL)
    plain = preview.render(hostile_document("x", stopped=stopped), RUN_URL)
    assert _shape(_parse(body)) == _shape(_parse(plain)), body
    for code in _code(_parse(body)):
        _assert_inert(code)
    assert body.count("\n") == plain.count("\n")  # no line break came from the submission


def _assert_inert(code: str) -> None:
    """GitHub autolinks nothing in code, and this holds even if the text escaped its block."""
    assert not re.search(r"@(?!\u2060)", code), code
    assert not re.search(r"(?<!\u2060)://", code) and not re.search(r"www\.", code, re.IGNORECASE), code
    for char in code.replace("\n", ""):
        assert char == preview.JOINER or unicodedata.category(char) not in preview.REPLACED, ascii(char)


def test_the_fence_outgrows_any_backtick_run():
    body = preview.render(hostile_document("`" * 40), None)
    assert "`" * 41 + "text" in body
    fences = [t for t in _parse(body) if t.type == "fence"]
    assert len(fences) == 4 and all(t.info == "text" for t in fences)  # findings, board, one per run


@pytest.mark.parametrize("name", ["www.evil.example", "a.b", "x--y", "0"])
def test_identifiers_stay_code_spans(name):
    doc = document(runs=[run(run_id=name)])
    doc["benchmarks"][0]["name"] = name
    doc["benchmarks"][0]["runs"][0]["traditional"]["versus"]["run_id"] = name
    tokens = _parse(preview.render(preview.check_preview(doc)))
    assert _shape(tokens) == _shape(_parse(preview.render(document())))
    assert all("www." not in code for code in _code(tokens))


def test_the_worst_case_comment_fits_github():
    """Every text at its cap, all '@' (each grows to two characters), every number at its widest: under 65,536
    characters."""
    texts = {key: "@" * preview.CAPS[key] for key in ("file", "field", "problem", "fix")}
    widest = {"mean": -1000.0, "ci_low": -1000.0, "ci_high": -1000.0}
    versus = {"run_id": "r" * 100, "role": "runner-up", **widest, "p_value": 0.5, "p_holm": 0.5}
    wide = grading(
        rank=10**9,
        versus=versus,
        ranked_runs=10**9,
        rank_ci_low=10**9,
        rank_ci_high=10**9,
        coverage_percent=100,
        grader="@" * preview.CAPS["grader"],
        **widest,
    )
    runs = [
        run(run_id="r" * 100, model="@" * preview.CAPS["model"], note="@" * preview.CAPS["note"])
        | {"traditional": wide, "answer_key": wide, "difference": {**widest, "p_value": 0.5}}
        for _ in range(preview.MAX_RUNS)
    ]
    wide_standing = standing(-1000.0, 10**9, "@" * preview.CAPS["moved_grader"])
    others = [
        {"run_id": "o" * 100} | {g: {"before": wide_standing, "after": wide_standing} for g in preview.GRADINGS}
        for _ in range(preview.MAX_OTHERS)
    ]
    doc = document(
        findings=[finding(**texts, severity="warning", line=10**9)] * preview.MAX_FINDINGS, runs=runs, others=others
    )
    doc["validation"]["findings_total"] = 10**9
    doc["runs_changed"] = {
        "total": 10**9,
        "runs": [{"benchmark": "b" * 100, "run_id": "r" * 100, "change": "removed"}] * preview.MAX_CHANGES,
    }
    doc["board"] = "@" * preview.CAPS["board"]
    doc["benchmarks"][0] |= {"name": "b" * 100, "board_runs": 10**9, "runs_total": 10**9, "others_total": 10**9}
    assert len(preview.render(preview.check_preview(doc), RUN_URL)) < 65_536
    stopped = doc | {"problem": "@" * preview.CAPS["stopped"], "benchmarks": []}
    assert len(preview.render(preview.check_preview(stopped), RUN_URL)) < 65_536


def test_a_forged_preview_is_never_presented_as_verified():
    """validate.yml runs the pull request's code, which can write any preview.json that fits the schema: a
    forged "passed, rank 1, nothing else changed" is rendered, but under a statement, ahead of every number,
    that the default branch's code computed none of it."""
    forged = document(findings=[], runs=[run()], others=[])
    forged["validation"]["valid"] = True
    body = preview.render(preview.check_preview(forged), RUN_URL)
    statement = body.index("**Unverified: computed by the pull request's own code.**")
    assert statement < body.index("**Validation:** passed") < body.index("1 of 3")
    assert "default branch's code only checked" in body[statement : body.index("**Validation:**")]
    assert "verified" not in body.replace("Unverified", "")


def test_the_default_branch_reads_githubs_file_list_and_names_what_the_forgery_hides(tmp_path, workspace, gh):
    """The forged preview says "passed" with no run changed but its own; GitHub's list of the pull request's
    files, read by the default branch's code in comment.yml, names every change a submission never makes."""
    forged = document(findings=[], runs=[run()], others=[])
    forged["validation"]["valid"] = True
    (workspace / "untrusted" / "preview.json").write_text(json.dumps(forged))
    gh.answer([pull(12, SHA)])
    gh.answer_files(
        ("added", "submissions/tiny/run-a/predictions.jsonl"),
        ("added", "submissions/tiny/run-a/metadata.yaml"),
        ("removed", "submissions/tiny/run-lead/predictions.jsonl"),
        ("modified", "submissions/tiny/run-z/metadata.yaml"),
        ("added", "submissions/.gitattributes"),
        ("added", "submissions/tiny/run-a/.gitattributes"),
        ("added", "pip.py"),
        ("modified", ".github/workflows/validate.yml"),
    )
    assert _run_comment_job(workspace, gh, event(tmp_path)) == {"number": "12"}
    body = (workspace / "comment.md").read_text("utf-8")
    checked = body[: body.index("**Unverified")]
    assert (
        "from GitHub's list of this pull request's 8 file(s): run files added to 1 run folder(s): `tiny` / `run-a`."
        in (checked)
    )
    assert "**Read these by eye:** 6 change(s) a submission never makes:" in checked
    for line in (
        "removed: submissions/tiny/run-lead/predictions.jsonl",
        "modified: submissions/tiny/run-z/metadata.yaml",
        "added: submissions/.gitattributes",
        "added: submissions/tiny/run-a/.gitattributes",
        "added: pip.py",
        "modified: .github/workflows/validate.yml",
    ):
        assert f"\n{line}\n" in checked, line
    [files_call] = [call for call in gh.calls() if any("/files" in arg for arg in call)]
    assert files_call[:3] == ["api", "--paginate", f"repos/{REPOSITORY}/pulls/12/files?per_page=100"]


@pytest.mark.parametrize("line", ['{"status": "added"}', '["added", "x"]', '{"status": 1, "filename": "x"}', "x"])
def test_a_malformed_file_list_posts_nothing(tmp_path, line):
    (tmp_path / "preview.json").write_text(json.dumps(document()))
    (tmp_path / "files.jsonl").write_text(line + "\n")
    args = ["render", str(tmp_path / "preview.json"), "--files", str(tmp_path / "files.jsonl")]
    assert preview.main(args) == 1


def test_the_comment_lists_every_run_changed_and_how_other_runs_move():
    doc = document(others=[other()])
    doc["runs_changed"] = {
        "total": 3,
        "runs": [
            {"benchmark": "tiny", "run_id": "run-a", "change": "added"},
            {"benchmark": "tiny", "run_id": "run-lead", "change": "removed"},
            {"benchmark": "tiny", "run_id": "run-z", "change": "changed"},
        ],
    }
    body = preview.render(preview.check_preview(doc))
    assert "**Runs changed:** 3 (a pull request may only add runs):" in body
    assert "- removed: `tiny` / `run-lead`" in body and "- changed: `tiny` / `run-z`" in body
    assert "| `run-z` | traditional | 71.2 → 71.2 | 1 → 2 | `mc_letter` → `mc_letter` |" in body
    assert "| `run-z` | answer-key | 54.2 → 70.7 | 4 → 2 | `human` → `rules` |" in body


def test_the_comment_reads_as_documented():
    body = preview.render(document(), RUN_URL)
    assert "**Validation:** failed, 1 finding(s)." in body
    assert "error: submissions/tiny/run-a/predictions.jsonl:3: question_id: unknown question id — use an id" in body
    assert "### `run-a` on `tiny` (3 runs on the board)" in body
    assert (
        "| traditional | 71.2 [60.0, 80.0] | 1 of 3 [1, 3] | 2.5 [-9.0, 14.0] vs runner-up `run-z` "
        "| 0.500 (1.000) | 98 % |"
    ) in body
    assert "| answer-key | 50.0 [60.0, 80.0] | not ranked (of 3): see the note | – (no other run) | – | 98 % |" in body
    assert "Answer-key − traditional, question by question: -21.2 [–, –], p = 0.040." in body
    assert (
        "model: tiny-model\ntraditional grader: mc_letter, recorded\nanswer-key grader: rules\nnote: answer_key" in body
    )
    assert f"[this validate run]({RUN_URL})" in body
    assert "no report" in preview.render(document() | {"validation": None})
    stopped = preview.render(document() | {"problem": "the Hub did not answer", "benchmarks": []})
    assert "**No scores:** the preview stopped:\n\n```text\nthe Hub did not answer\n```" in stopped
    assert "no run to place on the board" in preview.render(document() | {"benchmarks": []})


# --- the workflow's shell, run as GitHub runs it ----------------------------------


def _comment_steps() -> list[dict]:
    doc = yaml.safe_load((REPO / ".github" / "workflows" / "comment.yml").read_text("utf-8"))
    return doc["jobs"]["comment"]["steps"]


def _expression(value: str, known: dict[str, str]) -> str:
    """Resolve the ``${{ }}`` of an env: value; an expression the test does not know fails it."""

    def resolve(match):
        assert match.group(1) in known, f"comment.yml passes {match.group(1)} to a script: add it here if trusted"
        return known[match.group(1)]

    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", resolve, value)


def _run_comment_job(workspace: Path, gh: Gh, event_path: Path) -> dict[str, str]:
    """Run comment.yml's run: steps in bash -eo pipefail (uses: steps are laid out by the test); return outputs."""
    outputs: dict[str, str] = {}
    for step in _comment_steps():
        condition = step.get("if")
        if "run" not in step or (condition == "steps.pr.outputs.number != ''" and not outputs.get("number")):
            continue
        assert condition in (None, "steps.pr.outputs.number != ''"), f"teach the test the condition {condition!r}"
        known = {
            "github.token": "stub-token",
            "github.event.workflow_run.html_url": RUN_URL,
            "steps.pr.outputs.number": outputs.get("number", ""),
        }
        env = {key: _expression(str(value), known) for key, value in (step.get("env") or {}).items()}
        output_file = workspace / "github-output"
        output_file.write_text("")
        env |= {
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_REPOSITORY": REPOSITORY,
        }
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            check=False,
            cwd=workspace,
            env=gh.env(**env),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, f"{step['name']}: {done.stderr}"
        outputs |= dict(line.split("=", 1) for line in output_file.read_text().splitlines())
    return outputs


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The comment job's folder: trusted/ (default branch scripts) and untrusted/ (the artifact)."""
    root = tmp_path / "workspace"
    shutil.copytree(SCRIPTS, root / "trusted" / ".github" / "scripts")
    (root / "untrusted").mkdir(parents=True)
    doc = hostile_document("@everyone [x](https://evil.example) $(touch pwned) <img src=x>")
    (root / "untrusted" / "preview.json").write_text(json.dumps(doc))
    (root / "untrusted" / "pr-number.txt").write_text("666\n")  # an old-style claim: ignored
    return root


def test_comment_job_posts_to_the_pull_request_github_names(workspace, gh, tmp_path):
    shell = "$(touch pwned-branch)"
    gh.answer([pull(12, SHA, head={"sha": SHA, "ref": shell, "repo": {"full_name": "stranger/board"}})])
    outputs = _run_comment_job(workspace, gh, event(tmp_path, head_branch=shell, display_title=shell))
    assert outputs == {"number": "12"}
    api, files, post = gh.calls()
    assert api[:2] == ["api", "--paginate"] and files[2] == f"repos/{REPOSITORY}/pulls/12/files?per_page=100"
    assert post == ["pr", "comment", "12", "--repo", REPOSITORY, "--body-file", "comment.md"]
    body = (workspace / "comment.md").read_text("utf-8")
    assert body.startswith("## Dualboard preview") and "@\u2060everyone" in body and "666" not in body
    assert not pwned(tmp_path)


def test_comment_job_without_a_pull_request_posts_nothing(workspace, gh, tmp_path):
    gh.answer([pull(12, OTHER_SHA)])
    assert _run_comment_job(workspace, gh, event(tmp_path)) == {"number": ""}
    assert [call[0] for call in gh.calls()] == ["api"]
    assert not (workspace / "comment.md").exists()
