"""How many worker processes a stage that spreads work over processes uses unless told."""

from __future__ import annotations

import os


def default_jobs() -> int:
    """One worker per core this process may run on (``--jobs`` of grade and build; validation's readers).

    The cores the process is allowed, not the machine's: a container or ``taskset`` limited to two of 64
    cores gets two workers, not 64 that would share two.
    """
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # platforms without affinity (macOS)
        return os.cpu_count() or 1
