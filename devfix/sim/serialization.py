"""torch.save / torch.load under simulation: tensors on the simulated GPU are saved as genuine CUDA
storages (location "cuda:N"), and CUDA storages load back onto the simulated GPU.

A checkpoint written under simulation therefore fails to load on a CPU-only run without
`map_location`, with PyTorch's own "Attempting to deserialize object on a CUDA device" error. A
`map_location` hook that moves each storage with `storage.cuda()` loads onto the simulated GPU.
"""

from __future__ import annotations

from collections import OrderedDict

import torch
from torch.serialization import register_package

from devfix.sim.tensor import SimCudaParameter, SimCudaTensor, device_of, is_sim

_saving: dict[int, str] = {}
_loaded: dict[int, torch.device] = {}
_active_state = None
_registered = False


def activate(state) -> None:
    global _active_state, _registered
    _active_state = state
    if not _registered:
        register_package(0, _tag, _restore)  # before torch's own cpu/cuda handlers
        _registered = True


def deactivate() -> None:
    global _active_state
    _active_state = None
    _saving.clear()
    _loaded.clear()


def reduce_sim_tensor(tensor: SimCudaTensor):
    inner = tensor._inner
    _saving[inner.untyped_storage().data_ptr()] = str(device_of(tensor))
    return inner.__reduce_ex__(2)


def _tag(storage) -> str | None:
    if _active_state is None or not hasattr(storage, "data_ptr"):
        return None
    return _saving.get(storage.data_ptr())


def _restore(storage, location: str):
    if _active_state is None or not location.startswith("cuda"):
        return None
    device = torch.device(location)
    index = device.index or 0
    if index >= _active_state.device_count:
        raise RuntimeError(
            f"Attempting to deserialize object on CUDA device {index} but torch.cuda.device_count() is "
            f"{_active_state.device_count}. Please use torch.load with map_location to map your storages to an existing device."
        )
    _loaded[storage.data_ptr()] = torch.device("cuda", index)
    return storage


def storage_cuda(storage, device=None, non_blocking=False, **kwargs):
    """`storage.cuda(i)` in a `map_location` hook (`lambda storage, loc: storage.cuda(0)`): the storage
    stays where it is and the tensors `torch.load` builds on it load onto the simulated GPU `i`."""
    index = torch.device("cuda", device).index if isinstance(device, int) else torch.device(device or "cuda").index or 0
    if _active_state is not None and index >= _active_state.device_count:
        raise RuntimeError("CUDA error: invalid device ordinal")
    _loaded[storage.data_ptr()] = torch.device("cuda", index)
    return storage


def save(original_save):
    def simulated_save(*args, **kwargs):
        try:
            return original_save(*args, **kwargs)
        finally:
            _saving.clear()

    return simulated_save


def load(original_load):
    def simulated_load(*args, **kwargs):
        try:
            return _place(original_load(*args, **kwargs), {})
        finally:
            _loaded.clear()

    return simulated_load


def _place(value, memo: dict[int, object]):
    """Wrap loaded tensors whose storage came from a CUDA location."""
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, torch.Tensor) and not is_sim(value):
        device = _loaded.get(value.untyped_storage().data_ptr()) if value.device.type == "cpu" else None
        result = value if device is None else (SimCudaParameter if isinstance(value, torch.nn.Parameter) else SimCudaTensor)(value, device)
    elif isinstance(value, torch.nn.Module):
        for module in value.modules():
            for tensors in (module._parameters, module._buffers):
                for key, tensor in tensors.items():
                    if tensor is not None:
                        tensors[key] = _place(tensor, memo)
        result = value
    elif isinstance(value, (dict, OrderedDict)):
        for key in list(value):
            value[key] = _place(value[key], memo)
        result = value
    elif isinstance(value, list):
        value[:] = [_place(item, memo) for item in value]
        result = value
    elif isinstance(value, tuple) and not hasattr(value, "_fields"):
        result = tuple(_place(item, memo) for item in value)
    else:
        result = value
    memo[id(value)] = result
    return result
