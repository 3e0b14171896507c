"""Print the number of the pull request a validate run was for, as GitHub knows it.

Usage: GH_TOKEN=... python pull_request.py EVENT_JSON   (comment.yml passes $GITHUB_EVENT_PATH)

The number never comes from the run's artifact: the pull request wrote that,
and could name any pull request. ``workflow_run.pull_requests`` is empty for
pull requests from forks, so this lists the repository's open pull requests
through ``gh api`` and keeps the one whose head commit is the run's head SHA
and whose head repository and branch are the run's: another pull request
opened on the same commit from elsewhere (then closed) must not get this
run's preview.

Exit 0 printing the number; exit 0 printing nothing (and saying why on stderr)
when no open pull request has that head commit (closed since, or pushed again);
exit 1 when the event is malformed, ``gh`` fails, or several open pull
requests share the head commit. Standard library only.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
SPACE = re.compile(r"\s*")


class PullRequestLookupError(RuntimeError):
    """The pull request cannot be determined; nothing may be posted."""


class RunHead(NamedTuple):
    """Where the validate run's code came from; a pull request must match all of it."""

    repository: str
    """The base repository (OWNER/NAME) the comment goes to."""
    sha: str
    """The head commit the run checked."""
    head_repository: str
    """The repository the head commit was pushed to (a fork, or the base itself)."""
    head_branch: str
    """The branch it was pushed to."""


def read_event(path: Path) -> RunHead | None:
    """Return the run's head of a workflow_run event, or None when its run was no pull request's."""
    try:
        event = json.loads(path.read_text("utf-8"))
        run, repository = event["workflow_run"], event["repository"]["full_name"]
        kind, sha = run["event"], run["head_sha"]
        head_repository, head_branch = run["head_repository"]["full_name"], run["head_branch"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise PullRequestLookupError(
            f"{path}: not a workflow_run event ({type(error).__name__}: {error}); "
            "pass $GITHUB_EVENT_PATH of a workflow_run-triggered job"
        ) from None
    if kind != "pull_request":
        return None
    if not (isinstance(repository, str) and REPOSITORY.fullmatch(repository)):
        raise PullRequestLookupError(f"{path}: repository.full_name is not OWNER/NAME")
    if not (isinstance(sha, str) and SHA.fullmatch(sha)):
        raise PullRequestLookupError(f"{path}: workflow_run.head_sha is not a commit SHA")
    if not (isinstance(head_repository, str) and isinstance(head_branch, str)):
        raise PullRequestLookupError(f"{path}: workflow_run.head_repository or head_branch is not text")
    return RunHead(repository, sha, head_repository, head_branch)


def open_pull_requests(repository: str) -> list[dict]:
    """Every open pull request of ``repository``, through ``gh api --paginate`` (argv only, no shell)."""
    command = ["gh", "api", "--paginate", f"repos/{repository}/pulls?state=open&per_page=100"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PullRequestLookupError(f"could not run gh ({error}); install the GitHub CLI or put it on PATH") from None
    if done.returncode != 0:
        raise PullRequestLookupError(
            f"gh api failed (exit {done.returncode}): {done.stderr.strip()[:500]} — check that "
            "GH_TOKEN is set and the job has pull-requests: read"
        )
    return _pages(done.stdout)


def _pages(output: str) -> list[dict]:
    """Join the JSON arrays ``gh api --paginate`` prints one after another."""
    decoder, pulls = json.JSONDecoder(), []
    at = SPACE.match(output).end()
    while at < len(output):
        try:
            page, at = decoder.raw_decode(output, at)
        except ValueError:
            raise PullRequestLookupError("gh api printed something that is not JSON; nothing posted") from None
        if not isinstance(page, list):
            raise PullRequestLookupError("gh api printed a JSON object where a list of pull requests was expected")
        pulls += page
        at = SPACE.match(output, at).end()
    return pulls


def matching_numbers(pulls: list[dict], run: RunHead) -> list[int]:
    """Numbers of the open pull requests into the run's repository whose head is the run's head."""
    numbers = []
    for pull in pulls:
        try:
            number, state, base = pull["number"], pull["state"], pull["base"]["repo"]["full_name"]
            head = (pull["head"]["sha"], pull["head"]["repo"]["full_name"], pull["head"]["ref"])
        except (KeyError, TypeError):
            continue  # not a pull request as the REST API describes one (a deleted fork has repo: null)
        wanted = (run.sha, run.head_repository, run.head_branch)
        if (head, state, base) == (wanted, "open", run.repository) and type(number) is int and number > 0:
            numbers.append(number)
    return sorted(set(numbers))


def main(argv: list[str]) -> int:
    """Print the pull request number for the event file in argv[0]; return the exit code."""
    if len(argv) != 1:
        sys.stderr.write("usage: pull_request.py EVENT_JSON\n")
        return 2
    try:
        found = read_event(Path(argv[0]))
        if found is None:
            sys.stderr.write("pull_request.py: the run was not for a pull request; nothing to post\n")
            return 0
        numbers = matching_numbers(open_pull_requests(found.repository), found)
    except PullRequestLookupError as error:
        sys.stderr.write(f"pull_request.py: {error}\n")
        return 1
    if len(numbers) > 1:
        sys.stderr.write(
            f"pull_request.py: open pull requests {numbers} share head {found.sha}; cannot tell which "
            "one the run was for, so nothing is posted\n"
        )
        return 1
    if not numbers:
        sys.stderr.write(
            f"pull_request.py: no open pull request has head {found.sha} (closed, or pushed again "
            "since); nothing to post\n"
        )
        return 0
    print(numbers[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
