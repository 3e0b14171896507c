"""Turn a known outcome into realistic response text that graders must read back.

The contract with the graders (what makes the simulation a ground truth):

* **Multiple choice.** The letter the response commits to is the correct one
  (in the order the options were *shown*, see ``choice_order``) iff the
  traditional grading passed. The ``Final answer: ...`` sentence states the
  answer key (its ``answer`` or one of its ``aliases``) iff the answer-key
  grading passed; otherwise it names another option or hedges, as real models
  do when their letter and their prose disagree.
* **Open.** ``recorded["judge"]`` is a lenient simulated judge's score
  (``Outcome.judge_score``): 80 or 100 for a pass, 0, 20 or 40 for a fail.
  The final answer is correct iff the ideal answer-key verdict is a pass. It
  is usually worded so that a string matcher reads it right (the key, or a
  plausible wrong answer), but a ``misleading`` one fools it: a correct
  paraphrase the key does not list, or a wrong answer that mentions the key
  ("not 36 but 40"). An answer that is not ``marked`` states it in free
  prose (``PROSE``), with no ``Final answer:`` sentence.
* **Malformed** answers (empty, truncated, refusals) fail both gradings and
  get a judge score of 0.

Explanation and prose lines are generic on purpose: they never contain a
digit, a standalone letter A–D or any answer, so only the letter and the
final answer carry the outcome. No output contains HTML.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

JUDGE_FIELD = "judge"
JUDGE_PASS_SCORES = (80, 100)
JUDGE_PASS_WEIGHTS = (0.3, 0.7)
JUDGE_FAIL_SCORES = (0, 20, 40)
JUDGE_FAIL_WEIGHTS = (0.5, 0.3, 0.2)

MC_STYLES = ("json", "json_fenced", "answer_colon", "bold", "parenthesized", "sentence")

EXPLANATIONS = {
    "arithmetic": (
        "Working through the calculation step by step gives the result below.",
        "Breaking the numbers into easier parts makes the computation straightforward.",
        "Checking the result by rough estimation confirms its size.",
    ),
    "units": (
        "Converting with the standard factor between the units gives the value below.",
        "Writing the units out explicitly keeps the conversion honest.",
        "Multiplying by the right conversion factor settles it.",
    ),
    "facts": (
        "This is well established in standard reference works.",
        "Recalling what reference sources say settles this.",
        "Textbooks on the subject agree on this point.",
    ),
    "reasoning": (
        "Reading the wording carefully matters more than quick intuition here.",
        "The wording is tricky, so each statement has to be taken literally.",
        "Thinking it through slowly avoids the obvious but wrong reply.",
    ),
    "language": (
        "Looking at how the word is normally used settles it.",
        "Standard dictionaries and grammar guides agree on this.",
        "Considering the meaning and spelling of each candidate gives the answer.",
    ),
}
DEFAULT_EXPLANATIONS = (
    "Let me think about this carefully.",
    "Weighing the possibilities gives the answer below.",
)
HEDGES = (
    "I am not sure.",
    "It is hard to say without more context.",
    "I cannot determine this with confidence.",
)
PROSE = (
    "All things considered, I would go with {}.",
    "So it comes out as {}, as far as I can tell.",
    "That leaves {} as the most sensible reply.",
)
"""Free-prose closing sentences of unmarked open answers: no marker a grader
looks for ("final answer", "answer:", "the answer is")."""
REFUSAL = "I'm sorry, but I can't help with that request."
MALFORMED_KINDS = ("empty", "truncated", "refusal")


@dataclass(frozen=True)
class Outcome:
    """What one answer says, and so what its graders should conclude."""

    traditional: bool
    """The traditional grading passes (MC: correct letter; open: the judge passes it)."""
    answer_key: bool
    """The final answer is correct: an ideal answer-key grader passes it."""
    malformed: bool = False
    """The answer is empty, truncated or a refusal (then both gradings fail)."""
    marked: bool = True
    """Open: the answer marks its final answer (``Final answer: ...``); else free prose."""
    misleading: bool = False
    """Open: the final answer's wording fools a string matcher (a paraphrase of a
    correct answer, or a wrong answer that mentions the key)."""
    judge_score: int = 0
    """Open: the lenient judge's recorded 0–100 score."""


@dataclass(frozen=True)
class AnswerTexts:
    """Prepared final answers for one open question (tables of ``simulated_models.yaml``)."""

    wrong: tuple[str, ...] = ()
    """Plausible wrong answers that do not mention the key (a hedge when empty)."""
    paraphrased: tuple[str, ...] = ()
    """Correct answers worded so that the key's answer, aliases, patterns and number miss them."""
    key_mentioning: tuple[str, ...] = ()
    """Wrong answers that mention the key ("not 36 but 40"), so that a string matcher passes them."""


@dataclass(frozen=True)
class SimulatedAnswer:
    """One simulated line of ``predictions.jsonl``, minus its question id and round."""

    response: str
    """Raw response text."""
    choice_order: tuple[str, ...] | None
    """Canonical letters in the order shown (MC with shuffled options), else ``None``."""
    recorded: dict[str, int] | None
    """``{"judge": score}`` for open questions, else ``None``."""


def simulate_answer(
    question: Mapping[str, Any],
    outcome: Outcome,
    *,
    rng: np.random.Generator,
    styles: Sequence[str] = MC_STYLES,
    shuffle: bool = False,
    texts: AnswerTexts = AnswerTexts(),
) -> SimulatedAnswer:
    """Write a response to ``question`` that graders will score as ``outcome``.

    Parameters
    ----------
    question : mapping
        One row of ``questions.jsonl``.
    outcome : Outcome
        The verdicts the response must produce.
    rng : numpy.random.Generator
        Source of randomness for wording, style and judge score.
    styles : sequence of str
        Multiple-choice answer styles to draw from (see ``MC_STYLES``).
    shuffle : bool
        Show multiple-choice options in a random order (recorded in ``choice_order``).
    texts : AnswerTexts
        Prepared final answers for an open question; a ``misleading``
        outcome needs its paraphrases or key-mentioning answers.

    Examples
    --------
    >>> q = {"id": "q1", "category": "facts", "type": "multiple_choice",
    ...      "choices": ["Paris", "Rome"], "correct_choice": "A",
    ...      "answer_key": {"answer": "Paris", "aliases": []}}
    >>> a = simulate_answer(q, Outcome(True, True), rng=np.random.default_rng(0), styles=["json"])
    >>> a.response.splitlines()[-1]
    '{"ANSWER": "A"}'
    """
    if question["type"] == "multiple_choice":
        return _multiple_choice(question, outcome, rng=rng, styles=styles, shuffle=shuffle)
    return _open(question, outcome, rng=rng, texts=texts)


def _multiple_choice(
    question: Mapping[str, Any], outcome: Outcome, *, rng: np.random.Generator, styles: Sequence[str], shuffle: bool
) -> SimulatedAnswer:
    """Commit to a letter and a final answer that agree with the outcome."""
    letters = string.ascii_uppercase[: len(question["choices"])]
    order = tuple(rng.permutation(list(letters)).tolist()) if shuffle else tuple(letters)
    if outcome.malformed:
        text = _malformed(question, rng, truncated_tail='{"ANSWER": "')
        return SimulatedAnswer(text, order if shuffle else None, None)
    correct = question["correct_choice"]
    wrong = [c for c in letters if c != correct]
    chosen = correct if outcome.traditional else _pick(rng, wrong)
    if outcome.answer_key:
        final = key_statement(question, rng)
    else:
        final = _mc_wrong_statement(question, chosen, rng)
    shown = letters[order.index(chosen)]
    text = _mc_layout(_explanation(question, rng), _letter_line(shown, _pick(rng, styles)), final)
    return SimulatedAnswer(text, order if shuffle else None, None)


def _mc_wrong_statement(question: Mapping[str, Any], chosen: str, rng: np.random.Generator) -> str:
    """Name a wrong option (the chosen one when it is wrong) or hedge."""
    letters = string.ascii_uppercase[: len(question["choices"])]
    correct = question["correct_choice"]
    if rng.random() < 0.25:
        return _pick(rng, HEDGES)
    if chosen != correct:
        return question["choices"][letters.index(chosen)]
    others = [c for c in letters if c != correct]
    return question["choices"][letters.index(_pick(rng, others))]


def _letter_line(letter: str, style: str) -> str:
    """Write the committed letter in one of the styles real models use."""
    lines = {
        "json": json.dumps({"ANSWER": letter}),
        "json_fenced": "```json\n" + json.dumps({"ANSWER": letter.lower()}) + "\n```",
        "answer_colon": f"Answer: {letter}",
        "bold": f"**{letter}**",
        "parenthesized": f"({letter})",
        "sentence": f"The answer is {letter}.",
    }
    return lines[style]


def _mc_layout(explanation: str, letter_line: str, final: str) -> str:
    """JSON answers come last, as prompted; other styles precede the final sentence."""
    if letter_line.startswith(("{", "```")):
        return f"{explanation}\nFinal answer: {final}\n{letter_line}"
    return f"{explanation}\n{letter_line}\nFinal answer: {final}"


def _open(
    question: Mapping[str, Any], outcome: Outcome, *, rng: np.random.Generator, texts: AnswerTexts
) -> SimulatedAnswer:
    """State the final answer, marked or in prose, and record the lenient judge's score."""
    if outcome.malformed:
        text = _malformed(question, rng, truncated_tail="Final answer:")
        return SimulatedAnswer(text, None, {JUDGE_FIELD: outcome.judge_score})
    final = _open_final(question, outcome, rng, texts)
    closing = f"Final answer: {final}" if outcome.marked else _prose(final, rng)
    text = f"{_explanation(question, rng)}\n{closing}"
    return SimulatedAnswer(text, None, {JUDGE_FIELD: outcome.judge_score})


def _open_final(question: Mapping[str, Any], outcome: Outcome, rng: np.random.Generator, texts: AnswerTexts) -> str:
    """Pick the final answer: the key, a paraphrase, a key-mentioning or a plain wrong answer."""
    if outcome.answer_key:
        return _pick(rng, texts.paraphrased) if outcome.misleading else key_statement(question, rng)
    if outcome.misleading:
        return _pick(rng, texts.key_mentioning)
    return _pick(rng, list(texts.wrong) or list(HEDGES))


def _prose(final: str, rng: np.random.Generator) -> str:
    """Close an unmarked answer with a prose sentence (a hedge is prose already)."""
    return final if final in HEDGES else _pick(rng, PROSE).format(final)


def key_statement(question: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Return the key's answer (usually) or one of its aliases, as a model might phrase it."""
    key = question["answer_key"]
    aliases = list(key.get("aliases", []))
    if not aliases or rng.random() < 0.6:
        return key["answer"]
    return _pick(rng, aliases)


def judge_scores(passed: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw the lenient simulated judge's 0–100 score for each passing or failing answer."""
    passing = rng.choice(JUDGE_PASS_SCORES, p=JUDGE_PASS_WEIGHTS, size=len(passed))
    failing = rng.choice(JUDGE_FAIL_SCORES, p=JUDGE_FAIL_WEIGHTS, size=len(passed))
    return np.where(passed, passing, failing)


def expected_judge_score(pass_probability: float) -> float:
    """Return the judge's expected 0–100 score for a question passed with this probability.

    Examples
    --------
    >>> expected_judge_score(1.0), expected_judge_score(0.0)
    (94.0, 14.0)
    """
    passed = float(np.dot(JUDGE_PASS_SCORES, JUDGE_PASS_WEIGHTS))
    failed = float(np.dot(JUDGE_FAIL_SCORES, JUDGE_FAIL_WEIGHTS))
    return pass_probability * passed + (1 - pass_probability) * failed


def _malformed(question: Mapping[str, Any], rng: np.random.Generator, *, truncated_tail: str) -> str:
    """Write an empty, truncated or refused answer that no grader can pass."""
    kind = _pick(rng, MALFORMED_KINDS)
    if kind == "empty":
        return ""
    if kind == "refusal":
        return REFUSAL
    return f"{_explanation(question, rng)}\n{truncated_tail}"


def _explanation(question: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Pick a generic explanation line for the question's category."""
    return _pick(rng, EXPLANATIONS.get(question["category"], DEFAULT_EXPLANATIONS))


def _pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    """Choose one item uniformly (by index, so strings keep their Python type)."""
    return options[int(rng.integers(len(options)))]
