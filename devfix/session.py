"""One CLI run: settings → files → results → (for `fix`) atomic writes. No printing here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from devfix.config import Settings, load_settings
from devfix.discovery import discover
from devfix.findings import FileResult
from devfix.fix_policy import FixPolicy
from devfix.rule_registry import select_specs
from devfix.runner import Job, process_source, run
from devfix.writing import WriteRefused, write_atomically


STDIN = Path("-")


class StdinMisused(ValueError):
    """`-` given with other paths, or with `fix` asked to write in place."""


@dataclass(frozen=True)
class Request:
    paths: tuple[Path, ...]
    apply_fixes: bool
    write: bool
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    unsafe_fixes: bool | None = None
    jobs: int | None = None
    stdin: bytes | None = None  # the source when `paths` is `-`
    stdin_filename: str | None = None  # its name in reports; its folder finds the configuration

    @property
    def reads_stdin(self) -> bool:
        return self.paths == (STDIN,)


@dataclass
class Outcome:
    settings: Settings
    results: list[FileResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rule_crashes: list[str] = field(default_factory=list)
    written: list[FileResult] = field(default_factory=list)

    @property
    def findings(self) -> int:
        return sum(len(result.findings) for result in self.results)

    @property
    def changed(self) -> list[FileResult]:
        return [result for result in self.results if result.changed]


def execute(request: Request, progress: Callable[[int], Callable[[int], None] | None] | None = None) -> Outcome:
    """`progress(total)` may return a per-file callback (the CLI's progress bar)."""
    if STDIN in request.paths and not request.reads_stdin:
        raise StdinMisused("`-` (standard input) cannot be combined with other paths")
    if request.reads_stdin:
        return _execute_stdin(request)
    base = load_settings(request.paths[0] if request.paths else Path.cwd())
    settings = base.with_overrides(
        select=request.select, ignore=request.ignore, unsafe_fixes=request.unsafe_fixes, jobs=request.jobs
    )
    settings = settings.with_overrides(exclude=base.exclude + request.exclude)
    rules = select_specs(settings.select, settings.ignore)
    found = discover(list(request.paths), settings.exclude)
    outcome = Outcome(settings, errors=list(found.errors), notes=list(found.notes))
    policy = FixPolicy(apply=request.apply_fixes, unsafe=settings.unsafe_fixes)
    callback = progress(len(found.files)) if progress is not None else None
    codes = tuple(rule.CODE for rule in rules)
    outcome.results = run(found.files, codes, policy, settings.max_file_bytes, settings.jobs, callback, found.named)
    outcome.errors += [result.error for result in outcome.results if result.error]
    outcome.rule_crashes += [crash for result in outcome.results for crash in result.rule_crashes]
    if request.write:
        _write(outcome)
    return outcome


def _execute_stdin(request: Request) -> Outcome:
    """Standard input as one file named `stdin_filename` (or `-`): editors and formatters pipe the
    buffer through the tool. Nothing is written; `fix` prints the fixed source instead."""
    name = request.stdin_filename or "-"
    base = load_settings(Path(name).parent if request.stdin_filename else Path.cwd())
    settings = base.with_overrides(select=request.select, ignore=request.ignore, unsafe_fixes=request.unsafe_fixes)
    rules = select_specs(settings.select, settings.ignore)
    policy = FixPolicy(apply=request.apply_fixes, unsafe=settings.unsafe_fixes)
    job = Job(name, tuple(rule.CODE for rule in rules), policy, settings.max_file_bytes, named=True)
    result = process_source(request.stdin or b"", job)
    outcome = Outcome(settings, results=[result])
    outcome.errors += [result.error] if result.error else []
    outcome.rule_crashes += list(result.rule_crashes)
    return outcome


def _write(outcome: Outcome) -> None:
    for result in outcome.changed:
        try:
            write_atomically(Path(result.path), result.source, result.fixed)
        except WriteRefused as refusal:
            outcome.errors.append(str(refusal))
        else:
            outcome.written.append(result)
