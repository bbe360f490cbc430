"""Every device collapsed onto the CPU: what a program *means* when placement is ignored.

The verifier runs the buggy program this way to learn the numbers it was meant to compute: CUDA
appears available (so the program takes its GPU branches), but `.cuda()`, `.to("cuda")` and
`device="cuda"` all land on the CPU.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from unittest import mock

import torch
from torch.overrides import TorchFunctionMode


class CollapsedDeviceMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name in ("cuda", "pin_memory") and args and isinstance(args[0], torch.Tensor):
            return args[0]
        if name == "type" and len(args) == 2 and hasattr(args[1], "cpu_type"):
            return func(args[0], args[1].cpu_type, **kwargs)  # `x.type(torch.FloatTensor)`, patched below
        if name == "to" and args and isinstance(args[0], torch.Tensor):
            device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*args[1:], **kwargs)
            return args[0].to(dtype=dtype or args[0].dtype, memory_format=memory_format or torch.preserve_format)
        if _is_cuda(kwargs.get("device")):
            kwargs["device"] = "cpu"
        if kwargs.get("pin_memory") is True:
            kwargs["pin_memory"] = False  # pinned host memory needs an accelerator; its values are the same
        return func(*args, **kwargs)


@contextmanager
def collapsed_devices() -> Iterator[None]:
    original_load = torch.load

    def load(*args, **kwargs):
        kwargs["map_location"] = "cpu"
        return original_load(*args, **kwargs)

    with ExitStack() as stack:
        stack.enter_context(mock.patch("torch.cuda.is_available", lambda: True))
        stack.enter_context(mock.patch("torch.cuda.device_count", lambda: 1))
        stack.enter_context(mock.patch("torch.cuda.manual_seed", lambda seed: None))
        stack.enter_context(mock.patch("torch.cuda.manual_seed_all", lambda seed: None))
        stack.enter_context(mock.patch("torch.cuda.synchronize", lambda device=None: None))
        stack.enter_context(mock.patch("torch.cuda.current_device", lambda: 0))
        stack.enter_context(mock.patch("torch.cuda.set_device", lambda device: None))
        stack.enter_context(mock.patch("torch.cuda.device", lambda device: nullcontext()))  # `with torch.cuda.device(0):`
        stack.enter_context(mock.patch("torch.cuda.get_device_name", lambda device=None: "collapsed CUDA device"))
        stack.enter_context(mock.patch("torch.cuda.get_device_capability", lambda device=None: (9, 0)))
        stack.enter_context(mock.patch("torch.cuda.reset_peak_memory_stats", lambda device=None: None))
        stack.enter_context(mock.patch("torch.cuda.set_per_process_memory_fraction", lambda fraction, device=None: None))
        stack.enter_context(mock.patch("torch.load", load))
        # An optimizer's step asks whether a CUDA graph is being captured as soon as CUDA looks
        # available, and the question starts CUDA: on a GPU machine, whose GPU this machine hides,
        # it fails ("no CUDA-capable device"). Nothing runs on a GPU here, so nothing is captured.
        stack.enter_context(mock.patch("torch.cuda.is_current_stream_capturing", lambda: False))
        for check in CAPTURE_CHECKS:
            if hasattr(torch.optim.Optimizer, check):
                stack.enter_context(mock.patch.object(torch.optim.Optimizer, check, lambda self: None))
        for name in LEGACY_TYPES:  # torch.cuda.FloatTensor(...) and torch.FloatTensor(..., device="cuda")
            cpu_type = getattr(torch, name)
            stack.enter_context(mock.patch(f"torch.cuda.{name}", _legacy(cpu_type)))
            stack.enter_context(mock.patch(f"torch.{name}", _legacy(cpu_type)))
        stack.enter_context(CollapsedDeviceMode())
        yield


CAPTURE_CHECKS = ("_accelerator_graph_capture_health_check", "_cuda_graph_capture_health_check")  # names across torch releases
LEGACY_TYPES = ("FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor")


def _legacy(cpu_type):
    def construct(*args, **kwargs):
        if _is_cuda(kwargs.get("device")):
            kwargs["device"] = "cpu"
        return cpu_type(*args, **kwargs)

    construct.cpu_type = cpu_type
    return construct


def _is_cuda(device: object) -> bool:
    if device is None:
        return False
    if isinstance(device, int):
        return True
    try:
        return torch.device(device).type == "cuda"
    except (RuntimeError, TypeError):
        return False
