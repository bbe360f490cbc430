"""One run of the user's program for `devfix run --fix`: in a child forked from this process (torch
is imported once), with edited sources served from memory, under simulated CUDA or on the plain
CPU build, its output captured. The child sends back what happened; nothing of its state leaks
into the next round. Under pytest, the first device error among the failing tests is the round's
error, and every test's outcome is part of what the round printed.

Machines: "sim" (simulated CUDA), "cpu" (CUDA hidden from the child, as on a machine without a
GPU), "cuda" (a real GPU: a fresh interpreter per round, since CUDA does not survive a fork once
initialised, and the child's errors carry no provenance).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import pickle
import sys
import tempfile
import traceback
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from devfix import forking
from devfix.device_errors import is_device_error
from devfix.program import Program
from devfix.run_script import UserFrame, user_frames


@dataclass(frozen=True)
class OperandFacts:
    """One operand of the call that raised: its device, how it got there, its name at that line."""

    device: str
    origin: tuple[str, int, str] | None  # path, line, event
    name: str | None
    owner: tuple[str, str] | None = None  # a parameter's: the file and name of the module variable that holds it


@dataclass(frozen=True)
class DeviceParameter:
    """A parameter of a function on the traceback that held a tensor on a device, or a Module whose
    parameters were there, when the error happened: inside that function, `expression`
    (`logits.device`, `next(model.parameters()).device`) names the device the other values need."""

    path: str
    first_line: int
    last_line: int
    name: str
    expression: str


@dataclass(frozen=True)
class RoundResult:
    finished: bool
    exit_code: int
    stdout: str
    stderr: str
    error_type: str = ""
    message: str = ""
    device_error: bool = False
    frames: tuple[UserFrame, ...] = ()
    operands: tuple[OperandFacts, ...] = ()
    outcomes: tuple[tuple[str, str], ...] = ()  # under pytest: each test's node id and outcome
    device_parameters: tuple[DeviceParameter, ...] = ()  # innermost frame first

    def headline(self) -> str:
        where = f"{self.frames[0].path.name}:{self.frames[0].line}: " if self.frames else ""
        return f"{where}{self.error_type}: {self.message.splitlines()[0] if self.message else ''}"


def run_round(program: Program, argv: list[str], texts: dict[Path, str], machine: str, timeout: float | None) -> RoundResult:
    """Run `program` once on `machine` in a child; `texts` replace the files they name."""
    if machine == "cuda":
        from devfix.gpu_round import run_in_fresh_interpreter

        return run_in_fresh_interpreter(program, argv, texts, timeout)
    from devfix.preload import preload_for

    preload_for(program.script.parent if program.script is not None else Path.cwd())  # once here, not in each child
    read_end, write_end = os.pipe()
    pid = forking.fork()
    if pid == 0:  # the child: run, report through the pipe, end without running the parent's cleanup
        os.close(read_end)
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(child_payload(program, argv, texts, machine, timeout))
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        payload = pipe.read()
    os.waitpid(pid, 0)
    return result_of(payload)


def child_payload(program: Program, argv: list[str], texts: dict[Path, str], machine: str, timeout: float | None) -> bytes:
    """In the child: whatever happens, the parent gets an answer."""
    try:
        return pickle.dumps(_child(program, argv, texts, machine, timeout))
    except BaseException as error:  # noqa: BLE001
        return pickle.dumps(RoundResult(False, 2, "", f"devfix: the run failed: {error!r}", type(error).__name__, str(error)))


def result_of(payload: bytes) -> RoundResult:
    if not payload:
        return RoundResult(False, 2, "", "devfix: the program's process ended without a report", "Crash", "the process died")
    return pickle.loads(payload)


def _child(program: Program, argv: list[str], texts: dict[Path, str], machine: str, timeout: float | None) -> RoundResult:
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115 - the child ends with them
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    sys.stdout = open(1, "w", closefd=False, buffering=1, encoding="utf-8", errors="replace")  # noqa: SIM115 - lives as long as the child
    sys.stderr = open(2, "w", closefd=False, buffering=1, encoding="utf-8", errors="replace")  # noqa: SIM115
    result = _execute(program, argv, texts, machine, timeout)
    sys.stdout.flush()
    sys.stderr.flush()
    out.seek(0)
    err.seek(0)
    stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    return RoundResult(**{**result.__dict__, "stdout": stdout, "stderr": stderr})


def _execute(program: Program, argv: list[str], texts: dict[Path, str], machine: str, timeout: float | None) -> RoundResult:
    from devfix.run_script import RunTimedOut, _arm_timer
    from devfix.sim import simulated_cuda

    if machine == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # read when CUDA starts: the parent never starts it
    program.start(argv)
    sys.meta_path.insert(0, _EditedSources(texts))
    _arm_timer(timeout)
    try:
        with simulated_cuda() if machine == "sim" else nullcontext():
            program.run_as_main(texts)
    except SystemExit as exit_request:
        code = exit_request.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
        return _failed_test(program) or RoundResult(True, status, "", "", outcomes=_test_outcomes(program))
    except RunTimedOut:
        return RoundResult(False, 2, "", "", "Timeout", f"still running after {timeout:g} s (--timeout)")
    except BaseException as error:  # noqa: BLE001 - the program's own error is the round's outcome
        traceback.print_exception(error)
        return _failed(error)
    finally:
        _arm_timer(None)
    return _failed_test(program) or RoundResult(True, 0, "", "", outcomes=_test_outcomes(program))


def _failed(error: BaseException) -> RoundResult:
    frames = tuple(user_frames(error))
    return RoundResult(
        False, 1, "", "", type(error).__name__, str(error), is_device_error(type(error).__name__, str(error)),
        frames, operand_facts(error), device_parameters=device_parameters(error),
    )


def device_parameters(error: BaseException) -> tuple[DeviceParameter, ...]:
    """The parameters on a device (tensors, then Modules) of each function of the user's code on
    the traceback, innermost function first."""
    import torch

    found = []
    for frame in _user_frames(error):
        code = frame.f_code
        if code.co_name == "<module>":
            continue
        lines = [line for _, _, line in code.co_lines() if line is not None]
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        tensors = [name for name in names if _on_a_device(frame.f_locals.get(name), torch.Tensor)]
        modules = [name for name in names if _on_a_device(frame.f_locals.get(name), torch.nn.Module)]
        found += [DeviceParameter(code.co_filename, min(lines), max(lines), name, f"{name}.device") for name in tensors]
        found += [DeviceParameter(code.co_filename, min(lines), max(lines), name, f"next({name}.parameters()).device") for name in modules]
    return tuple(found)


def _on_a_device(value, kind: type) -> bool:
    """A tensor on a device, or a Module whose parameters are all on one device."""
    import torch

    if not isinstance(value, kind):
        return False
    if isinstance(value, torch.Tensor):
        return value.device.type != "cpu"
    devices = {parameter.device for parameter in value.parameters()}
    return len(devices) == 1 and next(iter(devices)).type != "cpu"


def _failed_test(program: Program) -> RoundResult | None:
    """Under pytest: the first failing test whose error is a device error (pytest caught it)."""
    if not program.is_pytest:
        return None
    from devfix import pytest_outcomes

    for error in pytest_outcomes.ERRORS:
        if is_device_error(type(error).__name__, str(error)) or type(error).__name__ == "SimulatorUnsupported":
            return _failed(error)
    return None


def _test_outcomes(program: Program) -> tuple[tuple[str, str], ...]:
    if not program.is_pytest:
        return ()
    from devfix import pytest_outcomes

    return tuple(sorted(pytest_outcomes.OUTCOMES.items()))


def operand_facts(error: BaseException) -> tuple[OperandFacts, ...]:
    """The operands the simulator attached to a device error, named from the variables of the
    innermost frame of the user's code where that is the object itself."""
    from devfix.sim.provenance import meeting_of, operand_objects

    meeting = meeting_of(error)
    if meeting is None:
        return ()
    frames = _user_frames(error)
    frame = frames[0] if frames else None
    names = {id(value): name for name, value in reversed(list(frame.f_locals.items()))} if frame is not None else {}
    objects = operand_objects(error)
    facts = []
    for operand, value in zip(meeting.operands, objects):
        origin = (operand.origin.path, operand.origin.line, operand.origin.event) if operand.origin else None
        facts.append(OperandFacts(operand.device, origin, names.get(id(value)), _owner(frames, value)))
    return tuple(facts)


def describe_meeting(operands: tuple[OperandFacts, ...], frames) -> str:
    """"`mask` (cpu: created on cpu by torch.ones at train.py:41) met `logits` (cuda:0: moved to
    cuda:0 by .to() at train.py:18) at train.py:44"; empty when the simulator recorded nothing."""
    if not operands:
        return ""

    def one(operand: OperandFacts) -> str:
        name = f"`{operand.name}`" if operand.name else f"a tensor of `{operand.owner[1]}`" if operand.owner else "a tensor"
        origin = f": {operand.origin[2]} at {_short(operand.origin[0])}:{operand.origin[1]}" if operand.origin else ""
        return f"{name} ({operand.device}{origin})"

    distinct = list(dict.fromkeys(operands))
    where = f" at {_short(str(frames[0].path))}:{frames[0].line}" if frames else ""
    return " met ".join(one(operand) for operand in distinct) + where


def _short(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


def _owner(frames: list, value) -> tuple[str, str] | None:
    """The module variable whose parameters or buffers include `value` (the model whose weights
    stayed behind), in the innermost frame of the user's code that has exactly one such variable
    other than `self` (inside a Module's own methods the model is the caller's variable)."""
    import torch

    if not isinstance(value, torch.Tensor):
        return None
    for frame in frames:
        owners = [
            name for name, candidate in frame.f_locals.items()
            if name != "self" and isinstance(candidate, torch.nn.Module)
            and any(tensor is value for tensor in (*candidate.parameters(), *candidate.buffers()))
        ]
        if len(owners) == 1:
            return frame.f_code.co_filename, owners[0]
        if owners:
            return None
    return None


def _user_frames(error: BaseException) -> list:
    """The frames of the traceback in the user's own code, innermost first."""
    from devfix.run_script import _is_user_file, _library_roots

    roots = _library_roots()
    frames = []
    tb = error.__traceback__
    while tb is not None:
        if _is_user_file(tb.tb_frame.f_code.co_filename, roots):
            frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames[::-1]


class _EditedSources(importlib.abc.MetaPathFinder):
    """Imports of the user's edited files get their edited text (never a stale .pyc)."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts

    def find_spec(self, name, path, target=None):
        if not self.texts:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.origin is None:
            return None
        text = self.texts.get(Path(spec.origin).resolve())
        if text is None:
            return None
        spec.loader = _EditedLoader(name, spec.origin, text)
        return spec


class _EditedLoader(importlib.machinery.SourceFileLoader):
    def __init__(self, name: str, path: str, text: str) -> None:
        super().__init__(name, path)
        self.text = text

    def get_data(self, path: str) -> bytes:
        if path == self.path:
            return self.text.encode("utf-8")
        return super().get_data(path)

    def path_stats(self, path: str):
        raise OSError("edited in memory: no bytecode cache")  # read the text, write no .pyc

