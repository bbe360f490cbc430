"""Full analyses for the language server, in one worker process.

A full analysis of a long file is seconds of pure Python. In a thread of the server it would hold
the GIL, and the quick diagnostics and replies would wait for it. The worker process runs full
analyses one at a time; one requested for a version that is already outdated and has not started
is cancelled. If no worker process can be started, analyses run in a thread instead.
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
from devfix.codemods import ALL_RULES, UnknownRuleCode, select_rules
from devfix.codemods.base import FixPolicy
from devfix.engine import RuleProducedInvalidCode, process
from devfix.findings import Finding


@dataclass(frozen=True)
class Request:
    """What a full analysis needs: the text, where it lives (for the project index and messages),
    and the rules the settings select."""

    text: str
    path: str
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    findings: tuple[Finding, ...]
    parses: bool


def analyse(request: Request) -> Outcome:
    """The engine's check on the whole text, as `devfix check` runs it."""
    try:
        rules = select_rules(request.select, request.ignore)
    except UnknownRuleCode:
        rules = ALL_RULES
    project = ProjectIndex({str(Path(request.path).resolve()): request.text})
    try:
        result = process(request.text.encode("utf-8"), request.path, rules, project, FixPolicy())
    except RuleProducedInvalidCode:
        return Outcome((), False)
    return Outcome(tuple(result.findings), result.error is None)


def _quiet_worker() -> None:
    """The server's stdout is the protocol channel: the worker must never write to it."""
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr


class BackgroundAnalyser:
    """One worker process; `submit` returns an awaitable outcome and cancels the same key's
    earlier request if it has not started."""

    def __init__(self) -> None:
        self._executor: concurrent.futures.Executor | None = None
        self._queued: dict[str, concurrent.futures.Future] = {}

    def start(self) -> None:
        if self._executor is not None:
            return
        try:
            context = multiprocessing.get_context("spawn")
            self._executor = concurrent.futures.ProcessPoolExecutor(1, mp_context=context, initializer=_quiet_worker)
            self._executor.submit(int)  # the worker starts (and imports devfix) now, not at the first analysis
        except (OSError, RuntimeError, concurrent.futures.process.BrokenProcessPool):
            self._restart_in_thread()

    async def analyse(self, key: str, request: Request) -> Outcome:
        self.start()
        earlier = self._queued.pop(key, None)
        if earlier is not None:
            earlier.cancel()
        try:
            future = self._executor.submit(analyse, request)
        except concurrent.futures.process.BrokenProcessPool:
            future = self._restart_in_thread().submit(analyse, request)
        self._queued[key] = future
        try:
            return await asyncio.wrap_future(future)
        except concurrent.futures.process.BrokenProcessPool:  # the worker died mid-analysis
            return await asyncio.wrap_future(self._restart_in_thread().submit(analyse, request))
        finally:
            if self._queued.get(key) is future:
                del self._queued[key]

    def _restart_in_thread(self) -> concurrent.futures.Executor:
        self._executor = concurrent.futures.ThreadPoolExecutor(1)
        return self._executor

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
