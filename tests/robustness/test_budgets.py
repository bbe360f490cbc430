"""Each file's analysis has a time and a memory budget, and a stack for the deepest code Python
accepts: a file over its budget costs one `error:` line, the other files still get their fixes
(issue 13)."""

from __future__ import annotations

import time

import pytest

from devfix.budget import OverTimeBudget, run_deep
from tests.robustness.test_bad_input import BUGGY, devfix


def many_functions(count: int) -> str:
    """A long module with one finding at the top: libcst analyses the whole tree (~50 s per MB)."""
    body = "".join(f"def f{index}(x):\n    y = x + {index}\n    return y * 2\n\n" for index in range(count))
    return "import torch\nx = torch.zeros(3).cuda()\n" + body


def check_budget(tmp_path, config: str, source: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.devfix]\n" + config)
    (tmp_path / "big.py").write_text(source)
    (tmp_path / "good.py").write_text(BUGGY)
    completed = devfix("fix", "--no-cache", "-j", "1", "big.py", "good.py", cwd=tmp_path)
    assert completed.returncode == 2, completed.stderr
    errors = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: big.py: "), completed.stderr
    assert message in errors[0]
    assert "Traceback" not in completed.stderr
    assert (tmp_path / "big.py").read_text() == source
    assert "to(device)" in (tmp_path / "good.py").read_text()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["big.py", "good.py", "pyproject.toml"]


def test_a_file_over_its_time_budget_is_skipped(tmp_path):
    check_budget(tmp_path, "file-timeout = 1\n", many_functions(4000), "analysis took over 1 s (`file-timeout`")


def test_a_file_over_its_memory_budget_is_skipped(tmp_path):
    """Out of memory in Python code is a MemoryError; in libcst's native code the worker aborts:
    either way one error naming the limit."""
    check_budget(tmp_path, "file-memory-limit = 512\n", many_functions(40_000), "`file-memory-limit`")


def test_a_worker_told_to_end_takes_no_other_file(monkeypatch, tmp_path):
    """After a file over its memory budget the worker ends within a second; a file the pool hands it
    before then ends it at once (the pool runs that file in a fresh worker), where it used to start
    near the cap and fail with "can't start new thread"."""
    from devfix import budget, runner
    from devfix.fix_policy import FixPolicy

    class Ended(Exception):
        pass

    def exit_now(code: int) -> None:
        raise Ended(code)

    monkeypatch.setattr(runner, "in_worker", lambda: True)
    monkeypatch.setattr(runner.os, "_exit", exit_now)
    monkeypatch.setattr(budget, "limit_memory", lambda megabytes: None)
    (tmp_path / "good.py").write_text(BUGGY)
    job = runner.Job(str(tmp_path / "good.py"), (), FixPolicy(), 1 << 20)
    monkeypatch.setattr(budget, "_ending", False)
    assert runner.analyse_path(job)[0].error is None
    monkeypatch.setattr(budget, "_ending", True)
    with pytest.raises(Ended):
        runner.analyse_path(job)


@pytest.mark.parametrize("terms", [600, 1500])
def test_deep_code_that_python_accepts_is_fixed(tmp_path, terms):
    """libcst recurses once or more per nesting level: past ~500 terms the default recursion limit
    used to end in 'internal error: RecursionError'."""
    source = "import torch\nx = torch.zeros(3).cuda() + " + " + ".join(["a"] * terms) + "\n"
    (tmp_path / "deep.py").write_text(source)
    completed = devfix("fix", "--no-cache", "deep.py", cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert "torch.zeros(3).to(device) + a + a" in (tmp_path / "deep.py").read_text()


def test_time_spent_importing_is_not_the_files(tmp_path, monkeypatch):
    """devfix loads its rules on first use in each process: a slow import (a busy machine) must not
    put a small file over a budget meant for its analysis; the same wait spent analysing does."""
    (tmp_path / "slow_to_import.py").write_text("import time\ntime.sleep(0.6)\nVALUE = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def load() -> int:
        import slow_to_import

        return slow_to_import.VALUE

    assert run_deep(load, 0.3) == 7
    with pytest.raises(OverTimeBudget):
        run_deep(lambda: time.sleep(0.6), 0.3)


def test_budgets_are_validated(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.devfix]\nfile-memory-limit = 100\n")
    (tmp_path / "good.py").write_text(BUGGY)
    completed = devfix("check", "good.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert "[tool.devfix] file-memory-limit must be at least 512, not 100" in completed.stderr


def test_the_time_budget_holds_when_the_analysis_swallows_its_exception():
    """libcst's cleanup code turned the time budget's exception into a KeyError: a rule crash,
    after which the other rules ran and the file was reported clean."""
    import time

    from devfix.budget import OverTimeBudget, run_deep

    def swallowing() -> str:
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # Python code: the exception arrives at once (a sleep would finish first)
                pass
        except OverTimeBudget:
            return "finished as if nothing happened"
        return "not interrupted"

    with pytest.raises(OverTimeBudget):
        run_deep(swallowing, seconds=0.2)


def test_a_rule_crash_while_memory_ran_out_is_the_memory_budget(monkeypatch):
    import devfix.engine
    from devfix.analysis.project import ProjectIndex
    from devfix.codemods.df001_hardcoded_cuda import HardcodedCuda

    def out_of_memory(self, *arguments):
        try:
            raise MemoryError
        except MemoryError:
            raise KeyError("a node") from None  # `from None` hides it from tracebacks, not from __context__

    monkeypatch.setattr(HardcodedCuda, "leave_Call", out_of_memory)
    with pytest.raises(MemoryError):
        devfix.engine.process(BUGGY.encode(), "train.py", [HardcodedCuda], ProjectIndex())
