"""Runs started side by side: `run_programs` keeps `jobs` of them going at once, in forked children
and in fresh interpreters alike, and gives the outcomes in the order the runs were asked for."""

from __future__ import annotations

import os

import pytest

from devfix import execution

os.environ.setdefault("OMP_NUM_THREADS", "1")

# Each program marks that it started, then waits for the other's mark: only runs that overlap both
# see it (a run left alone gives up after 30 s and prints 0).
MEETS = """import os, time
open({mine!r}, "w").close()
for _ in range(600):
    if os.path.exists({other!r}):
        break
    time.sleep(0.05)
print("RESULT", int(os.path.exists({other!r})))
"""


def _pair(tmp_path):
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text(MEETS.format(mine=str(tmp_path / "first.mark"), other=str(tmp_path / "second.mark")))
    second.write_text(MEETS.format(mine=str(tmp_path / "second.mark"), other=str(tmp_path / "first.mark")))
    return first, second


@pytest.mark.parametrize("cuda_build", [False, True], ids=["forked-children", "fresh-interpreters"])
def test_two_jobs_run_two_programs_at_once(cuda_build, tmp_path, monkeypatch):
    monkeypatch.setattr(execution, "_cuda_build", lambda: cuda_build)
    first, second = _pair(tmp_path)
    outcomes = execution.run_programs([(first, "cpu"), (second, "cpu")], timeout=120, jobs=2)
    assert [outcome.result for outcome in outcomes] == [1.0, 1.0], [outcome.describe() for outcome in outcomes]


def test_outcomes_keep_the_order_of_the_runs_and_each_its_own_deadline(tmp_path):
    slow, quick, wrong = tmp_path / "slow.py", tmp_path / "quick.py", tmp_path / "wrong.py"
    slow.write_text("import time\ntime.sleep(60)\nprint('RESULT', 1)\n")
    quick.write_text("print('RESULT', 2)\n")
    wrong.write_text("raise ValueError('no')\n")
    outcomes = execution.run_programs([(slow, "sim"), (quick, "collapsed"), (wrong, "cpu")], timeout=3, jobs=2)
    assert [outcome.machine for outcome in outcomes] == ["sim", "collapsed", "cpu"]
    assert outcomes[0].error_type == "Timeout"
    assert outcomes[1].ok and outcomes[1].result == 2.0
    assert outcomes[2].error_type == "ValueError"


def test_a_timed_out_fresh_interpreter_is_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(execution, "_cuda_build", lambda: True)
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(60)\nprint('RESULT', 1)\n")
    [outcome] = execution.run_programs([(slow, "cpu")], timeout=3, jobs=2)
    assert outcome.error_type == "Timeout" and not outcome.ok


def test_a_forked_run_prints_while_a_thread_of_the_parent_holds_its_stdout(tmp_path, monkeypatch):
    """A thread of the parent blocked in a write to `sys.stdout` (a full pipe nobody reads) holds
    the stream's lock; a child forked then inherits it held, and its first print used to hang until
    the run's timeout (`devfix verify` on a terminal draws its spinner from a thread)."""
    import sys
    import threading

    read_end, write_end = os.pipe()
    stuck = open(write_end, "w", buffering=1)  # noqa: SIM115 - closed below
    monkeypatch.setattr(sys, "stdout", stuck)
    def write_a_lot() -> None:
        try:
            stuck.write("x" * (1 << 20))
        except OSError:  # the reading end closed at the end of the test
            pass

    writer = threading.Thread(target=write_a_lot, daemon=True)
    writer.start()
    writer.join(timeout=1)
    assert writer.is_alive()  # blocked in the write, holding the lock
    monkeypatch.setattr(execution, "_cuda_build", lambda: False)
    program = tmp_path / "prints.py"
    program.write_text("print('a line')\nprint('RESULT', 1)\n")
    [outcome] = execution.run_programs([(program, "cpu")], timeout=20)
    os.close(read_end)  # the writer fails and ends
    writer.join(timeout=5)
    assert outcome.ok and outcome.result == 1.0, outcome.describe()
