"""The fast decoder of prediction lines only ever says "valid", and only where the schema agrees.

The oracle is the exact path it stands in for: the strict parser
(``parse_json_line``: duplicate keys, NaN, lone surrogates…) and
the JSON Schema made from the struct. Hypothesis writes hostile JSON-ish lines by hand
(so duplicate keys, escaped key names, odd whitespace and literals ``NaN``
can occur, which ``json.dumps`` never writes); every line the fast path
confirms must be valid for the oracle and give the same row, types included.
Then whole files are validated with and without the fast path: findings and
rows must be identical.
"""

from __future__ import annotations

import json
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from dualboard.importers import import_autogenai
from dualboard.intake import validate
from dualboard.intake.benchmark import load_benchmarks
from dualboard.intake.prediction_decoder import Prediction, as_row, confirmed_lines, confirmed_row
from dualboard.intake.schemas import load_schema, schema_findings
from dualboard.intake.untrusted import parse_json_line
from dualboard.intake.validate import FAST_PATH_PATIENCE, PREDICTIONS, Limits, check_run, check_runs, find_run_dirs
from tests.conftest import tiny_metadata, tiny_predictions
from tests.importers.import_fixtures import MC_RELEASE, OPEN_RELEASE, real_data

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def exact_row(raw: bytes):
    """What the exact path makes of one line: the row with its round filled in, or None when it is refused."""
    value, problem = parse_json_line(raw, "predictions.jsonl", 1)
    if problem is not None:
        return None
    try:
        if schema_findings(value, "prediction", file="predictions.jsonl", line=1):
            return None
    except (RecursionError, ValueError):  # refused by the validator too (see validate._schema_findings)
        return None
    return {**value, "round": value.get("round", 0)}


def typed(value):
    """``value`` with the type of every scalar spelt out: 100 and 100.0, or 1 and True, compare unequal."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, repr(value))


# -- hostile lines, written by hand --------------------------------------------------------------

names = st.sampled_from(["question_id", "response", "round", "choice_order", "recorded"])
key_spellings = (
    names.map(json.dumps)
    | names.map(lambda n: '"' + "".join(f"\\u{ord(c):04x}" if c in "ro" else c for c in n) + '"')  # "\u0072ound"
    | st.sampled_from(['"extra"', '""', '"ROUND"', '"round "', '"\\ud800"', '"a\\/b"', '"a/b"', '"\\u0061"', '"a"'])
)
number_texts = st.sampled_from(
    ["0", "-0", "1", "3", "100", "101", "-1", "1.0", "1e0", "1E2", "50.5", "-0.0", "1e400", "-1e400", "1e-400"]
    + ["NaN", "Infinity", "-Infinity", "9" * 25, "9" * 5000, "01", "1.", ".5", "0x10", "true", "false", "null"]
)
string_texts = st.text(max_size=12).map(json.dumps) | st.sampled_from(
    ['"q1"', '"q2"', '"A"', '"Z"', '"a"', '"AB"', '"A\\n"', '"\\ud800"', '"\\udc00x"', '"\\ud83d\\ude00"']
    + ['"say \\"round"', '"x\\"response"', '"\\u0000"', '"tab\there"', '"\\/"', '""', '"' + "q" * 201 + '"']
)
whitespace = st.sampled_from(["", " ", "\t", "\r\n ", "\u00a0"])


def json_texts(depth: int = 2):
    """JSON-ish value texts: numbers, strings, and lists or objects of them, with hostile keys."""
    if depth == 0:
        return number_texts | string_texts
    inner = json_texts(depth - 1)
    lists = st.lists(inner, max_size=3).map(lambda items: "[" + ",".join(items) + "]")
    members = st.lists(st.tuples(key_spellings | string_texts, inner), max_size=3)
    objects = members.map(lambda pairs: "{" + ",".join(f"{k}:{v}" for k, v in pairs) + "}")
    return inner | lists | objects | st.integers(1, 3000).map(lambda n: "[" * n + "]" * n)


@st.composite
def hostile_lines(draw) -> bytes:
    """One line: an object of mostly contract fields, any of them repeated, mistyped, oddly spelt or spaced."""
    pairs = [("question_id", draw(string_texts)), ("response", draw(string_texts))]
    for name in draw(st.lists(names, max_size=4)):
        value = {
            "round": number_texts,
            "choice_order": st.lists(string_texts, max_size=3).map(lambda items: "[" + ",".join(items) + "]"),
            "recorded": st.lists(st.tuples(key_spellings | string_texts, number_texts), max_size=3).map(
                lambda kv: "{" + ",".join(f"{k}:{v}" for k, v in kv) + "}"
            ),
        }.get(name, string_texts)
        pairs.append((name, draw(value | json_texts())))
    pairs = draw(st.permutations(pairs))
    keys = [draw(key_spellings) if draw(st.integers(0, 5)) == 0 else json.dumps(k) for k, _ in pairs]
    space = draw(whitespace)
    text = "{" + ",".join(f"{k}{space}:{draw(whitespace)}{v}" for k, (_, v) in zip(keys, pairs)) + "}"
    tail = draw(st.sampled_from(["", "\n", "\r\n", " x", "}", "\ufeff"]))
    raw = (draw(st.sampled_from(["", " ", "\ufeff"])) + text + tail).encode()
    cut = draw(st.integers(0, len(raw)))
    return (
        raw if draw(st.integers(0, 20)) else raw[:cut] + draw(st.sampled_from([b"\xff", b"\xed\xa0\x80"])) + raw[cut:]
    )


@pytest.mark.slow
@settings(max_examples=2500, **SETTINGS)
@given(raw=hostile_lines())
@example(b'{"question_id": "q1", "response": "4", "response": "5"}')
@example(b'{"question_id": "q1", "response": "4", "r\\u006fund": 1, "round": 0}')
@example(b'{"question_id": "q1", "response": "4", "round" : 1, "round":0}')
@example(b'{"question_id": "q1", "response": "4", "recorded": {"a\\/b": 1, "a/b": 2}}')
@example(b'{"question_id": "q1", "response": "4", "recorded": {"\\u0061": 1, "a": 2}}')
@example(b'{"question_id": "q1", "response": "4", "recorded": {"a": NaN}}')
@example(b'{"question_id": "q1", "response": "4", "recorded": {"a": 1e400}}')
@example(b'{"question_id": "q1", "response": "4", "round": 1.0}')
@example(b'{"question_id": "q1", "response": "4", "round": true}')
@example(b'{"question_id": "q1", "response": "\\ud800"}')
@example(b'{"question_id": "q1", "response": "\xed\xa0\x80"}')
@example(b'{"question_id": "q1", "response": "4", "round": ' + b"9" * 5000 + b"}")
@example(b'{"question_id": "q1", "response": "4", "extra": 1}')
@example(b'{"question_id": "q1", "response": "4", "choice_order": ["A\\n"]}')
def test_the_fast_path_confirms_only_what_the_schema_accepts(raw):
    fast = confirmed_row(raw)
    if fast is not None:
        exact = exact_row(raw)
        assert exact is not None, f"fast path accepted a line the exact path refuses: {raw!r}"
        assert typed(fast) == typed(exact)


# -- valid lines: the fast path must take them, or there is no speed to gain ------------------

plain_texts = st.text(st.characters(codec="utf-8", exclude_characters='"\\'), max_size=200)
"""Texts without quotes or backslashes: with them, a response can spell a key (say \\"round") or an escape."""
valid_rows = st.fixed_dictionaries(
    {"question_id": plain_texts.filter(bool)},
    optional={
        "round": st.integers(0, 2**63),
        "response": plain_texts,
        "choice_order": st.lists(st.sampled_from("ABCDEFGHIJ"), max_size=10),
        "recorded": st.dictionaries(
            st.from_regex(r"[a-z_]{1,20}", fullmatch=True),
            st.integers(0, 100) | st.floats(0, 100),
            max_size=3,
        ),
    },
).map(lambda row: {"response": "", **row})


@pytest.mark.slow
@settings(max_examples=1500, **SETTINGS)
@given(row=valid_rows, ascii_only=st.booleans(), separators=st.sampled_from([(", ", ": "), (",", ":")]))
def test_valid_lines_written_by_json_dumps_take_the_fast_path(row, ascii_only, separators):
    recorded = set(row.get("recorded", {}))
    # a value spelt like a key ("response": "round") puts the name twice in the line: the exact path takes it
    assume(not (set(row) | recorded) & {row["question_id"], row["response"]} and not set(row) & recorded)
    raw = json.dumps(row, ensure_ascii=ascii_only, separators=separators).encode() + b"\n"
    assert typed(confirmed_row(raw)) == typed(exact_row(raw)) == typed({**row, "round": row.get("round", 0)})


@pytest.mark.parametrize("escape", [b"\\ud800", b"\\udbff", b"\\udc00", b"\\uDFFF", b"x\\ude00"])
def test_a_lone_surrogate_is_a_finding_on_both_paths(escape):
    """Low surrogates (\\udc00-\\udfff) slipped through the strict parser and crashed the response-size check."""
    raw = b'{"question_id": "q1", "response": "' + escape + b'"}'
    assert confirmed_row(raw) is None
    problem = parse_json_line(raw, "predictions.jsonl", 1)[1]
    assert problem is not None and "lone UTF-16 surrogate" in problem.problem


def test_the_documented_schema_is_the_struct_s_contract():
    """The JSON Schema that validation words its findings with, and the Submit page prints, is made from the
    decoder's struct: the same fields, limits and strictness."""
    schema = load_schema("prediction")
    assert list(schema["properties"]) == list(Prediction.__struct_fields__)
    assert schema["required"] == ["question_id", "response"] and schema["additionalProperties"] is False
    assert schema["properties"]["question_id"] | {"description": ""} == {
        "description": "",
        "type": "string",
        "minLength": 1,
        "maxLength": 200,
    }
    assert schema["properties"]["round"]["default"] == 0
    assert schema["properties"]["recorded"]["additionalProperties"] == {"type": "number", "minimum": 0, "maximum": 100}


# -- whole files: the same findings and rows with and without the fast path -------------------


@pytest.fixture(scope="module")
def workspace(workspace):
    """The intake tests' workspace with the tiny run's metadata written once: these examples vary only lines."""
    root, run, benchmarks = workspace
    (run / "metadata.yaml").write_text(yaml.safe_dump(tiny_metadata()), "utf-8")
    return workspace


def exact_path_only():
    """Neither fast path: no whole file confirmed at once, no line confirmed alone."""
    return mock.patch.multiple(
        "dualboard.intake.validate", confirmed_framed=lambda framed: None, confirmed_row=lambda raw: None
    )


def both_ways(workspace, predictions: bytes, limits: Limits):
    """check_run's result with the fast paths, then with every line sent to the exact path."""
    root, run, benchmarks = workspace
    (run / PREDICTIONS).write_bytes(predictions)
    fast = check_run(run, benchmarks, limits, submissions_root=root / "submissions")
    with exact_path_only():
        exact = check_run(run, benchmarks, limits, submissions_root=root / "submissions")
    return fast, exact


valid_lines = st.sampled_from([json.dumps(p).encode() for p in tiny_predictions()])
known_answers = st.fixed_dictionaries(
    {"question_id": st.sampled_from(["q1", "q2", "q3", "q9"]), "round": st.integers(0, 3), "response": plain_texts}
).map(lambda row: json.dumps(row).encode())


@pytest.mark.slow
@settings(max_examples=600, **SETTINGS)
@given(
    lines=st.lists(valid_lines | known_answers | hostile_lines() | st.just(b"  "), min_size=1, max_size=8),
    response_bytes=st.sampled_from([3, 40, 2_000]),
)
@example(lines=[b'{"question_id": "q1", "response": "\\udc00x"}'], response_bytes=3)  # crashed the size check
@example(lines=[b'{"question_id": "q1", "extra": ' + b"[" * 900 + b'"\\udc00"' + b"]" * 900 + b"}"], response_bytes=3)
def test_files_give_the_same_findings_and_rows_either_way(workspace, lines, response_bytes):
    limits = Limits(predictions_bytes=200_000, response_bytes=response_bytes)
    (fast_run, fast_findings), (exact_run, exact_findings) = both_ways(
        workspace, b"\n".join(line.rstrip(b"\n") for line in lines) + b"\n", limits
    )
    assert fast_findings == exact_findings
    assert (fast_run is None) == (exact_run is None)
    if fast_run is not None:
        assert [typed(p) for p in fast_run.predictions] == [typed(p) for p in exact_run.predictions]


# -- whole files at once: confirmed only where every line is, and as the exact path reads it ------

line_breaks = st.sampled_from(
    [b"\n", b"\n", b"\n", b"\r\n", b" \n", b"\n\n", b"\n \n", b" ", b"", b"\n\r\n", b",", b", ", b"\n,"]
)
"""What may stand between two lines: mostly a line break, sometimes a blank line, a space or a comma (two values
on one line: the whole file is decoded as one array, where a comma of the file's own must not pass) or nothing."""


def exact_rows(data: bytes) -> list | None:
    """The rows the exact path makes of a whole file, blank lines skipped; None when it refuses a line."""
    rows = [exact_row(raw) for raw in data.split(b"\n") if raw.strip()]
    return None if any(row is None for row in rows) else rows


@pytest.mark.slow
@settings(max_examples=1500, **SETTINGS)
@given(
    lines=st.lists(valid_lines | known_answers | hostile_lines(), min_size=1, max_size=6),
    breaks=st.lists(line_breaks, min_size=6, max_size=6),
    split=st.integers(0, 400),
    end=st.sampled_from([b"", b"\n", b"\n\n", b"\r\n"]),
)
@example(lines=[b'{"question_id": "q1", "response": "4"}'] * 2, breaks=[b" "] * 6, split=0, end=b"\n")
@example(lines=[b'{"question_id": "q1", "response": "4"}'] * 2, breaks=[b","] * 6, split=0, end=b"\n")
@example(
    lines=[
        b'{"question_id": "q1", "response": "4", "recorded": {"judge": 1}}',
        b'{"question_id": "q2", "response": "4"}',
    ],
    breaks=[b"\n"] * 6,
    split=55,  # inside the first line's recorded scores: that object spans two lines
    end=b"",
)
@example(  # a line break inside a string: no comma may stand for it
    lines=[b'{"question_id": "q2", "round": 0, "response": "Paris is the capital.\\n{\\"ANSWER\\": \\"B\\"}"}'],
    breaks=[b"\n"] * 6,
    split=78,
    end=b"",
)
def test_a_whole_file_is_confirmed_only_when_every_line_is(lines, breaks, split, end):
    """Lines joined by line breaks, blank lines, spaces or nothing, with a line break anywhere: a file the
    whole-file decoder confirms holds one valid line per line, read as the exact path reads them."""
    data = b"".join(line.rstrip(b"\r\n") + gap for line, gap in zip(lines, breaks)).rstrip() + end
    data = data[:split] + b"\n" + data[split:] if split < len(data) and split % 3 == 0 else data
    confirmed = confirmed_lines(data)
    if confirmed is not None:
        exact = exact_rows(data)
        assert exact is not None, f"whole-file path accepted a file the exact path refuses: {data!r}"
        assert [typed(as_row(line)) for line in confirmed] == [typed(row) for row in exact]


DOUBTFUL_FILES = [
    b'{"question_id": "q1", "response": "4"} {"question_id": "q2", "response": "5"}\n',  # two values, one line
    b'{"question_id": "q1", "response": "4"},{"question_id": "q2", "response": "5"}\n',  # ... and a comma
    b'{"question_id": "q1",\n "response": "4"}\n',  # one value, two lines
    b'{"question_id": "q1", "response": "4\n"}\n',  # a line break inside a string
    b'{"question_id": "q1", "response": "4"\n}\n',  # ... before a closing brace
    b'{"question_id": "q1", "response": "4", "response": "5"}\n',  # a key given twice
    b'{"question_id": "q1", "response": "4", "r\\u006fund": 1, "round": 0}\n',  # twice, once escaped
    b'{"question_id": "q1", "response": "4", "recorded": {"judge": 1, "judge": 2}}\n',
    b'{"question_id": "q1", "response": "4", "recorded": {"judge": NaN}}\n',
    b'\xef\xbb\xbf{"question_id": "q1", "response": "4"}\n',  # a byte order mark
    b'{"question_id": "q1", "response": "\\ud800"}\n',  # a lone surrogate
    b'{"question_id": "q1", "response": "\xff"}\n',  # not UTF-8
    b'{"question_id": "q1", "response": "4", "choice_order": ' + b"[" * 5000 + b"]" * 5000 + b"}\n",
    b'{"question_id": "q1", "response": "4"}\n\n{"question_id": "q2", "response": "5"}\n',  # a blank line
    b'{"question_id": "q1", "response": "4"}\n\n',  # a blank line at the end
    b'{"question_id": "response", "response": "4"}\n',  # a value spelt like a key: unsure, not wrong
]
"""Files the whole-file decoder must not vouch for: hostile, or only unusual."""


@pytest.mark.parametrize("data", DOUBTFUL_FILES)
def test_a_file_in_doubt_goes_line_by_line(workspace, data):
    """Not confirmed whole, and the findings and rows are those of the exact path, line for line."""
    assert confirmed_lines(data) is None
    (fast_run, fast_findings), (exact_run, exact_findings) = both_ways(workspace, data, Limits(response_bytes=3))
    assert fast_findings == exact_findings and fast_findings
    assert (fast_run is None) == (exact_run is None)


@pytest.mark.parametrize(
    "data,rows",
    [
        (b"", 0),
        (b"\n", 0),
        (b'{"question_id": "q1", "response": "4"}', 1),
        (b'{"question_id": "q1", "response": "4"}\r\n{"question_id": "q2", "response": "5"}\r\n', 2),
        (b'{"question_id": "q1", "response": "say \\"round\\" \\u00e9", "round": 2}\n', 1),
    ],
)
def test_a_valid_file_is_confirmed_whole(data, rows):
    confirmed = confirmed_lines(data)
    assert confirmed is not None and len(confirmed) == rows
    assert [as_row(line) for line in confirmed] == exact_rows(data)


def test_a_pause_of_the_fast_path_changes_no_finding(workspace):
    """Past FAST_PATH_PATIENCE unconfirmed lines the fast path is tried on one line in that many: same results."""
    valid = [json.dumps(p).encode() for p in tiny_predictions()]
    lines = [b"{" + valid[0]] * (FAST_PATH_PATIENCE * 2 + 5) + valid * 40 + [b'{"question_id": "q1"}'] * 70 + valid
    (fast_run, fast_findings), (exact_run, exact_findings) = both_ways(
        workspace, b"\n".join(lines) + b"\n", Limits(predictions_bytes=200_000)
    )
    assert fast_findings == exact_findings and fast_run is None and exact_run is None
    assert fast_findings[-1].problem.endswith("more problems not shown")
    root, run, benchmarks = workspace
    with mock.patch("dualboard.intake.validate.confirmed_row", wraps=confirmed_row) as fast_path:
        check_run(run, benchmarks, Limits(predictions_bytes=200_000), submissions_root=root / "submissions")
    # it paused within the broken lines, and resumed on the valid ones after them
    assert 2 * FAST_PATH_PATIENCE < fast_path.call_count < len(lines) - FAST_PATH_PATIENCE


@pytest.mark.slow
@pytest.mark.parametrize("release,benchmark", [(MC_RELEASE, "easy-problems-mc"), (OPEN_RELEASE, "easy-problems-open")])
def test_every_published_run_is_confirmed_whole_and_validates_as_the_exact_path_does(tmp_path, release, benchmark):
    """The real releases take the whole-file path, and give the findings, runs and rows of the exact path."""
    import_autogenai(real_data() / release, benchmark=benchmark, dest=tmp_path)
    files = sorted((tmp_path / "submissions").glob(f"*/*/{PREDICTIONS}"))
    assert len(files) > 3
    for path in files:
        data = path.read_bytes()
        confirmed = confirmed_lines(data)
        assert confirmed is not None, f"{path.parent.name} misses the whole-file path"
        assert [typed(as_row(line)) for line in confirmed] == [typed(row) for row in exact_rows(data)]
    benchmarks, dirs = load_benchmarks(tmp_path / "data"), find_run_dirs([tmp_path / "submissions"])
    with mock.patch("dualboard.intake.validate._read_lines", wraps=validate._read_lines) as line_by_line:
        fast = check_runs(dirs, benchmarks, submissions_root=tmp_path / "submissions")
    assert line_by_line.call_count == 0  # every file was taken whole
    with exact_path_only():
        exact = check_runs(dirs, benchmarks, submissions_root=tmp_path / "submissions")
    assert fast.findings == exact.findings
    assert [(r.run_id, r.metadata) for r in fast.runs] == [(r.run_id, r.metadata) for r in exact.runs]
    assert [[typed(p) for p in r.predictions] for r in fast.runs] == [
        [typed(p) for p in r.predictions] for r in exact.runs
    ]


@pytest.mark.parametrize("release,benchmark", [(MC_RELEASE, "easy-problems-mc"), (OPEN_RELEASE, "easy-problems-open")])
def test_every_line_of_the_published_runs_takes_the_fast_path(tmp_path, release, benchmark):
    """Real answers (quotes, JSON inside the text, recorded scores) are confirmed, as the exact path reads them."""
    import_autogenai(real_data() / release, benchmark=benchmark, dest=tmp_path)
    lines = [raw for path in sorted((tmp_path / "submissions").glob(f"*/*/{PREDICTIONS}")) for raw in path.open("rb")]
    assert len(lines) > 100
    slow = [raw[:80] for raw in lines if confirmed_row(raw) is None]
    assert not slow, f"{len(slow)} of {len(lines)} lines miss the fast path, e.g. {slow[:3]}"
    assert all(typed(confirmed_row(raw)) == typed(exact_row(raw)) for raw in lines)
