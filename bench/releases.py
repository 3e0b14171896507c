"""The size of the gh-pages branch over many releases: what GitHub Pages would serve.

A synthetic board (``--size`` RUNSxQUESTIONSxROUNDS, answers padded to ``--answer-chars``) is put
under git, built, and released ``--releases`` times with ``dualboard release``; every
``--add-every``-th release first adds one run and builds again. After each release the script reads
the ``gh-pages`` branch (``git ls-tree``) and prints:

* ``version MB``: the files of that release's version folder;
* ``shared MB``: the ``shared/`` folder at the branch's root, which every version uses;
* ``gh-pages MB``: every file of the branch, as ``git checkout gh-pages`` would write it;
* the seconds ``dualboard release`` took.

Last, the largest folders of the last version folder, so it shows what a version's size is made of.
Setting up and building the board is not timed. Figures depend on the machine: quote them with its
core count and load.

Usage::

    python bench/releases.py [--size 10x2000x5] [--answer-chars 300-2000] [--releases 10] [--add-every 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from synthetic_board import add_runs, make_board, pad_responses  # bench/synthetic_board.py, beside this script

from dualboard.render.shared_files import SHARED_DIR

REPO = Path(__file__).resolve().parents[1]
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
"""Who commits on the scratch board's branches (the machine may have no git identity)."""


def dualboard(root: Path, *args: str) -> float:
    """Run ``dualboard ARGS --root ROOT`` in a child process; return its seconds, or stop with its output."""
    started = time.perf_counter()
    command = [sys.executable, "-m", "dualboard", *args, "--root", str(root)]
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env={**os.environ, **GIT_IDENTITY})
    if proc.returncode != 0:
        sys.exit(f"dualboard {' '.join(args)} failed ({proc.returncode}):\n{(proc.stdout + proc.stderr)[-4000:]}")
    return time.perf_counter() - started


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` and return its output."""
    env = {**os.environ, **GIT_IDENTITY}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env).stdout


def branch_sizes(root: Path) -> Counter:
    """Bytes of the gh-pages branch per top-level entry (a version, ``shared``, ``versions.json``...)."""
    sizes: Counter = Counter()
    for line in git(root, "ls-tree", "-r", "-l", "-z", "gh-pages").split("\0"):
        if line:
            meta, path = line.split("\t", 1)
            sizes[path.split("/", 1)[0]] += int(meta.split()[3])
    return sizes


def largest_folders(root: Path, version: str, depth: int = 3, top: int = 8) -> list[tuple[str, int]]:
    """The ``top`` largest folders ``depth`` levels down in ``version``'s folder on gh-pages, in bytes."""
    sizes: Counter = Counter()
    for line in git(root, "ls-tree", "-r", "-l", "-z", "gh-pages", f"{version}/").split("\0"):
        if line:
            meta, path = line.split("\t", 1)
            sizes["/".join(path.split("/")[1:-1][:depth]) or "(root files)"] += int(meta.split()[3])
    return sizes.most_common(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="10x2000x5", help="RUNSxQUESTIONSxROUNDS of the first release")
    parser.add_argument("--answer-chars", default="300-2000", help="answer length range MIN-MAX in characters")
    parser.add_argument("--releases", type=int, default=10, help="how many releases to make")
    parser.add_argument("--add-every", type=int, default=3, help="add one run before every Nth release (0: never)")
    args = parser.parse_args()
    runs, questions, rounds = (int(x) for x in args.size.split("x"))
    chars = tuple(int(x) for x in args.answer_chars.split("-"))
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {args.size}, answers {args.answer_chars} chars")
    print(f"{'release':>7} {'runs':>5} {'release s':>9} {'version MB':>10} {'shared MB':>9} {'gh-pages MB':>11}")
    with tempfile.TemporaryDirectory(prefix="dualboard-releases-") as tmp:
        root = make_board(Path(tmp), questions, runs, rounds)
        pad_responses(sorted((root / "submissions").glob("*/*")), *chars)
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "board")
        dualboard(root, "build", "--no-progress")
        for n in range(1, args.releases + 1):
            if args.add_every and n > 1 and n % args.add_every == 1 % args.add_every:
                pad_responses(add_runs(root, 1, rounds, first=runs), *chars)
                runs += 1
                dualboard(root, "build", "--no-progress")
            version = f"1.{n}"
            seconds = dualboard(root, "release", version, "--date", f"2026-11-{n:02d}")
            sizes = branch_sizes(root)
            print(
                f"{version:>7} {runs:>5} {seconds:>9.1f} {sizes[version] / 1e6:>10.1f} "
                f"{sizes[SHARED_DIR] / 1e6:>9.1f} {sum(sizes.values()) / 1e6:>11.1f}",
                flush=True,
            )
        print(f"largest folders of version {version} (MB):")
        for folder, size in largest_folders(root, version):
            print(f"  {size / 1e6:>8.1f}  {folder}")


if __name__ == "__main__":
    main()
