"""A store in a Hugging Face Hub dataset repository (``--hub ORG/NAME``).

The repository holds the same logical tree as :class:`~dualboard.store.LocalStore`
(benchmarks/, runs/, verdicts/) plus a dataset card. Rules (docs/architecture.md, "The Hub store"):

- always ``repo_type="dataset"`` and an explicit ``endpoint`` (huggingface_hub
  reads ``HF_ENDPOINT`` once, at import time);
- one ``create_commit`` per ingest, with ``parent_commit`` set to the revision
  the ingest compared against: if anyone else committed meanwhile the Hub
  refuses (HTTP 412) and :class:`StoreConflictError` says to ingest again;
- errors that may pass (HTTP 5xx, 429, dropped connections) are retried with
  exponential backoff; a commit is all-or-nothing on the Hub, so a failure
  never leaves half an ingest behind, and a retried commit whose first answer
  was lost is recognised instead of being applied twice;
- reads go through a pinned revision: :meth:`HubStore.snapshot` downloads one
  commit into ``cache_dir/snapshots/<commit>/`` (a plain folder, no links),
  complete or not at all, after checking that no file name in the commit
  could escape that folder (``runs/../../x``); downloads take turns through a
  lock, and the cache keeps the KEEP_SNAPSHOTS snapshots used last;
- the token comes from the ``HF_TOKEN`` environment variable (or the caller),
  never from a file in the repository or huggingface_hub's saved login;
- verdicts a grade adds are saved in ``pending_dir`` (``.dualboard/hub-pending/``)
  for the next commit, that of ``dualboard publish``: grading never commits, so
  it never moves the revision the build read.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx2
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, snapshot_download
from huggingface_hub.errors import (
    HfHubHTTPError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from tqdm.auto import tqdm

from dualboard.build_cache import BuildCache
from dualboard.errors import DualboardError, StoreConflictError
from dualboard.intake.models import Benchmark
from dualboard.intake.validate import load_runs
from dualboard.store.base import (
    BENCHMARKS,
    REMOVED,
    RUNS,
    HubDataset,
    IngestResult,
    Removal,
    StagedFile,
    Store,
    check_logical_path,
    check_stored,
    classify,
    departures,
    expected_files,
    files_under,
    leaving_paths,
    same_bytes,
    staged_files,
)
from dualboard.store.local import KEEP_SNAPSHOTS, SNAPSHOTS, STAGING_PREFIX
from dualboard.store.lock import exclusive
from dualboard.store.tree import write_failed
from dualboard.store.verdicts import VERDICTS, part_paths

REPO_TYPE = "dataset"
BRANCH = "main"
LOGICAL_PATTERNS = [f"{BENCHMARKS}/**", f"{RUNS}/**", f"{VERDICTS}/**", f"{REMOVED}/**"]
COMMIT_ID = re.compile(r"^[0-9a-f]{40}$")
NO_COMMIT = "0" * 40
"""The revision of a dataset that does not exist yet (git's null id): an empty tree."""
CACHE_LOCK = "download.lock"
RETRY_STATUS = (429, 500, 502, 503, 504)
CONFLICT_STATUS = (409, 412)

log = logging.getLogger(__name__)
T = TypeVar("T")


class _QuietProgress(tqdm):
    """No progress bars for snapshot downloads: stages report one summary line each."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{**kwargs, "disable": True})


class HubUnavailableError(DualboardError):
    """The Hub kept failing after every retry; nothing was changed."""


@dataclass(frozen=True)
class Backoff:
    """How often and how patiently to retry a Hub call that may pass."""

    attempts: int = 5
    """Tries in all, the first included."""
    first_wait_s: float = 2.0
    """Wait before the second try; doubled before each further one."""
    max_wait_s: float = 60.0
    """Longest single wait."""

    def waits(self) -> list[float]:
        """The waits between tries, in order."""
        return [min(self.first_wait_s * 2**i, self.max_wait_s) for i in range(self.attempts - 1)]


class HubStore(Store):
    """A Hub dataset repository used as the store.

    Parameters
    ----------
    repo_id
        ``ORG/NAME`` of the dataset (created on the first ingest).
    endpoint
        Hub address, e.g. ``https://huggingface.co`` (always explicit).
    cache_dir
        Where snapshots are downloaded: ``cache_dir/snapshots/<commit>/``.
    pending_dir
        Where new verdicts wait for ``dualboard publish``: ``pending_dir/verdicts/``
        (the CLI's is ``.dualboard/hub-pending``, the folder publish pushes;
        default: ``cache_dir/pending``).
    token
        Hub token; default: the ``HF_TOKEN`` environment variable, else none
        (reads of a public dataset need none, writes do).
    revision
        Pin reads to this tag or commit (a build reads one frozen revision);
        default: the head of main.
    backoff, sleep
        Retry policy for errors that may pass, and the function that waits
        (tests pass a recorder).
    """

    def __init__(
        self,
        repo_id: str,
        *,
        endpoint: str,
        cache_dir: Path,
        pending_dir: Path | None = None,
        token: str | None = None,
        revision: str | None = None,
        backoff: Backoff = Backoff(),
        sleep: Callable[[float], None] | None = None,
    ):
        self.repo_id = repo_id
        self.endpoint = endpoint.rstrip("/")
        self.cache_dir = Path(cache_dir)
        self.pending_dir = Path(pending_dir) if pending_dir is not None else self.cache_dir / "pending"
        self.pinned = revision
        """Revision every read uses (a tag or commit); None: the head of main."""
        self.backoff = backoff
        self._retries: list[str] = []
        """One line per retried call, for the report."""
        self._sleep = sleep or (lambda seconds: time.sleep(seconds))
        self._token = token if token is not None else (os.environ.get("HF_TOKEN") or False)
        self.api = HfApi(endpoint=self.endpoint, token=self._token)

    def __repr__(self) -> str:
        return f"HubStore({self.repo_id!r}, endpoint={self.endpoint!r})"

    def retried_calls(self) -> list[str]:
        return list(self._retries)

    def hub_dataset(self) -> HubDataset:
        return HubDataset(self.repo_id, self.endpoint)

    # -- reading -----------------------------------------------------------

    def describe(self) -> str:
        return f"Hub dataset {self.repo_id} on {self.endpoint}"

    def revision(self) -> str:
        return self._resolve(self.pinned or BRANCH)

    def snapshot(self, revision: str | None = None) -> Path:
        revision = revision or self.pinned or BRANCH
        if revision == NO_COMMIT:
            return self._empty()
        if COMMIT_ID.fullmatch(revision) and (self.cache_dir / SNAPSHOTS / revision).is_dir():
            return _touched(self.cache_dir / SNAPSHOTS / revision)  # a commit never changes: no need to ask
        commit = self._resolve(revision)
        target = self.cache_dir / SNAPSHOTS / commit
        return _touched(target) if target.is_dir() else self._fetch(commit)

    def base_commit(self) -> str:
        """The commit reads are pinned to (default: the head of main); NO_COMMIT when the dataset does not exist yet."""
        try:
            return self._repo_info(self.pinned or BRANCH).sha
        except RepositoryNotFoundError:
            return NO_COMMIT

    def _empty(self) -> Path:
        path = self.cache_dir / SNAPSHOTS / NO_COMMIT
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _fetch(self, commit: str) -> Path:
        """Download ``commit`` into the cache (one process at a time) and prune the cache."""
        snapshots = self.cache_dir / SNAPSHOTS
        target = snapshots / commit
        try:
            with exclusive(self.cache_dir / CACHE_LOCK, what="Hub download"):
                if not target.is_dir():  # another process may have fetched it while we waited
                    self._check_names(commit)
                    os.replace(self._call(f"download {commit[:12]}", lambda: self._download(commit)), target)
                _prune(snapshots, keep=target)
        except (HfHubHTTPError, LocalEntryNotFoundError):
            raise  # the Hub's own errors, already described by _call
        except OSError as exc:  # the local disk: full, read-only
            raise write_failed(self.cache_dir, exc) from exc
        return target

    def _check_names(self, commit: str) -> None:
        """Refuse a commit holding a file name that could escape the snapshot folder."""
        names = self._call(
            f"list files of {commit[:12]}",
            lambda: self.api.list_repo_files(self.repo_id, repo_type=REPO_TYPE, revision=commit),
        )
        for name in names:
            check_logical_path(name, f"{self.repo_id}@{commit[:12]}")

    def _download(self, commit: str) -> Path:
        """Download the logical tree of ``commit`` into a fresh staging folder (removed on failure)."""
        staging = self.cache_dir / SNAPSHOTS / f"{STAGING_PREFIX}{uuid.uuid4().hex}"
        try:
            snapshot_download(
                self.repo_id,
                repo_type=REPO_TYPE,
                revision=commit,
                endpoint=self.endpoint,
                token=self._token,
                local_dir=staging,
                cache_dir=self.cache_dir / "hf",
                allow_patterns=LOGICAL_PATTERNS,
                tqdm_class=_QuietProgress,
            )
            shutil.rmtree(staging / ".cache", ignore_errors=True)  # huggingface_hub's bookkeeping
            staging.mkdir(parents=True, exist_ok=True)
            return staging
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    def _resolve(self, revision: str) -> str:
        """The commit id a branch, tag or commit names."""
        try:
            return self._repo_info(revision).sha
        except RepositoryNotFoundError as exc:
            raise DualboardError(
                f"{self.endpoint}: no dataset {self.repo_id!r} (or no access) — check the name, "
                "set HF_TOKEN for a private dataset, or run `dualboard ingest --hub` to create it"
            ) from exc

    def _repo_info(self, revision: str):
        try:
            return self._call(
                f"resolve {revision}", lambda: self.api.repo_info(self.repo_id, repo_type=REPO_TYPE, revision=revision)
            )
        except RevisionNotFoundError as exc:
            raise DualboardError(
                f"{self.repo_id}: no revision {revision!r} — list the tags with "
                f"`huggingface-cli tag -l {self.repo_id} --repo-type dataset`"
            ) from exc

    # -- writing -----------------------------------------------------------

    def ingest(
        self,
        run_dirs: list[Path],
        benchmarks: dict[str, Benchmark],
        *,
        removal_date: Callable[[str], str] | None = None,
        cache: BuildCache | None = None,
    ) -> IngestResult:
        runs = load_runs(run_dirs, benchmarks, cache=cache)
        wanted = staged_files(run_dirs, benchmarks, expected_files(runs, benchmarks))
        head = self.head(create=True)
        base = self.snapshot(head)
        added, replaced, unchanged = classify(base, wanted)
        gone = departures(base, run_dirs, removal_date) if removal_date is not None else []
        changed = [f for f in wanted + [r.file() for r in gone] if not same_bytes(base, f)]
        if not changed and not gone:
            return IngestResult(head, (), (), tuple(unchanged))
        summary = f"Ingest {len(added)} new, {len(replaced)} replaced run(s)" + (
            f", {len(gone)} removed" if gone else ""
        )
        deletions = files_under(base, leaving_paths(base, [r.run for r in gone], added))
        revision = self.commit(changed, summary, parent=head, deletions=deletions)
        return IngestResult(revision, tuple(added), tuple(replaced), tuple(unchanged), tuple(r.run for r in gone))

    def remove(self, removal: Removal) -> str:
        head = self._resolve(BRANCH)
        base = self.snapshot(head)
        check_stored(base, removal.run, f"{self.repo_id}@{head[:12]}")
        try:
            return self.commit(
                [removal.file()],
                f"Remove {removal.run}",
                parent=head,
                deletions=files_under(base, leaving_paths(base, [removal.run], [])),
            )
        except StoreConflictError as exc:
            raise StoreConflictError(
                f"{self.repo_id}: main moved past {head[:12]} while removing {removal.run}; "
                "nothing was written — run `dualboard remove` again"
            ) from exc

    def head(self, *, create: bool = False) -> str:
        """The head commit of main (whatever revision reads are pinned to); ``create`` the dataset if missing."""
        try:
            info = self._call(
                "resolve main", lambda: self.api.repo_info(self.repo_id, repo_type=REPO_TYPE, revision=BRANCH)
            )
            return info.sha
        except RepositoryNotFoundError:
            if not create:
                raise
            try:
                self._call(
                    "create repository",
                    lambda: self.api.create_repo(self.repo_id, repo_type=REPO_TYPE, private=False),
                    passthrough=(409,),
                )
            except HfHubHTTPError:
                pass  # 409: created meanwhile by a concurrent ingest; parent_commit settles the race
            return self._resolve(BRANCH)

    def commit(self, files: list[StagedFile], message: str, *, parent: str, deletions: list[str] = ()) -> str:
        """Commit ``files`` and delete the files ``deletions`` (logical paths) on top of ``parent`` in one
        Hub commit; return the new commit id.

        Raises StoreConflictError when main moved past ``parent`` (someone else
        committed), HubUnavailableError when the Hub kept failing. In both
        cases the repository is as it was.
        """
        for path in [f.path for f in files] + list(deletions):
            check_logical_path(path, f"commit to {self.repo_id}")
        attempts = 0

        def send():
            nonlocal attempts
            attempts += 1
            operations = [CommitOperationDelete(path_in_repo=p) for p in deletions]
            operations += [CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=f.data) for f in files]
            return self.api.create_commit(
                self.repo_id,
                operations,
                commit_message=message,
                repo_type=REPO_TYPE,
                revision=BRANCH,
                parent_commit=parent,
            )

        try:
            return self._call("commit", send, passthrough=CONFLICT_STATUS).oid
        except HfHubHTTPError as exc:
            landed = self._landed(files, deletions, parent) if attempts > 1 else None
            if landed is not None:
                log.warning("commit %s: the first answer was lost but the commit is on the Hub", landed[:12])
                return landed
            raise StoreConflictError(
                f"{self.repo_id}: main moved past {parent[:12]} while this ingest ran (another ingest or a "
                "manual commit); nothing was written — run the ingest again to compare against the new revision"
            ) from exc
        except DualboardError:
            raise
        except ValueError as exc:  # huggingface_hub's README.md metadata check (POST /api/validate-yaml)
            raise DualboardError(
                f"{self.repo_id}: the Hub refused the commit before any upload: {exc} — fix the dataset card metadata"
            ) from exc

    def _landed(self, files: list[StagedFile], deletions: list[str], parent: str) -> str | None:
        """The head commit, if it is our own commit whose answer was lost (its parent is ``parent``)."""
        commits = self._call(
            "list commits", lambda: self.api.list_repo_commits(self.repo_id, repo_type=REPO_TYPE, revision=BRANCH)
        )
        if len(commits) < 2 or commits[1].commit_id != parent:
            return None
        head = commits[0].commit_id
        snapshot = self.snapshot(head)
        return (
            head
            if all(same_bytes(snapshot, f) for f in files) and not any((snapshot / p).exists() for p in deletions)
            else None
        )

    def verdict_root(self) -> Path:
        return self.pending_dir

    def waiting_verdicts(self) -> list[Path]:
        return part_paths(self.pending_dir)

    def tags(self) -> dict[str, str]:
        """Release tags and the commits they name."""
        refs = self._call("list tags", lambda: self.api.list_repo_refs(self.repo_id, repo_type=REPO_TYPE))
        return {ref.name: ref.target_commit for ref in refs.tags}

    def tag(self, version: str, revision: str | None = None) -> str:
        """Tag ``revision`` (default: head of main) as ``version``; return the tagged commit."""
        commit = self._resolve(revision or BRANCH)
        try:
            self._call(
                f"tag {version}",
                lambda: self.api.create_tag(self.repo_id, tag=version, revision=commit, repo_type=REPO_TYPE),
                passthrough=(409,),
            )
        except HfHubHTTPError as exc:
            raise DualboardError(
                f"{self.repo_id}: tag {version!r} already exists — releases are frozen; publish under a new version"
            ) from exc
        return commit

    # -- retries -----------------------------------------------------------

    def _call(self, what: str, call: Callable[[], T], *, passthrough: tuple[int, ...] = ()) -> T:
        """Run one Hub call, retrying errors that may pass.

        Raises HubUnavailableError when retries run out, the Hub's own error for
        a missing repository or revision and for statuses in ``passthrough``
        (the caller handles them), and a DualboardError for any other refusal.
        """
        waits = self.backoff.waits()
        failures: list[str] = []
        while True:
            try:
                return call()
            except (HfHubHTTPError, httpx2.TransportError, LocalEntryNotFoundError) as exc:
                if not _transient(exc):
                    raise self._refusal(what, exc, passthrough) from exc
                failures.append(_describe(exc))
                if not waits:
                    raise HubUnavailableError(
                        f"{self.repo_id} on {self.endpoint}: {what} failed {len(failures)} times "
                        f"({', '.join(failures)}); nothing was changed by this call — check the Hub status "
                        "and run the command again"
                    ) from exc
                wait = waits.pop(0)
                self._retries.append(f"{what}: {failures[-1]}, retrying in {wait:g} s")
                log.warning("%s", self._retries[-1])
                self._sleep(wait)

    def _refusal(self, what: str, exc: Exception, passthrough: tuple[int, ...]) -> Exception:
        """The exception to raise for a Hub call refused for good."""
        status = _status(exc)
        if isinstance(exc, (RevisionNotFoundError, RepositoryNotFoundError)) or status in passthrough:
            return exc
        if status in (401, 403):
            return DualboardError(
                f"{self.repo_id}: {what} refused (HTTP {status}) — set HF_TOKEN to a token "
                "with write access to this dataset (in CI: the protected environment's secret)"
            )
        detail = str(exc).splitlines()[-1][:300] if str(exc) else type(exc).__name__
        return DualboardError(f"{self.repo_id}: {what} refused by {self.endpoint} ({detail}) — nothing was changed")


def _touched(snapshot: Path) -> Path:
    """Mark ``snapshot`` as just used (pruning keeps the ones used last) and return it."""
    try:
        os.utime(snapshot)
    except OSError:
        pass  # a read-only cache still reads; only the pruning order suffers
    return snapshot


def _prune(snapshots: Path, *, keep: Path) -> None:
    """Keep ``keep`` and the snapshots used last, KEEP_SNAPSHOTS in all; drop leftovers of killed downloads.

    Runs under the download lock, so no staging folder here belongs to a live download.
    """
    for leftover in snapshots.glob(f"{STAGING_PREFIX}*"):
        shutil.rmtree(leftover, ignore_errors=True)
    others = [p for p in snapshots.iterdir() if p.is_dir() and COMMIT_ID.fullmatch(p.name) and p != keep]
    others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in others[KEEP_SNAPSHOTS - 1 :]:
        shutil.rmtree(old, ignore_errors=True)


def _status(exc: Exception) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def _transient(exc: BaseException | None) -> bool:
    """Whether the error may pass: 5xx, 429, a dropped connection (also as the cause of a failed download)."""
    while exc is not None:
        if isinstance(exc, httpx2.TransportError) or _status(exc) in RETRY_STATUS:
            return True
        exc = exc.__cause__
    return False


def _describe(exc: BaseException) -> str:
    status = _status(exc) or _status(exc.__cause__)
    return f"HTTP {status}" if status is not None else type(exc).__name__
