"""Serve a built site on this machine, for ``dualboard serve``."""

from __future__ import annotations

import functools
import http.server
import socketserver
from pathlib import Path

NOT_FOUND_PAGE = "404.html"
"""The site's own page for an address it lacks (MkDocs writes it; GitHub Pages serves it the same way)."""


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the folder, and its own 404 page where a file is missing."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / NOT_FOUND_PAGE
        if code != 404 or not page.is_file():
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(404, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class SiteServer(socketserver.ThreadingTCPServer):
    """A threaded HTTP server of one folder, on 127.0.0.1 only.

    ``allow_reuse_address`` is set on this class, not on
    ``socketserver.ThreadingTCPServer``, so serving again right after Ctrl-C
    binds the port (no wait for TIME_WAIT) without changing every other
    server of the process.
    """

    allow_reuse_address = True
    daemon_threads = True  # a browser's open keep-alive connection must not hold up the stop

    def __init__(self, site_dir: Path, port: int) -> None:
        handler = functools.partial(_SiteHandler, directory=str(site_dir))
        super().__init__(("127.0.0.1", port), handler)

    @property
    def url(self) -> str:
        """The address the site is served at."""
        return f"http://127.0.0.1:{self.server_address[1]}/"
