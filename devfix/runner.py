"""Many files: read, prefilter, process in a pool, keep the order deterministic."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from devfix.findings import FileResult
from devfix.fix_policy import FixPolicy
from devfix.notebooks import is_notebook
from devfix.rule_registry import spec_by_code
from devfix.workers import in_worker, start_worker
from devfix.writing import UnreadableFile, read_source

if TYPE_CHECKING:
    from devfix.analysis.project import ProjectIndex
    from devfix.cache import ResultCache

PREFILTER_WORDS = (b"torch", b"cuda", b".numpy(")  # `.numpy(`: a helper given tensors by other files; bytes with a NUL (UTF-16, UTF-32) are decoded first, never skipped
PROGRESS_MIN_FILES = 20


@dataclass(frozen=True)
class Job:
    """Everything a worker process needs for one file (picklable)."""

    path: str
    rule_codes: tuple[str, ...]
    policy: FixPolicy
    max_file_bytes: int
    named: bool = False  # named on the command line: parsed even without a word of torch in it
    report_unused_ignores: bool = False
    run_id: str = ""
    file_timeout: float | None = None  # seconds for the analysis (`budget.run_deep`); None: no limit
    file_memory_limit: int | None = None  # MiB of address space, applied in worker processes only


_index: tuple[str, ProjectIndex] | None = None  # this process's index for the run it works for


def project_index(run_id: str) -> ProjectIndex:
    """One index per run and process: each imported module is read once, not once per importer
    (a diffusers pipeline imports dozens). The files do not change during a run: writes come after."""
    from devfix.analysis.project import ProjectIndex  # only for files that are analysed, not answered from the cache

    global _index
    if _index is None or _index[0] != run_id or not run_id:
        _index = (run_id, ProjectIndex())
    return _index[1]


def process_path(job: Job) -> FileResult:
    path = Path(job.path)
    try:
        source = read_source(path, job.max_file_bytes)
    except UnreadableFile as error:
        return FileResult(job.path, b"", b"", error=str(error))
    return process_source(source, job)


def process_source(source: bytes, job: Job) -> FileResult:
    """One file's bytes, already read (from disk, or from standard input under `job.path`)."""
    if len(source) > job.max_file_bytes:
        return FileResult(job.path, source, source, error=f"{job.path}: {len(source)} bytes, over the {job.max_file_bytes}-byte limit; skipped")
    from devfix.budget import OverTimeBudget, StillRunning, end_process_soon, run_deep
    from devfix.engine import (  # the analysis: only for files not answered from the cache
        RuleProducedInvalidCode,
        process,
    )
    from devfix.notebook_engine import process_notebook

    rules = [spec_by_code(code) for code in job.rule_codes]  # loaded only for files that need them
    if not job.named and not job.report_unused_ignores and b"\0" not in source and not any(word in source for word in PREFILTER_WORDS):
        return FileResult(job.path, source, source)

    def analyse() -> FileResult:
        if is_notebook(job.path):
            return process_notebook(source, job.path, rules, project_index(job.run_id), job.policy, job.report_unused_ignores)
        return process(source, job.path, rules, project_index(job.run_id), job.policy, report_unused_ignores=job.report_unused_ignores)

    def skipped(reason: str) -> FileResult:
        return FileResult(job.path, source, source, error=f"{job.path}: {reason}; file skipped")

    try:
        return run_deep(analyse, job.file_timeout)
    except RuleProducedInvalidCode as error:
        return FileResult(job.path, source, source, error=str(error))
    except (OverTimeBudget, StillRunning) as error:
        if isinstance(error, StillRunning) and in_worker():
            end_process_soon()  # its analysis goes on in native code: this worker must not take more files
        return skipped(f"analysis took over {job.file_timeout:g} s (`file-timeout` in the devfix configuration)")
    except MemoryError:
        if in_worker():
            end_process_soon()  # its heap stays near the cap: the next file could not even start its analysis thread
        limit = f" than {job.file_memory_limit} MiB (`file-memory-limit` in the devfix configuration)" if in_worker() and job.file_memory_limit else ""
        return skipped(f"analysis needed more memory{limit}")
    except RecursionError:
        return skipped("nested too deeply to analyse")
    except Exception as error:  # noqa: BLE001 - a rule crashed: report it, keep the other files going
        return FileResult(job.path, source, source, error=f"{job.path}: internal error in devfix: {error!r}; file left untouched")


def analyse_path(job: Job) -> tuple[FileResult, dict[str, bool]]:
    """`process_path`, and the other files the answer rests on (for the result cache)."""
    if in_worker():
        from devfix.budget import ending, limit_memory

        if ending():
            os._exit(1)  # its last file left it near its memory cap or still running: the pool runs this file anew
        limit_memory(job.file_memory_limit)
    index = project_index(job.run_id)
    index.take_consulted()
    result = process_path(job)
    return result, index.take_consulted()


def run(
    work: Sequence[Job],
    jobs: int | None = None,
    on_progress: Callable[[int], None] | None = None,
    cache: ResultCache | None = None,
) -> list[FileResult]:
    """Results in the order of `work` (already sorted by discovery); each file with its own rules
    and policy (a nested project's configuration applies to its files). With a `cache`, files
    whose entry is still valid are answered here, without starting a worker; the rest go to the
    workers, and `on_progress` counts each file as it finishes, whatever its place."""
    run_id = uuid.uuid4().hex
    work = [replace(job, run_id=run_id) for job in work]
    results: list[FileResult | None] = [None] * len(work)
    pending = list(range(len(work)))
    if cache is not None:
        pending = [position for position in pending if not _answer_from(cache, work[position], results, position)]
    done = len(work) - len(pending)
    if on_progress is not None and done:
        on_progress(done)
    workers = max(1, jobs or os.cpu_count() or 1)
    for position, (result, consulted) in _map([work[position] for position in pending], pending, workers):
        results[position] = result
        if cache is not None:
            cache.store(work[position], result.source, result, consulted)
        done += 1
        if on_progress is not None:
            on_progress(done)
    if cache is not None:
        cache.save()
    return results  # type: ignore[return-value] - every position was filled


def _answer_from(cache: ResultCache, job: Job, results: list[FileResult | None], position: int) -> bool:
    try:
        source = read_source(Path(job.path), job.max_file_bytes)
    except UnreadableFile:
        return False  # the worker reports it
    results[position] = cache.lookup(job, source)
    return results[position] is not None


def _map(work: list[Job], positions: list[int], workers: int) -> Iterator[tuple[int, tuple[FileResult, dict[str, bool]]]]:
    """(position, outcome) as each file finishes, analysed in worker processes (with `-j1` and for
    one file too: only there are the memory limit and the isolation). A worker that dies (a native
    crash) costs only the file it was on: the files left unfinished are run again, each in a
    worker of its own."""
    if not work:
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    unfinished = dict(zip(positions, work))
    try:
        with ProcessPoolExecutor(max_workers=min(workers, len(work)), initializer=start_worker, initargs=(os.getpid(),)) as pool:
            futures = {pool.submit(analyse_path, job): position for job, position in zip(work, positions)}
            for future in as_completed(futures):
                outcome = future.result()
                del unfinished[futures[future]]
                yield futures[future], outcome
    except BrokenProcessPool:
        for position, job in unfinished.items():
            yield position, _isolated(job)


def _isolated(job: Job) -> tuple[FileResult, dict[str, bool]]:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(max_workers=1, initializer=start_worker, initargs=(os.getpid(),)) as pool:
            return pool.submit(analyse_path, job).result()
    except BrokenProcessPool:
        memory = f"memory over its {job.file_memory_limit} MiB limit (`file-memory-limit`) in native code, or " if job.file_memory_limit else ""
        message = (f"{job.path}: devfix's worker process died on this file ({memory}a fault in a native parser); "
                   "file skipped. Please report it with the file.")
        return FileResult(job.path, b"", b"", error=message), {}


def wants_progress(file_count: int) -> bool:
    return file_count > PROGRESS_MIN_FILES and sys.stderr.isatty()
