"""Random numbers for a real GPU drawn by the CPU's generator, so that the verifier can compare.

CUDA has its own generator: after `torch.manual_seed(0)`, `torch.randn(3, device="cuda")` gives
other numbers than `torch.randn(3)`, so a program that draws on the device computes other numbers
on a GPU than on a CPU, though it is right on both (the H200 run: 35 cases). On the CUDA machine
the verifier draws those numbers on the host, from the generator the CPU-only machine uses, and
copies them to the device: every draw still ends where the program asked, with the CPU's values.
A draw given its own `generator=` or `out=` is left alone, so that its device errors stay real.
"""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_map

RANDOM_CALLS = frozenset({
    # factories and functions that draw into a new tensor
    "rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson",
    "rand_like", "randn_like", "randint_like",
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    # in-place fills, of tensors and of `nn.init` (which layers made with `device=` call)
    "normal_", "uniform_", "random_", "bernoulli_", "exponential_", "geometric_", "log_normal_", "cauchy_",
    "trunc_normal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_",
})


class HostDrawnRandomness(TorchFunctionMode):
    """Inside it, a random call whose tensors or `device=` are on `device_type` draws on the CPU."""

    def __init__(self, device_type: str = "cuda") -> None:
        super().__init__()
        self.device_type = device_type

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        target = self._target(args, kwargs) if name in RANDOM_CALLS else None
        if target is None or kwargs.get("generator") is not None or kwargs.get("out") is not None or kwargs.get("inplace"):
            return func(*args, **kwargs)
        if "device" in kwargs:
            kwargs["device"] = "cpu"
        if name.endswith("_"):  # fills a tensor in place: fill a host tensor like it, then copy that over
            filled = args[0] if args else kwargs.pop("tensor")  # `nn.init` passes it by keyword
            host_filled = _host_like(filled)
            func(host_filled, *tree_map(self._to_host, args[1:]), **tree_map(self._to_host, kwargs))
            with torch.no_grad():
                filled.copy_(host_filled)
            return filled
        if name.endswith("_like"):  # only the shape and dtype of the input count
            args = (_host_like(args[0]), *args[1:])
        requires_grad = kwargs.pop("requires_grad", False)
        drawn = func(*tree_map(self._to_host, args), **tree_map(self._to_host, kwargs))
        placed = tree_map(lambda value: value.to(target) if isinstance(value, torch.Tensor) else value, drawn)
        return placed.requires_grad_() if requires_grad else placed

    def _target(self, args, kwargs) -> torch.device | None:
        """The device the draw lands on, when it is one this mode draws for."""
        if kwargs.get("device") is not None:
            device = torch.device(kwargs["device"])
            return device if device.type == self.device_type else None
        for value in (*args, *kwargs.values()):
            if isinstance(value, torch.Tensor):
                return value.device if value.device.type == self.device_type else None
        return None

    def _to_host(self, value):
        if isinstance(value, torch.Tensor) and value.device.type == self.device_type:
            return value.to("cpu")
        return value


def _host_like(tensor: torch.Tensor) -> torch.Tensor:
    return torch.empty(tensor.shape, dtype=tensor.dtype)
