"""Which process runs a program: on a CUDA build of torch (a GPU machine), the CPU-only machine is
a fresh interpreter with the GPU hidden; a forked child would see the GPU, or inherit a CUDA this
process started, and "runs on the CPU" would not be proven."""

from __future__ import annotations

import os

import pytest

from devfix import execution

os.environ.setdefault("OMP_NUM_THREADS", "1")
SEES_HIDDEN_GPU = 'import os\nprint("RESULT", 1 if os.environ.get("CUDA_VISIBLE_DEVICES") == "" else 0)\n'


@pytest.mark.parametrize(("cuda_build", "gpu_hidden"), [(True, 1.0), (False, 0.0)], ids=["cuda-build-fresh-interpreter", "cpu-build-fork"])
def test_the_cpu_machine_hides_the_gpu_on_a_cuda_build(cuda_build, gpu_hidden, tmp_path, monkeypatch):
    script = tmp_path / "main.py"
    script.write_text(SEES_HIDDEN_GPU)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(execution, "_cuda_build", lambda: cuda_build)
    assert execution.run_program(script, "cpu", timeout=120).result == gpu_hidden


def test_the_collapsed_machine_hides_the_gpu_on_a_cuda_build(tmp_path, monkeypatch):
    """A forked child touching CUDA after the parent initialised it dies ("initialization error",
    seen on an H200 in an optimizer's step); collapsed devices need no GPU."""
    script = tmp_path / "main.py"
    script.write_text(SEES_HIDDEN_GPU)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(execution, "_cuda_build", lambda: True)
    assert execution.run_program(script, "collapsed", timeout=120).result == 1.0


DRAWS_UNSEEDED = "import random\nimport numpy\nimport torch\nprint('RESULT', torch.rand(1).item() + random.random() + numpy.random.rand())\n"


def test_every_run_starts_from_the_same_random_state(tmp_path, monkeypatch):
    """A fresh interpreter seeds torch from the OS: without a common seed two runs of a program
    that draws before seeding (in fresh interpreters, as on a CUDA build) disagree."""
    script = tmp_path / "main.py"
    script.write_text(DRAWS_UNSEEDED)
    monkeypatch.setattr(execution, "_cuda_build", lambda: True)
    results = {execution.run_program(script, "cpu", timeout=120).result for _ in range(2)}
    results.add(execution._start_fork(script, "sim", 120, []).wait().result)
    assert len(results) == 1 and None not in results


def test_an_optimizer_steps_on_collapsed_devices_of_a_gpu_machine_whose_gpu_is_hidden(monkeypatch):
    """On an H200 an Adam step failed there: CUDA looks available, so the step asked whether a
    CUDA graph was being captured, and asking starts CUDA, which the collapsed machine hides."""
    import torch

    from devfix.sim.collapse import collapsed_devices

    def no_gpu(*args, **kwargs):
        raise RuntimeError("CUDA error: no CUDA-capable device is detected")

    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda check_available=False: torch.device("cuda") if torch.cuda.is_available() else None)
    monkeypatch.setattr(torch.accelerator, "current_stream", no_gpu)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", no_gpu)
    weight = torch.nn.Parameter(torch.ones(3))
    optimizer = torch.optim.Adam([weight], lr=0.1)
    with collapsed_devices():
        (weight.to("cuda") ** 2).sum().backward()
        optimizer.step()
    assert torch.allclose(weight.detach(), torch.full((3,), 0.9))


def test_casts_to_tensor_types_on_collapsed_devices():
    """The collapsed machine replaces `torch.FloatTensor` and kin by constructors that drop a CUDA
    device; `x.type(torch.FloatTensor)` must still cast (it raised "dtype must be a type")."""
    import torch

    from devfix.sim.collapse import collapsed_devices

    with collapsed_devices():
        single = torch.ones(2, dtype=torch.float64).type(torch.FloatTensor)
        indices = torch.ones(2).type(torch.cuda.LongTensor)
    assert single.dtype == torch.float32 and indices.dtype == torch.int64 and indices.device.type == "cpu"
