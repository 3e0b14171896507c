"""Serve a built site on this machine, for ``dualboard serve``."""

from __future__ import annotations

import functools
import http.server
import socketserver
from pathlib import Path


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
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site_dir))
        super().__init__(("127.0.0.1", port), handler)

    @property
    def url(self) -> str:
        """The address the site is served at."""
        return f"http://127.0.0.1:{self.server_address[1]}/"
