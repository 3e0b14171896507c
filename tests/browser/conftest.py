"""Fixtures for the real-browser tests: built leaderboards served on 127.0.0.1 and headless Debian Chromium.

The browser is the system's (``/usr/bin/chromium`` with ``/usr/bin/chromedriver``,
installed with apt); a missing one skips these tests with the install command.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.browser.payloads import PAYLOADS
from tests.conftest import GIT_ENV, write_shared_probe

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_leaderboard(dest: Path, port: int) -> Path:
    """A private copy of the demo leaderboard whose mkdocs.yml says where it will be served."""
    for name in ("data", "submissions", "site_src"):
        shutil.copytree(REPO / name, dest / name)
    own = yaml.safe_load((REPO / "mkdocs.yml").read_text("utf-8")) or {}
    own["site_url"] = f"http://127.0.0.1:{port}/"
    (dest / "mkdocs.yml").write_text(yaml.safe_dump(own, allow_unicode=True), "utf-8")
    return dest


def dualboard(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "dualboard", *args], capture_output=True, text=True, cwd=cwd)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


class Server:
    """A static file server on 127.0.0.1 that records every request path."""

    def __init__(self, directory: Path, port: int):
        self.requests: list[str] = []
        log = self.requests

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean; keep the path
                log.append(self.path)

        handler = functools.partial(Handler, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.url = f"http://127.0.0.1:{port}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def write_xss_run(root: Path) -> None:
    """A submission whose responses and metadata all carry hostile payloads (one per question)."""
    questions = [
        json.loads(line)
        for line in (root / "data/benchmarks/demo/questions.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    ]
    run = root / "submissions" / "demo" / "xss-probe"
    run.mkdir(parents=True)

    def payload(k: int) -> str:
        return PAYLOADS[k % len(PAYLOADS)]

    lines = []
    for i, q in enumerate(questions):
        row = {
            "question_id": q["id"],
            "round": 0,
            "response": f"{payload(i)}\n\n{payload(i + 7)}\nFinal answer: {payload(i + 3)}",
        }
        if q["type"] == "open":
            row["recorded"] = {"judge": 100 if i % 2 else 0}
        lines.append(json.dumps(row, ensure_ascii=False))
    (run / "predictions.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    metadata = {
        "model": "<img src=x onerror=window.__xss=1>[m](javascript:window.__xss=1)",
        "model_revision": "javascript:window.__xss=1",
        "submitter": "<script>window.__xss=1</script>{{ config }}",
        "date": "2026-03-01",
        "benchmark": "demo",
        "benchmark_version": "1.0",
        "decoding": {"temperature": 0.0, "seed": 1},
        "rounds": 1,
        "license": "</textarea><svg onload=window.__xss=1>",
        # Optional model metadata: shown in leaderboard columns and offered as filter values (built by script).
        "model_license": "<img src=x onerror=window.__xss=1>",
        "weights": "open",
        "deployment": '"><script>window.__xss=1</script>',
        "model_url": "https://example.org/x?a=1&b=(2);c=@#frag",  # odd but valid: escaped in the href
        "notes": "\n".join(PAYLOADS)[:5000],
    }
    (run / "metadata.yaml").write_text(yaml.safe_dump(metadata, allow_unicode=True), "utf-8")


def _serve_built(tmp_path_factory, name: str, hostile: bool) -> Iterator[tuple[Path, Server]]:
    port = free_port()
    root = copy_leaderboard(tmp_path_factory.mktemp(name), port)
    if hostile:
        write_xss_run(root)
    dualboard("build", "--root", str(root), "--no-progress")
    server = Server(root / "site", port)
    yield root, server
    server.close()


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory) -> Iterator[tuple[Path, Server]]:
    """The demo leaderboard plus one run full of XSS payloads, built once and served; yields (folder, server).

    Every page-type check therefore also runs with hostile text on the page.
    """
    yield from _serve_built(tmp_path_factory, "demo-site", hostile=True)


@pytest.fixture(scope="session")
def xss_site(demo_site) -> tuple[Path, Server]:
    """The same build: the demo with the XSS run (see write_xss_run)."""
    return demo_site


def git(root: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV}, **kwargs
    )


@dataclass(frozen=True)
class VersionedSite:
    """The gh-pages branch served on 127.0.0.1, and the release folders it was deployed from."""

    url: str
    releases: Path
    shared: dict[str, list[str]]
    """Each version's shared files (docs paths), which its PROBE_PAGE shows."""
    added: str
    """The run submitted between the two releases: in 1.1, not in 1.0."""


ADDED_RUN = "fjord-3b-rerun"


def add_run_and_build(root: Path) -> None:
    """Submit a copy of fjord-3b under a new id and model name, commit it and build, as a maintainer merges a run."""
    run = root / "submissions" / "demo" / ADDED_RUN
    shutil.copytree(root / "submissions" / "demo" / "fjord-3b", run)
    metadata = yaml.safe_load((run / "metadata.yaml").read_text("utf-8"))
    (run / "metadata.yaml").write_text(yaml.safe_dump({**metadata, "model": "Fjord 3B, again"}), "utf-8")
    git(root, "add", "submissions")
    git(root, "commit", "-qm", f"add {ADDED_RUN}")
    dualboard("build", "--root", str(root), "--no-progress")


@pytest.fixture(scope="session")
def versions_site(demo_site, tmp_path_factory) -> Iterator[VersionedSite]:
    """Release 1.0 and 1.1 of the demo build, then serve the gh-pages branch as GitHub Pages would.

    Each release carries a page of shared files (``write_shared_probe``): 1.0 one, 1.1 the same and one more.
    A run is added between them (``add_run_and_build``), so their data differ.
    """
    port = free_port()
    built, _ = demo_site
    root = tmp_path_factory.mktemp("versioned") / "leaderboard"
    shutil.copytree(built, root, symlinks=True, ignore=shutil.ignore_patterns("site"))
    own = yaml.safe_load((root / "mkdocs.yml").read_text("utf-8"))
    (root / "mkdocs.yml").write_text(yaml.safe_dump({**own, "site_url": f"http://127.0.0.1:{port}/"}), "utf-8")
    git(root, "init", "-q")
    git(root, "add", "data", "submissions", "site_src", "mkdocs.yml")
    git(root, "commit", "-qm", "leaderboard")
    os.environ.update({k: os.environ.get(k, v) for k, v in GIT_ENV.items()})
    shared = {}
    for version, widths in (("1.0", [3]), ("1.1", [3, 5])):
        if version == "1.1":
            add_run_and_build(root)
        shared[version] = write_shared_probe(root, widths)
        dualboard("release", version, "--root", str(root), "--date", "2026-11-29")
    pages = tmp_path_factory.mktemp("gh-pages")
    archive = git(root, "archive", "--format=tar", "gh-pages").stdout
    (pages / "gh-pages.tar").write_bytes(archive)
    with tarfile.open(pages / "gh-pages.tar") as tar:
        tar.extractall(pages / "site", filter="fully_trusted")
    server = Server(pages / "site", port)
    yield VersionedSite(server.url, root / "releases", shared, ADDED_RUN)
    server.close()


@pytest.fixture(scope="session")
def driver(tmp_path_factory):
    """Headless Debian Chromium through selenium, logging console messages and network requests."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("Debian chromium and chromedriver are needed: apt-get install chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,900",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):
        options.add_argument(arg)
    options.binary_location = str(CHROMIUM)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    browser = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    browser.set_page_load_timeout(30)
    yield browser
    browser.quit()


def site_pages(site: Path) -> list[str]:
    """Every page of a built site as a URL path (directory URLs), sorted."""
    return sorted(
        "" if p.parent == site else p.parent.relative_to(site).as_posix() + "/" for p in site.rglob("index.html")
    )
