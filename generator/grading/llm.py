"""``llm``: an answer-key grader that asks any OpenAI-compatible chat endpoint.

Works with Ollama, vLLM, llama.cpp's server and hosted APIs: it POSTs to
``<base_url>/chat/completions`` with temperature 0 and a fixed seed, fills a
versioned prompt template (a data file in ``generator/grading/prompts/``,
hashed into the config), and reads the reply with
:func:`dualboard.grading.judge_replies.parse_judge_reply`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import Any, ClassVar

import httpx

from dualboard.grading.errors import GraderConfigError, GraderUnavailableError
from dualboard.grading.judge_replies import parse_judge_reply
from dualboard.grading.verdict import Grader, Verdict
from dualboard.linear_regex import compile_linear

OPERATIONAL_OPTIONS = ("max_concurrency", "timeout_s", "max_retries", "backoff_s")
"""Options that change how verdicts are fetched, not what they are: left out of the config hash."""

DEFAULTS: dict[str, Any] = {
    "prompt": "judge_v1",
    "seed": 0,
    "max_tokens": 256,
    "api_key_env": None,
    "max_concurrency": 8,
    "timeout_s": 60.0,
    "max_retries": 3,
    "backoff_s": 1.0,
}
KEY_VARIABLE = compile_linear(r"DUALBOARD_JUDGE_[A-Z0-9_]{1,64}")
"""Names ``api_key_env`` may take. benchmark.yaml arrives by pull request: any other name
(``HF_TOKEN``, ``GITHUB_TOKEN``) would let it send a secret of the build to a URL it chooses."""
_PLACEHOLDER = compile_linear(r"\{(question|answer|aliases|reference|response)\}")
_PROMPT_NAME = compile_linear(r"[a-z0-9_]+")
_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


MAX_RETRY_AFTER_S = 60.0
"""Longest server-requested wait (``Retry-After``) honoured before a retry."""


def _retry_after(answer: httpx.Response) -> float:
    """Return the seconds a 429/503 reply asks us to wait (0 when it does not say)."""
    try:
        return min(max(float(answer.headers.get("Retry-After", 0)), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        return 0.0  # an HTTP date: fall back to our own backoff


def load_prompt(name: str) -> str:
    """Return the text of ``prompts/<name>.txt``; an unknown name lists the known ones."""
    folder = resources.files("dualboard.grading") / "prompts"
    path = folder / f"{name}.txt"
    if not _PROMPT_NAME.fullmatch(name) or not path.is_file():
        known = sorted(p.name.removesuffix(".txt") for p in folder.iterdir() if p.name.endswith(".txt"))
        raise GraderConfigError(
            f"llm grader: unknown prompt {name!r} — use one of {known} (files in generator/grading/prompts/)"
        )
    return path.read_text(encoding="utf-8")


def fill_prompt(template: str, question: dict[str, Any], response: str) -> str:
    """Fill the template's placeholders in one pass (so a response cannot inject one)."""
    key = question.get("answer_key") or {}
    values = {
        "question": str(question.get("prompt", "")),
        "answer": str(key.get("answer", "")),
        "aliases": ", ".join(map(str, key.get("aliases") or [])),
        "reference": str(key.get("reference") or key.get("answer", "")),
        "response": response,
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _check_options(options: dict[str, Any]) -> None:
    for required in ("base_url", "model"):
        if not isinstance(options.get(required), str) or not options[required]:
            raise GraderConfigError(
                f"llm grader needs options.{required} — write e.g. "
                "{name: llm, options: {base_url: 'http://localhost:11434/v1', model: 'llama3.1:8b', api_key_env: DUALBOARD_JUDGE_KEY}}"
            )
    variable = options.get("api_key_env")
    if variable is not None and not (isinstance(variable, str) and KEY_VARIABLE.fullmatch(variable)):
        raise GraderConfigError(
            f"llm grader: api_key_env {str(variable)[:80]!r} is not allowed — name a variable that starts with "
            "DUALBOARD_JUDGE_ (e.g. DUALBOARD_JUDGE_KEY) and export the judge's key in it; other names could "
            "hand the build's own secrets to the endpoint"
        )
    if not isinstance(options["max_concurrency"], int) or options["max_concurrency"] < 1:
        raise GraderConfigError(
            f"llm grader: max_concurrency must be an integer ≥ 1, got {options['max_concurrency']!r}"
        )


@dataclass(frozen=True)
class LlmGrader(Grader):
    """Ask an OpenAI-compatible judge whether the answer agrees with the key.

    Options: ``base_url`` and ``model`` (required); ``api_key_env`` (name of the
    environment variable holding the key, ``DUALBOARD_JUDGE_…``; never the key itself.
    The key goes to ``base_url``, which a pull request can change in
    benchmark.yaml: export a judge key only for builds of reviewed main); ``prompt``
    (template name, default ``judge_v1``); ``seed`` (0); ``max_tokens`` (256);
    and, left out of the config hash, ``max_concurrency`` (8), ``timeout_s``
    (60), ``max_retries`` (3) and ``backoff_s`` (1, doubled per retry; a
    longer ``Retry-After`` from the server is honoured, up to 60 s).

    Empty responses fail without a request. 429/5xx replies and timeouts are
    retried with backoff; if they persist the answer gets a transient no-verdict
    (not cached, so the next build asks again). An endpoint that cannot be
    reached, or that rejects the request (4xx), stops grading with a clear error.
    """

    name: ClassVar[str] = "llm"
    version: ClassVar[str] = "1"
    default_role: ClassVar[str] = "answer_key"

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

    def request_body(self, question: dict[str, Any], response: str) -> dict[str, Any]:
        """Return the JSON body sent for one answer."""
        return {
            "model": self.options["model"],
            "messages": [{"role": "user", "content": fill_prompt(self.template, question, response)}],
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
                f"llm grader: environment variable {variable} (options.api_key_env) is not set — export it with the API key"
            )
        return {"Authorization": f"Bearer {key}"}

    def _client(self) -> httpx.Client:
        limit = self.options["max_concurrency"]
        return httpx.Client(
            base_url=self.options["base_url"].rstrip("/") + "/",
            timeout=httpx.Timeout(float(self.options["timeout_s"])),
            limits=httpx.Limits(max_connections=limit, max_keepalive_connections=limit),
            headers=self._headers(),
        )

    def grade(self, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        return self.grade_many([(question, prediction)])[0]

    def grade_many(self, items: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> list[Verdict]:
        """Grade answers concurrently (at most ``max_concurrency`` requests in flight)."""
        with self._client() as client, ThreadPoolExecutor(self.options["max_concurrency"]) as pool:
            return list(pool.map(lambda item: self._grade_one(client, *item), items))

    def _grade_one(self, client: httpx.Client, question: dict[str, Any], prediction: dict[str, Any]) -> Verdict:
        response = str(prediction.get("response") or "")
        if not response.strip():
            return Verdict(0.0, "none", "empty response (not sent to the judge)")
        reply = self._post(client, self.request_body(question, response))
        if isinstance(reply, Verdict):
            return reply
        score, parse, detail = parse_judge_reply(reply)
        return Verdict(score, parse, detail[:300])

    def _post(self, client: httpx.Client, body: dict[str, Any]) -> str | Verdict:
        """POST one request with retries; return the reply text or a transient verdict."""
        problem, wait = "", 0.0
        for attempt in range(int(self.options["max_retries"]) + 1):
            if attempt:
                time.sleep(max(wait, float(self.options["backoff_s"]) * 2 ** (attempt - 1)))
            try:
                answer = client.post("chat/completions", json=body)
            except httpx.TransportError as error:
                problem = self._transport_problem(error)
                continue
            if answer.status_code in _RETRY_STATUS:
                problem, wait = f"HTTP {answer.status_code}", _retry_after(answer)
                continue
            return self._reply_text(answer)
        return Verdict(None, "none", f"no reply: {problem} after {attempt + 1} tries", transient=True)

    def _transport_problem(self, error: httpx.TransportError) -> str:
        if isinstance(error, httpx.TimeoutException):
            return f"timeout after {self.options['timeout_s']} s"
        if isinstance(error, httpx.ConnectError | httpx.UnsupportedProtocol):
            raise GraderUnavailableError(
                f"llm grader: cannot reach {self.options['base_url']} ({error}) — start the server "
                "(e.g. `ollama serve`, `vllm serve MODEL`) or fix options.base_url in benchmark.yaml"
            ) from error
        return f"transport error {type(error).__name__}"

    def _reply_text(self, answer: httpx.Response) -> str:
        if answer.status_code >= 400:
            raise GraderUnavailableError(
                f"llm grader: {self.options['base_url']} answered HTTP {answer.status_code}: {answer.text[:200]!r} — "
                "check options.model, the API key variable and the base URL (it should end in /v1)"
            )
        try:
            return str(answer.json()["choices"][0]["message"]["content"] or "")
        except (ValueError, KeyError, IndexError, TypeError):
            return ""
