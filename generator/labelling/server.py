"""The labelling page's server, for ``dualboard label``: loopback only, one session token, same origin only.

Every request must name this server in its Host header (a page from another site that rebinds its DNS name
to 127.0.0.1 sends its own name), and every API request must carry the session token in a header, which a
page of another origin cannot add without a CORS preflight this server never answers. A request with an
Origin header must come from this server's own origin. The page itself is served only with the token in
its URL. Each connection has its own thread and a time limit, so an idle or slow client holds up no one;
the session itself is used by one request at a time, so two labels never interleave in the file.
"""

from __future__ import annotations

import hmac
import http.server
import json
import secrets
import sys
import threading
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from dualboard.errors import DualboardError
from dualboard.labelling.session import BadLabelError, Session

TOKEN_HEADER = "X-Dualboard-Token"
MAX_BODY = 4096
"""The largest request body read: a label is a few hundred bytes."""
STATIC = {
    "/label.js": "application/javascript; charset=utf-8",
    "/label.css": "text/css; charset=utf-8",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class LabelServer(http.server.ThreadingHTTPServer):
    """Serve one :class:`Session` on 127.0.0.1 (``port`` 0: any free port)."""

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, session: Session, port: int = 0, token: str | None = None) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.session = session
        self.token = token or secrets.token_urlsafe(24)
        self.lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Say nothing of a client that went silent or away (the terminal is the labeller's); report the rest."""
        if not isinstance(sys.exception(), TimeoutError | ConnectionError):
            super().handle_error(request, client_address)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def url(self) -> str:
        """The page's address, token included: whoever has it can label as this labeller."""
        return f"{self.origin}/?token={self.token}"

    def hosts(self) -> set[str]:
        port = self.server_address[1]
        return {f"127.0.0.1:{port}", f"localhost:{port}"}


class _Handler(http.server.BaseHTTPRequestHandler):
    server: LabelServer
    timeout = 15  # seconds a connection may stay silent: a stalled client is dropped

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class names it so)
        """Quiet: the terminal is the labeller's, and each request would print a line."""

    def do_GET(self) -> None:
        if not self._trusted():
            return
        url = urlsplit(self.path)
        if url.path == "/":
            given = parse_qs(url.query).get("token", [""])[0]
            if not hmac.compare_digest(given.encode(), self.server.token.encode()):
                return self._refuse(403, "open the address `dualboard label` printed, token included")
            return self._send(200, "text/html; charset=utf-8", _asset("label.html"))
        if url.path in STATIC:
            return self._send(200, STATIC[url.path], _asset(url.path.lstrip("/")))
        if url.path == "/api/next":
            return self._answer(lambda body: self._state(), None) if self._authorised() else None
        if url.path.startswith("/api/"):
            return self._refuse(405, "this action takes a POST")
        return self._refuse(404, "no such page")

    def do_POST(self) -> None:
        if not (self._trusted() and self._authorised()):
            return
        body = self._body()
        if body is None:
            return
        action = ACTIONS.get(urlsplit(self.path).path)
        if action is None:
            return self._refuse(404, "no such action")
        self._answer(lambda given: action(self, given), body)

    def _answer(self, act: Any, body: dict[str, Any] | None) -> None:
        """Run one action on the session, alone, and answer whatever happens: a refusal names the fix."""
        try:
            with self.server.lock:
                reply = act(body)
        except (KeyError, TypeError) as error:
            return self._refuse(400, f"the request lacks {error}")
        except BadLabelError as error:
            return self._refuse(400, str(error))
        except DualboardError as error:
            return self._refuse(409, str(error))
        except Exception as error:  # noqa: BLE001 (the page must hear of it; the labels written are safe)
            return self._refuse(500, f"{type(error).__name__}: {error}"[:500])
        self._json(reply)

    def _label(self, body: dict[str, Any]) -> dict[str, Any]:
        revealed = self.server.session.label(str(body["question_id"]), str(body["response_sha256"]), body["label"])
        return self._state() | {"revealed": revealed}

    def _skip(self, body: dict[str, Any]) -> dict[str, Any]:
        self.server.session.skip(str(body["question_id"]), str(body["response_sha256"]))
        return self._state()

    def _undo(self, body: dict[str, Any]) -> dict[str, Any]:
        back = self.server.session.undo()
        return self._state() | ({"item": back} if back else {}) | {"undone": back is not None}

    def _state(self) -> dict[str, Any]:
        session = self.server.session
        labels = session.labels()  # read once for the queue and the figures
        return {"item": session.next(labels), "progress": session.progress(labels), "labeller": session.labeller}

    def _trusted(self) -> bool:
        """Refuse another Host (DNS rebinding) and another Origin (a page of another site)."""
        if self.headers.get("Host", "") not in self.server.hosts():
            self._refuse(421, "wrong Host: open the address `dualboard label` printed")
            return False
        origin = self.headers.get("Origin")
        if origin is not None and origin not in {f"http://{h}" for h in self.server.hosts()}:
            self._refuse(403, "requests from another origin are refused")
            return False
        return True

    def _authorised(self) -> bool:
        given = self.headers.get(TOKEN_HEADER, "")
        if hmac.compare_digest(given.encode(), self.server.token.encode()):
            return True
        self._refuse(403, "missing or wrong session token")
        return False

    def _body(self) -> dict[str, Any] | None:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self._refuse(413, f"a request body is at most {MAX_BODY} bytes")
            return None
        try:
            body = json.loads(self.rfile.read(length) or b"{}", parse_constant=_refuse_constant)
        except (ValueError, UnicodeDecodeError):
            body = None
        except TimeoutError:
            self._refuse(408, "the body did not arrive")
            return None
        if not isinstance(body, dict):
            self._refuse(400, "the body must be a JSON object")
            return None
        return body

    def _json(self, value: Any) -> None:
        self._send(200, "application/json", json.dumps(value, allow_nan=False).encode("utf-8"))

    def _refuse(self, status: int, message: str) -> None:
        self._send(status, "application/json", json.dumps({"error": message}).encode("utf-8"))

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


ACTIONS = {"/api/label": _Handler._label, "/api/skip": _Handler._skip, "/api/undo": _Handler._undo}


def _refuse_constant(name: str) -> float:
    """JSON's NaN and Infinity are no label: refuse them while parsing."""
    raise ValueError(f"{name} is not JSON")


def _asset(name: str) -> bytes:
    return resources.files("dualboard.labelling").joinpath("page", name).read_bytes()
