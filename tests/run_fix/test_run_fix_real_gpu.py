"""`devfix run --fix --device cuda`: the rounds run on the machine's real GPU, each in a fresh
interpreter (CUDA does not survive a fork once started), with no simulator and so no provenance:
the edits come from the traceback and devfix's findings. CI has no GPU: these tests hold the
refusal, the fresh-interpreter round and the traceback-only choice of edits to what they must do;
`docs/gpu-verification.md` records runs on a real GPU."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import torch

from devfix import gpu_round, run_rounds
from devfix.program import Program
from devfix.run_fix import fix_by_running
from tests.cli_runner import invoke_devfix
from tests.conftest import REPO

os.environ.setdefault("OMP_NUM_THREADS", "1")
HARD_CODED = "import torch\nx = torch.ones(3).cuda()\nprint('RESULT', float((x * 2).sum()))\n"


def test_the_probe_agrees_with_torch():
    assert gpu_round.gpu_present() == (torch.cuda.is_available() and torch.version.cuda is not None)


def test_without_a_gpu_the_real_cuda_machine_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(gpu_round, "gpu_present", lambda: False)
    (tmp_path / "main.py").write_text(HARD_CODED)
    shown = invoke_devfix(["run", "--fix", "--device", "cuda", "main.py"])
    assert shown.exit_code == 2 and "--device cuda: this PyTorch sees no CUDA device" in shown.stderr
    plain = invoke_devfix(["run", "--device", "cuda", "main.py"])
    assert plain.exit_code == 2 and "--device cuda runs only with --fix" in plain.stderr


def test_a_round_in_a_fresh_interpreter_reports_as_a_forked_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "main.py"
    script.write_text(HARD_CODED)
    program = Program.of_script(script)
    forked, fresh = run_round_pair(program, {})
    assert fresh == forked and not fresh.finished and fresh.frames[0].line == 2
    edited = {script.resolve(): HARD_CODED.replace(".cuda()", "")}  # served from memory there too
    forked, fresh = run_round_pair(program, edited)
    assert fresh == forked and fresh.finished and fresh.stdout == "RESULT 6.0\n"


def run_round_pair(program, texts):
    """On this machine without a GPU, the "cuda" machine's round is the CPU's, in a new process."""
    return run_rounds.run_round(program, [], texts, "cpu", 60), run_rounds.run_round(program, [], texts, "cuda", 60)


def test_without_provenance_the_traceback_and_the_findings_choose_the_edits(tmp_path, monkeypatch):
    target = tmp_path / "program"
    shutil.copytree(REPO / "tests" / "programs" / "evaluate-with-inline-cuda", target)
    monkeypatch.chdir(target)
    run = fix_by_running(Program.of_script(Path("main.py")), [], timeout=120, machine="cuda")
    assert run.proven, run.failures
    assert all(not edit.how.startswith("from the run") for edit in run.edits)
    fixed = run.texts()[(target / "main.py").resolve()][1]
    assert "model(images.to(device))" in fixed and "nn.Linear(8, 2)).to(device)" in fixed
