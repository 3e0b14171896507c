"""`dualboard serve`: the built site on 127.0.0.1, served again at once after a stop, no global changed."""

from __future__ import annotations

import os
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from dualboard.render.lazy_tables import Column, lazy_table, read_data
from dualboard.render.serve import SiteServer


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<p>the board</p>", "utf-8")
    return site


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get_once(server: SiteServer, path: str = "") -> httpx.Response:
    """Serve in a thread, fetch ``path``, stop and close the server."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        return httpx.get(server.url + path)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.mark.slow
def test_the_site_is_served_again_on_the_same_port_right_after_a_stop(tmp_path):
    """The first server answered (so the port lingers in TIME_WAIT); a new one binds it at once."""
    site = _site(tmp_path)
    first = SiteServer(site, 0)
    port = first.server_address[1]
    assert first.server_address[0] == "127.0.0.1"
    assert _get_once(first).text == "<p>the board</p>"
    assert _get_once(SiteServer(site, port)).status_code == 200


def test_serving_changes_no_other_server_of_the_process(tmp_path):
    _get_once(SiteServer(_site(tmp_path), 0))
    assert socketserver.ThreadingTCPServer.allow_reuse_address is False
    assert SiteServer.allow_reuse_address is True


def test_the_command_serves_the_site_until_interrupted(tmp_path):
    _site(tmp_path)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dualboard", "serve", "--root", str(tmp_path), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=os.environ.copy(),
        # as a terminal starts it: a suite launched in the background passes SIGINT on ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/")
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline and proc.poll() is None, "the server never answered"
                time.sleep(0.2)
        assert page.text == "<p>the board</p>"
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, output
    assert f"Serving {tmp_path / 'site'} at http://127.0.0.1:{port}/" in output and "Stopped." in output


def test_a_busy_port_is_a_message_not_a_traceback(tmp_path):
    _site(tmp_path)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "dualboard", "serve", "--root", str(tmp_path), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr and "pass another --port" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_data_file_is_served_as_its_gzip_bytes(tmp_path):
    """No Content-Encoding: the page's script gets the gzip bytes and decompresses them itself."""
    site = _site(tmp_path)
    lazy = lazy_table("benchmarks/b/questions/q.md", [Column("Round", "number")], [[0], [1]], [], noun="answers")
    (path,), (data,) = lazy.paths, lazy.data
    (site / path).parent.mkdir(parents=True)
    (site / path).write_bytes(data)
    response = _get_once(SiteServer(site, 0), path)
    assert response.status_code == 200 and "content-encoding" not in response.headers
    assert response.content == data and read_data(response.content)["rows"] == [[0], [1]]


def test_a_missing_page_is_the_site_s_own_404_page(tmp_path):
    site = _site(tmp_path)
    (site / "404.html").write_text("<h1>Not on this board</h1>", "utf-8")
    response = _get_once(SiteServer(site, 0), "benchmarks/nowhere/")
    assert response.status_code == 404 and response.text == "<h1>Not on this board</h1>"
    assert response.headers["content-type"] == "text/html; charset=utf-8"


def test_without_a_404_page_the_server_s_own_answer_is_given(tmp_path):
    response = _get_once(SiteServer(_site(tmp_path), 0), "nowhere.html")
    assert response.status_code == 404 and "File not found" in response.text
