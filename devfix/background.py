"""Full analyses and fixes for the language server, in one worker process.

A full analysis of a long file is seconds of pure Python. In a thread of the server it would hold
the GIL, and the quick diagnostics and replies would wait for it. The worker process runs full
analyses and fixes one at a time; an analysis requested for a version that is already outdated and
has not started is cancelled. If no worker process can be started, they run in a thread instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from devfix.analysis.project import ProjectIndex
from devfix.budget import OverTimeBudget, StillRunning, limit_memory, run_deep
from devfix.codemods import ALL_RULES, UnknownRuleCode, select_rules
from devfix.config import FILE_MEMORY_LIMIT, FILE_TIMEOUT
from devfix.engine import RuleProducedInvalidCode, process
from devfix.findings import FileResult, Finding
from devfix.fix_policy import FixPolicy
from devfix.tree_cache import TreeCache

OVER_BUDGET = (OverTimeBudget, StillRunning, MemoryError, RecursionError)
TREES = TreeCache()  # in the worker: a quick fix reuses the tree its diagnostics' analysis resolved


@dataclass(frozen=True)
class Request:
    """What a full analysis needs: the text, where it lives (for the project index and messages),
    and the rules the settings select."""

    text: str
    path: str
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    project_text: str | None = None  # the whole file, when `text` is a part of it
    timeout: float | None = FILE_TIMEOUT  # seconds (`file-timeout`): then the document gets no full analysis
    notebook: bool = False  # `text` is a notebook's `.ipynb` text (`devfix.lsp_notebooks`)


@dataclass(frozen=True)
class Outcome:
    findings: tuple[Finding, ...]
    parses: bool


def analyse(request: Request) -> Outcome:
    """The engine's check on the whole text, as `devfix check` runs it."""
    try:
        result = run_engine(request, FixPolicy(), TREES)
    except (RuleProducedInvalidCode, *OVER_BUDGET):
        return Outcome((), False)  # no findings it could stand behind: no quick fixes either
    return Outcome(tuple(result.findings), result.error is None)


def run_engine(request: Request, policy: FixPolicy, trees: TreeCache | None = None, report_remaining: bool = True) -> FileResult:
    """The engine on `request.text` with the selected rules; the project index sees that text as
    the file's content (an editor buffer is newer than the disk). `trees` and `report_remaining`
    as for `engine.process`."""
    try:
        rules = select_rules(request.select, request.ignore)
    except UnknownRuleCode:
        rules = ALL_RULES
    whole = request.text if request.project_text is None else request.project_text
    project = ProjectIndex({str(Path(request.path).resolve()): whole})
    # lone surrogates (an editor's broken buffer) stay bytes that do not decode: a parse error, not a crash
    source = request.text.encode("utf-8", "surrogatepass")
    if request.notebook:
        from devfix.notebook_engine import process_notebook

        return run_deep(lambda: process_notebook(source, request.path, rules, project, policy), request.timeout)
    return run_deep(
        lambda: process(source, request.path, rules, project, policy, request.project_text, trees=trees, report_remaining=report_remaining),
        request.timeout,
    )


def fix(request: Request, policy: FixPolicy) -> str | None:
    """The text after the fixes `policy` allows; None when nothing changes (or nothing can be
    changed safely: a text that does not parse, or a rule whose output would not parse)."""
    try:
        result = run_engine(request, policy, TREES, report_remaining=False)
    except (RuleProducedInvalidCode, *OVER_BUDGET):
        return None
    return result.fixed.decode("utf-8") if result.changed else None


def _quiet_worker(parent: int) -> None:
    """The server's stdout is the protocol channel: the worker must never write to it. It dies
    with the server (`workers.die_with_parent`), and a huge document cannot take the machine's
    memory (`budget.limit_memory`)."""
    from devfix.workers import start_worker

    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    start_worker(parent)
    limit_memory(FILE_MEMORY_LIMIT)


class BackgroundAnalyser:
    """One worker process behind awaitable `analyse` and `fix` calls."""

    def __init__(self) -> None:
        self._executor: concurrent.futures.Executor | None = None
        self._queued: dict[str, concurrent.futures.Future] = {}
        self._closed = False

    def start(self) -> None:
        if self._executor is not None:
            return
        try:
            context = multiprocessing.get_context("spawn")
            self._executor = concurrent.futures.ProcessPoolExecutor(1, mp_context=context, initializer=_quiet_worker, initargs=(os.getpid(),))
            self._executor.submit(int)  # the worker starts (and imports devfix) now, not at the first analysis
        except (OSError, RuntimeError, concurrent.futures.process.BrokenProcessPool):
            self._restart_in_thread()

    async def analyse(self, key: str, request: Request) -> Outcome:
        """A full analysis; a newer request with the same key cancels this one if it has not started."""
        earlier = self._queued.pop(key, None)
        if earlier is not None:
            earlier.cancel()
        return await self._run(key, Outcome((), False), analyse, request)

    async def fix(self, request: Request, policy: FixPolicy) -> str | None:
        return await self._run(None, None, fix, request, policy)

    async def _run(self, key: str | None, failed, function, *arguments):
        """`function(*arguments)` in the worker, or `failed` when it cannot be run: after
        `shutdown`, or when the worker dies on it (a native crash, memory over its limit). A dead
        worker is replaced for the next request, never by a thread of the server: the same
        request would take the server down with it."""
        if self._closed:
            return failed
        self.start()
        try:
            future = self._executor.submit(function, *arguments)
        except concurrent.futures.process.BrokenProcessPool:
            self._replace_worker()
            return failed
        if key is not None:
            self._queued[key] = future
        try:
            return await asyncio.wrap_future(future)
        except concurrent.futures.process.BrokenProcessPool:
            self._replace_worker()
            return failed
        finally:
            if key is not None and self._queued.get(key) is future:
                del self._queued[key]

    def _replace_worker(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    def _restart_in_thread(self) -> concurrent.futures.Executor:
        self._executor = concurrent.futures.ThreadPoolExecutor(1)
        return self._executor

    def shutdown(self) -> None:
        """Stop now, an analysis under way included: the interpreter's exit would otherwise wait
        for the worker to finish it, and `exit` must exit."""
        self._closed = True
        executor, self._executor = self._executor, None
        if executor is None:
            return
        workers = list((getattr(executor, "_processes", None) or {}).values())  # CPython's pool (3.14: terminate_workers)
        executor.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            worker.terminate()
