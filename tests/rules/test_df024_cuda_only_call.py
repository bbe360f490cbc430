"""DF024: which calls count as checked for CUDA, which statements it guards, and where it only reports."""

from __future__ import annotations

import pytest

from devfix.codemods import CudaOnlyCall
from tests.conftest import run_devfix

HEAD = "import torch\n\n\n"
MAIN = "\n\nif __name__ == '__main__':\n    run(torch.device('cpu'))\n"


def run(source: str, path: str = "script.py"):
    return run_devfix(HEAD + source, path, rules=[CudaOnlyCall])


@pytest.mark.parametrize("body", [
    "    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n",
    "    if device.type == 'cuda':\n        torch.cuda.synchronize(device)\n",
    "    if device.type != 'cuda':\n        return\n    torch.cuda.synchronize()\n",
    "    assert torch.cuda.is_available(), 'needs a GPU'\n    torch.cuda.synchronize()\n",
    "    try:\n        torch.cuda.synchronize()\n    except RuntimeError:\n        pass\n",
    "    torch.cuda.is_available() and torch.cuda.synchronize()\n",
    "    torch.cuda.empty_cache()\n    torch.cuda.manual_seed(0)\n    print(torch.cuda.memory_allocated())\n",
])
def test_checked_or_harmless_calls_are_left_alone(body):
    result = run("def run(device):\n" + body + MAIN)
    assert result.fixed == result.source and not result.findings


def test_a_function_every_caller_calls_under_a_check_is_left_alone():
    source = "def sync():\n    torch.cuda.synchronize()\n\n\ndef run(device):\n    if device.type == 'cuda':\n        sync()\n" + MAIN
    result = run(source)
    assert result.fixed == result.source and not result.findings


def test_a_function_called_once_without_a_check_is_guarded():
    source = "def sync():\n    torch.cuda.synchronize()\n\n\ndef run(device):\n    sync()\n" + MAIN
    result = run(source)
    assert b"def sync():\n    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n" in result.fixed


def test_consecutive_statements_share_one_guard_and_keep_their_comments():
    source = "def run(device):\n    # where are we\n    print(torch.cuda.get_device_name(0))\n    # start clean\n    torch.cuda.reset_peak_memory_stats()  # peak\n" + MAIN
    fixed = run(source).fixed.decode()
    assert ("    # where are we\n    if torch.cuda.is_available():\n        print(torch.cuda.get_device_name(0))\n"
            "        # start clean\n        torch.cuda.reset_peak_memory_stats()  # peak\n") in fixed


@pytest.mark.parametrize("statement", [
    "name = torch.cuda.get_device_name(0)",
    "start = torch.cuda.Event(enable_timing=True)",
    "print(torch.cuda.get_device_name(0), model_size())",  # the print computes something else too
    "if torch.cuda.get_device_capability()[0] >= 8:\n        print('bf16')",
])
def test_a_used_result_is_reported_without_a_fix_in_a_program(statement):
    result = run("def model_size():\n    return 1\n\n\ndef run(device):\n    " + statement + "\n" + MAIN)
    assert result.fixed == result.source
    assert [finding.code for finding in result.findings] == ["DF024"] and not result.findings[0].fixable


def test_a_used_result_in_a_library_module_is_left_alone():
    result = run("def name():\n    return torch.cuda.get_device_name(0)\n")
    assert result.fixed == result.source and not result.findings


def test_a_statement_in_a_library_module_is_guarded():
    result = run("def evaluate(model, x):\n    torch.cuda.synchronize()\n    return model(x)\n")
    assert b"    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n" in result.fixed


def test_tests_and_multi_gpu_files_are_left_alone():
    assert not run("def test_speed():\n    torch.cuda.synchronize()\n", "test_speed.py").findings
    source = "def run(local_rank):\n    torch.distributed.init_process_group('nccl')\n    torch.cuda.synchronize()\n" + MAIN
    assert not run(source).findings


def test_the_guard_names_torch_when_only_its_functions_are_imported():
    source = "from torch.cuda import synchronize\n\n\ndef run(device):\n    synchronize()\n" + MAIN
    fixed = run_devfix(source, "script.py", rules=[CudaOnlyCall]).fixed.decode()
    assert "import torch\n" in fixed and "    if torch.cuda.is_available():\n        synchronize()\n" in fixed


def test_pinned_memory_is_pinned_only_when_cuda_is_available():
    source = ("def run(device):\n    buffer = torch.empty(4, pin_memory=True)\n"
              "    x = buffer.pin_memory().to(device)\n    rows = [r.pin_memory() for r in batch[\"rows\"]]\n" + MAIN)
    fixed = run(source).fixed.decode()
    assert "buffer = torch.empty(4, pin_memory=torch.cuda.is_available())\n" in fixed
    assert "x = (buffer.pin_memory() if torch.cuda.is_available() else buffer).to(device)\n" in fixed
    assert "rows = [(r.pin_memory() if torch.cuda.is_available() else r) for r in batch[\"rows\"]]\n" in fixed


@pytest.mark.parametrize("body", [
    "    if device.type == 'cuda':\n        x = x.pin_memory()\n",  # checked
    "    loader = torch.utils.data.DataLoader(x, pin_memory=True)\n",  # a loader only warns
    "    y = torch.empty(4, pin_memory=False)\n",
])
def test_checked_or_harmless_pinning_is_left_alone(body):
    result = run("def run(device, x):\n" + body + MAIN)
    assert result.fixed == result.source and not result.findings


def test_pinning_a_computed_value_is_reported_without_a_fix():
    result = run("def run(device, x):\n    y = (x * 2).pin_memory()\n" + MAIN)
    assert result.fixed == result.source
    assert [finding.code for finding in result.findings] == ["DF024"] and not result.findings[0].fixable


def test_pinning_in_a_library_module_is_left_alone():
    result = run("def stage(x):\n    return x.pin_memory()\n")
    assert result.fixed == result.source and not result.findings


@pytest.mark.parametrize(("call", "guarded"), [
    # each raises on a CPU-only build ("Torch not compiled with CUDA enabled", or a dummy class)
    ("torch.cuda.set_per_process_memory_fraction(0.5)", True), ("torch.cuda.memory_snapshot()", True),
    ("torch.cuda.current_stream().synchronize()", False), ("torch.cuda.default_stream().wait_stream(side)", False),
])
def test_other_calls_that_need_cuda(call, guarded):
    result = run("def run(device, side=None):\n    " + call + "\n" + MAIN)
    assert (f"    if torch.cuda.is_available():\n        {call}\n" in result.fixed.decode()) is guarded
    assert guarded or [(finding.code, finding.fixable) for finding in result.findings] == [("DF024", False)]  # once, not per call of the chain


def test_picking_the_first_gpu_is_guarded_and_picking_another_marks_multi_gpu_code():
    source = "def run(device):\n    torch.cuda.set_device(0)\n    torch.cuda.synchronize()\n" + MAIN
    fixed = run(source).fixed.decode()
    assert "    if torch.cuda.is_available():\n        torch.cuda.set_device(0)\n" in fixed
    for other in ("1", "args.gpu", "rank"):
        source = f"def run(device, args, rank):\n    torch.cuda.set_device({other})\n    torch.cuda.synchronize()\n" + MAIN
        assert run(source).fixed == run(source).source


@pytest.mark.parametrize(("statement", "fixed", "remaining"), [
    ("with torch.cuda.device(0):\n        run_step(device)", "with torch.cuda.device(0 if torch.cuda.is_available() else -1):", ()),
    ("with torch.cuda.device(torch.device('cuda:0')) as selected, open('log'):\n        run_step(device)",
     "with torch.cuda.device(torch.device('cuda:0') if torch.cuda.is_available() else -1) as selected, open('log'):", ()),
    ("with torch.cuda.device(0 if torch.cuda.is_available() else -1):\n        run_step(device)", None, ()),  # its own fix
    ("if torch.cuda.is_available():\n        with torch.cuda.device(0):\n            run_step(device)", None, ()),
    ("selected = torch.cuda.device(0)\n    with selected:\n        run_step(device)", None, (False,)),  # not the item of a `with`
    # SimCLR: `args.gpu_index = -1` where there is no CUDA; only a literal GPU is hard-coded
    ("with torch.cuda.device(args.gpu_index):\n        run_step(device)", None, ()),
])
def test_a_gpu_selected_by_a_with_block_is_selected_only_when_cuda_is_available(statement, fixed, remaining):
    """`with torch.cuda.device(0):` raises on entering without CUDA; `torch.cuda.device(-1)`
    selects nothing, as documented. `remaining`: whether each finding left is fixable."""
    result = run(f"def run(device):\n    {statement}\n" + MAIN)
    if fixed is None:
        assert result.fixed == result.source
    else:
        assert fixed in result.fixed.decode()
    assert tuple(finding.fixable for finding in result.findings if finding.code == "DF024") == remaining
    assert [finding.code for finding in result.applied] == (["DF024"] if fixed else [])
