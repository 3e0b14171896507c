"""``rules``: the default answer-key grader — deterministic, no dependencies.

It judges only what it can read. A response it cannot read gets no verdict
(score None, the reason in ``detail``), never a guess from its last line; a
response that gives no answer at all is the model's failure and scores 0, and
so is one that names a number or short key nowhere (it cannot be right).
What counts as readable is defined once, here: :data:`SHORT_MAX_WORDS`,
:data:`SHORT_MAX_CHARS` and :func:`distinct_numbers`, printed for people as
:data:`RULE`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from dualboard.grading.choices import LETTERS, extract_choice, normalize_question_text, shown_options
from dualboard.grading.commitment import EXTRA_WORDS, KeyTexts, uncommitted
from dualboard.grading.final_answer import (
    FinalAnswer,
    extract_marked_answer,
    find_numbers,
)
from dualboard.grading.matching import (
    key_texts,
    number_matches,
    number_within,
    numeric_key,
    pattern_matches,
    pattern_spans,
    text_contains,
    text_equals,
)
from dualboard.grading.verdict import Grader, Verdict
from dualboard.linear_regex import Screened, compile_linear

SHORT_MAX_WORDS = 20
"""A response without a marked answer is *short*, and taken whole as its answer, when it is
one line (once stripped) of at most this many words ..."""
SHORT_MAX_CHARS = 200
"""... and at most this many characters (a single 100 KB "word" is not short)."""
NAMED_KEY_WORDS = 4
"""A key of at most this many words (or a number) is one every right answer names: a response that marks no final
answer and names it nowhere fails, rather than getting no verdict."""

RULE = (
    "rules judges only what it can read; otherwise it gives no verdict and says why. "
    "A key that is only a reference sentence (no short answer, alias, pattern or number) gets no verdict on any "
    "open answer: right answers paraphrase a sentence. "
    'Multiple choice: the option the response committed to (a JSON answer, "Answer: C", a bold or bracketed '
    "letter, the option's text on the last line) or its marked final answer. "
    'Open questions, in this order: (1) a marked final answer ("Final answer: …", "Answer: …", '
    '"the answer is …", {"ANSWER": …} or {"final_answer": …}, \\boxed{…}); '
    "(2) when the key is a number: the response's only number — it must contain exactly one distinct number "
    "(digits, a fraction, or a number word up to twenty), compared within the key's tolerance; several "
    "different numbers get no verdict; "
    f"(3) a short response: one line of at most {SHORT_MAX_WORDS} words and {SHORT_MAX_CHARS} characters, "
    "taken whole. Anything else, such as a long explanation without a marked final answer, gets no verdict, "
    f"unless the key is a number or at most {NAMED_KEY_WORDS} words and the response names it nowhere: then it "
    "fails (0), whatever it says. "
    "The answer then passes (100) when it equals the key's answer or an alias, contains one as whole words, "
    "or matches one of the key's patterns (for a numeric key: the answer's first number, within tolerance), "
    "and it commits to that one answer; it fails (0) otherwise. A final answer that does not commit fails, its "
    "reason in the detail: another number or option beside the key, alternatives or a list ('24 or 36', "
    "'oxygen, carbon dioxide'), a negation or hedge beside it ('not 36', '36 is tempting, but it is 24', "
    "'maybe 36'), or more than twice the key's words plus "
    f"{EXTRA_WORDS}. An empty response, a final-answer marker with nothing after it, or a "
    "multiple-choice answer naming no option is the model's failure and scores 0. Two different marked "
    "answers are judged by the last and flagged (recovered)."
)
"""The rule as printed on the site (graders page): what ``rules`` judges, and when it abstains."""

# A marker that ends its line ("The final answer is:"), the answer on the next line.
_MARKER_ENDS_LINE = compile_linear(r"final answer\W*(?:is\W*)?", ignore_case=True)
# The response ends on a marker with no answer after it ("Final answer:", "**Answer:**").
_EMPTY_MARKER = Screened(
    compile_linear(r"(?:^|\W)(?:final answer(?:\s+is)?|answer\s*[:\-])\W*\z", ignore_case=True),
    ("answer",),
    ignore_case=True,
    lead=7,  # the context character and "final " before "answer"
)


@dataclass(frozen=True)
class _Reading:
    """What ``rules`` read as a response's answer."""

    text: str
    """The answer to check against the key."""
    method: str
    """How it was found (a marker name, ``option json``, ``short response``)."""
    parse: str
    """``ok``, or ``recovered`` when the response gave different answers or only a fallback style."""
    note: str = ""
    """Why it is ``recovered``, for the detail."""
    said: str | None = None
    """The final answer as the response wrote it, where it differs from ``text`` (a multiple-choice final
    answer read as the option it names): what must commit (:func:`~dualboard.grading.commitment.uncommitted`)."""
    committed_to: KeyTexts | None = None
    """What ``said`` must commit to, where not the key's own texts (the option it names)."""


def distinct_numbers(text: str) -> list[float]:
    """Return the different numbers in ``text`` (equal values once), in order of first mention.

    Examples
    --------
    >>> distinct_numbers("5 miles is about 8.05 km, so 8.05")
    [5.0, 8.05]
    >>> distinct_numbers("1,000 or 1000.0")
    [1000.0]
    """
    return list(dict.fromkeys(find_numbers(text)))


def is_short(response: str) -> bool:
    """Whether the whole response is short enough to be taken as its answer (see :data:`SHORT_MAX_WORDS`)."""
    text = response.strip()
    return len(text) <= SHORT_MAX_CHARS and len(text.splitlines()) == 1 and len(text.split()) <= SHORT_MAX_WORDS


def match_key(candidate: str, question: dict[str, Any]) -> str | None:
    """Return why ``candidate`` passes the answer key, or None when it fails.

    Precedence (the first that applies decides the reported reason): numeric
    key within tolerance (the candidate's first number: a final answer states
    its number first, "8.05 km (5 miles)"), equality with the answer or an
    alias, the answer or an alias as whole words inside the candidate, then the
    key's patterns (RE2 syntax, case ignored: linear time on any response).
    """
    key = numeric_key(question)
    if key is not None and (number := number_matches(candidate, *key)) is not None:
        return f"number {number:g} within {key[1]:g} of {key[0]:g}"
    if (text := text_equals(candidate, question)) is not None:
        return f"equals {text!r}"
    if (text := text_contains(candidate, question)) is not None:
        return f"contains {text!r}"
    if (pattern := pattern_matches(candidate, question)) is not None:
        return f"matches pattern {pattern!r}"
    return None


def _key(question: dict[str, Any], prediction: dict[str, Any]) -> KeyTexts:
    """What a final answer must commit to: the key's answer and aliases (and number); on a multiple-choice
    question every option the key does not name is another candidate."""
    texts = tuple(key_texts(question))
    options = shown_options(question, prediction) if question.get("type") == "multiple_choice" else []
    others = tuple(o for o in options if normalize_question_text(o) not in texts)
    return KeyTexts(texts, numeric_key(question), others)


def _final_answer_line(response: str) -> str:
    """The final-answer statement as written: the marker's line, or the next line when
    the marker ends its line ("The final answer is:" followed by the answer)."""
    start = response.lower().rfind("final answer")
    line, _, rest = response[start:].partition("\n")
    if _MARKER_ENDS_LINE.fullmatch(line.strip()):
        following = next((other for other in rest.split("\n") if other.strip()), "")
        return f"{line}\n{following}"
    return line


def _from_marked(marked: FinalAnswer) -> _Reading:
    """Read a marked answer; two different ones are judged by the last and flagged."""
    if not marked.ambiguous:
        return _Reading(marked.text, marked.method, "ok")
    given = ", ".join(repr(text[:40]) for text in marked.stated)
    note = f"{len(marked.stated)} different answers given ({given}), took the last"
    return _Reading(marked.text, marked.method, "recovered", note)


def _option_letters(answer: str, options: int) -> list[str]:
    """The different option letters ``answer`` names when it is nothing but option letters ("C D A B"; not
    "B. A good choice", where "A" is a word).

    Examples
    --------
    >>> _option_letters("C D A B", 4), _option_letters("(B)", 4), _option_letters("B. A good choice", 4)
    (['C', 'D', 'A', 'B'], ['B'], [])
    """
    tokens = "".join(ch if ch.isalnum() else " " for ch in answer).split()
    if not tokens or any(token not in LETTERS[:options] for token in tokens):
        return []
    return list(dict.fromkeys(tokens))


def _read_choice(response: str, question: dict[str, Any], prediction: dict[str, Any]) -> _Reading | Verdict:
    """Read a multiple-choice answer: its stated final answer, else the option it committed to."""
    shown = shown_options(question, prediction)
    # A stated final answer outranks the option letter: strict grading holds a
    # response to what it finally says, even when its letter is right. When the
    # statement itself names an option ('Final answer: {"ANSWER": "C"}'), that
    # option is the answer.
    stated = extract_marked_answer(response, markers=("final_answer",))
    if stated is not None:
        named = extract_choice(_final_answer_line(response), shown)
        if len(letters := _option_letters(stated.text, len(shown))) > 1:
            return Verdict(
                0.0,
                "none",
                f"final answer {stated.text[:80]!r} names options {', '.join(letters)}: no committed answer, scored 0",
            )
        if named.index is not None:
            option = shown[named.index]
            chosen = KeyTexts((option, LETTERS[named.index]), others=tuple(o for o in shown if o != option))
            return _Reading(
                option, f"final answer names option {named.method}", "ok", said=stated.text, committed_to=chosen
            )
        return _from_marked(stated)
    choice = extract_choice(response, shown)
    if choice.index is not None:
        strict = choice.method in ("json", "bare") and not choice.ambiguous
        given = ", ".join(LETTERS[i] for i in choice.candidates)
        note = f"{len(choice.candidates)} different answers given ({given}), took the last" if choice.ambiguous else ""
        return _Reading(shown[choice.index], f"option {choice.method}", "ok" if strict else "recovered", note)
    marked = extract_marked_answer(response)
    if marked is not None:
        return _from_marked(marked)
    return Verdict(0.0, "none", "no readable option and no marked final answer: the model's failure, scored 0")


def _read_open(response: str, question: dict[str, Any]) -> _Reading | Verdict:
    """Read an open answer: the marked one, else judge a numeric key's only number, else a short response.

    Returns the answer read, or the finished verdict (the number's, the model's failure, or no verdict).
    """
    marked = extract_marked_answer(response)
    if marked is not None:
        # A quoted answer inside a final-answer statement ("Final answer: 'no smoke' is tempting, but ...")
        # is read by the JSON marker; the statement around it is what must commit.
        stated = extract_marked_answer(response, markers=("final_answer",))
        around = stated is not None and stated.text != marked.text and marked.text in stated.text
        return replace(_from_marked(marked), said=stated.text if around else None)
    if _EMPTY_MARKER.search(response):
        return Verdict(0.0, "none", "a final-answer marker with nothing after it: the model's failure, scored 0")
    key = numeric_key(question)
    numbers = distinct_numbers(response) if key is not None else []
    if key is not None and len(numbers) == 1:
        # The number alone decides: key words elsewhere in an unmarked text are no answer.
        passed = number_within(numbers[0], *key)
        relation = "within" if passed else "not within"
        return Verdict(
            100.0 if passed else 0.0,
            "ok",
            f"the response's only number, {numbers[0]:g}, is {relation} {key[1]:g} of {key[0]:g}",
        )
    if is_short(response) and len(numbers) <= 1:
        return _Reading(response.strip(), "short response", "ok")
    if _names_key_nowhere(response, question, numbers):
        # Whatever it says, it is not the key: a fail, not "no verdict", which would let a run hedge away the
        # questions it finds hardest ("17 in one place, 23 in another, so I leave it open").
        return Verdict(0.0, "none", "no marked final answer, and the key is nowhere in the response: scored 0")
    if len(numbers) > 1:
        shown = ", ".join(f"{number:g}" for number in numbers[:5])
        return Verdict(
            None, "none", f"{len(numbers)} different numbers ({shown}) and no marked final answer: cannot judge"
        )
    return Verdict(None, "none", f"no marked final answer in a {len(response.split())}-word response: cannot judge")


def _names_key_nowhere(response: str, question: dict[str, Any], numbers: list[float]) -> bool:
    """Whether an unmarked response never names a key that a right answer must name: a numeric key (no number
    within tolerance), or a short one (:data:`NAMED_KEY_WORDS`: its answer, aliases and patterns nowhere).

    A longer key, such as a reference sentence, is paraphrased by right answers: not naming it proves nothing.
    """
    key = numeric_key(question)
    if key is not None:
        named = any(number_within(number, *key) for number in numbers)
    elif max((len(text.split()) for text in key_texts(question)), default=0) <= NAMED_KEY_WORDS:
        # a key written as a word ("Four") is named by its digits too
        named = bool({n for text in key_texts(question) for n in find_numbers(text)} & set(find_numbers(response)))
    else:
        return False
    return not (named or text_contains(response, question) or pattern_matches(response, question))


REFERENCE_ONLY = (
    "the key is a reference sentence, not an answer: right answers paraphrase it, so the rules cannot judge "
    "(people or a judge grade against it)"
)


def _has_answer(question: dict[str, Any]) -> bool:
    """Whether the key gives something a response can be checked against: an answer, alias, pattern or number."""
    key = question.get("answer_key") or {}
    return bool(key_texts(question) or key.get("patterns") or numeric_key(question) is not None)


@dataclass(frozen=True)
class RulesGrader(Grader):
    """Pass (100) or fail (0) the answer a response gives against the key; no verdict where none can be read.

    Judges only what it can read (:data:`RULE`, printed on the site, says it in
    full). For a multiple-choice question the answer is the text of the option
    the response committed to, or its marked final answer. For an open
    question it is the marked final answer ("Final answer: ...",
    ``{"ANSWER": ...}``, ``\\boxed{...}``, "Answer: ...", "the answer is ...");
    else, for a numeric key, the response's only number
    (:func:`distinct_numbers`); else a short response taken whole
    (:func:`is_short`). Anything else gets no verdict (score None), as does every answer to a key that is only a
    ``reference`` sentence (:data:`REFERENCE_ONLY`). The answer
    is checked by :func:`match_key`, and must commit to the key
    (:func:`~dualboard.grading.commitment.uncommitted`): "24 or 36" fails. An empty response, a bare final-answer
    marker or a multiple-choice answer naming no option is the model's failure:
    0 with ``verdict_parse = none``. No options.

    Examples
    --------
    >>> q = {"id": "1", "type": "open", "answer_key": {"answer": "Paris", "aliases": [], "patterns": []}}
    >>> RulesGrader().grade(q, {"response": "Final answer: Paris."}).score
    100.0
    >>> RulesGrader().grade(q, {"response": "Final answer: Paris or Lyon"}).score
    0.0
    >>> RulesGrader().grade(q, {"response": "It is a long story about Paris. " * 20}).score is None
    True
    >>> RulesGrader().grade(q, {"response": "It is a long story. " * 20}).detail
    'no marked final answer, and the key is nowhere in the response: scored 0'
    """

    name: ClassVar[str] = "rules"
    version: ClassVar[str] = "6"
    default_role: ClassVar[str] = "answer_key"
    rule: ClassVar[str] = RULE

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        response = str(prediction.get("response") or "")
        if not response.strip():
            return Verdict(0.0, "none", "empty response: the model's failure, scored 0")
        is_mc = question.get("type") == "multiple_choice" and bool(question.get("choices"))
        if not is_mc and not _has_answer(question):
            return Verdict(None, "none", REFERENCE_ONLY)
        reading = _read_choice(response, question, prediction) if is_mc else _read_open(response, question)
        if isinstance(reading, Verdict):
            return reading
        reason = match_key(reading.text, question)
        detail = f"final answer {(reading.said or reading.text)[:80]!r} ({reading.method}) " + (
            f"{reading.note}; " if reading.note else ""
        )
        said = reading.said or reading.text
        key = reading.committed_to or _key(question, prediction)
        if reason is not None and (hedge := uncommitted(said, key, pattern_spans(said, question))) is not None:
            # Several candidates, a negation or a hedge: the model did not commit. A fail, not "no verdict",
            # which would let a run hedge away the questions it finds hardest.
            return Verdict(
                0.0, reading.parse, f"{detail}holds the key but {hedge}: no committed answer, scored 0"[:300]
            )
        return Verdict(0.0 if reason is None else 100.0, reading.parse, (detail + (reason or "matches no key"))[:300])
