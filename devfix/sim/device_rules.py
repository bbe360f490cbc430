"""CUDA's device rules for mixed-device calls, with the messages real CUDA builds print.

Only calls whose tensors sit on different devices get here. Pointwise (TensorIterator) ops let
0-dim CPU tensors join CUDA tensors; indexing lets CPU indices into CUDA tensors; convolutions,
RNNs and `pack_padded_sequence` have their own texts; `ctc_loss` follows its log-probabilities;
`multi_head_attention_forward` drops a mask it is told is causal; everything else demands one device.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch

from devfix.sim.tensor import device_of

CROSS_DEVICE_OK = frozenset({"copy_", "to", "cuda", "cpu", "type_as", "__setitem__", "set_", "data"})
# lengths live on the CPU; ctc_loss takes targets and lengths from either device (it copies them)
FIRST_ARGUMENT_DECIDES = frozenset({"_pack_padded_sequence", "_pad_packed_sequence", "ctc_loss"})
INDEXING = frozenset({"__getitem__", "index", "index_put_", "index_put"})
CONVOLUTIONS = frozenset({"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution", "_convolution"})
RNNS = frozenset({"lstm", "gru", "rnn_tanh", "rnn_relu"})
_POINTWISE_CACHE: dict[str, bool] = {}


def op_name(func: Callable) -> str:
    name = getattr(func, "__name__", "")
    if name.startswith("__i") and name.endswith("__") and name not in ("__index__", "__iter__", "__int__"):
        return name[3:-2] + "_"  # __iadd__ → add_
    if name.startswith("__r") and name.endswith("__") and name not in ("__repr__", "__reduce__", "__reduce_ex__"):
        return name[3:-2]  # __radd__ → add
    if name.startswith("__") and name.endswith("__") and name not in INDEXING and name != "__setitem__":
        return name[2:-2]
    return name


def is_pointwise(name: str) -> bool:
    base = name.rstrip("_") or name
    if base not in _POINTWISE_CACHE:
        packet = getattr(torch.ops.aten, {"truediv": "div", "floordiv": "floor_divide", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "invert": "bitwise_not"}.get(base, base), None)
        tags = set()
        if packet is not None:
            for overload in packet.overloads():
                tags |= set(getattr(packet, overload).tags)
        _POINTWISE_CACHE[base] = torch.Tag.pointwise in tags
    return _POINTWISE_CACHE[base]


def dropped_argument(name: str, func: Callable, args: tuple, kwargs: dict) -> object:
    """An argument the function throws away before any kernel sees it, so its device never meets the
    others'. `multi_head_attention_forward` drops `attn_mask` when it is told the mask is causal
    (`is_causal`, which nn.TransformerEncoder sets when it finds the mask causal), no key padding
    mask merges into it and no weights are asked for: SDPA gets the causal flag instead. A CPU causal
    mask given to a Transformer on a GPU runs on real CUDA (an H200, torch 2.11)."""
    if name != "multi_head_attention_forward":
        return None
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    bound.apply_defaults()
    given = bound.arguments
    if given.get("is_causal") and given.get("key_padding_mask") is None and not given.get("need_weights"):
        return given.get("attn_mask")
    return None


def check_devices(name: str, tensors: list[tuple[torch.Tensor, torch.device]], args: tuple = ()) -> torch.device | None:
    """Raise like CUDA would for this mix of devices; else return the result's device (None: CPU).

    `tensors` pairs each tensor argument's CPU data with the device the program sees; `args` are
    the call's own arguments, for the ops whose rule depends on which argument is which."""
    devices = [device for _, device in tensors]
    cuda = [device for device in devices if device.type == "cuda"]
    if not cuda:
        return None
    if name in RNNS:
        return _rnn(args)
    if name in FIRST_ARGUMENT_DECIDES:
        return devices[0] if devices[0].type == "cuda" else None
    if name == "__setitem__" and len(args) == 3 and len(set(devices)) > 1:
        return _setitem(*args)
    if len(set(devices)) == 1 or name in CROSS_DEVICE_OK:
        return cuda[0]
    if name in INDEXING:
        return _indexing(tensors)
    if name in CONVOLUTIONS:
        _convolution(tensors)
    if is_pointwise(name):
        return _pointwise(name, tensors)
    raise _mismatch(devices)


def _pointwise(name: str, tensors: list[tuple[torch.Tensor, torch.device]]) -> torch.device:
    """0-dim CPU tensors behave like Python numbers next to CUDA tensors (not the reverse)."""
    significant = [device for tensor, device in tensors if not (device.type == "cpu" and tensor.dim() == 0)]
    if name.endswith("_") and tensors[0][1].type == "cpu":
        significant.insert(0, tensors[0][1])  # an in-place op writes into its CPU self
    if len(set(significant)) > 1 or not significant or significant[0].type != "cuda":
        raise _mismatch([device for _, device in tensors])
    return significant[0]


def _indexing(tensors: list[tuple[torch.Tensor, torch.device]]) -> torch.device | None:
    """Indices on the CPU may index any tensor; so may 0-dim ones on a GPU (real CUDA reads them as
    numbers: `confusion[t, p]` for `t, p` elements of GPU tensors works on an H200)."""
    indexed = tensors[0][1]
    for tensor, device in tensors[1:]:
        if device != indexed and device.type != "cpu" and tensor.dim() != 0:
            raise RuntimeError(f"indices should be either on cpu or on the same device as the indexed tensor ({indexed})")
    return indexed if indexed.type == "cuda" else None


def _setitem(target: torch.Tensor, index: object, value: object) -> torch.device | None:
    """`x[i] = v`: with ints and slices a copy, which crosses devices; with a tensor or list
    index, `index_put_`, whose values must be on `x`'s device unless 0-dim (indices may be on
    the CPU, or 0-dim on a GPU)."""
    target_device = device_of(target)
    if _is_advanced(index):
        for part in index if isinstance(index, tuple) else (index,):
            if isinstance(part, torch.Tensor) and device_of(part) != target_device and device_of(part).type != "cpu" and part.dim() != 0:
                raise RuntimeError(f"indices should be either on cpu or on the same device as the indexed tensor ({target_device})")
        if isinstance(value, torch.Tensor) and device_of(value) != target_device and value.dim() != 0:
            raise _mismatch([target_device, device_of(value)])
    return target_device if target_device.type == "cuda" else None


def _is_advanced(index: object) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(part, (torch.Tensor, list)) for part in parts)


def _convolution(tensors: list[tuple[torch.Tensor, torch.device]]) -> None:
    (input_tensor, input_device), (weight, weight_device) = tensors[0], tensors[1]
    if input_device != weight_device:
        raise RuntimeError(
            f"Input type ({_type_name(input_tensor, input_device)}) and weight type "
            f"({_type_name(weight, weight_device)}) should be the same or input should be a MKLDNN tensor "
            "and weight is a dense tensor"
        )
    raise _mismatch([device for _, device in tensors])


def _rnn(args: tuple) -> torch.device | None:
    """`lstm(input, hx, params, ...)` or, packed, `lstm(data, batch_sizes, hx, params, ...)`."""
    input_device = device_of(args[0])
    rest = list(args[1:])
    if isinstance(rest[0], torch.Tensor) and not rest[0].is_floating_point():
        rest = rest[1:]  # batch_sizes of a PackedSequence stay on the CPU by design
    hidden, params = rest[0], rest[1]
    for parameter in params:
        if device_of(parameter) != input_device:
            raise RuntimeError(
                f"Input and parameter tensors are not at the same device, found input tensor at {input_device} "
                f"and parameter tensor at {device_of(parameter)}"
            )
    for state in hidden if isinstance(hidden, (tuple, list)) else [hidden]:
        if device_of(state) != input_device:
            raise RuntimeError(
                f"Input and hidden tensors are not at the same device, found input tensor at {input_device} "
                f"and hidden tensor at {device_of(state)}"
            )
    return input_device if input_device.type == "cuda" else None


def generator_error(generator: torch.Generator, device: torch.device) -> RuntimeError:
    return RuntimeError(f"Expected a '{device.type}' device type for generator but found '{generator.device.type}'")


def pack_padded_lengths_error(lengths: torch.Tensor, device: torch.device) -> RuntimeError:
    kind = {torch.int64: "Long", torch.int32: "Int"}.get(lengths.dtype, str(lengths.dtype))
    return RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D {device} {kind} tensor")


def _mismatch(devices: list[torch.device]) -> RuntimeError:
    first = devices[0]
    second = next(device for device in devices if device != first)
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, {first} and {second}!")


def _type_name(tensor: torch.Tensor, device: torch.device) -> str:
    """`torch.FloatTensor` / `torch.cuda.FloatTensor`, from the CPU tensor that holds the data."""
    legacy = tensor.type().rsplit(".", 1)[-1]
    return f"torch.cuda.{legacy}" if device.type == "cuda" else f"torch.{legacy}"
