"""The messages that count as device errors, on a CPU build and on a CUDA build with its GPUs hidden."""

from __future__ import annotations

import pytest

from devfix.device_errors import is_device_error


@pytest.mark.parametrize("error_type, message", [
    ("AssertionError", "Torch not compiled with CUDA enabled"),
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
])
def test_device_errors(error_type, message):
    assert is_device_error(error_type, message)


@pytest.mark.parametrize("error_type, message", [
    ("ValueError", "boom"),
    ("KeyError", "No CUDA GPUs are available"),  # only runtime, type, assertion and value errors count
    ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (4x3 and 2x2)"),
])
def test_other_errors(error_type, message):
    assert not is_device_error(error_type, message)
