"""`devfix run` finds a GPU-only device bug on a CPU machine and points at the user's line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests.conftest import REPO


def _devfix(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "devfix", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_run_reports_the_multi_file_example_at_its_true_line(tmp_path):
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    completed = _devfix("run", "examples/train.py", cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    lines = completed.stderr.splitlines()
    assert lines[0] == (
        "examples/model.py:13: RuntimeError: Expected all tensors to be on the same device, "
        "but found at least two devices, cpu and cuda:0!"
    )
    assert "    examples/train.py:21: loss = criterion(model(inputs), labels)" in lines
    nearest = lines[lines.index("devfix findings (nearest to the error first):") + 1]
    assert nearest.startswith("    examples/train.py:19:9: DF002")
    assert "+        inputs, labels = inputs.to(device), labels.to(device)" in completed.stderr
    assert completed.stdout == ""  # stdout is the program's: the report goes to stderr


def test_run_proposes_fixes_in_imported_files_outside_the_traceback(tmp_path):
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    completed = _devfix("run", "examples/train.py", cwd=tmp_path)
    lines = completed.stderr.splitlines()
    other = lines.index("devfix findings in other files the program imported:")
    assert lines[other + 1].startswith("    examples/evaluate.py:11:13: DF002")
    assert "+++ ./examples/evaluate.py" in completed.stderr
    assert lines[-1] == "Apply with `devfix fix examples/train.py examples/evaluate.py`."


def test_run_asks_for_unsafe_fixes_only_when_a_fix_is_unsafe(tmp_path):
    (tmp_path / "layers.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Stack(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.layers = [nn.Linear(2, 2), nn.Linear(2, 2)]\n\n"
        "    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x)\n        return x\n\n\n"
        "model = Stack().cuda()\nprint('RESULT', model(torch.ones(1, 2).cuda()).sum().item())\n"
    )
    completed = _devfix("run", "layers.py", cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    assert "DF015" in completed.stderr
    assert completed.stderr.splitlines()[-1] == "Apply with `devfix fix --unsafe-fixes layers.py`."


def test_run_passes_arguments_and_reports_success(tmp_path):
    script = tmp_path / "ok.py"
    script.write_text("import sys, torch\nx = torch.ones(2).cuda()\nprint(sys.argv[1:], x.device)\n")
    completed = _devfix("run", str(script), "--flag", "value", cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert "['--flag', 'value'] cuda:0" in completed.stdout
    assert "finished under simulated CUDA without a device error" in completed.stderr


def test_run_reports_non_device_errors_as_such(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("raise ValueError('boom')\n")
    completed = _devfix("run", str(script), cwd=tmp_path)
    assert completed.returncode == 1
    assert "ValueError: boom (not a device error)" in completed.stderr


def test_run_prints_the_message_of_sys_exit_as_python_does(tmp_path):
    (tmp_path / "quit.py").write_text('import sys\nsys.exit("bad config: no data")\n')
    completed = _devfix("run", "quit.py", cwd=tmp_path)
    assert completed.returncode == 1
    assert completed.stderr.splitlines()[0] == "bad config: no data"


def test_run_of_a_missing_script_is_an_error(tmp_path):
    completed = _devfix("run", "nope.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert completed.stderr == "error: nope.py: no such file\n"


def test_run_stops_a_program_at_its_timeout(tmp_path):
    (tmp_path / "loop.py").write_text("import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except Exception:\n        pass\n")
    completed = _devfix("run", "--timeout", "1", "loop.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert completed.stderr == "error: loop.py: still running after 1 s (--timeout); stopped\n"


def test_a_child_the_program_forks_does_not_report(tmp_path):
    (tmp_path / "fork.py").write_text(
        "import os, torch\npid = os.fork()\nif pid == 0:\n    x = torch.ones(2).cuda() + torch.ones(2)\n"
        "else:\n    os.waitpid(pid, 0)\n    print('parent done')\n"
    )
    completed = _devfix("run", "fork.py", cwd=tmp_path)
    assert completed.returncode == 0 and completed.stdout == "parent done\n"
    assert "devfix findings" not in completed.stderr and completed.stderr.count("finished under simulated CUDA") == 1
    assert "RuntimeError: Expected all tensors to be on the same device" in completed.stderr  # the child's own traceback
