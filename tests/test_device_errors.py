"""The messages that count as device errors, on a CPU build and on a CUDA build with its GPUs hidden."""

from __future__ import annotations

import pytest

from devfix.device_errors import is_device_error
from devfix.execution import _summary

# what a DataLoader worker forked after the program used the GPU re-raised on an H200 (torch 2.11,
# CUDA 13): the worker's own error line is followed by CUDA's advice lines
REAL_WORKER_ERROR = (
    "Caught AcceleratorError in DataLoader worker process 0.\n"
    "Original Traceback (most recent call last):\n"
    '  File "/usr/lib/python3/site-packages/torch/utils/data/_utils/worker.py", line 349, in _worker_loop\n'
    "    data = fetcher.fetch(index)\n"
    '  File "before.py", line 17, in __getitem__\n'
    "    return self.table[index] * 2\n"
    "torch.AcceleratorError: CUDA error: initialization error\n"
    "Search for `cudaErrorInitializationError' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)


@pytest.mark.parametrize("error_type, message", [
    ("AssertionError", "Torch not compiled with CUDA enabled"),
    ("RuntimeError", "PyTorch was compiled without CUDA support"),  # a CPU build entering `with torch.cuda.device(0):`
    ("RuntimeError", "No CUDA GPUs are available"),  # CUDA_VISIBLE_DEVICES="" on a GPU machine
    # torch 2.13's CPU build given `x.type(torch.cuda.FloatTensor)`
    ("RuntimeError", "Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two shared libraries"),
    ("RuntimeError", "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"),
    ("TypeError", "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."),
    # what `masked_fill` raised on an H200 (torch 2.11, CUDA 13); the simulator says "Expected all tensors ..."
    ("RuntimeError", "expected self and mask to be on the same device, but got mask on cpu and self on cuda:0"),
    # a DataLoader worker forked after the program used the GPU, as the loader re-raises it (DF029)
    ("RuntimeError", "Caught RuntimeError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n"
                     "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
                     "you must use the 'spawn' start method"),
    # a CPU build of torch running `torch.cuda.set_device(0)`: it has no CUDA bindings at all
    ("AttributeError", "module 'torch._C' has no attribute '_cuda_setDevice'"),
])
def test_device_errors(error_type, message):
    assert is_device_error(error_type, message)


def test_a_real_gpus_worker_error_is_summarised_by_the_line_naming_it_and_counts():
    summary = _summary(REAL_WORKER_ERROR)
    assert summary == "Caught AcceleratorError in DataLoader worker process 0. torch.AcceleratorError: CUDA error: initialization error"
    assert is_device_error("AcceleratorError", summary)


@pytest.mark.parametrize("error_type, message", [
    ("ValueError", "boom"),
    ("KeyError", "No CUDA GPUs are available"),  # only runtime, type, assertion and value errors count
    ("AttributeError", "module 'torch' has no attribute 'frobnicate'"),  # only a missing CUDA binding
    ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (4x3 and 2x2)"),
])
def test_other_errors(error_type, message):
    assert not is_device_error(error_type, message)
