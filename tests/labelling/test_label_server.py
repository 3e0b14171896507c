"""The labelling page's server: loopback only, the session token, Host and Origin checks; ``dualboard label``."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_command_says_what_to_do_without_a_build(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", "label", "quiz", "--labeller", "ada", "--no-open", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "no benchmark 'quiz'" in proc.stderr + proc.stdout


def label_body(item: dict, label) -> bytes:
    body = {"question_id": item["question_id"], "response_sha256": item["response_sha256"], "label": label}
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    "label",
    [True, "50", " 50 ", "1e2", 1, 1.0000001, pytest.param(10**400, id="huge"), [1], {"a": 1}, None, 0.5],
)
def test_a_label_that_is_not_pass_fail_or_a_whole_mark_is_refused(server: LabelServer, label) -> None:
    item = json.loads(request(server, "GET", "/api/next")[1])["item"]
    status, reply, _ = request(server, "POST", "/api/label", label_body(item, label))
    assert status == 400 and json.loads(reply)["error"], reply
    assert not server.session.path.exists()


def test_json_nan_is_refused(server: LabelServer) -> None:
    item = json.loads(request(server, "GET", "/api/next")[1])["item"]
    body = label_body(item, 0).replace(b'"label": 0', b'"label": NaN')
    assert request(server, "POST", "/api/label", body)[0] == 400


def test_labelling_one_answer_twice_from_two_tabs_is_refused_and_the_file_stays_readable(server: LabelServer) -> None:
    item = json.loads(request(server, "GET", "/api/next")[1])["item"]
    assert request(server, "POST", "/api/label", label_body(item, "pass"))[0] == 200
    status, reply, _ = request(server, "POST", "/api/label", label_body(item, "fail"))
    assert status == 409 and "already" in json.loads(reply)["error"]
    assert request(server, "GET", "/api/next")[0] == 200
    assert set(pd.read_csv(server.session.path)["label"]) == {"pass"}


def test_an_idle_connection_holds_up_no_one(server: LabelServer) -> None:
    with socket.create_connection(("127.0.0.1", server.server_address[1])) as idle:
        idle.sendall(b"POST /api/label HTTP/1.1\r\n")  # and nothing more
        started = time.monotonic()
        assert request(server, "GET", "/api/next")[0] == 200
        assert time.monotonic() - started < 5


def test_every_api_path_gets_an_answer(server: LabelServer) -> None:
    assert request(server, "GET", "/api/label")[0] == 405
    assert request(server, "POST", "/api/nothing", b"{}")[0] == 404
    (server.session.path.parent).mkdir(parents=True, exist_ok=True)
    (server.session.path.parent / ".gitkeep").write_text("")  # hidden: nothing reads it
    assert request(server, "GET", "/api/next")[0] == 200
    (server.session.path.parent / "notes.txt").write_text("hello")
    status, reply, _ = request(server, "GET", "/api/next")
    assert status == 409 and "not a labeller's file" in json.loads(reply)["error"]


@pytest.mark.slow
@pytest.mark.parametrize(("option", "value"), [("--port", "70000"), ("--labeller", "eve.csv")])
def test_the_command_refuses_bad_options_plainly(graded: Path, option: str, value: str) -> None:
    args = {"--port": "0", "--labeller": "ada"} | {option: value}
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", "label", BENCHMARK, "--no-open", "--root", str(graded)]
        + [x for pair in args.items() for x in pair],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr
    assert value in proc.stderr
