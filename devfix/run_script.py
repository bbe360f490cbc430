"""`devfix run`: execute a user's program under simulated CUDA and explain its first device error.

The program runs in this process as `__main__`, with its own argv and its directory first on
sys.path, exactly as `python script.py` would. On a device error the report names the innermost
frame in the user's own files, then runs the engine on every user file of the traceback and then on
every other user module the program imported, so the finding that fixes the bug is shown even when
it sits in a file the traceback never passed through (a batch left on the CPU in a helper module).
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import sysconfig
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.device_errors import is_device_error
from devfix.engine import process
from devfix.findings import FileResult
from devfix.fix_policy import FixPolicy


@dataclass(frozen=True)
class UserFrame:
    path: Path
    line: int
    code: str


@dataclass(frozen=True)
class FileFindings:
    """Findings on the file as it is (nearest to the crash first) and the file with all fixes."""

    checked: FileResult
    fixed: FileResult
    in_traceback: bool = True


@dataclass
class RunReport:
    finished: bool
    error_type: str = ""
    message: str = ""
    device_error: bool = False
    frames: list[UserFrame] = field(default_factory=list)
    results: list[FileFindings] = field(default_factory=list)
    exit_code: int = 0
    meeting: str = ""  # the operands of a device error and where each came from


class ScriptMissing(FileNotFoundError):
    """The script to run is not a file."""


class RunTimedOut(BaseException):
    """`--timeout` elapsed (a BaseException, so the program's own `except Exception` cannot eat it)."""


def run_script(script: Path, argv: list[str], timeout: float | None = None) -> RunReport:
    """Run `script` as `python script.py argv...` would, under simulated CUDA, for at most `timeout`
    seconds. A child the program forks reports nothing: it ends as Python would end it."""
    from devfix.sim import SimulatorUnsupported, simulated_cuda

    if not script.is_file():
        raise ScriptMissing(f"{script}: no such file")
    script = script.resolve()
    sys.argv = [str(script), *argv]
    sys.path.insert(0, str(script.parent))
    already_loaded = set(sys.modules)
    runner_pid = os.getpid()
    _arm_timer(timeout)
    try:
        with simulated_cuda():
            runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exit_request:
        _end_if_forked(runner_pid, exit_request)
        return RunReport(finished=True, exit_code=_exit_status(exit_request))
    except RunTimedOut:
        return RunReport(False, "Timeout", f"still running after {timeout:g} s (--timeout)", exit_code=2)
    except SimulatorUnsupported as error:
        _end_if_forked(runner_pid, error)
        return RunReport(False, type(error).__name__, str(error), exit_code=2)
    except BaseException as error:  # noqa: BLE001 - the program's own error is what devfix explains
        _end_if_forked(runner_pid, error)
        return _explain(error, _imported_user_files(already_loaded))
    finally:
        _arm_timer(None)
    _end_if_forked(runner_pid, None)
    return RunReport(finished=True)


def _exit_status(exit_request: SystemExit) -> int:
    """What Python does with `sys.exit(x)`: an int is the status; anything else is printed to
    stderr and means 1 (None means 0)."""
    if exit_request.code is None or isinstance(exit_request.code, int):
        return exit_request.code or 0
    print(exit_request.code, file=sys.stderr)
    return 1


def _end_if_forked(runner_pid: int, outcome: BaseException | None) -> None:
    """In a child the program forked, end here as Python would: only the runner reports."""
    if os.getpid() == runner_pid:
        return
    if isinstance(outcome, SystemExit):
        status = _exit_status(outcome)
    elif outcome is not None:
        traceback.print_exception(outcome)
        status = 1
    else:
        status = 0
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _arm_timer(seconds: float | None) -> None:
    if seconds is None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return

    def expire(signum, frame):
        raise RunTimedOut

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def _explain(error: BaseException, imported: list[Path]) -> RunReport:
    message = str(error)
    frames = user_frames(error)
    report = RunReport(False, type(error).__name__, message, is_device_error(type(error).__name__, message), frames, exit_code=1)
    if report.device_error:
        from devfix.run_rounds import describe_meeting, operand_facts

        report.meeting = describe_meeting(operand_facts(error), frames)
        report.results = _findings_for(frames, imported)
    return report


def _library_roots() -> list[Path]:
    paths = sysconfig.get_paths()
    return [*(Path(paths[key]).resolve() for key in ("stdlib", "purelib", "platlib")), Path(__file__).resolve().parent]


def _is_user_file(filename: str, roots: list[Path]) -> bool:
    if filename.startswith("<"):
        return False
    path = Path(filename).resolve()
    return path.exists() and not any(path.is_relative_to(root) for root in roots)


def user_frames(error: BaseException) -> list[UserFrame]:
    """Frames of the traceback in the user's own files, innermost first."""
    roots = _library_roots()
    return [
        UserFrame(Path(frame.filename).resolve(), frame.lineno or 0, (frame.line or "").strip())
        for frame in reversed(traceback.extract_tb(error.__traceback__))
        if _is_user_file(frame.filename, roots)
    ]


def _imported_user_files(already_loaded: set[str]) -> list[Path]:
    """The user's own modules that the program imported (not devfix's, not installed packages)."""
    roots = _library_roots()
    files = []
    for name, module in list(sys.modules.items()):
        filename = getattr(module, "__file__", None)
        if name not in already_loaded and filename and filename.endswith(".py") and _is_user_file(filename, roots):
            files.append(Path(filename).resolve())
    return sorted(set(files))


def _findings_for(frames: list[UserFrame], imported: list[Path]) -> list[FileFindings]:
    """Files of the traceback first (findings nearest the crash line first), then the other
    imported user modules."""
    results, seen = [], set()
    index = ProjectIndex()
    places = [(frame.path, frame.line) for frame in frames] + [(path, None) for path in imported]
    for path, line in places:
        if path in seen:
            continue
        seen.add(path)
        source = path.read_bytes()
        checked = process(source, str(path), ALL_RULES, index)
        if not checked.findings:
            continue
        if line is not None:
            checked = replace(checked, findings=tuple(sorted(checked.findings, key=lambda finding: abs(finding.start.line - line))))
        fixed = process(source, str(path), ALL_RULES, index, FixPolicy(apply=True, unsafe=True))
        results.append(FileFindings(checked, fixed, in_traceback=line is not None))
    return results
