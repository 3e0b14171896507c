"""A small Hugging Face Hub-compatible HTTP server. It stands in for the real Hub IN TESTS ONLY.

It implements, in memory, exactly the endpoints that huggingface_hub 2.x calls
for what Dualboard does (checked against huggingface_hub 2.4's ``hf_api.py``,
``_commit_api.py``, ``file_download.py`` and ``_snapshot_download.py``)::

    POST /api/repos/create                                   create_repo
    POST /api/validate-yaml                                  README.md metadata check in create_commit
    GET  /api/datasets/{repo}[/revision/{rev}]               repo_info / dataset_info
    GET  /api/datasets/{repo}/refs                           list_repo_refs
    GET  /api/datasets/{repo}/commits/{rev}                  list_repo_commits
    GET  /api/datasets/{repo}/tree/{rev}[/{path}]            list_repo_tree (one page, no Link header)
    POST /api/datasets/{repo}/preupload/{rev}                upload mode: always "regular" (no LFS / Xet)
    POST /api/datasets/{repo}/commit/{rev}                   NDJSON commit, honours header.parentCommit (412)
    POST /api/datasets/{repo}/tag/{rev}                      create_tag (409 when it exists)
    HEAD/GET /datasets/{repo}/resolve/{rev}/{path}           file metadata and download

Deliberate simplifications: every file is stored as a regular git blob
(preupload never answers "lfs", so nothing is sent to an LFS or Xet backend);
only dataset repos; one page per listing; no pull requests. Commit ids are
40-hex sha1 values of the parent id and the new tree, as git's would be.

Fault injection for the "loses nothing" tests: :meth:`HubServer.fail` makes
the next N calls of one endpoint answer an error status, before (default) or
after (``after_apply=True``, a lost response) the change is applied.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")
GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"


def git_blob_sha(data: bytes) -> str:
    """The git blob id of ``data`` (what the Hub reports as a regular file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Commit:
    """One commit: id, parent, the full file tree and its message."""

    oid: str
    parent: str | None
    files: dict[str, bytes]
    title: str
    message: str = ""
    date: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))


@dataclass
class Repo:
    """One dataset repository: commits by id, branches and tags pointing at them."""

    repo_id: str
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, revision: str) -> Commit | None:
        """The commit a branch, tag, full or short commit id names."""
        oid = self.branches.get(revision) or self.tags.get(revision)
        if oid is None:
            matches = [c for c in self.commits if len(revision) >= 7 and c.startswith(revision)]
            oid = matches[0] if len(matches) == 1 else None
        return self.commits.get(oid) if oid else None

    def add_commit(self, branch: str, files: dict[str, bytes], title: str, message: str = "") -> Commit:
        """Append a commit to ``branch`` holding ``files`` (the complete new tree)."""
        parent = self.branches.get(branch)
        tree = hashlib.sha1(json.dumps({p: git_blob_sha(d) for p, d in sorted(files.items())}).encode()).hexdigest()
        oid = hashlib.sha1(f"{parent}:{tree}:{len(self.commits)}".encode()).hexdigest()
        commit = Commit(oid, parent, dict(files), title, message)
        self.commits[oid] = commit
        self.branches[branch] = oid
        return commit

    def history(self, revision: str) -> list[Commit]:
        """Commits reachable from ``revision``, newest first."""
        out, commit = [], self.resolve(revision)
        while commit is not None:
            out.append(commit)
            commit = self.commits.get(commit.parent) if commit.parent else None
        return out


@dataclass
class Fault:
    """Answer ``status`` to the next ``times`` calls of ``endpoint`` (-1: forever)."""

    endpoint: str
    status: int
    times: int
    after_apply: bool = False


class HubError(Exception):
    """An error answer: status, Hub error code header, message."""

    def __init__(self, status: int, message: str, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


class HubServer:
    """The in-memory Hub. Start with :meth:`start`, point HfApi at :attr:`endpoint`."""

    def __init__(self, token: str | None = None):
        self.token = token
        """When set, writes need ``Authorization: Bearer <token>`` (401 otherwise)."""
        self.repos: dict[str, Repo] = {}
        self.calls: list[tuple[str, str]] = []
        """Every request as (method, endpoint name), for assertions."""
        self.faults: list[Fault] = []
        self.lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> HubServer:
        """Serve on 127.0.0.1 on a free port, in a daemon thread."""
        handler = type("Handler", (_Handler,), {"hub": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def fail(self, endpoint: str, status: int = 500, times: int = 1, *, after_apply: bool = False) -> None:
        """Inject errors into the next ``times`` calls of ``endpoint`` (``commit``, ``tree``, ...)."""
        self.faults.append(Fault(endpoint, status, times, after_apply))

    def calls_to(self, endpoint: str) -> int:
        """How many requests reached ``endpoint``."""
        return sum(1 for _, name in self.calls if name == endpoint)

    def _take_fault(self, endpoint: str, after_apply: bool) -> Fault | None:
        for fault in self.faults:
            if fault.endpoint == endpoint and fault.after_apply == after_apply and fault.times != 0:
                fault.times -= 1
                return fault
        return None


class _Handler(BaseHTTPRequestHandler):
    hub: HubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # keep pytest output clean
        pass

    def do_GET(self):
        self._dispatch("GET")

    def do_HEAD(self):
        self._dispatch("HEAD")

    def do_POST(self):
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if method == "POST" else b""
        segments = [unquote(s) for s in url.path.strip("/").split("/")]
        route = _route(method, segments)
        name = route[0] if route else "unknown"
        with self.hub.lock:
            self.hub.calls.append((method, name))
            try:
                if route is None:
                    raise HubError(404, f"no such endpoint: {method} {url.path}")
                fault = self.hub._take_fault(name, after_apply=False)
                if fault:
                    raise HubError(fault.status, f"injected {fault.status} on {name}")
                status, headers, payload = route[1](self, *route[2:], query=parse_qs(url.query), body=body)
                fault = self.hub._take_fault(name, after_apply=True)
                if fault:
                    raise HubError(fault.status, f"injected {fault.status} on {name} after applying it")
            except HubError as exc:
                status, payload = exc.status, json.dumps({"error": exc.message}).encode()
                headers = {"Content-Type": "application/json", "X-Error-Message": exc.message}
                if exc.code:
                    headers["X-Error-Code"] = exc.code
        self._send(method, status, headers, payload)

    def _send(self, method: str, status: int, headers: dict[str, str], payload: bytes) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(payload)

    # -- helpers ---------------------------------------------------------

    def _repo(self, repo_id: str) -> Repo:
        repo = self.hub.repos.get(repo_id)
        if repo is None:
            raise HubError(404, f"Repository {repo_id} not found", "RepoNotFound")
        return repo

    def _commit(self, repo: Repo, revision: str) -> Commit:
        commit = repo.resolve(revision)
        if commit is None:
            raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return commit

    def _require_token(self) -> None:
        if self.hub.token and self.headers.get("Authorization") != f"Bearer {self.hub.token}":
            raise HubError(401, "Invalid credentials in Authorization header")

    @staticmethod
    def _json(data, status: int = 200, headers: dict | None = None):
        return status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(data).encode()

    # -- endpoints -------------------------------------------------------

    def create_repo(self, *, query, body):
        self._require_token()
        payload = json.loads(body)
        if payload.get("type") != "dataset":
            raise HubError(400, "this test server only holds dataset repos")
        repo_id = f"{payload['organization']}/{payload['name']}" if payload.get("organization") else payload["name"]
        if repo_id in self.hub.repos:  # the Hub's 409 carries the url; create_repo(exist_ok=True) reads it
            return self._json(
                {"error": "You already created this dataset repo", "url": f"{self.hub.endpoint}/datasets/{repo_id}"},
                409,
            )
        repo = self.hub.repos[repo_id] = Repo(repo_id)
        repo.add_commit("main", {".gitattributes": GITATTRIBUTES}, "initial commit")
        return self._json({"url": f"{self.hub.endpoint}/datasets/{repo_id}", "name": repo_id})

    def validate_yaml(self, *, query, body):
        content = json.loads(body)["content"]
        errors = _card_errors(content)
        return self._json({"errors": errors, "warnings": []}, 400 if errors else 200)

    def repo_info(self, repo_id, revision="main", *, query, body):
        repo = self._repo(repo_id)
        commit = self._commit(repo, revision)
        siblings = [{"rfilename": p} for p in sorted(commit.files)]
        return self._json(
            {
                "id": repo_id,
                "sha": commit.oid,
                "private": False,
                "siblings": siblings,
                "lastModified": commit.date,
                "tags": [],
                "downloads": 0,
                "likes": 0,
            }
        )

    def refs(self, repo_id, *, query, body):
        repo = self._repo(repo_id)
        branches = [{"name": n, "ref": f"refs/heads/{n}", "targetCommit": o} for n, o in sorted(repo.branches.items())]
        tags = [{"name": n, "ref": f"refs/tags/{n}", "targetCommit": o} for n, o in sorted(repo.tags.items())]
        return self._json({"branches": branches, "converts": [], "tags": tags, "pullRequests": []})

    def commits(self, repo_id, revision, *, query, body):
        history = self._repo(repo_id).history(revision)
        if not history:
            raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return self._json(
            [
                {"id": c.oid, "title": c.title, "message": c.message, "date": c.date, "authors": [{"user": "tests"}]}
                for c in history
            ]
        )

    def tree(self, repo_id, revision, *path, query, body):
        commit = self._commit(self._repo(repo_id), revision)
        prefix = "/".join(path).strip("/")
        recursive = query.get("recursive", ["False"])[0].lower() == "true"
        entries: dict[str, dict] = {}
        for name, data in sorted(commit.files.items()):
            if prefix and not name.startswith(prefix + "/"):
                continue
            rest = name[len(prefix) + 1 :] if prefix else name
            parts = rest.split("/")
            for depth in range(1, len(parts)):
                folder = "/".join(([prefix] if prefix else []) + parts[:depth])
                if recursive or depth == 1:
                    entries.setdefault(
                        folder, {"type": "directory", "oid": git_blob_sha(folder.encode()), "size": 0, "path": folder}
                    )
            if recursive or len(parts) == 1:
                entries[name] = {"type": "file", "oid": git_blob_sha(data), "size": len(data), "path": name}
        if prefix and not entries:
            raise HubError(404, f"{prefix} does not exist on {revision}", "EntryNotFound")
        return self._json(list(entries.values()))

    def preupload(self, repo_id, revision, *, query, body):
        self._require_token()
        commit = self._commit(self._repo(repo_id), revision)
        answer = []
        for f in json.loads(body)["files"]:
            existing = commit.files.get(f["path"])
            answer.append(
                {
                    "path": f["path"],
                    "uploadMode": "regular",
                    "shouldIgnore": False,
                    "oid": git_blob_sha(existing) if existing is not None else None,
                }
            )
        return self._json({"files": answer, "commitOid": commit.oid})

    def commit(self, repo_id, revision, *, query, body):
        self._require_token()
        repo = self._repo(repo_id)
        head = self._commit(repo, revision)
        if revision not in repo.branches:
            raise HubError(400, f"Invalid rev id: {revision} is not a branch")
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        header = lines[0]["value"] if lines and lines[0]["key"] == "header" else None
        if header is None:
            raise HubError(400, "the first NDJSON line must be the commit header")
        parent = header.get("parentCommit")
        if parent is not None and not head.oid.startswith(parent):
            raise HubError(412, "A commit has happened since. Please refresh and try again.")
        files = _apply_operations(dict(head.files), lines[1:])
        commit = repo.add_commit(revision, files, header["summary"], header.get("description", ""))
        return self._json(
            {
                "success": True,
                "commitOid": commit.oid,
                "pullRequestUrl": None,
                "commitUrl": f"{self.hub.endpoint}/datasets/{repo_id}/commit/{commit.oid}",
            }
        )

    def tag(self, repo_id, revision, *, query, body):
        self._require_token()
        repo = self._repo(repo_id)
        commit = self._commit(repo, revision)
        name = json.loads(body)["tag"]
        if name in repo.tags or name in repo.branches:
            raise HubError(409, f"Tag {name} already exists")
        repo.tags[name] = commit.oid
        return self._json({"name": name, "ref": f"refs/tags/{name}", "targetCommit": commit.oid})

    def resolve(self, repo_id, revision, *path, query, body):
        commit = self._commit(self._repo(repo_id), revision)
        name = "/".join(path)
        data = commit.files.get(name)
        if data is None:
            raise HubError(404, f"Entry not found: {name}", "EntryNotFound")
        headers = {
            "Content-Type": "application/octet-stream",
            "X-Repo-Commit": commit.oid,
            "ETag": f'"{git_blob_sha(data)}"',
        }
        return 200, headers, data


def _route(method: str, s: list[str]):
    """Map a request to (endpoint name, handler, *arguments), or None."""
    if method == "POST" and s == ["api", "repos", "create"]:
        return ("create_repo", _Handler.create_repo)
    if method == "POST" and s == ["api", "validate-yaml"]:
        return ("validate_yaml", _Handler.validate_yaml)
    if method in ("GET", "HEAD") and len(s) >= 6 and s[0] == "datasets" and s[3] == "resolve":
        return ("resolve", _Handler.resolve, f"{s[1]}/{s[2]}", s[4], *s[5:])
    if len(s) < 4 or s[:2] != ["api", "datasets"]:
        return None
    repo_id, rest = f"{s[2]}/{s[3]}", s[4:]
    if method == "GET" and not rest:
        return ("repo_info", _Handler.repo_info, repo_id)
    if method == "GET" and len(rest) == 2 and rest[0] == "revision":
        return ("repo_info", _Handler.repo_info, repo_id, rest[1])
    if method == "GET" and rest == ["refs"]:
        return ("refs", _Handler.refs, repo_id)
    if method == "GET" and len(rest) == 2 and rest[0] == "commits":
        return ("commits", _Handler.commits, repo_id, rest[1])
    if method == "GET" and len(rest) >= 2 and rest[0] == "tree":
        return ("tree", _Handler.tree, repo_id, rest[1], *rest[2:])
    if method == "POST" and len(rest) == 2 and rest[0] in ("preupload", "commit", "tag"):
        return (rest[0], getattr(_Handler, rest[0]), repo_id, rest[1])
    return None


def _apply_operations(files: dict[str, bytes], operations: list[dict]) -> dict[str, bytes]:
    for op in operations:
        key, value = op["key"], op["value"]
        if key == "file":
            if value.get("encoding") != "base64":
                raise HubError(400, "file content must be base64")
            files[value["path"]] = base64.b64decode(value["content"])
        elif key == "deletedFile":
            if files.pop(value["path"], None) is None:
                raise HubError(404, "A file with this name doesn't exist", "EntryNotFound")
        elif key == "deletedFolder":
            prefix = value["path"].rstrip("/") + "/"
            files = {p: d for p, d in files.items() if not p.startswith(prefix)}
        else:
            raise HubError(400, f"this test server does not support {key!r} operations (no LFS)")
    return files


def _card_errors(content: str) -> list[dict]:
    """What the Hub's metadata check refuses: bad YAML front matter and bad split names."""
    match = re.match(r"^---\n(.*?)\n---\n", content, re.S)
    if not match:
        return []
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        return [{"message": f"invalid YAML: {exc}"}]
    errors = []
    for config in meta.get("configs") or []:
        for data_file in config.get("data_files") or []:
            split = data_file.get("split", "train")
            if not SPLIT_NAME.match(split):
                errors.append({"message": f"configs: split name {split!r} must match {SPLIT_NAME.pattern}"})
    return errors
