"""What every worker process devfix starts does first: die with the process that started it.

A pool worker outlives a parent killed with SIGKILL (it is blocked reading its task queue), and
keeps the caller's stdout open: `devfix fix | tee log` would never end. On Linux the kernel can
send the worker SIGTERM when its parent dies (PR_SET_PDEATHSIG); elsewhere a watchdog thread polls
the parent's pid.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1

_in_worker = False


def start_worker(parent: int) -> None:
    """A pool worker's initializer (`initargs=(os.getpid(),)`): it dies with `parent` and knows it
    is a worker (where a file's memory budget may cap the whole process), and analyses with
    rarer garbage collections (`gc_settings`: a spawned worker does not inherit them)."""
    from devfix import gc_settings

    global _in_worker
    _in_worker = True
    gc_settings.for_analysis()
    die_with_parent(parent)


def in_worker() -> bool:
    return _in_worker


def die_with_parent(parent: int) -> None:
    """`parent` is the pid that started this process, passed in: a parent killed before this
    runs (a spawned worker takes a second to start) must not be mistaken for init."""
    if sys.platform.startswith("linux") and _parent_death_signal(signal.SIGTERM):
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)
        return
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), daemon=True, name="devfix-parent-watchdog").start()


def _parent_death_signal(number: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(number), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)
