"""Tiny, test-only readers of simulated responses (independent of the real graders)."""

from __future__ import annotations

import re
import string
from typing import Any

LETTER = re.compile(
    r'\{"ANSWER": "(?P<json>[A-Za-z])"\}'
    r"|^Answer: (?P<colon>[A-Z])$"
    r"|\*\*(?P<bold>[A-Z])\*\*"
    r"|^\((?P<paren>[A-Z])\)$"
    r"|^The answer is (?P<sentence>[A-Z])\.$",
    re.MULTILINE,
)
FINAL = re.compile(r"^Final answer: (.*)$", re.MULTILINE)
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def extracted_letter(response: str, choice_order: list[str] | None) -> str | None:
    """Return the committed letter in canonical order, or None."""
    match = LETTER.search(response)
    if match is None:
        return None
    shown = next(v for v in match.groupdict().values() if v).upper()
    if choice_order is None:
        return shown
    return choice_order[string.ascii_uppercase.index(shown)]


def final_answer(response: str) -> str | None:
    match = FINAL.search(response)
    return match.group(1).strip() if match else None


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text.casefold().strip().rstrip(".")).strip()


def states_key(text: str | None, key: dict[str, Any]) -> bool:
    """Whether ``text`` (a final answer) states the key: exact alias, pattern or number."""
    if not text:
        return False
    said = normalize(text)
    if said in {normalize(a) for a in [key["answer"], *key.get("aliases", [])]}:
        return True
    return any(re.search(p, said, re.IGNORECASE) for p in key.get("patterns", []))


def mentions_key(text: str, key: dict[str, Any]) -> bool:
    """Whether ``text`` contains the key anywhere (word-bounded), by pattern, or as a number in tolerance."""
    said = normalize(text)
    for alias in [key["answer"], *key.get("aliases", [])]:
        if re.search(rf"(?<![\w.,]){re.escape(normalize(alias))}(?![\w]|[.,]\d)", said):
            return True
    if any(re.search(p, said, re.IGNORECASE) for p in key.get("patterns", [])):
        return True
    numeric = key.get("numeric")
    if numeric is None:
        return False
    numbers = [float(n.replace(",", "")) for n in NUMBER.findall(said)]
    return any(abs(n - numeric["value"]) <= numeric.get("tolerance", 0) for n in numbers)
