"""The HTTP side of the ``llm`` grader: one chat request with retries, paced and bounded.

:class:`JudgeClient` POSTs chat bodies to ``<base_url>/chat/completions`` of an
OpenAI-compatible server (vLLM, Ollama, llama.cpp, a hosted API, or a cluster
of replicas behind one address) over asyncio and aiohttp: one thread holds
hundreds of requests in flight for a fraction of a millisecond of CPU each,
where a thread per request spends more on switching than on HTTP.
:func:`JudgeClient.map` runs a fixed number of workers that pull answers from
one iterator, so no more than ``max_concurrency`` requests are ever in flight
and nothing queues in memory beyond them. A :class:`RequestPacer` shared by the
workers keeps to ``requests_per_minute``. It knows nothing about verdicts:
:mod:`dualboard.grading.llm` builds the bodies and reads the replies.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import aiohttp

from dualboard.grading.errors import GraderUnavailableError

MAX_RETRY_AFTER_S = 60.0
"""Longest server-requested wait (``Retry-After``) honoured before a retry."""
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
"""Replies that say "try again later": retried with backoff, like timeouts and dropped connections."""

Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass(frozen=True)
class NoReply:
    """The judge gave no usable reply after every retry (the next build asks again)."""

    problem: str


class RequestPacer:
    """Start requests no closer than ``60 / per_minute`` seconds apart (None: no limit).

    A token bucket holding one token, shared by every worker of one event
    loop: in any minute at most ``per_minute`` requests start, retries
    included, however many are in flight.

    Examples
    --------
    >>> import asyncio
    >>> async def starts(pacer, n):
    ...     loop = asyncio.get_running_loop()
    ...     begin, out = loop.time(), []
    ...     for _ in range(n):
    ...         await pacer.wait()
    ...         out.append(loop.time() - begin)
    ...     return out
    >>> times = asyncio.run(starts(RequestPacer(600), 4))  # 10 a second: the k-th starts at k × 0.1 s or later
    >>> [t > k * 0.1 - 0.001 for k, t in enumerate(times)]
    [True, True, True, True]
    >>> max(asyncio.run(starts(RequestPacer(None), 4))) < 0.05
    True
    """

    def __init__(self, per_minute: float | None):
        self._interval = 60.0 / per_minute if per_minute else 0.0
        self._next = float("-inf")

    async def wait(self) -> None:
        """Return when this request may start (workers that wait line up one interval apart)."""
        if not self._interval:
            return
        now = asyncio.get_running_loop().time()
        start = max(now, self._next)
        self._next = start + self._interval  # taken before sleeping: the next caller lines up behind
        if start > now:
            await asyncio.sleep(start - now)


def env_proxy(url: str) -> str | None:
    """The proxy that ``HTTP_PROXY``/``HTTPS_PROXY`` name for ``url`` (None under ``NO_PROXY``, or unset).

    Read once per grade rather than per request (aiohttp's ``trust_env`` looks it
    up for every request in a thread, and would also send ``~/.netrc``
    credentials to whatever ``base_url`` a pull request chose).
    """
    parts = urlsplit(url)
    return None if proxy_bypass(parts.hostname or "") else getproxies().get(parts.scheme)


def retry_after(headers: Any) -> float:
    """Return the seconds a 429/503 reply asks us to wait (0 when it does not say).

    >>> retry_after({"Retry-After": "2.5"}), retry_after({}), retry_after({"Retry-After": "9999"})
    (2.5, 0.0, 60.0)
    """
    try:
        return min(max(float(headers.get("Retry-After", 0)), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        return 0.0  # an HTTP date: fall back to our own backoff


class JudgeClient:
    """Send chat bodies to one OpenAI-compatible endpoint with the ``llm`` grader's operational options.

    ``options`` are the grader's, already checked: ``base_url``,
    ``max_concurrency``, ``requests_per_minute``, ``timeout_s``,
    ``max_retries`` and ``backoff_s``. ``headers`` go with every request.
    """

    def __init__(self, options: dict[str, Any], headers: dict[str, str]):
        self._options = options
        self._url = options["base_url"].rstrip("/") + "/chat/completions"
        self._headers = headers
        self._proxy = env_proxy(self._url)

    def map(
        self,
        items: Iterable[Item],
        handle: Callable[[Callable[[dict[str, Any]], Awaitable[str | NoReply]], Item], Awaitable[Result]],
    ) -> list[Result]:
        """Return ``handle(ask, item)`` for every item, in input order, at most ``max_concurrency`` at a time.

        ``ask(body)`` posts one body and returns the reply's text, or
        :class:`NoReply` once retries are spent. The first
        :class:`GraderUnavailableError` stops every worker and is raised.
        """
        return asyncio.run(self._map(items, handle))

    async def _map(self, items: Iterable[Item], handle: Callable[..., Awaitable[Result]]) -> list[Result]:
        results: dict[int, Result] = {}
        pending = enumerate(items)  # one iterator for all workers: work is pulled, never queued
        pacer = RequestPacer(self._options["requests_per_minute"])
        limit = int(self._options["max_concurrency"])
        connector = aiohttp.TCPConnector(limit=limit, limit_per_host=0)
        timeout = aiohttp.ClientTimeout(total=float(self._options["timeout_s"]))
        async with aiohttp.ClientSession(connector=connector, timeout=timeout, headers=self._headers) as session:

            async def ask(body: dict[str, Any]) -> str | NoReply:
                return await self._post(session, pacer, body)

            async def worker() -> None:
                for index, item in pending:
                    results[index] = await handle(ask, item)

            try:
                async with asyncio.TaskGroup() as group:
                    for _ in range(limit):
                        group.create_task(worker())
            except* GraderUnavailableError as failures:
                raise failures.exceptions[0] from None
        return [results[index] for index in range(len(results))]

    async def _post(self, session: aiohttp.ClientSession, pacer: RequestPacer, body: dict[str, Any]) -> str | NoReply:
        """POST one body with retries; return the reply text or :class:`NoReply`."""
        problem, wait, attempts = "", 0.0, int(self._options["max_retries"]) + 1
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(max(wait, float(self._options["backoff_s"]) * 2 ** (attempt - 1)))
            await pacer.wait()
            try:
                async with session.post(self._url, json=body, proxy=self._proxy) as answer:
                    if answer.status in RETRY_STATUS:
                        problem, wait = f"HTTP {answer.status}", retry_after(answer.headers)
                        continue
                    return self._reply_text(answer.status, await answer.read())
            except TimeoutError:
                problem, wait = f"timeout after {self._options['timeout_s']} s", 0.0
            except aiohttp.ClientConnectorError as error:
                problem, wait = f"cannot connect ({error.os_error or error})", 0.0
            except aiohttp.ClientError as error:
                problem, wait = f"transport error {type(error).__name__}", 0.0
        if problem.startswith("cannot connect"):
            raise GraderUnavailableError(
                f"llm grader: cannot reach {self._options['base_url']} ({problem}, {attempts} tries) — start the "
                "server (e.g. `ollama serve`, `vllm serve MODEL`) or fix options.base_url in benchmark.yaml"
            )
        return NoReply(f"{problem} after {attempts} tries")

    def _reply_text(self, status: int, payload: bytes) -> str:
        """The message content of a chat completion ("" when the body is not one)."""
        if status >= 400:
            text = payload[:400].decode("utf-8", errors="replace")
            raise GraderUnavailableError(
                f"llm grader: {self._options['base_url']} answered HTTP {status}: {text[:200]!r} — "
                "check options.model, the API key variable and the base URL (it should end in /v1)"
            )
        try:
            return str(json.loads(payload)["choices"][0]["message"]["content"] or "")
        except (ValueError, KeyError, IndexError, TypeError):
            return ""
