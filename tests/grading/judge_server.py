"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and the bench.

``ScriptedJudgeServer(script)`` serves ``POST /v1/chat/completions``; ``script``
maps the parsed request body (and the 0-based number of the request) to a
:class:`Reply`. Every request body is recorded, and the peak number of requests
in flight is tracked so tests can check bounded concurrency, and the time each
request arrived so they can check pacing. :func:`judge_process` runs one in a
child process, as a real judge would be, for the benches.
"""

from __future__ import annotations

import json
import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """What the server answers to one request."""

    content: str = "Verdict {nonce}: pass"
    """The reply; ``{nonce}`` is replaced with the request's nonce (:func:`nonce_of`), as a judge writes it."""
    status: int = 200
    delay_s: float = 0.0
    raw_body: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


Script = Callable[[dict[str, Any], int], Reply]


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # the default 5 drops connections when hundreds open at once


class ScriptedJudgeServer:
    """Run the scripted server in a daemon thread; use as a context manager."""

    def __init__(self, script: Script):
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.arrivals: list[float] = []
        """``time.monotonic()`` when each request arrived."""
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ScriptedJudgeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def enter_request(self, body: dict[str, Any], headers: dict[str, str]) -> int:
        with self._lock:
            number = len(self.requests)
            self.requests.append(body)
            self.arrivals.append(time.monotonic())
            self.headers.append(headers)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            return number

    def reset_peak(self) -> int:
        """Return the peak in flight so far and start counting it again from now."""
        with self._lock:
            peak, self.peak_in_flight = self.peak_in_flight, self.in_flight
            return peak

    def leave_request(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes

            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                number = owner.enter_request(body, dict(self.headers))
                self._nonce = nonce_of(body)
                try:
                    reply = owner.script(body, number) if self.path == "/v1/chat/completions" else Reply(status=404)
                    time.sleep(reply.delay_s)
                    self._send(reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    owner.leave_request()

            def _send(self, reply: Reply) -> None:
                payload = reply.raw_body
                if payload is None:
                    message = {"role": "assistant", "content": reply.content.replace("{nonce}", self._nonce)}
                    payload = json.dumps(
                        {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": message}]}
                    )
                data = payload.encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def nonce_of(body: dict[str, Any]) -> str:
    """The nonce a request's prompt asks the verdict line to carry, read as a judge reads it: from the prompt's
    last line ('"Verdict <nonce>: pass" or ...'); "" when the body holds no such prompt."""
    try:
        last = str(body["messages"][-1]["content"]).rstrip().splitlines()[-1]
    except (KeyError, IndexError, TypeError):
        return ""
    words = last.split()
    return words[1].rstrip(":") if len(words) > 1 and words[0] == '"Verdict' else ""


def always(content: str, delay_s: float = 0.0) -> Script:
    """Script that answers every request with the same content."""
    return lambda body, number: Reply(content=content, delay_s=delay_s)


def _serve(latency_s: float, connection) -> None:
    """Child process: serve "Verdict {nonce}: pass" after ``latency_s`` until told to stop; send back the counts."""
    with ScriptedJudgeServer(always("The answer agrees.\nVerdict {nonce}: pass", delay_s=latency_s)) as server:
        connection.send(server.base_url)
        while connection.recv() == "counts":
            connection.send((len(server.requests), server.reset_peak()))


@contextmanager
def judge_process(latency_s: float) -> Iterator[tuple[str, Callable[[], tuple[int, int]]]]:
    """Run the scripted judge in a child process; yield its base URL and a function returning
    (requests so far, peak in flight since the last call)."""
    ours, theirs = multiprocessing.Pipe()
    child = multiprocessing.get_context("fork").Process(target=_serve, args=(latency_s, theirs), daemon=True)
    child.start()

    def counts() -> tuple[int, int]:
        ours.send("counts")
        return ours.recv()

    try:
        yield ours.recv(), counts
    finally:
        ours.send("stop")
        child.join(timeout=5)
