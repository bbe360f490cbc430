"""The simulated CUDA tensor: a wrapper whose C++ device is `cuda:N` around an ordinary CPU tensor.

Because the wrapper's device really is cuda, `x.device`, `x.is_cuda` and device equality come from
PyTorch itself. Autograd never touches the wrapper (a CUDA-device tensor in autograd aborts a CPU
build): every operation runs on the inner CPU tensors, where gradients live.
"""

from __future__ import annotations

import torch
from devfix.sim.errors import SimulatorUnsupported


class SimCudaTensor(torch.Tensor):
    _inner: torch.Tensor

    @staticmethod
    def __new__(cls, inner: torch.Tensor, device: torch.device) -> SimCudaTensor:
        wrapper = torch.Tensor._make_wrapper_subclass(
            cls,
            inner.size(),
            strides=inner.stride(),
            storage_offset=inner.storage_offset(),
            dtype=inner.dtype,
            layout=inner.layout,
            device=device,
            requires_grad=False,
        )
        wrapper._inner = inner
        wrapper._device = device
        return wrapper

    # All interception happens in the mode (devfix.sim.mode); the subclass itself stays inert.
    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise SimulatorUnsupported(f"the operation {func} reaching the dispatcher with a simulated CUDA tensor")


class SimCudaParameter(SimCudaTensor, torch.nn.Parameter):
    """What a Parameter becomes after `module.to("cuda")`: still an `nn.Parameter` to the module.

    Also built the way `nn.Parameter(data, requires_grad)` is (deepcopy, user code): the CPU data
    becomes a real CPU Parameter inside, so gradients accumulate there."""

    @staticmethod
    def __new__(cls, inner: torch.Tensor, device: torch.device | bool = True) -> SimCudaParameter:
        if isinstance(device, bool):
            data = inner
            inner = torch.nn.Parameter(unwrap(data), requires_grad=device)
            device = device_of(data)
        return SimCudaTensor.__new__(cls, inner, device)

    __torch_function__ = torch._C._disabled_torch_function_impl


def new_parameter(original_new):
    """`nn.Parameter.__new__` under simulation: a CUDA tensor makes a simulated CUDA Parameter."""

    def parameter_new(cls, data=None, requires_grad=True):
        if isinstance(data, SimCudaTensor) and not issubclass(cls, SimCudaTensor):
            return SimCudaParameter(data, requires_grad)
        return original_new(cls, data, requires_grad)

    return parameter_new


def is_sim(value: object) -> bool:
    return isinstance(value, SimCudaTensor)


def unwrap(value: object) -> object:
    return value._inner if isinstance(value, SimCudaTensor) else value


def unwrap_all(tree: object) -> object:
    return map_structure(unwrap, tree)


def map_structure(function, value: object) -> object:
    """`function` applied to every tensor in nested tuples, lists and dicts (pytree is too slow for
    the per-call hot path of the simulator)."""
    if isinstance(value, torch.Tensor):
        return function(value)
    if isinstance(value, (tuple, list)):
        items = [map_structure(function, item) for item in value]
        kind = type(value)
        if kind is tuple or kind is list:
            return kind(items)
        if hasattr(kind, "_fields"):
            return kind(*items)
        return kind(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        return {key: map_structure(function, item) for key, item in value.items()}
    return value


def wrap(value: object, device: torch.device | None) -> object:
    """A plain tensor result on `device` (None: it stays a CPU tensor)."""
    if device is None or not isinstance(value, torch.Tensor) or isinstance(value, SimCudaTensor):
        return value
    return SimCudaTensor(value, device)


def device_of(value: torch.Tensor) -> torch.device:
    """The device the program sees: cuda:N for wrappers, the real device otherwise."""
    device = getattr(value, "_device", None) if isinstance(value, SimCudaTensor) else None
    return device if device is not None else torch._C.TensorBase.device.__get__(value)
