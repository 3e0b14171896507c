"""Lighthouse scores of a built site's page types, served gzipped as GitHub Pages serves it.

Prints, per page type (home, leaderboard, question, run, graders, methodology, downloads): Lighthouse's
performance and accessibility scores (mobile preset), total blocking time, largest contentful paint and the
bytes transferred. The site is served on 127.0.0.1 by a small server that compresses HTML, scripts, styles and
JSON with gzip when the browser asks (``Accept-Encoding``), as GitHub Pages does; the data files (``.json.gz``)
go as they are.

Needs Lighthouse 12 and Chromium: ``npm i -E lighthouse@12.2.3`` in some folder, then::

    python bench/lighthouse.py --site site --lighthouse FOLDER/node_modules/.bin/lighthouse

(``CHROME_PATH`` names the browser; ``/usr/bin/chromium`` by default.)
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import subprocess
import tempfile
import threading
from pathlib import Path

PAGES = {
    "home": "",
    "leaderboard": "benchmarks/demo/",
    "question": "benchmarks/demo/questions/question/?id=demo-006",
    "run": "benchmarks/demo/runs/run/?id=aurora-lm-70b",
    "graders": "benchmarks/demo/graders/",
    "methodology": "methodology/",
    "downloads": "downloads/",
}
COMPRESSED = {".html", ".js", ".css", ".json", ".svg", ".xml", ".txt"}
"""What GitHub Pages sends gzip-compressed to a browser that accepts it."""


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, text types gzip-compressed when the request accepts gzip."""

    def log_message(self, *args) -> None:
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.is_file() and path.suffix in COMPRESSED):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return _Body(body)


class _Body:
    """What ``send_head`` returns: a file-like object ``copyfile`` reads."""

    def __init__(self, data: bytes) -> None:
        self.data, self.sent = data, False

    def read(self, _size: int = -1) -> bytes:
        if self.sent:
            return b""
        self.sent = True
        return self.data

    def close(self) -> None:
        pass


def audit(lighthouse: str, url: str, out: Path) -> dict:
    """Run Lighthouse (mobile preset, the default) on ``url``; return its report."""
    subprocess.run(
        [
            lighthouse,
            url,
            "--quiet",
            "--output=json",
            f"--output-path={out}",
            "--only-categories=performance,accessibility",
            "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
        ],
        check=True,
        env={**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", "/usr/bin/chromium")},
        timeout=300,
    )
    return json.loads(out.read_text("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, default=Path("site"), help="a built site (default: site)")
    parser.add_argument("--lighthouse", default="lighthouse", help="the lighthouse command")
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(GzipHandler, directory=str(args.site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    print("page          performance  accessibility  TBT ms  LCP s  transfer KB")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in PAGES.items():
            report = audit(args.lighthouse, base + path, Path(tmp) / f"{name}.json")
            audits, categories = report["audits"], report["categories"]
            print(
                f"{name:<13} {100 * categories['performance']['score']:>11.0f}"
                f"  {100 * categories['accessibility']['score']:>13.0f}"
                f"  {audits['total-blocking-time']['numericValue']:>6.0f}"
                f"  {audits['largest-contentful-paint']['numericValue'] / 1000:>5.1f}"
                f"  {audits['total-byte-weight']['numericValue'] / 1024:>11.0f}"
            )
    server.shutdown()


if __name__ == "__main__":
    main()
