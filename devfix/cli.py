"""The `devfix` command: parses options, calls the session, renders results. No logic here.

Built on click (which Fixit already brings) and nothing heavier: a pre-commit hook or an editor
starts `devfix` once per run, so everything else it needs is imported when a command uses it.
"""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import click

from devfix import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
STDIN = Path("-")  # the path that means standard input
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(
    name="devfix",
    context_settings=CONTEXT,
    help="Find and fix PyTorch device-placement bugs (tensors on cuda:0 and cpu).",
)
@click.version_option(__version__, "--version", prog_name="devfix", message="%(prog)s %(version)s", help="Show the version and exit.")
def app() -> None:
    """devfix: static fixes for PyTorch device errors."""


def _shared_options(command):
    """The options every command that reads source files takes, in the order `--help` lists them."""
    options = [
        click.argument("paths", nargs=-1, type=click.Path(path_type=Path)),
        click.option("--select", multiple=True, help="Rule codes or prefixes to enable, instead of the configuration's (comma-separated)."),
        click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable as well (comma-separated)."),
        click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable, on top of the configuration's (comma-separated)."),
        click.option("--exclude", multiple=True, help="Extra gitignore-style patterns to skip."),
        click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: number of cores)."),
        click.option("--unsafe-fixes/--no-unsafe-fixes", default=None, help="Also apply fixes that may change numbers or state_dict keys."),
        click.option("--quiet", "-q", is_flag=True, help="Print only findings and errors."),
        click.option("--verbose", "-v", is_flag=True, help="Also print notes (skipped links, files)."),
        click.option("--stdin-filename", metavar="PATH", help="The name of the file read from `-` (standard input), for reports and configuration."),
        click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), help="Use this configuration file (a pyproject.toml, or a TOML file of [tool.devfix] keys) for every file."),
        click.option("--isolated", "--no-config", "isolated", is_flag=True, help="Ignore every configuration file."),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache (.devfix_cache/)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _exit(code: int):
    raise click.exceptions.Exit(code)


def _err(message: str) -> None:
    click.echo(message, err=True)


def _report_options(command):
    """How check, diff and fix report: format, statistics, the fixes, and the exit status."""
    from devfix.output import FORMATS

    options = [
        click.option("--output-format", type=click.Choice(FORMATS), default="text", show_default=True, help="How to print findings (for diff: instead of the patch)."),
        click.option("--statistics", is_flag=True, help="Print how many findings each rule has instead of each finding (text or json)."),
        click.option("--show-fixes", is_flag=True, help="List each fix (available, in the diff, or applied) on stderr."),
        click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain (errors still exit 2)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@app.command(context_settings=CONTEXT)
@_shared_options
@_report_options
@click.option("--add-ignore", is_flag=True, help="Add a `# devfix: ignore[CODE]` comment on the line of every current finding.")
@click.option("--report-unused-ignores", is_flag=True, help="Report `# devfix: ignore` comments that silence nothing (as DF100).")
def check(paths, select, extend_select, ignore, exclude, jobs, unsafe_fixes, quiet, verbose, stdin_filename, config_file, isolated, no_cache, output_format, statistics, show_fixes, exit_zero, add_ignore, report_unused_ignores) -> None:
    """Report findings; change nothing (but with --add-ignore). Exit 0 clean, 1 findings, 2 errors."""
    from devfix.output.text import is_applicable

    _check_statistics_format(statistics, output_format)
    configuration = _Configuration(extend_select, config_file, isolated, report_unused_ignores, not no_cache)
    outcome = _execute(paths, select, ignore, exclude, jobs, unsafe_fixes, stdin_filename, configuration, apply_fixes=False, write=False)
    if add_ignore:
        _add_ignores(outcome, quiet, verbose)
    report = _report(outcome, outcome.results)
    sys.stdout.write(_render(report, output_format, statistics))
    _print_messages(outcome, quiet, verbose)
    if show_fixes:
        _print_fix_list("Fixes `devfix fix` would apply", ((r, f) for r, f in report.findings() if is_applicable(f, report.unsafe_fixes)))
    if not quiet and output_format == "text" and not statistics:
        _print_check_summary(outcome)
    _exit(_exit_code(outcome, problems=outcome.findings > 0 and not exit_zero))


@app.command(context_settings=CONTEXT, short_help="Print the fixes as a unified diff; change nothing.")
@_shared_options
@_report_options
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True, help="Colour the diff.")
def diff(paths, select, extend_select, ignore, exclude, jobs, unsafe_fixes, quiet, verbose, stdin_filename, config_file, isolated, no_cache, output_format, statistics, show_fixes, exit_zero, color) -> None:
    """Dry run: print a unified diff of the fixes (git apply / patch -p0 ready). Exit 1 if any.

    With another --output-format (or --statistics), print instead every finding the diff sees,
    those it fixes and those it leaves."""
    from devfix.diffing import diff_label, file_diff
    from devfix.findings import Finding

    _check_statistics_format(statistics, output_format)
    outcome = _execute(paths, select, ignore, exclude, jobs, unsafe_fixes, stdin_filename, _Configuration(extend_select, config_file, isolated, cache=not no_cache), apply_fixes=True, write=False)
    if output_format == "text" and not statistics:
        colored = wants_color(color, sys.stdout)
        for result in outcome.changed:
            patch = file_diff(diff_label(Path(result.path)), result.source, result.fixed)
            sys.stdout.buffer.write(_colorize(patch) if colored else patch)
        sys.stdout.flush()
    else:
        seen = [replace(result, findings=tuple(sorted(result.applied + result.findings, key=Finding.sort_key))) for result in outcome.results]
        sys.stdout.write(_render(_report(outcome, seen), output_format, statistics))
    _print_messages(outcome, quiet, verbose)
    if show_fixes:
        _print_fix_list("Fixes in the diff", ((result, finding) for result in outcome.changed for finding in result.applied))
    if not quiet:
        fixes = sum(len(result.applied) for result in outcome.changed)
        files = len(outcome.changed)
        _err(f"{files} file{_s(files)} would be changed ({fixes} fix{_es(fixes)})." if files else "No changes.")
        _print_unsafe_hint(outcome)
    _exit(_exit_code(outcome, problems=bool(outcome.changed) and not exit_zero))


@app.command(context_settings=CONTEXT)
@_shared_options
@_report_options
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 if any file was changed.")
def fix(paths, select, extend_select, ignore, exclude, jobs, unsafe_fixes, quiet, verbose, stdin_filename, config_file, isolated, no_cache, output_format, statistics, show_fixes, exit_zero, exit_non_zero_on_fix) -> None:
    """Apply the fixes in place, atomically. Exit 1 if findings remain, 2 on errors.

    With `-` as the path, read standard input and print the fixed source on stdout (the report goes
    to stderr); on an error the source is printed unchanged."""
    _check_statistics_format(statistics, output_format)
    if tuple(paths) == (STDIN,):
        _fix_stdin(select, ignore, unsafe_fixes, quiet, verbose, stdin_filename, _Configuration(extend_select, config_file, isolated, cache=not no_cache), exit_non_zero_on_fix, exit_zero)
    outcome = _execute(paths, select, ignore, exclude, jobs, unsafe_fixes, stdin_filename, _Configuration(extend_select, config_file, isolated, cache=not no_cache), apply_fixes=True, write=True)
    sys.stdout.write(_render(_report(outcome, outcome.results), output_format, statistics))
    if not quiet:
        for result in outcome.written:
            counts = Counter(finding.code for finding in result.applied)
            listed = ", ".join(f"{code} ×{count}" if count > 1 else code for code, count in sorted(counts.items()))
            (print if output_format == "text" and not statistics else _err)(f"fixed {result.path}: {listed}")
    _print_messages(outcome, quiet, verbose)
    if show_fixes:
        _print_fix_list("Fixes applied", ((result, finding) for result in outcome.written for finding in result.applied))
    if not quiet:
        fixed = sum(len(result.applied) for result in outcome.written)
        files = len(outcome.written)
        _err(f"Fixed {fixed} finding{_s(fixed)} in {files} file{_s(files)}; {outcome.findings} remaining.")
        _print_unsafe_hint(outcome)
    problems = (outcome.findings > 0 and not exit_zero) or (exit_non_zero_on_fix and bool(outcome.written))
    _exit(_exit_code(outcome, problems=problems))


def _add_ignores(outcome, quiet: bool, verbose: bool) -> None:
    from devfix.session import add_ignore_comments

    if outcome.rule_crashes:
        _err("error: a rule crashed (see the warnings); no comments added, so that no finding is hidden by mistake")
    else:
        comments, files = add_ignore_comments(outcome)
    _print_messages(outcome, quiet, verbose)
    if not quiet and not outcome.rule_crashes:
        _err(f"Added {comments} `# devfix: ignore` comment{_s(comments)} in {files} file{_s(files)}.")
    _exit(EXIT_ERROR if outcome.errors or outcome.rule_crashes else EXIT_CLEAN)


def _report(outcome, results):
    from devfix.output import Report

    file_errors = {result.error for result in outcome.results if result.error}
    return Report(results, outcome.settings.unsafe_fixes, [error for error in outcome.errors if error not in file_errors])


def _render(report, output_format: str, statistics: bool) -> str:
    if statistics:
        from devfix.output import statistics as statistics_format

        return statistics_format.render(report, output_format)
    from devfix.output import renderers

    return renderers()[output_format](report)


def _check_statistics_format(statistics: bool, output_format: str) -> None:
    from devfix.output.statistics import FORMATS

    if statistics and output_format not in FORMATS:
        _err(f"error: --statistics prints {' or '.join(FORMATS)}, not {output_format}")
        _exit(EXIT_ERROR)


def _print_fix_list(heading: str, fixes) -> None:
    from devfix.output import fix_list

    sys.stderr.write(fix_list.render(heading, fixes))


@app.command(context_settings=CONTEXT, short_help="Run before/after fixtures and compare their results.")
@click.argument("fixtures", nargs=-1, type=click.Path(path_type=Path))
@click.option("--device", type=click.Choice(["auto", "sim", "cuda"]), default="auto", show_default=True, help="CUDA machine: a real GPU, the simulator, or auto.")
@click.option("--timeout", type=float, default=120.0, show_default=True, help="Seconds per program run.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=2, show_default=True, help="Programs of a case run at a time.")
def verify(fixtures, device, timeout, jobs) -> None:
    """Run before/after fixtures: before fails with a device error, after runs with the same RESULT.

    FIXTURES are fixture directories or cases (default: fixtures).
    """
    _require_torch("verify")
    from rich.markup import escape
    from rich.table import Table

    from devfix.verify import VerifyRefused, cuda_machine, verify_paths

    try:
        machine = cuda_machine(device)
        with _verify_count() as count:
            reports = verify_paths(list(fixtures or [Path("fixtures")]), machine, timeout, on_case=count, jobs=jobs)
    except VerifyRefused as refusal:
        _err(f"error: {refusal}")
        _exit(EXIT_ERROR)
    table = Table("", "case", "before", "after", box=None, pad_edge=False)
    table.columns[1].overflow = "fold"  # a long name wraps in its column; the table fits the terminal
    rule = None
    for report in reports:
        if report.case.directory.parent.name != rule:
            rule = report.case.directory.parent.name
            table.add_row("", f"[bold]{escape(rule)}[/bold]")  # cases grouped under their rule: short names
        outcomes = report.outcomes
        after_cuda = _short(outcomes.get("after (CUDA)", outcomes.get("before (CUDA)")))
        after_cpu = _short(outcomes.get("after (CPU)", outcomes.get("before (CPU)")))
        table.add_row(
            "[green]pass[/green]" if report.ok else "[red]FAIL[/red]",
            escape(report.case.directory.name),
            "clean" if report.case.is_clean else escape(_short(outcomes.get("before (CUDA)"))),
            escape(after_cuda if after_cuda == after_cpu else f"{after_cuda} / {after_cpu}"),
        )
    table.caption = "before: on the CUDA machine; after: on it and on the CPU (one value when equal)"
    console = _stdout_console()
    console.print(table)
    for report in reports:
        for failure in report.failures:
            console.print(f"[red]FAIL[/red] {escape(report.case.name)}: {escape(failure)}", highlight=False)
    failed = sum(not report.ok for report in reports)
    console.print(f"{len(reports) - failed} passed, {failed} failed ({machine} as the CUDA machine)")
    _exit(EXIT_FINDINGS if failed else EXIT_CLEAN)


@app.command(
    context_settings={**CONTEXT, "allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False},
    short_help="Run a program under simulated CUDA; explain its device error.",
)
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="Stop the program after this many seconds (exit 2).")
@click.option("--fix", "fix_loop", is_flag=True, help="Fix each device error, run again until the program ends, and prove the fix on both machines.")
@click.option("--no-static", is_flag=True, help="With --fix: edits only from what the run showed, none from devfix's rules.")
@click.option("--max-rounds", type=click.IntRange(min=1), default=10, show_default=True, help="With --fix: at most this many runs under simulated CUDA.")
@click.option("--allow-numbers", is_flag=True, help="With --fix: outputs may differ in their numbers (random numbers drawn on the device).")
@click.option("--write", is_flag=True, help="With --fix: write the proven edits to the files (atomically, only when every check passed).")
@click.option("--report", "report_path", type=click.Path(path_type=Path, dir_okay=False), help="With --fix: also write the report as JSON to this file.")
@click.option("-m", "module", metavar="MODULE", help="With --fix: run a module as `python -m MODULE ARGS` does (`-m pytest tests/`).")
@click.option("--device", "machine", type=click.Choice(["sim", "cuda"]), default="sim", show_default=True,
              help="With --fix: the CUDA machine, simulated or this machine's real GPU.")
@click.argument("script", type=click.Path(path_type=Path), required=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(timeout, fix_loop, no_static, max_rounds, allow_numbers, write, report_path, module, machine, script, args) -> None:
    """Run a program under simulated CUDA; explain its first device error and show the fix.

    SCRIPT is the Python program to run; ARGS are its arguments (devfix's own options go before
    SCRIPT). With --fix, devfix fixes the error, runs the program again, and repeats until it ends;
    then it runs the fixed program on the CPU build too and compares what it printed with what the
    original printed on the CPU (under pytest: each test's outcome). Exit 0: nothing to fix, or the
    proven fix was written; 1: a proven fix, not written; 2: no proven fix (the report says why).
    """
    _require_torch("run")
    from devfix.program import Program
    from devfix.run_script import ScriptMissing, run_script

    if module is not None and not fix_loop:
        _err("error: -m MODULE runs only with --fix (plain `devfix run` takes a SCRIPT)")
        _exit(EXIT_ERROR)
    if machine == "cuda" and not fix_loop:
        _err("error: --device cuda runs only with --fix (plain `devfix run` explains an error under simulated CUDA)")
        _exit(EXIT_ERROR)
    if module is None and script is None:
        _err("error: give the SCRIPT to run (or, with --fix, -m MODULE)")
        _exit(EXIT_ERROR)
    if fix_loop:
        if module is None and not script.is_file():
            _err(f"error: {script}: no such file")
            _exit(EXIT_ERROR)
        program = Program.of_module(module) if module is not None else Program.of_script(script)
        argv = [str(script), *args] if module is not None and script is not None else list(args)
        _run_fix(program, argv, timeout, max_rounds, not no_static, allow_numbers, write, report_path, machine)
    try:
        report = run_script(script, list(args), timeout)
    except ScriptMissing as error:
        _err(f"error: {error}")
        _exit(EXIT_ERROR)
    if report.error_type == "Timeout":
        _err(f"error: {script}: {report.message}; stopped")
        _exit(EXIT_ERROR)
    if report.finished:
        _err(f"devfix: {script} finished under simulated CUDA without a device error.")
        _exit(report.exit_code)
    if not report.device_error:
        where = f" at {report.frames[0].path}:{report.frames[0].line}" if report.frames else ""
        _err(f"devfix: {script} failed{where} with {report.error_type}: {report.message} (not a device error)")
        _exit(report.exit_code)
    _print_device_error(report)
    _exit(EXIT_FINDINGS)


def _run_fix(program, args, timeout, max_rounds, static, allow_numbers, write, report_path, machine) -> None:
    """`devfix run --fix`: the report on stderr (stdout is the program's: its last run on the CUDA
    machine is replayed there)."""
    from devfix.diffing import diff_label, unified_diff
    from devfix.gpu_round import gpu_present
    from devfix.run_fix import fix_by_running, report_json
    from devfix.writing import write_atomically

    if machine == "cuda" and not gpu_present():
        _err("error: --device cuda: this PyTorch sees no CUDA device; use --device sim (the simulator)")
        _exit(EXIT_ERROR)
    run = fix_by_running(program, args, max_rounds, static, timeout, allow_numbers, machine)
    cuda_machine = "on the GPU" if machine == "cuda" else "under simulated CUDA"
    if run.final_cuda is not None:
        sys.stdout.write(run.final_cuda.stdout)
        sys.stdout.flush()
    for number, edit in enumerate(run.edits, 1):
        _err(f"devfix: round {number}: {edit.cured}")
        _err(f"    fixed in {_display(edit.path)} by {edit.how}")
    files = run.texts()
    sys.stderr.flush()
    for path, (before, after) in files.items():
        sys.stderr.buffer.write(unified_diff(diff_label(path), before.encode(), after.encode()))
    sys.stderr.flush()
    if report_path is not None:
        report_path.write_text(report_json(run, program), encoding="utf-8")
    if run.failures:
        for failure in run.failures:
            _err(f"devfix: not proven: {failure}")
        _exit(EXIT_ERROR)
    if not run.edits:
        _err(f"devfix: {program.display()} ran {cuda_machine} and on the CPU without a device error; nothing to fix.")
        _exit(EXIT_CLEAN)
    same = "its tests end as the original's did" if run.final_cpu is not None and run.final_cpu.outcomes else "it prints what the original printed"
    _err(f"devfix: proven: the fixed program runs {cuda_machine} and on the CPU, and {same}.")
    if not write:
        _err("Write it with `devfix run --fix --write ...`.")
        _exit(EXIT_FINDINGS)
    for path, (before, after) in files.items():
        write_atomically(path, before.encode(), after.encode())
    _err(f"devfix: wrote {len(files)} file{'s' if len(files) != 1 else ''}.")
    _exit(EXIT_CLEAN)


def _print_device_error(report) -> None:
    """Everything on stderr: stdout belongs to the program that ran."""
    from devfix.diffing import diff_label, unified_diff
    from devfix.findings import Safety

    innermost = report.frames[0] if report.frames else None
    location = f"{_display(innermost.path)}:{innermost.line}: " if innermost else ""
    _err(f"{location}{report.error_type}: {report.message}")
    if report.meeting:
        _err(f"    {report.meeting}")
    for frame in report.frames:
        _err(f"    {_display(frame.path)}:{frame.line}: {frame.code}")
    if not report.results:
        _err("devfix has no finding for these files; the cause needs a look by hand.")
        return
    for in_traceback, heading in ((True, "devfix findings (nearest to the error first):"), (False, "devfix findings in other files the program imported:")):
        group = [result for result in report.results if result.in_traceback is in_traceback]
        if group:
            _err(heading)
        for result in group:
            for finding in result.checked.findings:
                _err(f"    {_display(Path(result.checked.path))}:{finding.start.line}:{finding.start.column}: {finding.code} {finding.message}")
    fixed = [result.fixed for result in report.results if result.fixed.changed]
    sys.stderr.flush()
    for result in fixed:
        sys.stderr.buffer.write(unified_diff(diff_label(Path(result.path)), result.source, result.fixed))
    sys.stderr.flush()
    if fixed:
        unsafe = any(finding.fix_safety is Safety.UNSAFE for result in fixed for finding in result.applied)
        files = " ".join(_display(Path(result.path)) for result in fixed)
        _err(f"Apply with `devfix fix{' --unsafe-fixes' if unsafe else ''} {files}`.")


def _stdout_console():
    """Tables keep one row a line when piped (rich would otherwise wrap them at 80 columns)."""
    from rich.console import Console

    return Console(soft_wrap=True, width=None if sys.stdout.isatty() else 240)


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _short(outcome) -> str:
    """A program's outcome in a table cell: its RESULT number, "ran", or the exception's type."""
    if outcome is None:
        return "-"
    if outcome.ok:
        return f"{outcome.result:.6g}" if outcome.result is not None else "ran"
    return f"{outcome.error_type}"


@contextmanager
def _verify_count():
    """`count(done, total, case)`: a live "12/186 case" line on a terminal's stderr while cases run
    (each is seconds of program runs); nothing when stderr is not a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.markup import escape

    with Console(stderr=True).status("") as status:
        yield lambda done, total, case: status.update(f"verify {done + 1}/{total} {escape(case.name)}")


def _require_torch(command: str) -> None:
    import importlib.util
    import os

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if importlib.util.find_spec("torch") is None:
        _err(f"error: `devfix {command}` runs programs and needs PyTorch, which is not installed here. "
             "Install any build with `pip install torch`, or from a devfix checkout with "
             "`pip install '.[verify]'` (pinned to torch==2.13.0).")
        _exit(EXIT_ERROR)


@app.command(context_settings=CONTEXT, short_help="Start the language server on stdio.")
def lsp() -> None:
    """Start the language server on stdio (diagnostics and quick fixes for editors)."""
    from devfix import gc_settings
    from devfix.lsp import serve

    gc_settings.for_analysis()
    serve()


@app.command(context_settings=CONTEXT)
def rules() -> None:
    """List every rule: code, name, fix safety and summary."""
    from rich.markup import escape
    from rich.table import Table

    from devfix.codemods import ALL_RULES  # the rules' modules (and libcst): only to describe them

    table = Table("code", "name", "fix", "summary", box=None, pad_edge=False)
    for rule in ALL_RULES:
        table.add_row(rule.CODE, rule.NAME, "none" if rule.REPORT_ONLY else rule.SAFETY.value, escape(rule.DESCRIPTION))
    _stdout_console().print(table)


@app.command(context_settings=CONTEXT, short_help="Show a rule's documentation.")
@click.argument("code")
def explain(code: str) -> None:
    """Show a rule's documentation: what, why, before/after, when it refuses. CODE is e.g. DF001."""
    from devfix.rule_registry import UnknownRuleCode, spec_by_code

    try:
        rule = spec_by_code(code).load()
    except UnknownRuleCode as error:
        _err(f"error: {error}")
        _exit(EXIT_ERROR)
    print(f"{rule.CODE} {rule.NAME} (fix: {'none, report only' if rule.REPORT_ONLY else rule.SAFETY.value})\n")
    print((sys.modules[rule.__module__].__doc__ or rule.DESCRIPTION).strip())


def _fix_stdin(select, ignore, unsafe_fixes, quiet, verbose, stdin_filename, configuration, exit_non_zero_on_fix, exit_zero) -> None:
    from devfix.output import text

    outcome = _execute((STDIN,), select, ignore, (), None, unsafe_fixes, stdin_filename, configuration, apply_fixes=True, write=False)
    (result,) = outcome.results
    sys.stdout.buffer.write(result.fixed if result.error is None else result.source)
    sys.stdout.flush()
    sys.stderr.write(text.render(_report(outcome, outcome.results)))
    _print_messages(outcome, quiet, verbose)
    if not quiet and result.error is None:
        _err(f"Fixed {len(result.applied)} finding{_s(len(result.applied))}; {outcome.findings} remaining.")
    _exit(_exit_code(outcome, problems=(outcome.findings > 0 and not exit_zero) or (exit_non_zero_on_fix and result.changed)))


@dataclass(frozen=True)
class _Configuration:
    """Where the settings come from, as the command line said."""

    extend_select: tuple[str, ...] = ()
    config_file: Path | None = None
    isolated: bool = False
    report_unused_ignores: bool = False
    cache: bool = True


def _execute(paths, select, ignore, exclude, jobs, unsafe_fixes, stdin_filename=None, configuration=_Configuration(), *, apply_fixes: bool, write: bool):
    from devfix import gc_settings
    from devfix.config import ConfigError
    from devfix.rule_registry import UnknownRuleCode
    from devfix.session import Request, StdinMisused, execute

    gc_settings.for_analysis()
    paths = tuple(paths or [Path(".")])
    stdin = sys.stdin.buffer.read() if paths == (STDIN,) else None
    if stdin_filename and stdin is None:
        _err("error: --stdin-filename names the source read from `-`; give `-` as the path")
        _exit(EXIT_ERROR)
    request = Request(
        paths=paths,
        apply_fixes=apply_fixes,
        write=write,
        select=_split(select),
        ignore=_split(ignore),
        exclude=tuple(exclude or ()),
        unsafe_fixes=unsafe_fixes,
        jobs=jobs,
        stdin=stdin,
        stdin_filename=stdin_filename,
        extend_select=_split(configuration.extend_select),
        config=configuration.config_file,
        isolated=configuration.isolated,
        report_unused_ignores=configuration.report_unused_ignores,
        cache=configuration.cache,
    )
    try:
        with _progress() as progress:
            return execute(request, progress)
    except (ConfigError, UnknownRuleCode, StdinMisused) as error:
        _err(f"error: {error}")
        _exit(EXIT_ERROR)


@contextmanager
def _progress():
    bars = []

    def start(total: int):
        from devfix.runner import wants_progress

        if not wants_progress(total):
            return None
        from rich.console import Console
        from rich.progress import Progress  # only for long runs on a terminal: it costs start-up time

        bar = Progress(console=Console(stderr=True), transient=True)
        bar.start()
        bars.append(bar)
        task = bar.add_task("devfix", total=total)
        return lambda done: bar.update(task, completed=done)

    try:
        yield start
    finally:
        for bar in bars:
            bar.stop()


def _split(values) -> tuple[str, ...]:
    return tuple(part.strip().upper() for value in values or () for part in value.split(",") if part.strip())


def _print_messages(outcome, quiet: bool, verbose: bool) -> None:
    for error in outcome.errors:
        _err(f"error: {error}")
    for crash in outcome.rule_crashes:
        _err(f"warning: {crash}")
    if verbose and not quiet:
        for note in outcome.notes:
            _err(f"note: {note}")


def _print_check_summary(outcome) -> None:
    from devfix.output.text import is_applicable

    findings = [finding for result in outcome.results for finding in result.findings]
    if not findings:
        _err("All checks passed!" if not outcome.errors else "No findings.")
        return
    unsafe = outcome.settings.unsafe_fixes
    fixable = sum(is_applicable(finding, unsafe) for finding in findings)
    _err(f"Found {len(findings)} finding{_s(len(findings))}.")
    if fixable:
        _err(f"[*] {fixable} fixable with `devfix fix`.")
    _print_unsafe_hint(outcome)


def _print_unsafe_hint(outcome) -> None:
    from devfix.findings import Safety

    if outcome.settings.unsafe_fixes:
        return
    hidden = sum(
        finding.fix_safety is Safety.UNSAFE for result in outcome.results for finding in result.findings
    )
    if hidden:
        _err(f"{hidden} more fix{_es(hidden)} available with --unsafe-fixes.")


def _exit_code(outcome, problems: bool) -> int:
    if outcome.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if problems else EXIT_CLEAN


def wants_color(choice: str, stream) -> bool:
    """`auto` colours a terminal unless NO_COLOR is set to anything but "" (no-color.org);
    `always` and `never` are what they say."""
    import os

    if choice != "auto":
        return choice == "always"
    return stream.isatty() and not os.environ.get("NO_COLOR")


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
