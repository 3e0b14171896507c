"""The labelling page's server: loopback only, the session token, Host and Origin checks; ``dualboard label``."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from dualboard.labelling.server import MAX_BODY, TOKEN_HEADER, LabelServer
from dualboard.labelling.session import open_session
from tests.labelling.boards import BENCHMARK, write_board


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    return write_board(tmp_path_factory.mktemp("board"))


@pytest.fixture
def server(graded: Path, tmp_path: Path):
    root = tmp_path / "board"
    shutil.copytree(graded, root, symlinks=True)
    session, _ = open_session(root / "data", root / "build" / "scored", BENCHMARK, "ada")
    running = LabelServer(session)
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    yield running
    running.shutdown()
    running.server_close()


def request(server: LabelServer, method: str, path: str, body: bytes | None = None, **headers: str):
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    connection.putrequest(method, path, skip_host=True)
    sent = {"Host": f"127.0.0.1:{server.server_address[1]}", TOKEN_HEADER: server.token} | headers
    for name, value in sent.items():
        if value is not None:
            connection.putheader(name, value)
    connection.putheader("Content-Length", str(len(body or b"")))
    connection.endheaders(body)
    reply = connection.getresponse()
    data = reply.read()
    connection.close()
    return reply.status, data, reply


def test_it_listens_on_loopback_only(server: LabelServer) -> None:
    assert server.server_address[0] == "127.0.0.1"
    assert server.url.startswith("http://127.0.0.1:") and f"token={server.token}" in server.url


def test_the_page_needs_the_token_in_its_url(server: LabelServer) -> None:
    status, body, reply = request(server, "GET", f"/?token={server.token}")
    assert status == 200 and b"Label answers" in body
    assert "script-src 'self'" in reply.getheader("Content-Security-Policy")
    assert request(server, "GET", "/")[0] == 403
    assert request(server, "GET", "/?token=guess")[0] == 403


def test_the_api_needs_the_token_header(server: LabelServer) -> None:
    status, body, _ = request(server, "GET", "/api/next")
    assert status == 200 and json.loads(body)["item"]["question_id"]
    assert request(server, "GET", "/api/next", **{TOKEN_HEADER: None})[0] == 403
    assert request(server, "GET", "/api/next", **{TOKEN_HEADER: "x" + server.token})[0] == 403


def test_another_host_header_is_refused_as_dns_rebinding(server: LabelServer) -> None:
    port = server.server_address[1]
    assert request(server, "GET", "/api/next", Host=f"attacker.example:{port}")[0] == 421
    assert request(server, "GET", f"/?token={server.token}", Host="attacker.example")[0] == 421
    assert request(server, "GET", "/api/next", Host=f"localhost:{port}")[0] == 200


def test_another_origin_is_refused_and_nothing_is_written(server: LabelServer) -> None:
    item = json.loads(request(server, "GET", "/api/next")[1])["item"]
    body = json.dumps({"question_id": item["question_id"], "response_sha256": item["response_sha256"], "label": "pass"})
    status, _, _ = request(server, "POST", "/api/label", body.encode(), Origin="http://attacker.example")
    assert status == 403 and not server.session.path.exists()
    status, reply, _ = request(server, "POST", "/api/label", body.encode(), Origin=server.origin)
    assert status == 200 and "revealed" in json.loads(reply)
    assert server.session.path.read_text().count("\n") == 2  # header and one answer


def test_bad_bodies_get_precise_refusals(server: LabelServer) -> None:
    assert request(server, "POST", "/api/label", b"x" * (MAX_BODY + 1))[0] == 413
    assert request(server, "POST", "/api/label", b"[1]")[0] == 400
    status, body, _ = request(server, "POST", "/api/label", json.dumps({"question_id": "nope"}).encode())
    assert status == 400 and "lacks" in json.loads(body)["error"]
    gone = json.dumps({"question_id": "nope", "response_sha256": "0" * 64, "label": "pass"}).encode()
    status, body, _ = request(server, "POST", "/api/label", gone)
    assert status == 409 and "no longer on the board" in json.loads(body)["error"]


def test_the_command_prints_the_address_with_its_token(graded: Path, tmp_path: Path) -> None:
    root = tmp_path / "board"
    shutil.copytree(graded, root, symlinks=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "dualboard", "label", BENCHMARK, "--labeller", "ada", "--no-open", "--root", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        assert "human_labels/ada.csv" in lines[0]
        url = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]+)", lines[1])
        assert url, lines
        connection = http.client.HTTPConnection("127.0.0.1", int(url.group(1)), timeout=10)
        connection.request("GET", f"/?token={url.group(2)}")
        assert connection.getresponse().status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_command_says_what_to_do_without_a_build(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", "label", "quiz", "--labeller", "ada", "--no-open", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "no benchmark 'quiz'" in proc.stderr + proc.stdout
