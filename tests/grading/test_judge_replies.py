"""The llm grader's verdict parser: the reply's last non-empty line, with the call's nonce, or no verdict."""

from __future__ import annotations

import pytest

from dualboard.grading.judge_replies import parse_judge_reply

NONCE = "3fa9c1d27b0e4d6a8c5b1e2f"
REPLIES = [
    (f"The final answers agree.\nVerdict {NONCE}: pass", 100.0, "ok"),
    (f"Verdict {NONCE}: FAIL", 0.0, "ok"),
    (f"**Verdict {NONCE}:** Pass", 100.0, "ok"),
    (f"It fails at first sight.\nVerdict {NONCE}: pass\n\n  \n", 100.0, "ok"),  # blank lines after it
    (f"Verdict {NONCE}: pass\n...on reflection...\nVerdict {NONCE}: fail.", 0.0, "ok"),
    # Everything else is no verdict: the line must be last, carry this call's nonce and say pass or fail.
    (f"Verdict {NONCE}: pass\nThat is my verdict.", None, "none"),
    ("Verdict: pass", None, "none"),
    (f"Verdict {NONCE[:-1]}0: pass", None, "none"),
    (f"Verdict {NONCE}: passed", None, "none"),
    (f"Verdict {NONCE}: pass or fail", None, "none"),
    ("Reasoning...\nScore: 100", None, "none"),  # phrase and score recovery are gone
    ("The response is incorrect: it says two races.", None, "none"),
    ("Correct — it matches the key.", None, "none"),
    ("PASS", None, "none"),
    ("", None, "none"),
]


@pytest.mark.parametrize(("reply", "score", "parse"), REPLIES)
def test_parse_judge_reply(reply: str, score: float | None, parse: str) -> None:
    found = parse_judge_reply(reply, NONCE)
    assert found[:2] == (score, parse)
    assert found[2]
