"""Every fixture is proven by execution under simulated CUDA, and a safe fix keeps the state_dict
keys of the program's models (old checkpoints keep loading); broken fixes are caught."""

from __future__ import annotations

import os
import shutil

import pytest

from devfix.codemods import rule_by_code
from devfix.findings import Safety
from devfix.fixture_cases import FixtureCase, discover_cases
from devfix.verify import verify_case
from tests.cli_runner import invoke_devfix
from tests.conftest import REPO

os.environ.setdefault("OMP_NUM_THREADS", "1")
CASES = discover_cases(REPO / "fixtures")


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_fixture_is_proven_by_execution(case):
    files = _files_of(case.directory)
    report = verify_case(case, "sim")
    assert report.ok, "\n".join(report.failures)
    assert _files_of(case.directory) == files, "a program of the case wrote beside itself (its runs overlap: use tempfile.mkdtemp())"
    if not case.is_clean and rule_by_code(case.rule_code).SAFETY is Safety.SAFE:
        # the proof's own runs: before.py with devices collapsed onto the CPU, after.py on the CPU
        before, after = report.outcomes["before (meant)"].state_dict_keys, report.outcomes["after (CPU)"].state_dict_keys
        for name in set(before) & set(after):
            assert before[name] == after[name], f"the safe fix changed the state_dict keys of `{name}`"


def test_unsafe_container_fix_says_it_adds_keys():
    """DF015's `nn.ModuleList` adds the heads' parameters to the state_dict: it is an unsafe fix."""
    case = next(case for case in CASES if case.name == "DF015-module-container/list-comprehension-heads")
    report = verify_case(case, "sim")
    assert report.outcomes["before (meant)"].state_dict_keys["model"] == []
    assert report.outcomes["after (CPU)"].state_dict_keys["model"] == ["heads.0.bias", "heads.0.weight", "heads.1.bias", "heads.1.weight"]
    assert rule_by_code("DF015").SAFETY is Safety.UNSAFE


def _files_of(directory):
    """Each file of a case (bytecode aside) with its size and modification time: a rewrite shows."""
    return {
        path.relative_to(directory): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in directory.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def _copy(case_name: str, tmp_path):
    source = REPO / "fixtures" / case_name
    target = tmp_path / "fixtures" / source.parent.name / source.name
    shutil.copytree(source, target)
    return FixtureCase(target)


def test_after_that_forgets_a_move_fails_with_a_clear_message(tmp_path):
    case = _copy("DF002-loader-to-device/tuple-batch", tmp_path)
    text = case.after.read_text()
    case.after.write_text(text.replace("    batch_X, batch_y = batch_X.to(device), batch_y.to(device)\n", ""))
    report = verify_case(case, "sim")
    assert not report.ok
    assert any(
        failure.startswith("after.py failed on sim: RuntimeError") and "Expected all tensors to be on the same device" in failure
        for failure in report.failures
    ), report.failures


def test_after_that_changes_the_numbers_fails(tmp_path):
    case = _copy("DF003-module-not-moved/model-never-moved", tmp_path)
    case.after.write_text(case.after.read_text().replace("net = Net(16).to(device)", "torch.manual_seed(1)\nnet = Net(16).to(device)"))
    report = verify_case(case, "sim")
    assert any("computes a different RESULT than before.py meant" in failure for failure in report.failures), report.failures


def test_before_without_a_device_error_fails(tmp_path):
    case = _copy("DF003-module-not-moved/model-never-moved", tmp_path)
    shutil.copy(case.after, case.before)
    report = verify_case(case, "sim")
    assert any(failure.startswith("before.py raised no device error") for failure in report.failures)


def test_verify_command_exit_codes(tmp_path):
    good = _copy("DF001-hardcoded-cuda/model-and-input-to-cuda", tmp_path)
    result = invoke_devfix(["verify", str(good.directory), "--device", "sim"], catch_exceptions=True)
    assert result.exit_code == 0, result.stdout
    assert "1 passed, 0 failed" in result.stdout
    good.after.write_text(good.before.read_text())
    result = invoke_devfix(["verify", str(tmp_path / "fixtures"), "--device", "sim"], catch_exceptions=True)
    assert result.exit_code == 1
    assert "FAIL" in result.stdout and "Torch not compiled with CUDA enabled" in result.stdout


def test_verify_on_an_80_column_terminal_counts_live_and_fits(tmp_path):
    """A terminal shows `verify 1/2 <case>` while the cases run, then a table whose lines fit 80
    columns: the cases grouped under their rule, by their short names."""
    import pty
    import re
    import subprocess
    import sys

    _copy("DF001-hardcoded-cuda/model-and-input-to-cuda", tmp_path)
    _copy("DF023-device-captured-at-init/hidden-state-on-the-stored-device", tmp_path)
    controller, terminal = pty.openpty()
    environment = {**os.environ, "COLUMNS": "80", "LINES": "40", "TERM": "xterm"}
    environment.pop("NO_COLOR", None)
    process = subprocess.Popen([sys.executable, "-m", "devfix", "verify", "--device", "sim", str(tmp_path / "fixtures")],
                               stdin=terminal, stdout=terminal, stderr=terminal, env=environment)
    os.close(terminal)
    output = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closed: the program ended
            break
        if not chunk:
            break
        output += chunk
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output.decode()).replace("\r\n", "\n")
    assert process.wait(timeout=60) == 0, text
    assert "verify 1/2 DF001-hardcoded-cuda/model-and-input-to-cuda" in text
    assert "verify 2/2 DF023-device-captured-at-init/hidden-state-on-the-stored-device" in text
    table = text[text.index("case"):].splitlines()
    assert all(len(line) <= 80 for line in table), table
    assert any(line.strip() == "DF023-device-captured-at-init" for line in table)
    assert any(re.match(r"pass\s+hidden-state-on-the-stored-device\s+RuntimeError\s+\S+", line) for line in table), table

