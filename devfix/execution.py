"""Run one Python program on a chosen machine and report how it ended.

Machines: "sim" (simulated CUDA on the CPU build), "cpu" (CUDA unavailable), "collapsed" (every
device mapped to the CPU: the numbers the program means), "cuda" (real GPU). On a CPU-only build
the parent imports torch once (and what else every child would import again: `preload`) and forks
a child per program (fresh user modules, the program's own cwd and argv, a timeout); real CUDA runs
use a fresh interpreter, since CUDA does not survive fork, and so do the CPU-only and collapsed
machines on a CUDA build (there the GPU is hidden from them).
Every run starts from the same random state; real CUDA runs without TF32.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from devfix import forking

MACHINES = ("sim", "cpu", "collapsed", "cuda")
RESULT_LINE = re.compile(r"^RESULT\s+(\S+)\s*$")
DEFAULT_TIMEOUT = 120.0


@dataclass(frozen=True)
class ProgramOutcome:
    machine: str
    ok: bool
    result: float | None = None
    error_type: str = ""
    error_message: str = ""
    error_location: str = ""
    output_tail: str = ""
    state_dict_keys: dict[str, list[str]] | None = None  # top-level Modules of the program

    def describe(self) -> str:
        if self.ok:
            return f"ran, RESULT {self.result}" if self.result is not None else "ran, printed no RESULT line"
        where = f" at {self.error_location}" if self.error_location else ""
        return f"{self.error_type}{where}: {self.error_message}".strip()


def run_program(script: Path, machine: str, timeout: float = DEFAULT_TIMEOUT, argv: list[str] | None = None) -> ProgramOutcome:
    return start_program(script, machine, timeout, argv).wait()


def start_program(script: Path, machine: str, timeout: float = DEFAULT_TIMEOUT, argv: list[str] | None = None) -> RunningProgram:
    """Start a run and return at once: runs of independent programs can overlap (one core each)."""
    if machine not in MACHINES:
        raise ValueError(f"unknown machine {machine!r}")
    if machine == "cuda" or (machine in GPU_HIDDEN_MACHINES and _cuda_build()) or not hasattr(os, "fork"):
        return _start_subprocess(script, machine, timeout, argv or [])
    return _start_fork(script, machine, timeout, argv or [])


def run_programs(runs: list[tuple[Path, str]], timeout: float = DEFAULT_TIMEOUT, jobs: int = 1) -> list[ProgramOutcome]:
    """Each (script, machine) run, at most `jobs` at a time, outcomes in the order given. The runs
    share their scripts' directories: programs run side by side must not write the same files."""
    running: list[RunningProgram] = []
    outcomes: list[ProgramOutcome] = []
    for script, machine in runs:
        if len(running) >= max(jobs, 1):
            outcomes.append(running.pop(0).wait())
        running.append(start_program(script, machine, timeout))
    outcomes.extend(run.wait() for run in running)
    return outcomes


class RunningProgram:
    """A started run; `wait()` gives its outcome (once), killing it at its deadline."""

    def __init__(self, machine: str, timeout: float, finish) -> None:
        self.machine, self.timeout, self._finish = machine, timeout, finish
        self.deadline = time.monotonic() + timeout
        self._outcome: ProgramOutcome | None = None

    def wait(self) -> ProgramOutcome:
        if self._outcome is None:
            self._outcome = self._finish(self)
        return self._outcome

    def timed_out(self, tail: str = "") -> ProgramOutcome:
        return ProgramOutcome(self.machine, False, error_type="Timeout", error_message=f"no answer within {self.timeout:.0f} s", output_tail=tail)


GPU_HIDDEN_MACHINES = ("cpu", "collapsed")  # on a CUDA build: a fresh interpreter that sees no GPU
SEED = 0  # every run starts from the same random state, so runs of one program can be compared


def _cuda_build() -> bool:
    """A torch built with CUDA: its CPU-only and collapsed machines are fresh interpreters with the
    GPU hidden (`CUDA_VISIBLE_DEVICES=""`); a forked child would see the GPU, or fail on one this
    process started (`torch.cuda.is_available()` initialises the driver, and CUDA does not survive
    fork: an optimizer's `step()` then dies with "CUDA error: initialization error")."""
    import torch

    return torch.version.cuda is not None


def _start_fork(script: Path, machine: str, timeout: float, argv: list[str]) -> RunningProgram:
    import devfix.sim  # noqa: F401
    from devfix.preload import preload_for

    preload_for(script.resolve().parent)  # torch and the like, imported once here: the children inherit them

    read_end, write_end = os.pipe()
    output = tempfile.TemporaryFile()
    pid = forking.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        os.dup2(output.fileno(), 1)
        os.dup2(output.fileno(), 2)
        _fresh_standard_streams()
        report = _execute(script, machine, argv)
        sys.stdout.flush()
        sys.stderr.flush()
        os.write(write_end, json.dumps(report).encode())
        os._exit(0)
    os.close(write_end)

    def finish(run: RunningProgram) -> ProgramOutcome:
        with output:
            payload = _read_with_timeout(read_end, pid, run.deadline - time.monotonic())
            output.seek(0)
            tail = output.read().decode("utf-8", "replace")[-4000:]
        if payload is None:
            return run.timed_out(tail)
        if not payload:
            return ProgramOutcome(machine, False, error_type="Crash", error_message="the program died without a report", output_tail=tail)
        return _outcome(machine, json.loads(payload), tail)

    return RunningProgram(machine, timeout, finish)


def _fresh_standard_streams() -> None:
    """New `sys.stdout`/`sys.stderr` objects on the child's descriptors 1 and 2. The parent's may
    have been held by one of its threads at the fork (`devfix verify` on a terminal draws its
    spinner from one), and a lock held then is never released in the child: its first print hung
    until the run's timeout."""
    sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)  # noqa: SIM115


def _read_with_timeout(fd: int, pid: int, timeout: float) -> bytes | None:
    """The child's report; None when it has not ended by the deadline (a child that ended while
    another run was being waited for is read, however late)."""
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)
        os.waitpid(pid, 0)


def _start_subprocess(script: Path, machine: str, timeout: float, argv: list[str]) -> RunningProgram:
    """A fresh interpreter; its output goes to files, so that a run nobody reads yet never blocks."""
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    if machine in GPU_HIDDEN_MACHINES:
        env["CUDA_VISIBLE_DEVICES"] = ""
    command = [sys.executable, "-m", "devfix.execution", machine, str(script), *argv]
    stdout, stderr = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env)

    def finish(run: RunningProgram) -> ProgramOutcome:
        with stdout, stderr:
            try:
                returncode = process.wait(timeout=max(run.deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                return run.timed_out()
            printed = [stream.seek(0) or stream.read().decode("utf-8", "replace") for stream in (stdout, stderr)]
        report_lines = [line for line in printed[0].splitlines() if line.startswith("DEVFIX-REPORT ")]
        tail = (printed[0] + printed[1])[-4000:]
        if not report_lines:
            return ProgramOutcome(machine, False, error_type="Crash", error_message=f"exit status {returncode}", output_tail=tail)
        return _outcome(machine, json.loads(report_lines[-1][len("DEVFIX-REPORT "):]), tail)

    return RunningProgram(machine, timeout, finish)


def _execute(script: Path, machine: str, argv: list[str]) -> dict:
    """In the child: run `script` as `__main__` on `machine`; never raises."""
    import io
    import runpy

    script = script.resolve()
    os.chdir(script.parent)
    sys.argv = [str(script), *argv]
    sys.path.insert(0, str(script.parent))
    captured = io.StringIO()
    report: dict = {"ok": True}
    _seed_everything()
    try:
        with _machine(machine), contextlib.redirect_stdout(_Tee(captured, sys.stdout)):
            namespace = _run_notebook(script) if script.suffix == ".ipynb" else runpy.run_path(str(script), run_name="__main__")
            report["state_dict_keys"] = _state_dict_keys(namespace)
    except SystemExit as exit_request:
        if exit_request.code not in (None, 0):
            report = _error_report(exit_request, script)
    except BaseException as error:  # the program's own failure is the report
        report = _error_report(error, script)
    sys.stdout.flush()
    results = [match.group(1) for line in captured.getvalue().splitlines() if (match := RESULT_LINE.match(line))]
    report["result"] = results[-1] if results else None
    return report


def _seed_everything() -> None:
    """The same random state for every run, whatever process it runs in: torch seeds a fresh
    interpreter from the OS, so a program drawing before its own `manual_seed` (a model built
    first) computed different numbers in each process, and only forked runs agreed."""
    import importlib.util
    import random

    import torch

    random.seed(SEED)
    torch.manual_seed(SEED)
    if importlib.util.find_spec("numpy") is not None:
        import numpy

        numpy.random.seed(SEED)


def _run_notebook(script: Path) -> dict:
    """A notebook's code cells in order, as one kernel runs them (IPython lines skipped)."""
    from devfix.notebooks import Notebook

    namespace = {"__name__": "__main__", "__file__": str(script)}
    exec(compile(Notebook.from_bytes(script.read_bytes()).program, str(script), "exec"), namespace)  # noqa: S102 - running the user's program is the point
    return namespace


def _state_dict_keys(namespace: dict) -> dict[str, list[str]]:
    import torch

    return {
        name: sorted(value.state_dict().keys())
        for name, value in namespace.items()
        if isinstance(value, torch.nn.Module) and not name.startswith("_")
    }


def _machine(machine: str):
    if machine == "sim":
        from devfix.sim import simulated_cuda

        return simulated_cuda()
    if machine == "collapsed":
        from devfix.sim.collapse import collapsed_devices

        return collapsed_devices()
    if machine == "cuda":
        return _comparable_cuda()
    return contextlib.nullcontext()


@contextlib.contextmanager
def _comparable_cuda() -> Iterator[None]:
    """Real CUDA whose numbers can be compared with the CPU's: in full float32 (cuDNN's
    convolutions and RNNs default to TF32, whose 10-bit mantissa moves results by 1e-4), and
    drawing random numbers from the CPU's generator (`host_randomness`)."""
    import torch

    from devfix.host_randomness import HostDrawnRandomness

    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        with HostDrawnRandomness("cuda"):
            yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved


def _error_report(error: BaseException, script: Path) -> dict:
    frames = traceback.extract_tb(error.__traceback__)
    user = [frame for frame in frames if Path(frame.filename).resolve().is_relative_to(script.parent)]
    location = f"{Path(user[-1].filename).name}:{user[-1].lineno}" if user else ""
    return {"ok": False, "error_type": type(error).__name__, "error_message": _summary(str(error))[:500], "location": location}


def _summary(message: str) -> str:
    """The message's first line; for an error a DataLoader worker raised ("Caught RuntimeError in
    DataLoader worker process 0." over the worker's traceback), with the line naming what the worker
    raised (`torch.AcceleratorError: CUDA error: ...` is followed by CUDA's advice lines)."""
    lines = [line for line in message.split("\n") if line.strip()]
    if not lines:
        return ""
    if lines[0].startswith("Caught ") and "worker" in lines[0] and len(lines) > 1:
        raised = [line.strip() for line in lines[1:] if re.match(r"[\w.]+(Error|Exception): ", line)]
        return f"{lines[0]} {raised[-1] if raised else lines[-1].strip()}"
    return lines[0]


def _outcome(machine: str, report: dict, tail: str) -> ProgramOutcome:
    result = report.get("result")
    try:
        number = float(result) if result is not None else None
    except ValueError:
        number = None
    return ProgramOutcome(
        machine,
        bool(report.get("ok")),
        number,
        report.get("error_type", ""),
        report.get("error_message", ""),
        report.get("location", ""),
        tail,
        report.get("state_dict_keys"),
    )


class _Tee:
    def __init__(self, *streams) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


if __name__ == "__main__":  # the fresh-interpreter path (real CUDA)
    outcome = _execute(Path(sys.argv[2]), sys.argv[1], sys.argv[3:])
    print("DEVFIX-REPORT " + json.dumps(outcome), flush=True)
