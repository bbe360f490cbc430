"""The torch.cuda (and torch.accelerator) answers of a machine with simulated GPUs."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from types import SimpleNamespace
from unittest import mock

import torch
from torch.utils._pytree import tree_map

from devfix.sim import serialization
from devfix.sim.errors import SimulatorUnsupported
from devfix.sim.tensor import is_sim, new_parameter

LEGACY_CUDA_TYPES = (
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
    "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
)
UNSUPPORTED_CUDA = ("Stream", "Event", "graph", "CUDAGraph", "stream", "nvtx", "comm", "default_stream")


@contextmanager
def patched_torch(state):
    original_shallow_copy = torch._has_compatible_shallow_copy_type

    def compatible(input: torch.Tensor, from_: torch.Tensor) -> bool:  # torch checks this signature
        # Module._apply then assigns `param.data = moved`, which the mode turns into an in-place
        # device change of the same Parameter object (optimizers built earlier keep working).
        return True if (is_sim(input) or is_sim(from_)) else original_shallow_copy(input, from_)

    def set_device(device):
        state.current = state.normalize(torch.device("cuda", device) if isinstance(device, int) else torch.device(device)).index

    class selected_device:
        """`with torch.cuda.device(1):` selects that simulated GPU inside the block (a negative
        index or None, nothing)."""

        def __init__(self, device) -> None:
            self.device, self.previous = device, state.current

        def __enter__(self) -> None:
            self.previous = state.current
            if self.device is not None and not (isinstance(self.device, int) and self.device < 0):
                set_device(self.device)

        def __exit__(self, *exception) -> bool:
            state.current = self.previous
            return False

    replacements = {
        "torch.cuda.is_available": lambda: True,
        "torch.cuda.device": selected_device,
        "torch.cuda.device_count": lambda: state.device_count,
        "torch.cuda.current_device": lambda: state.current,
        "torch.cuda.set_device": set_device,
        "torch.cuda.is_initialized": lambda: True,
        "torch.cuda.init": lambda: None,
        "torch.cuda.synchronize": lambda device=None: None,
        "torch.cuda.empty_cache": lambda: None,
        "torch.cuda.manual_seed": lambda seed: None,
        "torch.cuda.manual_seed_all": lambda seed: None,
        "torch.cuda.get_device_name": lambda device=None: "devfix simulated CUDA device",
        "torch.cuda.get_device_capability": lambda device=None: (9, 0),
        "torch.cuda.get_device_properties": lambda device=None: _PROPERTIES,
        "torch.nn.parallel.DataParallel.scatter": _single_device_scatter,
        "torch.cuda.memory_allocated": lambda device=None: 0,
        "torch.cuda.max_memory_allocated": lambda device=None: 0,
        "torch.cuda.memory_reserved": lambda device=None: 0,
        "torch.cuda.reset_peak_memory_stats": lambda device=None: None,
        "torch.cuda.set_per_process_memory_fraction": lambda fraction, device=None: None,
        "torch.accelerator.is_available": lambda: True,
        "torch.accelerator.device_count": lambda: state.device_count,
        "torch.accelerator.current_accelerator": lambda check_available=False: torch.device("cuda"),
        "torch.accelerator.current_stream": lambda device=None: _IdleStream(),
        "torch.cuda.current_stream": lambda device=None: _IdleStream(),
        "torch._has_compatible_shallow_copy_type": compatible,
        "torch.backends.cudnn.is_acceptable": lambda tensor: False,  # no cuDNN: RNNs skip flattening
        "torch.nn.Parameter.__new__": staticmethod(new_parameter(torch.nn.Parameter.__new__)),
        "torch.save": serialization.save(torch.save),
        "torch.load": serialization.load(torch.load),
        "torch.UntypedStorage.cuda": serialization.storage_cuda,
        "torch.set_default_device": _refuse_cuda_default(torch.set_default_device),
        "torch.set_default_tensor_type": _refuse_cuda_tensor_type(torch.set_default_tensor_type),
        "torch.autograd.Variable": _variable(torch.autograd.Variable),
        "torch.autograd.variable.Variable": _variable(torch.autograd.Variable),
    }
    for name in LEGACY_CUDA_TYPES:
        replacements[f"torch.cuda.{name}"] = _legacy_cuda_type(name)
    for name in UNSUPPORTED_CUDA:
        if hasattr(torch.cuda, name):
            replacements[f"torch.cuda.{name}"] = _unsupported(f"torch.cuda.{name}")
    with ExitStack() as stack:
        for target, replacement in replacements.items():
            stack.enter_context(mock.patch(target, replacement))
        serialization.activate(state)
        stack.callback(serialization.deactivate)
        yield


_PROPERTIES = SimpleNamespace(
    name="devfix simulated CUDA device", major=9, minor=0, total_memory=80 * 2**30, multi_processor_count=132
)


def _single_device_scatter(self, inputs, kwargs, device_ids):
    """DataParallel on one GPU moves its inputs there and calls the module; more is not modelled."""
    if len(device_ids) != 1:
        raise SimulatorUnsupported("DataParallel across several simulated GPUs")
    device = torch.device("cuda", device_ids[0])
    move = lambda value: value.to(device) if isinstance(value, torch.Tensor) else value  # noqa: E731
    return [tree_map(move, tuple(inputs))], [tree_map(move, dict(kwargs or {}))]


class _IdleStream:
    """The default stream of a simulated GPU: never capturing a graph, always finished."""

    def is_capturing(self) -> bool:
        return False

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        return True


def _unsupported(what: str):
    def refuse(*args, **kwargs):
        raise SimulatorUnsupported(what)

    return refuse


def _legacy_cuda_type(name: str):
    """`torch.cuda.FloatTensor(8, 1)` or `torch.cuda.FloatTensor(array)` (PyTorch-GAN's `Tensor`):
    the CPU type's tensor of those sizes or that data, moved to the simulated GPU, as a real GPU
    builds it there. Given a tensor or keywords, the legacy semantics are not modelled. It still
    names its type, so `x.type(torch.cuda.FloatTensor)` moves `x` (`SimulatedCudaMode._type`)."""
    cpu_type = getattr(torch, name)

    def construct(*args, **kwargs):
        if kwargs or any(isinstance(arg, torch.Tensor) for arg in args):
            raise SimulatorUnsupported(f"the legacy constructor torch.cuda.{name} given a tensor or keywords")
        return cpu_type(*args).to("cuda")

    construct.__module__, construct.__name__, construct.__qualname__ = "torch.cuda", name, name
    return construct


def _refuse_cuda_default(original):
    def set_default_device(device):
        if device is not None and torch.device(device).type == "cuda":
            raise SimulatorUnsupported('torch.set_default_device("cuda")')
        return original(device)

    return set_default_device


def _refuse_cuda_tensor_type(original):
    """`torch.set_default_tensor_type("torch.cuda.FloatTensor")` (or the type itself) makes every
    factory a GPU one; the simulator does not model a CUDA default and says so, where torch would
    reject its stand-in type with a TypeError that is no device error. CPU types pass through."""
    def set_default_tensor_type(t):
        named = t if isinstance(t, str) else f"{getattr(t, '__module__', '')}.{getattr(t, '__name__', '')}"
        if named.startswith("torch.cuda."):
            raise SimulatorUnsupported(f"torch.set_default_tensor_type({named})")
        return original(t)

    return set_default_tensor_type


class _TensorCheck(type):
    def __instancecheck__(cls, other) -> bool:  # `isinstance(x, Variable)`, as torch's VariableMeta answers
        return isinstance(other, torch.Tensor)


def _variable(original):
    """`Variable(t)` of pre-0.4 code: a detached alias of `t` (torch builds it in C++, out of the
    simulator's reach, so a simulated CUDA tensor is detached through the simulator instead)."""

    class Variable(metaclass=_TensorCheck):
        def __new__(cls, data=None, requires_grad=False, volatile=False):
            if not is_sim(data):
                return original(data, requires_grad=requires_grad, volatile=volatile)
            alias = data.detach()
            return alias.requires_grad_() if requires_grad else alias

    return Variable
