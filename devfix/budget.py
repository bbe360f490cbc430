"""One file's analysis within its budget: a time limit, a memory limit, and a stack deep enough for
everything Python's own parser accepts.

libcst's visitors recurse once or more per nesting level: a 500-term sum, which CPython parses
(it accepts ~2,900), overflows the default recursion limit of 1,000. The analysis runs in a thread
with a large stack and a raised limit instead. A file of a few MB with a finding costs minutes and
gigabytes in libcst (metadata for the whole tree): the thread gets `seconds`, then the exception
`OverTimeBudget` is raised inside it; a worker process caps its address space (`limit_memory`),
so such a file ends in `MemoryError` instead of swapping the machine.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

STACK_BYTES = 128 * 1024 * 1024  # reserved, not committed; the deepest input CPython accepts uses under 48 MiB
RECURSION_LIMIT = 60_000  # libcst uses up to ~12 frames per level of the deepest input CPython accepts
GRACE_SECONDS = 10.0  # for the exception to surface from native code (libcst's parser) after the budget


class OverTimeBudget(BaseException):
    """Raised inside the analysis when its time is up. A BaseException: a rule's `except Exception`
    (or the engine's, which skips a crashing rule) must not swallow it."""


class StillRunning(Exception):
    """The analysis ignored `OverTimeBudget` for `GRACE_SECONDS` (stuck in native code): the process
    that runs it must end (see `end_process_soon`)."""


def run_deep(function: Callable[[], T], seconds: float | None = None) -> T:
    """`function()` on a deep stack, within `seconds` (None: no limit). Its exception is raised here."""
    outcome: list = []

    def target() -> None:
        _IMPORTS.reset()
        try:
            outcome.append((True, function()))
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread as it is
            outcome.append((False, error))

    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    if seconds is not None:
        _IMPORTS.install()
    thread = _start_deep(target)
    _join_within(thread, seconds)
    if thread.is_alive():
        _raise_in(thread, OverTimeBudget)
        thread.join(GRACE_SECONDS)
        if thread.is_alive():
            raise StillRunning
        raise OverTimeBudget  # whatever it returned: libcst's cleanup can turn the exception into a KeyError
    succeeded, value = outcome[0]
    if succeeded:
        return value
    raise value


def _join_within(thread: threading.Thread, seconds: float | None) -> None:
    """Wait for `thread` until it ends or has analysed for `seconds`. Time it spends importing
    (devfix loads its rules and libcst's codemod helpers on first use in each process: a second or
    more on a busy machine) is devfix's start-up, not the file's analysis: it is not counted."""
    if seconds is None:
        thread.join()
        return
    started = time.monotonic()
    while True:
        spent = time.monotonic() - started - _IMPORTS.seconds(thread.ident)
        if spent >= seconds:
            return
        thread.join(seconds - spent)
        if not thread.is_alive():
            return


class _ImportClock:
    """Seconds each thread has spent in first-time imports, timed in importlib's `_find_and_load`
    (which both `import` statements and `importlib.import_module` reach only for a module not
    loaded yet): nested imports count once, an import under way counts up to now."""

    def __init__(self) -> None:
        self._done: dict[int, float] = {}
        self._since: dict[int, float] = {}  # the outermost import under way in each thread
        self._installed = False

    def install(self) -> None:
        """Wrap `_find_and_load` once per process (left alone where this CPython has none)."""
        bootstrap = getattr(importlib, "_bootstrap", None)
        original = getattr(bootstrap, "_find_and_load", None)
        if self._installed or original is None:
            return
        self._installed = True

        def find_and_load(name, import_):
            ident = threading.get_ident()
            if ident in self._since:
                return original(name, import_)
            self._since[ident] = time.monotonic()
            try:
                return original(name, import_)
            finally:
                self._done[ident] = self._done.get(ident, 0.0) + time.monotonic() - self._since.pop(ident)

        bootstrap._find_and_load = find_and_load

    def reset(self) -> None:
        """For the calling thread, which starts an analysis (a thread's ident may be reused)."""
        self._done.pop(threading.get_ident(), None)

    def seconds(self, ident: int | None) -> float:
        since = self._since.get(ident)
        return self._done.get(ident, 0.0) + (time.monotonic() - since if since is not None else 0.0)


_IMPORTS = _ImportClock()


def _start_deep(target: Callable[[], None]) -> threading.Thread:
    with _stack_size_lock:
        previous = threading.stack_size(STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name="devfix-analysis", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    return thread


_stack_size_lock = threading.Lock()  # `threading.stack_size` is process-wide


def _raise_in(thread: threading.Thread, exception: type[BaseException]) -> None:
    """Raise `exception` in `thread` at its next Python instruction (CPython's async exception)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exception))


def limit_memory(megabytes: int | None) -> None:
    """Cap this process's address space (a worker's: never call it in devfix's main process).
    Allocations over it raise MemoryError."""
    try:
        import resource
    except ImportError:  # not on Windows: no memory budget there
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = resource.RLIM_INFINITY if megabytes is None else megabytes * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        wanted = hard if wanted == resource.RLIM_INFINITY else min(wanted, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
    except (ValueError, OSError):
        pass  # a limit the system refuses: the run goes on without one


def end_process_soon(seconds: float = 1.0) -> None:
    """End this worker process shortly, after it has handed back the result it is returning (an
    analysis it could not stop would hold its CPU and memory for the next files); if the pool hands
    it another file first, it ends then (`ending`), and that file runs in a fresh worker."""
    global _ending
    _ending = True
    threading.Timer(seconds, os._exit, args=(1,)).start()


_ending = False


def ending() -> bool:
    """This worker was told to end (`end_process_soon`): it must take no more files."""
    return _ending
