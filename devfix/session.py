"""One CLI run: settings → files → results → (for `fix`) atomic writes. No printing here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from devfix.cache import ResultCache
from devfix.config import Settings, SettingsResolver
from devfix.discovery import discover
from devfix.findings import FileResult
from devfix.fix_policy import FixPolicy
from devfix.notebooks import is_notebook
from devfix.rule_registry import select_specs
from devfix.runner import Job, run
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
    extend_select: tuple[str, ...] = ()
    config: Path | None = None  # one configuration file for every file (`--config`)
    isolated: bool = False  # no configuration file at all (`--isolated`, `--no-config`)
    report_unused_ignores: bool = False
    cache: bool = True  # results of earlier runs under `.devfix_cache/` (`--no-cache` turns it off)
    stdin: bytes | None = None  # the source when `paths` is `-`
    stdin_filename: str | None = None  # its name in reports; its folder finds the configuration

    @property
    def reads_stdin(self) -> bool:
        return self.paths == (STDIN,)

    def resolver(self) -> SettingsResolver:
        return SettingsResolver(
            self.config, self.isolated,
            select=self.select, extend_select=self.extend_select, ignore=self.ignore, unsafe_fixes=self.unsafe_fixes, jobs=self.jobs,
        )


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
    resolver = request.resolver()
    settings = resolver.for_path(request.paths[0] if request.paths else Path.cwd())
    found = discover(list(request.paths), settings.exclude + request.exclude)
    outcome = Outcome(settings, errors=list(found.errors), notes=list(found.notes))
    work = []
    for path in found.files:
        own = resolver.for_path(path)
        if own.config_file != settings.config_file and path not in found.named and own.excludes(path):
            continue  # a nested project's `exclude`
        work.append(_job(str(path), own, path, request.apply_fixes, path in found.named, request.report_unused_ignores))
    callback = progress(len(work)) if progress is not None else None
    cache = ResultCache(settings.root) if request.cache else None
    outcome.results = run(work, settings.jobs, callback, cache)
    outcome.errors += [result.error for result in outcome.results if result.error]
    outcome.rule_crashes += [crash for result in outcome.results for crash in result.rule_crashes]
    if request.write:
        _write(outcome)
    return outcome


def _job(name: str, settings: Settings, path: Path, apply_fixes: bool, named: bool, report_unused_ignores: bool = False) -> Job:
    """One file's work under its own settings (rules after per-file-ignores, unsafe fixes, size)."""
    codes = tuple(rule.CODE for rule in select_specs(*settings.selection(path)))
    policy = FixPolicy(apply=apply_fixes, unsafe=settings.unsafe_fixes, device_idiom=settings.device_idiom)
    return Job(
        name, codes, policy, settings.max_file_bytes, named, report_unused_ignores and not apply_fixes,
        file_timeout=settings.file_timeout, file_memory_limit=settings.file_memory_limit,
    )


def _execute_stdin(request: Request) -> Outcome:
    """Standard input as one file named `stdin_filename` (or `-`): editors and formatters pipe the
    buffer through the tool. Nothing is written; `fix` prints the fixed source instead."""
    from devfix.api import process_text

    name = request.stdin_filename or "-"
    path = Path(name) if request.stdin_filename else Path.cwd() / "-"
    settings = request.resolver().for_path(path)
    select, ignore = settings.selection(path)
    result = process_text(
        request.stdin or b"", name, select, ignore,
        apply_fixes=request.apply_fixes, unsafe_fixes=settings.unsafe_fixes, max_file_bytes=settings.max_file_bytes,
        device_idiom=settings.device_idiom,
    )
    outcome = Outcome(settings, results=[result])
    outcome.errors += [result.error] if result.error else []
    outcome.rule_crashes += list(result.rule_crashes)
    return outcome


def add_ignore_comments(outcome: Outcome) -> tuple[int, int]:
    """`check --add-ignore`: silence every current finding with a comment on its line, written
    atomically; lines that cannot take a comment are errors. Returns (comments, files)."""
    from devfix.add_ignores import add_ignores
    from devfix.engine import UNUSED_IGNORE

    comments = files = 0
    for result in outcome.results:
        findings = [finding for finding in result.findings if finding.code != UNUSED_IGNORE]
        if result.error or not findings:
            continue
        if is_notebook(result.path):
            new_text, count, skipped = _ignores_in_notebook(result.source, findings)
            where = [f"cell {position.cell}:{position.line}" for position in skipped]
        else:
            added = add_ignores(result.source.decode("utf-8"), findings)
            new_text, count, where = added.text, added.comments, [str(line) for line in added.skipped]
        outcome.errors += [f"{result.path}:{place}: the line ends inside a string or continues with a backslash; no comment added" for place in where]
        if not count:
            continue
        try:
            write_atomically(Path(result.path), result.source, new_text.encode("utf-8"))
        except WriteRefused as refusal:
            outcome.errors.append(str(refusal))
        else:
            comments, files = comments + count, files + 1
    return comments, files


def _ignores_in_notebook(source: bytes, findings: list) -> tuple[str, int, list]:
    """`add_ignores` on the notebook's program (findings moved from their cells to its lines),
    written back into the changed cells only, as `fix` does. Returns (text, comments, the cell
    positions that could not take one)."""
    from devfix.add_ignores import add_ignores
    from devfix.findings import Position
    from devfix.notebooks import CellPosition, Notebook

    notebook = Notebook.from_bytes(source)
    in_program = []
    for finding in findings:
        line = notebook.program_line(CellPosition(finding.cell, finding.start.line))
        if line is not None:
            in_program.append(replace(finding, start=Position(line, finding.start.column), cell=None))
    added = add_ignores(notebook.program, in_program)
    skipped = [position for position in map(notebook.position, added.skipped) if position is not None]
    return notebook.with_program(added.text), added.comments, skipped


def _write(outcome: Outcome) -> None:
    for result in outcome.changed:
        try:
            write_atomically(Path(result.path), result.source, result.fixed)
        except WriteRefused as refusal:
            outcome.errors.append(str(refusal))
        else:
            outcome.written.append(result)
