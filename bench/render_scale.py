"""Render stage at scale: peak RSS and the seconds of its own Python work, apart from ``mkdocs build``.

For each built leaderboard folder given (e.g. by ``dualboard build``), the render stage runs in a
child process as ``dualboard render`` runs it after ``dualboard validate`` (run first, untimed): with
the folder's build cache, runs validated before by this code are not read again. The folder's
``site/`` and MkDocs' kept output are deleted first, so the stage is not skipped and the site is
built in full. One line per folder:

* ``render s``: the whole stage; ``mkdocs s``: the ``mkdocs build`` subprocess alone;
  ``python s``: the difference, the stage's own work (reading, pages, data files, the docs folder);
  ``python cpu s``: the CPU seconds of that process (mkdocs excluded), steadier than wall time on a
  shared machine;
* ``RSS GB``: the peak resident memory of the stage's process tree (sampled every 50 ms, the child
  and mkdocs together); ``python GB``: the peak of the Python process alone (``ru_maxrss``).

With ``--profile FILE`` the child also writes a cProfile of the stage (``python -m pstats FILE``).
Figures depend on the machine and its load: quote them with ``uptime``'s load average.

Usage::

    python bench/render_scale.py BOARD [BOARD ...] [--profile FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from scale import communicate_watched  # bench/scale.py, beside this script


def render_once(root: Path, profile: str | None) -> dict[str, float]:
    """Run the render stage of the board at ``root`` in this process; its seconds and peak RSS."""
    from dualboard import pipeline
    from dualboard.project import Project
    from dualboard.render import site
    from dualboard.store.local import LocalStore

    project = Project(root)
    shutil.rmtree(project.site_dir, ignore_errors=True)  # else the build cache skips the stage
    mkdocs = 0.0
    build_site = site.build_site  # the pipeline imports it from there when it builds, so the patch is seen

    def timed_build_site(*args, **kwargs):
        nonlocal mkdocs
        started = time.perf_counter()
        try:
            return build_site(*args, **kwargs)
        finally:
            mkdocs += time.perf_counter() - started

    site.build_site = timed_build_site
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    if profiler:
        profiler.enable()
    pipeline.render(project, LocalStore(project.store_dir))
    if profiler:
        profiler.disable()
        profiler.dump_stats(profile)
    total = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "render": total,
        "mkdocs": mkdocs,
        "python": total - mkdocs,
        "python_cpu": usage.ru_utime + usage.ru_stime,
        "python_rss": usage.ru_maxrss * 1024,
    }


def measure(root: Path, profile: str | None) -> dict[str, float]:
    """Render ``root`` in a child process, sampling its process tree's RSS; the child's figures and the peak."""
    validate = [sys.executable, "-m", "dualboard", "validate", "--root", str(root)]
    subprocess.run(validate, check=True, stdout=subprocess.DEVNULL)  # as a build does before: runs known valid
    command = [sys.executable, __file__, "--child", str(root)] + (["--profile", profile] if profile else [])
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    (output, errors), peak = communicate_watched(proc)
    if proc.returncode != 0:
        sys.exit(f"render of {root} failed ({proc.returncode}):\n{errors[-4000:]}")
    return {**json.loads(output.strip().splitlines()[-1]), "tree_rss": peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("boards", nargs="+", type=Path, help="built leaderboard folders")
    parser.add_argument("--profile", help="write a cProfile of the last board's render here (it slows the render)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(render_once(args.boards[0].resolve(), args.profile)))
        return
    print(
        f"{'board':<28} {'render s':>8} {'mkdocs s':>8} {'python s':>8} {'python cpu s':>12} {'RSS GB':>6} "
        f"{'python GB':>9}"
    )
    for i, board in enumerate(args.boards):
        m = measure(board.resolve(), args.profile if i == len(args.boards) - 1 else None)
        print(
            f"{str(board):<28} {m['render']:>8.1f} {m['mkdocs']:>8.1f} {m['python']:>8.1f} {m['python_cpu']:>12.1f} "
            f"{m['tree_rss'] / 1e9:>6.2f} {m['python_rss'] / 1e9:>9.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
