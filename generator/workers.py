"""How many worker processes a stage that spreads work over processes uses unless told, and the one way they start."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor


def default_jobs() -> int:
    """One worker per core this process may run on (``--jobs`` of grade and build; validation's readers).

    The cores the process is allowed, not the machine's: a container or ``taskset`` limited to two of 64
    cores gets two workers, not 64 that would share two.
    """
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # platforms without affinity (macOS)
        return os.cpu_count() or 1


def process_pool(
    preload: str, workers: int, initializer: Callable[..., None] | None = None, initargs: tuple = ()
) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes that need the module ``preload`` (each starts with ``initializer(*initargs)``).

    Every stage that spreads work over processes starts them here.
    """
    context = _context(preload, workers)
    return ProcessPoolExecutor(workers, mp_context=context, initializer=initializer, initargs=initargs)


def _context(preload: str, workers: int) -> multiprocessing.context.BaseContext:
    """How to start ``workers`` worker processes that need the module ``preload`` (and what it imports).

    Several are forked from a server process that imported ``preload`` once. The server is a fresh
    interpreter, so no lock or thread of this process is inherited mid-use (as a plain fork could); and
    unlike spawned workers, each of which imported pandas, pyarrow and the stage's code again (about a second
    each), the workers start with the imports done. The server starts once per process: a later stage's
    workers fork from the one an earlier stage started, importing what that one did not. A lone worker is
    spawned: a server would import as much as it does, and hold that memory besides. Platforms without fork
    spawn them all.
    """
    if workers <= 1 or "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([preload])
    return context
