"""The `devfix` command: parses options, calls the session, renders results. No logic here."""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from devfix import __version__
from devfix.config import ConfigError
from devfix.diffing import diff_label, unified_diff
from devfix.findings import Safety
from devfix.output import RENDERERS
from devfix.output.text import is_applicable
from devfix.rule_registry import UnknownRuleCode, spec_by_code
from devfix.runner import wants_progress
from devfix.session import Outcome, Request, execute

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

app = typer.Typer(
    name="devfix",
    help="Find and fix PyTorch device-placement bugs (tensors on cuda:0 and cpu).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
stderr = Console(stderr=True, soft_wrap=True, highlight=False)


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    github = "github"


class ColorChoice(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


Paths = Annotated[Optional[list[Path]], typer.Argument(help="Files or directories (default: .)", show_default=False)]
Select = Annotated[Optional[list[str]], typer.Option("--select", help="Rule codes or prefixes to enable (comma-separated).")]
Ignore = Annotated[Optional[list[str]], typer.Option("--ignore", help="Rule codes or prefixes to disable (comma-separated).")]
Exclude = Annotated[Optional[list[str]], typer.Option("--exclude", help="Extra gitignore-style patterns to skip.")]
Jobs = Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, help="Worker processes (default: number of cores).")]
Unsafe = Annotated[Optional[bool], typer.Option("--unsafe-fixes/--no-unsafe-fixes", help="Also apply fixes that may change numbers or state_dict keys.", show_default=False)]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print only findings and errors.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Also print notes (skipped links, files).")]


def _version(value: bool) -> None:
    if value:
        print(f"devfix {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")] = False,
) -> None:
    """devfix: static fixes for PyTorch device errors."""


@app.command()
def check(
    paths: Paths = None, select: Select = None, ignore: Ignore = None, exclude: Exclude = None,
    jobs: Jobs = None, unsafe_fixes: Unsafe = None, quiet: Quiet = False, verbose: Verbose = False,
    output_format: Annotated[OutputFormat, typer.Option("--output-format", help="How to print findings.")] = OutputFormat.text,
) -> None:
    """Report findings; change nothing. Exit 0 clean, 1 findings, 2 errors."""
    outcome = _execute(paths, select, ignore, exclude, jobs, unsafe_fixes, apply_fixes=False, write=False)
    sys.stdout.write(RENDERERS[output_format.value](outcome.results, outcome.settings.unsafe_fixes))
    _print_messages(outcome, quiet, verbose)
    if not quiet and output_format is OutputFormat.text:
        _print_check_summary(outcome)
    raise typer.Exit(_exit_code(outcome, problems=outcome.findings > 0))


@app.command()
def diff(
    paths: Paths = None, select: Select = None, ignore: Ignore = None, exclude: Exclude = None,
    jobs: Jobs = None, unsafe_fixes: Unsafe = None, quiet: Quiet = False, verbose: Verbose = False,
    color: Annotated[ColorChoice, typer.Option("--color", help="Colour the diff.")] = ColorChoice.auto,
) -> None:
    """Dry run: print a unified diff of the fixes (git apply / patch -p0 ready). Exit 1 if any."""
    outcome = _execute(paths, select, ignore, exclude, jobs, unsafe_fixes, apply_fixes=True, write=False)
    colored = color is ColorChoice.always or (color is ColorChoice.auto and sys.stdout.isatty())
    for result in outcome.changed:
        patch = unified_diff(diff_label(Path(result.path)), result.source, result.fixed)
        sys.stdout.buffer.write(_colorize(patch) if colored else patch)
    sys.stdout.flush()
    _print_messages(outcome, quiet, verbose)
    if not quiet:
        fixes = sum(len(result.applied) for result in outcome.changed)
        files = len(outcome.changed)
        stderr.print(f"{files} file{_s(files)} would be changed ({fixes} fix{_es(fixes)})." if files else "No changes.")
        _print_unsafe_hint(outcome)
    raise typer.Exit(_exit_code(outcome, problems=bool(outcome.changed)))


@app.command()
def fix(
    paths: Paths = None, select: Select = None, ignore: Ignore = None, exclude: Exclude = None,
    jobs: Jobs = None, unsafe_fixes: Unsafe = None, quiet: Quiet = False, verbose: Verbose = False,
    exit_non_zero_on_fix: Annotated[bool, typer.Option("--exit-non-zero-on-fix", help="Exit 1 if any file was changed.")] = False,
) -> None:
    """Apply the fixes in place, atomically. Exit 1 if findings remain, 2 on errors."""
    outcome = _execute(paths, select, ignore, exclude, jobs, unsafe_fixes, apply_fixes=True, write=True)
    remaining = [result for result in outcome.results if result.findings]
    sys.stdout.write(RENDERERS["text"](remaining, outcome.settings.unsafe_fixes))
    if not quiet:
        for result in outcome.written:
            counts = Counter(finding.code for finding in result.applied)
            listed = ", ".join(f"{code} ×{count}" if count > 1 else code for code, count in sorted(counts.items()))
            print(f"fixed {result.path}: {listed}")
    _print_messages(outcome, quiet, verbose)
    if not quiet:
        fixed = sum(len(result.applied) for result in outcome.written)
        files = len(outcome.written)
        stderr.print(f"Fixed {fixed} finding{_s(fixed)} in {files} file{_s(files)}; {outcome.findings} remaining.")
        _print_unsafe_hint(outcome)
    problems = outcome.findings > 0 or (exit_non_zero_on_fix and bool(outcome.written))
    raise typer.Exit(_exit_code(outcome, problems=problems))


class DeviceChoice(str, Enum):
    auto = "auto"
    sim = "sim"
    cuda = "cuda"


@app.command()
def verify(
    fixtures: Annotated[Optional[list[Path]], typer.Argument(help="Fixture directories or cases (default: fixtures)", show_default=False)] = None,
    device: Annotated[DeviceChoice, typer.Option("--device", help="CUDA machine: a real GPU, the simulator, or auto.")] = DeviceChoice.auto,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per program run.")] = 120.0,
) -> None:
    """Run before/after fixtures: before fails with a device error, after runs with the same RESULT."""
    _require_torch("verify")
    from rich.table import Table

    from devfix.verify import cuda_machine, verify_paths

    machine = cuda_machine(device.value)
    table = Table("case", "before", "after (CUDA)", "after (CPU)", "verdict", box=None, pad_edge=False)
    reports = verify_paths(list(fixtures or [Path("fixtures")]), machine, timeout)
    for report in reports:
        outcomes = report.outcomes
        first = outcomes.get("before (CUDA)")
        row_after_cuda = outcomes.get("after (CUDA)", outcomes.get("before (CUDA)"))
        row_after_cpu = outcomes.get("after (CPU)", outcomes.get("before (CPU)"))
        table.add_row(
            report.case.name,
            "clean" if report.case.is_clean else _short(first),
            _short(row_after_cuda),
            _short(row_after_cpu),
            "[green]pass[/green]" if report.ok else "[red]FAIL[/red]",
        )
    console = _stdout_console()
    console.print(table)
    for report in reports:
        for failure in report.failures:
            console.print(f"[red]FAIL[/red] {report.case.name}: {failure}", highlight=False)
    failed = sum(not report.ok for report in reports)
    console.print(f"{len(reports) - failed} passed, {failed} failed ({machine} as the CUDA machine)")
    raise typer.Exit(EXIT_FINDINGS if failed else EXIT_CLEAN)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    script: Annotated[Path, typer.Argument(help="The Python program to run.")],
    args: Annotated[Optional[list[str]], typer.Argument(help="Its arguments.", show_default=False)] = None,
) -> None:
    """Run a program under simulated CUDA; explain its first device error and show the fix."""
    _require_torch("run")
    from devfix.run_script import run_script

    report = run_script(script, list(args or []))
    if report.finished:
        stderr.print(f"devfix: {script} finished under simulated CUDA without a device error.")
        raise typer.Exit(report.exit_code)
    if not report.device_error:
        where = f" at {report.frames[0].path}:{report.frames[0].line}" if report.frames else ""
        stderr.print(f"devfix: {script} failed{where} with {report.error_type}: {report.message} (not a device error)", markup=False)
        raise typer.Exit(report.exit_code)
    _print_device_error(report)
    raise typer.Exit(EXIT_FINDINGS)


def _print_device_error(report) -> None:
    innermost = report.frames[0] if report.frames else None
    location = f"{_display(innermost.path)}:{innermost.line}: " if innermost else ""
    stderr.print(f"{location}{report.error_type}: {report.message}", markup=False)
    for frame in report.frames:
        stderr.print(f"    {_display(frame.path)}:{frame.line}: {frame.code}", markup=False)
    if not report.results:
        stderr.print("devfix has no finding for these files; the cause needs a look by hand.")
        return
    stderr.print("devfix findings (nearest to the error first):")
    for result in report.results:
        for finding in result.checked.findings:
            path = _display(Path(result.checked.path))
            stderr.print(f"    {path}:{finding.start.line}:{finding.start.column}: {finding.code} {finding.message}", markup=False)
    stderr.file.flush()
    for result in report.results:
        if result.fixed.changed:
            sys.stdout.buffer.write(unified_diff(diff_label(Path(result.fixed.path)), result.fixed.source, result.fixed.fixed))
    sys.stdout.flush()
    stderr.print("Apply with `devfix fix --unsafe-fixes` on these files.")


def _stdout_console() -> Console:
    """Tables keep one row a line when piped (rich would otherwise wrap them at 80 columns)."""
    return Console(soft_wrap=True, width=None if sys.stdout.isatty() else 240)


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _short(outcome) -> str:
    if outcome is None:
        return "-"
    if outcome.ok:
        return f"RESULT {outcome.result:.6g}" if outcome.result is not None else "ran"
    return f"{outcome.error_type}"


def _require_torch(command: str) -> None:
    import importlib.util
    import os

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if importlib.util.find_spec("torch") is None:
        stderr.print(f"error: `devfix {command}` runs programs and needs PyTorch: pip install 'devfix[verify]'")
        raise typer.Exit(EXIT_ERROR)


@app.command()
def lsp() -> None:
    """Start the language server on stdio (diagnostics and quick fixes for editors)."""
    from devfix.lsp import serve

    serve()


@app.command()
def rules() -> None:
    """List every rule: code, name, fix safety and summary."""
    from rich.table import Table

    from devfix.codemods import ALL_RULES  # the rules' modules (and libcst): only to describe them

    table = Table("code", "name", "fix", "summary", box=None, pad_edge=False)
    for rule in ALL_RULES:
        table.add_row(rule.CODE, rule.NAME, "none" if rule.REPORT_ONLY else rule.SAFETY.value, rule.DESCRIPTION)
    _stdout_console().print(table)


@app.command()
def explain(code: Annotated[str, typer.Argument(help="A rule code, e.g. DF001.")]) -> None:
    """Show a rule's documentation: what, why, before/after, when it refuses."""
    try:
        rule = spec_by_code(code).load()
    except UnknownRuleCode as error:
        stderr.print(f"error: {error}")
        raise typer.Exit(EXIT_ERROR) from None
    print(f"{rule.CODE} {rule.NAME} (fix: {'none, report only' if rule.REPORT_ONLY else rule.SAFETY.value})\n")
    print((sys.modules[rule.__module__].__doc__ or rule.DESCRIPTION).strip())


def _execute(paths, select, ignore, exclude, jobs, unsafe_fixes, *, apply_fixes: bool, write: bool) -> Outcome:
    request = Request(
        paths=tuple(paths or [Path(".")]),
        apply_fixes=apply_fixes,
        write=write,
        select=_split(select),
        ignore=_split(ignore),
        exclude=tuple(exclude or ()),
        unsafe_fixes=unsafe_fixes,
        jobs=jobs,
    )
    try:
        with _progress() as progress:
            return execute(request, progress)
    except (ConfigError, UnknownRuleCode) as error:
        stderr.print(f"error: {error}")
        raise typer.Exit(EXIT_ERROR) from None


@contextmanager
def _progress():
    bars = []

    def start(total: int):
        if not wants_progress(total):
            return None
        from rich.progress import Progress  # only for long runs on a terminal: it costs start-up time

        bar = Progress(console=stderr, transient=True)
        bar.start()
        bars.append(bar)
        task = bar.add_task("devfix", total=total)
        return lambda done: bar.update(task, completed=done)

    try:
        yield start
    finally:
        for bar in bars:
            bar.stop()


def _split(values: list[str] | None) -> tuple[str, ...]:
    return tuple(part.strip().upper() for value in values or () for part in value.split(",") if part.strip())


def _print_messages(outcome: Outcome, quiet: bool, verbose: bool) -> None:
    for error in outcome.errors:
        stderr.print(f"error: {error}", markup=False)
    for crash in outcome.rule_crashes:
        stderr.print(f"warning: {crash}", markup=False)
    if verbose and not quiet:
        for note in outcome.notes:
            stderr.print(f"note: {note}", markup=False)


def _print_check_summary(outcome: Outcome) -> None:
    findings = [finding for result in outcome.results for finding in result.findings]
    if not findings:
        stderr.print("All checks passed!" if not outcome.errors else "No findings.")
        return
    unsafe = outcome.settings.unsafe_fixes
    fixable = sum(is_applicable(finding, unsafe) for finding in findings)
    stderr.print(f"Found {len(findings)} finding{_s(len(findings))}.")
    if fixable:
        stderr.print(f"[*] {fixable} fixable with `devfix fix`.", markup=False)
    _print_unsafe_hint(outcome)


def _print_unsafe_hint(outcome: Outcome) -> None:
    if outcome.settings.unsafe_fixes:
        return
    hidden = sum(
        finding.fix_safety is Safety.UNSAFE for result in outcome.results for finding in result.findings
    )
    if hidden:
        stderr.print(f"{hidden} more fix{_es(hidden)} available with --unsafe-fixes.")


def _exit_code(outcome: Outcome, problems: bool) -> int:
    if outcome.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if problems else EXIT_CLEAN


def _colorize(patch: bytes) -> bytes:
    colored = []
    for line in patch.splitlines(keepends=True):
        if line.startswith((b"+++", b"---")):
            colored.append(b"\x1b[1m" + line.rstrip(b"\n") + b"\x1b[0m\n")
        elif line.startswith(b"@@"):
            colored.append(b"\x1b[36m" + line.rstrip(b"\n") + b"\x1b[0m\n")
        elif line.startswith(b"+"):
            colored.append(b"\x1b[32m" + line.rstrip(b"\n") + b"\x1b[0m\n")
        elif line.startswith(b"-"):
            colored.append(b"\x1b[31m" + line.rstrip(b"\n") + b"\x1b[0m\n")
        else:
            colored.append(line)
    return b"".join(colored)


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _es(count: int) -> str:
    return "" if count == 1 else "es"
