"""The llm grader's tolerant verdict parser."""

from __future__ import annotations

import pytest

from dualboard.grading.judge_replies import parse_judge_reply

REPLIES = [
    ("The final answers agree.\nVerdict: pass", 100.0, "ok"),
    ("Verdict: FAIL", 0.0, "ok"),
    ("**Verdict:** Pass", 100.0, "ok"),
    ("Reasoning...\nScore: 100", 100.0, "ok"),
    ("Score: 0/100", 0.0, "ok"),
    ("It fails at first sight.\nVerdict: pass", 100.0, "ok"),  # the strict line wins
    ("Verdict: pass\n...on reflection...\nVerdict: fail", 0.0, "ok"),  # the last strict line wins
    ("The response is incorrect: it says two races.", 0.0, "recovered"),
    ("The answer is not correct.", 0.0, "recovered"),
    ("This does not match the answer key.", 0.0, "recovered"),
    ("Correct — it matches the key.", 100.0, "recovered"),
    ("PASS", 100.0, "recovered"),
    ("It is correct in places but wrong overall.", None, "none"),
    ("I cannot decide.", None, "none"),
    ("", None, "none"),
]


@pytest.mark.parametrize(("reply", "score", "parse"), REPLIES)
def test_parse_judge_reply(reply: str, score: float | None, parse: str) -> None:
    found = parse_judge_reply(reply)
    assert found[:2] == (score, parse)
    assert found[2]
