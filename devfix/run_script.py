"""`devfix run`: execute a user's program under simulated CUDA and explain its first device error.

The program runs in this process as `__main__`, with its own argv and its directory first on
sys.path, exactly as `python script.py` would. On a device error the report names the innermost
frame in the user's own files, then runs the engine on every user file of the traceback, so the
finding that fixes the bug is shown even when it sits in another file than the crash.
"""

from __future__ import annotations

import runpy
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


@dataclass
class RunReport:
    finished: bool
    error_type: str = ""
    message: str = ""
    device_error: bool = False
    frames: list[UserFrame] = field(default_factory=list)
    results: list[FileFindings] = field(default_factory=list)
    exit_code: int = 0


def run_script(script: Path, argv: list[str]) -> RunReport:
    from devfix.sim import SimulatorUnsupported, simulated_cuda

    script = script.resolve()
    sys.argv = [str(script), *argv]
    sys.path.insert(0, str(script.parent))
    try:
        with simulated_cuda():
            runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exit_request:
        code = exit_request.code if isinstance(exit_request.code, int) else (0 if exit_request.code is None else 1)
        return RunReport(finished=True, exit_code=code)
    except SimulatorUnsupported as error:
        return RunReport(False, type(error).__name__, str(error), exit_code=2)
    except BaseException as error:
        return _explain(error)
    return RunReport(finished=True)


def _explain(error: BaseException) -> RunReport:
    message = str(error)
    frames = user_frames(error)
    report = RunReport(False, type(error).__name__, message, is_device_error(type(error).__name__, message), frames, exit_code=1)
    if report.device_error:
        report.results = _findings_for(frames)
    return report


def user_frames(error: BaseException) -> list[UserFrame]:
    """Frames of the traceback in the user's own files, innermost first."""
    excluded = [Path(p).resolve() for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}]
    excluded.append(Path(__file__).resolve().parent)
    frames = []
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        path = Path(frame.filename).resolve()
        if frame.filename.startswith("<") or any(path.is_relative_to(root) for root in excluded) or not path.exists():
            continue
        frames.append(UserFrame(path, frame.lineno or 0, (frame.line or "").strip()))
    return frames


def _findings_for(frames: list[UserFrame]) -> list[FileFindings]:
    results, seen = [], set()
    index = ProjectIndex()
    for frame in frames:
        if frame.path in seen:
            continue
        seen.add(frame.path)
        source = frame.path.read_bytes()
        checked = process(source, str(frame.path), ALL_RULES, index)
        if not checked.findings:
            continue
        nearest = sorted(checked.findings, key=lambda finding: abs(finding.start.line - frame.line))
        fixed = process(source, str(frame.path), ALL_RULES, index, FixPolicy(apply=True, unsafe=True))
        results.append(FileFindings(replace(checked, findings=tuple(nearest)), fixed))
    return results
