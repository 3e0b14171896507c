"""Time `dualboard build` on the demo leaderboard, stage by stage, and print the figures.

Usage: python bench/build.py [--repeat N]
A fresh copy of the repository's data/ and submissions/ is built each time
(cold: empty store and verdict cache), then rebuilt once (warm: cache hits).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def build(root: Path) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "dualboard", "build", "--root", str(root), "--no-progress"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(proc.stdout + proc.stderr)
    return time.perf_counter() - started, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for name in ("data", "submissions", "site_src"):
                shutil.copytree(REPO / name, root / name)
            shutil.copyfile(REPO / "mkdocs.yml", root / "mkdocs.yml")
            cold, out = build(root)
            warm, _ = build(root)
            answers = re.search(r"(\d+) answers graded", out).group(1)
            print(f"run {i + 1}: cold build {cold:.1f} s, warm rebuild {warm:.1f} s, {answers} answers")
            print(out.strip())


if __name__ == "__main__":
    main()
