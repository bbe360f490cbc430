"""Proof by execution for fixtures: the buggy program fails with a device error, the fixed one
runs on a CUDA machine and on a CPU-only machine and computes what the buggy one meant.

For a case that devfix changes:
  1. before.py fails with a device error under CUDA, or on the CPU-only machine (a hard-coded
     `.cuda()` only fails there);
  2. before.py with every device collapsed onto the CPU gives the reference RESULT;
  3. after.py runs under CUDA and on the CPU-only machine, each with that RESULT (1e-5 relative;
     on a real GPU random numbers are drawn by the CPU's generator, see `host_randomness`).
For a `clean-` case: before.py runs under CUDA and on the CPU-only machine with the same RESULT.
The runs are independent and run two at a time in the case's directory, so a fixture program
writes only into directories of its own (`tempfile.mkdtemp()`), never beside itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from devfix.device_errors import is_device_error
from devfix.execution import DEFAULT_TIMEOUT, ProgramOutcome, run_programs
from devfix.fixture_cases import FixtureCase, discover_cases

RELATIVE_TOLERANCE = 1e-5
DEFAULT_JOBS = 2  # a case's programs run two at a time: CI has two cores, and each run uses one


@dataclass
class CaseReport:
    case: FixtureCase
    outcomes: dict[str, ProgramOutcome] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


class VerifyRefused(ValueError):
    """A verify run that could only report false results: no GPU for `--device cuda`, no cases."""


def cuda_machine(choice: str) -> str:
    """`auto`: real CUDA when this torch build has a GPU, else the simulator. `cuda` on a machine
    without one is refused: every after.py would fail there, and the FAILs would be false."""
    if choice == "sim":
        return choice
    import torch

    available = torch.cuda.is_available() and torch.version.cuda is not None
    if choice == "cuda" and not available:
        raise VerifyRefused(f"--device cuda: this PyTorch ({torch.__version__}) sees no CUDA device; use --device sim (or auto)")
    return "cuda" if available else "sim"


def collect_cases(paths: list[Path]) -> list[FixtureCase]:
    """The cases under `paths` (fixture directories, case directories, or their before.py/after.py),
    each once, sorted. A path that holds no case is refused, never reported as "0 passed"."""
    cases: set[FixtureCase] = set()
    for path in paths:
        if path.is_dir():
            found = discover_cases(path)
        elif path.name in ("before.py", "after.py", "before.ipynb", "after.ipynb") and FixtureCase(path.parent).before.is_file():
            found = [FixtureCase(path.parent)]
        elif path.exists():
            raise VerifyRefused(f"{path}: not a fixture case (a case is a directory with before.py and after.py)")
        else:
            raise VerifyRefused(f"{path}: no such file or directory")
        if not found:
            raise VerifyRefused(f"{path}: no fixture cases in it (no before.py below it)")
        cases.update(found)
    return sorted(cases, key=lambda case: case.name)


def verify_case(case: FixtureCase, cuda: str = "sim", timeout: float = DEFAULT_TIMEOUT, jobs: int = DEFAULT_JOBS) -> CaseReport:
    return verify_pair(case, case.before, case.after, case.is_clean, cuda, timeout, jobs)


def verify_pair(
    case: FixtureCase,
    before: Path,
    after: Path,
    clean: bool = False,
    cuda: str = "sim",
    timeout: float = DEFAULT_TIMEOUT,
    jobs: int = DEFAULT_JOBS,
) -> CaseReport:
    """The contract on any two programs (multi-file projects too: `before` and `after` may sit
    in different directories, each beside its own modules). The runs are independent of each
    other; `jobs` of them run at a time."""
    report = CaseReport(case)
    runs = _runs_of_a_clean_case(before, cuda) if clean else _runs_of_a_fixed_case(before, after, cuda)
    outcomes = run_programs([(script, machine) for _, script, machine in runs], timeout, jobs)
    report.outcomes = {label: outcome for (label, _, _), outcome in zip(runs, outcomes, strict=True)}
    (_check_clean if clean else _check_fixed)(report)
    return report


def _runs_of_a_clean_case(before: Path, cuda: str) -> list[tuple[str, Path, str]]:
    return [("before (CUDA)", before, cuda), ("before (CPU)", before, "cpu")]


def _runs_of_a_fixed_case(before: Path, after: Path, cuda: str) -> list[tuple[str, Path, str]]:
    return [
        ("before (CUDA)", before, cuda),
        ("before (CPU)", before, "cpu"),
        ("before (meant)", before, "collapsed"),
        ("after (CUDA)", after, cuda),
        ("after (CPU)", after, "cpu"),
    ]


def _check_clean(report: CaseReport) -> None:
    on_cuda, on_cpu = report.outcomes["before (CUDA)"], report.outcomes["before (CPU)"]
    for outcome in (on_cuda, on_cpu):
        _require_result(report, outcome, "the clean program")
    if on_cuda.ok and on_cpu.ok:
        _require_close(report, on_cuda.result, on_cpu.result, "the clean program's CUDA and CPU RESULTs differ")


def _check_fixed(report: CaseReport) -> None:
    failures = [report.outcomes["before (CUDA)"], report.outcomes["before (CPU)"]]
    if not any(not outcome.ok and is_device_error(outcome.error_type, outcome.error_message) for outcome in failures):
        report.failures.append("before.py raised no device error on either machine: " + "; ".join(o.describe() for o in failures))
    meant = report.outcomes["before (meant)"]
    _require_result(report, meant, "before.py with devices collapsed onto the CPU")
    fixed = [report.outcomes["after (CUDA)"], report.outcomes["after (CPU)"]]
    for outcome in fixed:
        _require_result(report, outcome, "after.py")
    if not all(outcome.ok for outcome in fixed):
        return
    if meant.ok:
        for outcome in fixed:
            _require_close(report, outcome.result, meant.result, f"after.py on {outcome.machine} computes a different RESULT than before.py meant")


def _require_result(report: CaseReport, outcome: ProgramOutcome, what: str) -> None:
    if not outcome.ok:
        report.failures.append(f"{what} failed on {outcome.machine}: {outcome.describe()}")
    elif outcome.result is None:
        report.failures.append(f"{what} printed no RESULT line on {outcome.machine}")


def _require_close(report: CaseReport, got: float | None, expected: float | None, message: str) -> None:
    if got is None or expected is None:
        return
    if not math.isclose(got, expected, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-9):
        report.failures.append(f"{message}: {got!r} vs {expected!r}")


def verify_paths(
    paths: list[Path], cuda: str = "sim", timeout: float = DEFAULT_TIMEOUT, on_case: Callable[[int, int, FixtureCase], None] | None = None,
    jobs: int = DEFAULT_JOBS,
) -> list[CaseReport]:
    """Every case under `paths`; `on_case(done, total, case)` before each one starts (a live count)."""
    cases = collect_cases(paths)
    reports = []
    for case in cases:
        if on_case is not None:
            on_case(len(reports), len(cases), case)
        reports.append(verify_case(case, cuda, timeout, jobs))
    return reports
