"""Recognising device-placement errors by the message families PyTorch uses for them."""

from __future__ import annotations

import re

DEVICE_ERROR_PATTERNS = (
    r"Expected all tensors to be on the same device",
    r"Input type \(.*\) and weight type \(.*\) should be the same",
    r"tensors are not at the same device",
    r"indices should be either on cpu or on the same device",
    r"'lengths' argument should be a 1D CPU int64 tensor",
    r"Expected object of (device type|backend)",
    r"is on (CPU|GPU), but expected it to be on",
    r"Attempting to deserialize object on (a )?CUDA device",
    r"Torch not compiled with CUDA enabled",
    r"PyTorch was compiled without CUDA support",  # a CPU build entering `with torch.cuda.device(0):`
    r"Cannot initialize CUDA without ATen_cuda library",  # a CPU build given a CUDA tensor type (`x.type(torch.cuda.FloatTensor)`)
    r"Cannot access accelerator device when none is available",
    r"pin_memory=True requires a CUDA or other accelerator backend",
    r"Found no NVIDIA driver",
    r"No CUDA GPUs are available",  # a CUDA build with the GPUs hidden (`CUDA_VISIBLE_DEVICES=""`)
    r"can't convert cuda:?\d* device type tensor to numpy",
    r"Expected a '(cuda|cpu)(:\d+)?' (device type for )?generator",
    r"legacy constructor expects device type",
    r"module must have its parameters and buffers on device",
    r"Expected condition, x and y to be on the same device",
    r"expected \w+ and \w+ to be on the same device",  # real CUDA's `masked_fill`: "expected self and mask ..."
    r"CUDA error: invalid device ordinal",
    r"Cannot re-initialize CUDA in forked subprocess",  # CUDA used in a DataLoader worker forked after the program used it
    r"CUDA error: initialization error",  # the same, reported by the driver
)
_DEVICE_ERROR = re.compile("|".join(DEVICE_ERROR_PATTERNS))
# a CPU build of torch has no CUDA bindings: `torch.cuda.set_device(0)` and
# `torch.cuda.reset_peak_memory_stats()` fail there as "module 'torch._C' has no attribute '_cuda_setDevice'"
_MISSING_CUDA_BINDING = re.compile(r"module 'torch\._C' has no attribute '_cuda_")


def is_device_error(error_type: str, message: str) -> bool:
    """`error_type` is the exception's class name; only runtime, type, assertion and value errors
    count (and `AcceleratorError`, the RuntimeError that CUDA builds of torch >= 2.8 raise for driver
    errors), and the AttributeError of a CUDA binding a CPU build lacks."""
    if error_type == "AttributeError":
        return _MISSING_CUDA_BINDING.search(message) is not None
    if error_type not in ("RuntimeError", "AcceleratorError", "TypeError", "AssertionError", "ValueError"):
        return False
    return _DEVICE_ERROR.search(message) is not None
