"""Read a verdict out of an LLM judge's reply, tolerantly, recording how.

The strict form is a line ``Verdict: pass|fail`` or ``Score: 0|100`` (the last
such line counts): ``ok``. Otherwise phrase-level recovery looks for words of
one polarity only ("incorrect", "does not match" … or "correct", "matches" …):
``recovered``. Replies with both polarities or neither yield no verdict:
``none``.
"""

from __future__ import annotations

from dualboard.linear_regex import ContextPattern, compile_linear

_STRICT = compile_linear(
    r"(?m)^[^\pL\pN]*(?:(verdict)[^\pL\pN]*[:=][^\pL\pN]*(pass|fail)|(score)[^\pL\pN]*[:=][^\pL\pN]*(100|0)(?:\s*/\s*100)?)"
    r"[^\pL\pN]*$",
    ignore_case=True,
)
# Whole-word phrases: each pattern takes the character before and the one after (see ContextPattern).
_FAIL = ContextPattern(
    r"(?:^|\W)(fail(?:s|ed)?|incorrect|not correct|wrong|does not match|doesn't match|do not match|"
    r"mismatch(?:es)?|not equivalent|inaccurate|score\W{0,3}0(?:\s*/\s*100)?)(\z|\W)",
    ignore_case=True,
)
_PASS = ContextPattern(
    r"(?:^|\W)(pass(?:es|ed)?|correct(?:ly)?|matches|match|equivalent|accurate|score\W{0,3}100(?:\s*/\s*100)?)(\z|\W)",
    ignore_case=True,
)


def parse_judge_reply(reply: str) -> tuple[float | None, str, str]:
    """Return ``(score, verdict_parse, detail)`` for one judge reply.

    Examples
    --------
    >>> parse_judge_reply("The final answer agrees.\\nVerdict: PASS")
    (100.0, 'ok', 'strict: Verdict: PASS')
    >>> parse_judge_reply("The response is incorrect.")[:2]
    (0.0, 'recovered')
    >>> parse_judge_reply("I cannot tell.")[:2]
    (None, 'none')
    """
    strict = list(_STRICT.finditer(reply))
    if strict:
        last = strict[-1]
        word = (last.group(2) or last.group(4)).lower()
        return (100.0 if word in ("pass", "100") else 0.0), "ok", f"strict: {last.group(0).strip()[:60]}"
    fails = [m.texts[0] for m in _FAIL.finditer(reply)]
    # Blank the fail phrases first, so "not correct" cannot also count as "correct".
    passes = [m.texts[0] for m in _PASS.finditer(_FAIL.sub(" ", reply))]
    if fails and not passes:
        return 0.0, "recovered", f"phrase: {fails[-1]!r}"
    if passes and not fails:
        return 100.0, "recovered", f"phrase: {passes[-1]!r}"
    reason = "both pass and fail phrases" if fails else "no verdict phrase"
    return None, "none", f"{reason} in reply {reply.strip()[:80]!r}"
