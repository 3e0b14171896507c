"""``llm``: an answer-key grader that asks any OpenAI-compatible chat endpoint.

Works with Ollama, vLLM, llama.cpp's server and hosted APIs: it POSTs to
``<base_url>/chat/completions`` with temperature 0 and a fixed seed, fills a
versioned prompt template (a data file in ``generator/grading/prompts/``,
hashed into the config) that puts the response between delimiters carrying a
fresh random nonce (:func:`new_nonce`), and reads the verdict from the reply's
last line, which must carry that nonce
(:func:`dualboard.grading.judge_replies.parse_judge_reply`). How requests go
out (how many in flight, how often, retries) is
:mod:`dualboard.grading.judge_client`'s job.
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar

from dualboard.grading.errors import GraderConfigError, GraderUnavailableError
from dualboard.grading.judge_replies import parse_judge_reply
from dualboard.grading.verdict import Grader, Verdict
from dualboard.linear_regex import compile_linear

if TYPE_CHECKING:  # aiohttp is a fifth of a second of imports in every grading process, used by a judge only
    from dualboard.grading.judge_client import NoReply

OPERATIONAL_OPTIONS = ("max_concurrency", "requests_per_minute", "timeout_s", "max_retries", "backoff_s")
"""Options that change how verdicts are fetched, not what they are: left out of the config hash."""

DEFAULTS: dict[str, Any] = {
    "prompt": "judge_v2",
    "seed": 0,
    "max_tokens": 256,
    "api_key_env": None,
    "max_concurrency": 8,
    "requests_per_minute": None,
    "timeout_s": 60.0,
    "max_retries": 3,
    "backoff_s": 1.0,
}
MAX_CONCURRENCY = 1024
"""Most requests one grade holds in flight (each is an open connection: a file descriptor)."""
KEY_VARIABLE = compile_linear(r"DUALBOARD_JUDGE_[A-Z0-9_]{1,64}")
"""Names ``api_key_env`` may take. benchmark.yaml arrives by pull request: any other name
(``HF_TOKEN``, ``GITHUB_TOKEN``) would let it send a secret of the build to a URL it chooses."""
_PLACEHOLDER = compile_linear(r"\{(question|answer|aliases|reference|response|nonce)\}")
NONCE_BYTES = 12
"""Random bytes of a call's nonce (:func:`new_nonce`): 96 bits, never guessed."""
_PROMPT_NAME = compile_linear(r"[a-z0-9_]+")
_EXAMPLE = (
    "{name: llm, options: {base_url: 'http://localhost:11434/v1', model: 'llama3.1:8b', "
    "api_key_env: DUALBOARD_JUDGE_KEY}}"
)


def new_nonce() -> str:
    """A fresh nonce for one judge call: random hex, drawn when the request is built.

    The answer's author cannot guess it, so cannot close the answer's block
    early or write the verdict line the judge must end on. It is random, not
    derived from the content: anything derived without a secret (a hash of key
    and response) could be computed by that author. Verdicts stay reproducible:
    they are cached by content and grader configuration, where the nonce has
    no part, and the detail records the verdict line with its nonce.
    """
    return secrets.token_hex(NONCE_BYTES)


def load_prompt(name: str) -> str:
    """Return the text of ``prompts/<name>.txt``; an unknown name lists the known ones."""
    folder = resources.files("dualboard.grading") / "prompts"
    path = folder / f"{name}.txt"
    if not _PROMPT_NAME.fullmatch(name) or not path.is_file():
        known = sorted(p.name.removesuffix(".txt") for p in folder.iterdir() if p.name.endswith(".txt"))
        raise GraderConfigError(
            f"llm grader: unknown prompt {name[:80]!r} — use one of {known} (files in generator/grading/prompts/)"
        )
    template = path.read_text(encoding="utf-8")
    if template.count("{response}") != 1 or template.count("{nonce}") < 3:
        raise GraderConfigError(
            f"llm grader: prompt {name!r} must paste {{response}} once, between delimiter lines that carry "
            "{nonce}, and ask for a last line 'Verdict {nonce}: pass|fail' (see judge_v2.txt)"
        )
    return template


def fill_prompt(template: str, question: dict[str, Any], response: str, nonce: str) -> str:
    """Fill the template's placeholders in one pass (so a response cannot inject one)."""
    key = question.get("answer_key") or {}
    values = {
        "question": str(question.get("prompt", "")),
        "answer": str(key.get("answer", "")),
        "aliases": ", ".join(map(str, key.get("aliases") or [])),
        "reference": str(key.get("reference") or key.get("answer", "")),
        "response": response,
        "nonce": nonce,
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _integer(value: Any, low: int, high: int | None = None) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low and (high is None or value <= high)


def _number(value: Any, low: float, *, above: bool = False) -> bool:
    """A finite int or float, at least ``low`` (strictly above it when ``above``)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return False
    return value > low if above else value >= low


_RULES: dict[str, tuple[Callable[[Any], bool], str, str]] = {
    "prompt": (lambda v: isinstance(v, str), "the name of a prompt template", "prompt: judge_v2"),
    "seed": (lambda v: _integer(v, 0), "an integer ≥ 0", "seed: 0"),
    "max_tokens": (lambda v: _integer(v, 1), "an integer ≥ 1", "max_tokens: 256"),
    "max_concurrency": (
        lambda v: _integer(v, 1, MAX_CONCURRENCY),
        f"an integer from 1 to {MAX_CONCURRENCY}",
        "max_concurrency: 64 (what the server runs at once: e.g. vLLM's --max-num-seqs × replicas)",
    ),
    "requests_per_minute": (
        lambda v: v is None or _number(v, 0, above=True),
        "a number > 0, or null for no limit",
        "requests_per_minute: 600 (the API's rate limit)",
    ),
    "timeout_s": (lambda v: _number(v, 0, above=True), "a number of seconds > 0", "timeout_s: 60"),
    "max_retries": (lambda v: _integer(v, 0, 20), "an integer from 0 to 20", "max_retries: 3"),
    "backoff_s": (lambda v: _number(v, 0), "a number of seconds ≥ 0", "backoff_s: 1"),
}
"""Each numeric option: its test, what it must be, and an example line for benchmark.yaml."""


def _check_options(options: dict[str, Any]) -> None:
    """Refuse options the grader cannot use, naming the option and the fix."""
    unknown = sorted(set(options) - set(DEFAULTS) - {"base_url", "model"})
    if unknown:
        raise GraderConfigError(
            f"llm grader: unknown option(s) {', '.join(repr(str(k)[:40]) for k in unknown[:5])} — "
            f"use only {', '.join(['base_url', 'model', *DEFAULTS])} (check the spelling)"
        )
    for required in ("base_url", "model"):
        if not isinstance(options.get(required), str) or not options[required]:
            raise GraderConfigError(f"llm grader needs options.{required} — write e.g. {_EXAMPLE}")
    if not options["base_url"].startswith(("http://", "https://")):
        raise GraderConfigError(
            f"llm grader: options.base_url {options['base_url'][:80]!r} is not an http(s) URL — write the "
            "server's OpenAI-compatible address, e.g. http://localhost:8000/v1"
        )
    variable = options.get("api_key_env")
    if variable is not None and not (isinstance(variable, str) and KEY_VARIABLE.fullmatch(variable)):
        raise GraderConfigError(
            f"llm grader: api_key_env {str(variable)[:80]!r} is not allowed — name a variable that starts with "
            "DUALBOARD_JUDGE_ (e.g. DUALBOARD_JUDGE_KEY) and export the judge's key in it; other names could "
            "hand the build's own secrets to the endpoint"
        )
    for name, (valid, must_be, example) in _RULES.items():
        if not valid(options[name]):
            raise GraderConfigError(
                f"llm grader: options.{name} must be {must_be}, got {repr(options[name])[:40]} — write e.g. {example}"
            )


@dataclass(frozen=True)
class LlmGrader(Grader):
    """Ask an OpenAI-compatible judge whether the answer agrees with the key.

    Options: ``base_url`` and ``model`` (required); ``api_key_env`` (name of the
    environment variable holding the key, ``DUALBOARD_JUDGE_…``; never the key itself.
    The key goes to ``base_url``, which a pull request can change in
    benchmark.yaml: export a judge key only for builds of reviewed main); ``prompt``
    (template name, default ``judge_v2``); ``seed`` (0); ``max_tokens`` (256);
    and, left out of the config hash, ``max_concurrency`` (8 requests in flight
    at most), ``requests_per_minute`` (no limit; retries count), ``timeout_s`` (60),
    ``max_retries`` (3) and ``backoff_s`` (1, doubled per retry; a longer
    ``Retry-After`` from the server is honoured, up to 60 s).

    The response reaches the judge between delimiter lines that carry a random
    nonce drawn for the call (:func:`new_nonce`), and only a reply whose last
    non-empty line is ``Verdict <nonce>: pass`` or ``... fail`` gives a verdict;
    any other reply is no verdict (:func:`~dualboard.grading.judge_replies.parse_judge_reply`).

    Empty responses fail without a request. 429/5xx replies, timeouts and
    dropped connections are retried with backoff; if they persist the answer
    gets a transient no-verdict (not cached, so the next build asks again). An
    endpoint that cannot be reached after the retries, or that rejects the
    request (4xx), stops grading with a clear error.
    """

    name: ClassVar[str] = "llm"
    version: ClassVar[str] = "2"
    default_role: ClassVar[str] = "answer_key"
    cpu_bound: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", {**DEFAULTS, **self.options})
        _check_options(self.options)
        object.__setattr__(self, "_template", load_prompt(self.options["prompt"]))

    @property
    def template(self) -> str:
        """The prompt template text (part of the config hash)."""
        return self.__dict__["_template"]

    def config_material(self) -> dict[str, Any]:
        options = {k: v for k, v in self.options.items() if k not in OPERATIONAL_OPTIONS}
        return {"name": self.name, "version": self.version, "options": options, "prompt_template": self.template}

    @property
    def batch_size(self) -> int:  # type: ignore[override]
        """Sixteen waves of ``max_concurrency`` requests, at least the default: each ``grade_many`` call
        waits for its slowest reply, so a batch far larger than the concurrency keeps the judge busy."""
        return max(Grader.batch_size, 16 * self.options["max_concurrency"])

    def request_body(self, question: dict[str, Any], response: str, nonce: str) -> dict[str, Any]:
        """Return the JSON body sent for one answer, its block delimited by ``nonce``."""
        return {
            "model": self.options["model"],
            "messages": [{"role": "user", "content": fill_prompt(self.template, question, response, nonce)}],
            "temperature": 0,
            "seed": self.options["seed"],
            "max_tokens": self.options["max_tokens"],
        }

    def _headers(self) -> dict[str, str]:
        variable = self.options.get("api_key_env")
        if not variable:
            return {}
        key = os.environ.get(variable)
        if not key:
            raise GraderUnavailableError(
                f"llm grader: environment variable {variable} (options.api_key_env) is not set — "
                "export it with the API key"
            )
        return {"Authorization": f"Bearer {key}"}

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        return self.grade_many([(question, prediction)])[0]

    def grade_many(self, items: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> list[Verdict]:
        """Grade answers concurrently: at most ``max_concurrency`` requests in flight, and ``items`` (any
        iterable) drawn only as requests go out."""
        from dualboard.grading.judge_client import JudgeClient

        client = JudgeClient(self.options, self._headers())
        return client.map(items, lambda ask, item: self._grade_one(ask, *item))

    async def _grade_one(
        self,
        ask: Callable[[dict[str, Any]], Awaitable[str | NoReply]],
        question: dict[str, Any],
        prediction: dict[str, Any],
    ) -> Verdict:
        response = str(prediction.get("response") or "")
        if not response.strip():
            return Verdict(0.0, "none", "empty response (not sent to the judge)")
        from dualboard.grading.judge_client import NoReply

        nonce = new_nonce()
        reply = await ask(self.request_body(question, response, nonce))
        if isinstance(reply, NoReply):
            return Verdict(None, "none", f"no reply: {reply.problem}", transient=True)
        score, parse, detail = parse_judge_reply(reply, nonce)
        return Verdict(score, parse, detail[:300])
