"""The TorchFunctionMode that makes a CPU build behave like a CUDA machine.

Every overridable torch call passes through `SimulatedCudaMode.__torch_function__`: tensors are
unwrapped to their CPU data, CUDA's device rules are checked on the devices the program sees, the
call runs on the CPU (autograd included) and results are wrapped back onto the right device.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.overrides import TorchFunctionMode

from devfix.sim import device_rules, provenance
from devfix.sim.errors import SimulatorUnsupported
from devfix.sim.tensor import SimCudaParameter, SimCudaTensor, device_of, is_sim, map_structure, unwrap, unwrap_all, wrap

# Properties the wrapper answers itself (its metadata mirrors the data); the rest go to the data.
WRAPPER_PROPERTIES = frozenset(
    {"device", "is_cuda", "is_cpu", "shape", "dtype", "ndim", "layout", "is_sparse", "is_quantized", "is_meta", "is_mkldnn", "is_nested", "names", "itemsize", "nbytes"}
)
WRAPPER_METHODS = frozenset(
    {"size", "dim", "numel", "nelement", "element_size", "is_floating_point", "is_complex", "get_device", "__hash__", "__len__", "ndimension", "is_contiguous", "stride", "storage_offset"}
)
NUMPY_MESSAGE = "can't convert {device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
CPU_RESULTS = frozenset({"_pack_padded_sequence", "_pad_packed_sequence"})  # their second output is CPU by design
# factories that read tensor arguments as Python numbers: `torch.arange(n)` with `n` on a GPU is on
# the CPU (the device comes from `device=` alone)
SCALAR_FACTORIES = frozenset(
    {"arange", "range", "linspace", "logspace", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "eye"}
)


BAD_FORK_DRIVER_MESSAGE = (
    "CUDA error: initialization error\nCUDA kernel errors might be asynchronously reported at some other API call"
)
BAD_FORK_MESSAGE = (
    "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method"
)


@dataclass
class SimulatedState:
    device_count: int = 1
    current: int = 0
    started: bool = False  # the program has placed something on a GPU: CUDA is initialised
    in_bad_fork: bool = False  # a process forked after that (a DataLoader worker): CUDA cannot start again

    def normalize(self, device: torch.device) -> torch.device:
        if self.in_bad_fork:
            raise RuntimeError(BAD_FORK_MESSAGE)
        self.started = True
        index = self.current if device.index is None else device.index
        if index >= self.device_count:
            raise RuntimeError("CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported at some other API call")
        return torch.device("cuda", index)


class SimulatedCudaMode(TorchFunctionMode):
    def __init__(self, state: SimulatedState) -> None:
        super().__init__()
        self.state = state

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if kwargs.get("pin_memory") is True:
            kwargs = {**kwargs, "pin_memory": False}  # page-locked host memory: unobservable, and the CPU build has none
        access = _property_access(func)
        if access is not None:
            return self._property(func, access, args)
        name = getattr(func, "__name__", "")
        handler = _HANDLERS.get(name)
        if handler is not None and (name != "cuda" or _is_tensor_method(func)):
            return handler(self, func, args, kwargs)
        if name in WRAPPER_METHODS and args and is_sim(args[0]) and _is_tensor_method(func):
            return func(*args, **kwargs)
        return self._generic(func, name, args, kwargs)

    # -- the general path -------------------------------------------------------------------------

    def _generic(self, func, name, args, kwargs):
        if name in SCALAR_FACTORIES and func is getattr(torch, name, None):
            args = tuple(_number_of(arg) for arg in args)
            kwargs = {key: _number_of(value) for key, value in kwargs.items()}
        args = tuple(_size_as_ints(_slice_bounds_as_ints(arg)) for arg in args)
        kwargs = {key: _size_as_ints(value) for key, value in kwargs.items()}
        target = self._factory_device(kwargs) if "device" in kwargs else None
        tensors: list[torch.Tensor] = []
        outer_of: dict[int, SimCudaTensor] = {}

        def unwrap_and_collect(tensor: torch.Tensor) -> torch.Tensor:
            tensors.append(tensor)
            if isinstance(tensor, SimCudaTensor):
                outer_of[id(tensor._inner)] = tensor
                return tensor._inner
            return tensor

        inner_args = map_structure(unwrap_and_collect, args)
        inner_kwargs = map_structure(unwrap_and_collect, kwargs) if kwargs else kwargs
        dropped = device_rules.dropped_argument(name, func, args, kwargs)
        if isinstance(dropped, torch.Tensor):
            tensors = [tensor for tensor in tensors if tensor is not dropped]
            if isinstance(dropped, SimCudaTensor):
                outer_of.pop(id(dropped._inner), None)
        if outer_of and self.state.in_bad_fork:
            raise RuntimeError(BAD_FORK_DRIVER_MESSAGE)  # GPU memory touched in a worker forked after CUDA started
        if not outer_of and target is None:
            result = func(*args, **kwargs)  # nothing simulated is involved: plain CPU work
            if name in provenance.JOINING and provenance.called_by_user_code() and provenance.inherit_any(result, tensors):
                pass  # made from tensors the program made: where those were made
            elif name in provenance.CREATING:
                provenance.remember(result, f"created on cpu by torch.{name}")
            elif tensors:
                provenance.inherit(result, tensors[0])
            return result
        if target is not None:
            generator = kwargs.get("generator")
            if isinstance(generator, torch.Generator) and generator.device.type != "cuda":
                raise device_rules.generator_error(generator, target)
            inner_kwargs["device"] = "cpu"
        if name == "_pack_padded_sequence" and len(args) > 1 and is_sim(args[1]):
            raise device_rules.pack_padded_lengths_error(args[1], device_of(args[1]))
        result_device = None
        if outer_of and len(outer_of) == len(tensors) and len(devices := {device_of(tensor) for tensor in outer_of.values()}) == 1:
            result_device = devices.pop()  # every operand on the one simulated device: CUDA's rules all agree
        elif outer_of:
            pairs = [(unwrap(tensor), device_of(tensor)) for tensor in tensors]
            try:
                result_device = device_rules.check_devices(device_rules.op_name(func), pairs, args)
            except RuntimeError as error:
                if name == "__setitem__" and len(args) == 3 and isinstance(args[2], torch.Tensor):
                    tensors = [args[0], args[2]]  # `x[mask] = v`: the target met the values; CPU indices are fine
                raise provenance.attach(error, tensors, [device_of(tensor) for tensor in tensors]) from None
        device = target or result_device
        result = self._wrap_result(func(*inner_args, **inner_kwargs), device, name, outer_of)
        if target is not None and (name in provenance.CREATING or not outer_of):
            provenance.remember(result, f"created on {target} by torch.{name}")
        elif outer_of:
            provenance.inherit(result, next(iter(outer_of.values())))
        return result

    def _wrap_result(self, result, device, name, outer_of):
        """Results on `device`; an input's own data coming back (in-place ops) is that input."""
        if device is None:
            return result
        if name in CPU_RESULTS and isinstance(result, tuple):
            return (wrap(result[0], device), *result[1:])
        return map_structure(lambda value: outer_of[id(value)] if id(value) in outer_of else wrap(value, device), result)

    def _factory_device(self, kwargs) -> torch.device | None:
        requested = kwargs.get("device")
        if requested is None:
            return None
        device = torch.device(requested) if not isinstance(requested, torch.device) else requested
        return self.state.normalize(device) if device.type == "cuda" else None

    # -- properties -----------------------------------------------------------------------------

    def _property(self, func, access, args):
        kind, name = access
        target = args[0]
        if not is_sim(target):
            if kind == "set" and is_sim(args[1]) and name == "data":
                return self._adopt(target, args[1])
            return func(*unwrap_all(args))
        if name in WRAPPER_PROPERTIES and kind == "get":
            return func(*args)
        if kind == "set":
            if name == "data":
                return self._set_data(target, args[1])
            return func(target._inner, unwrap(args[1]))
        value = func(target._inner)
        if name in ("grad", "data", "T", "mT", "H", "mH", "real", "imag") and isinstance(value, torch.Tensor):
            return wrap(value, device_of(target))
        return value

    def _adopt(self, cpu_tensor: torch.Tensor, new: SimCudaTensor) -> None:
        """`param.data = cuda_tensor` (Module.to): the same Python object becomes a CUDA tensor, so
        optimizers and references built before the move keep working, as on real CUDA."""
        shell_class = SimCudaParameter if isinstance(cpu_tensor, torch.nn.Parameter) else SimCudaTensor
        shell = shell_class(new._inner, device_of(new))
        torch.utils.swap_tensors(cpu_tensor, shell)
        old = shell  # after the swap this object holds the original CPU tensor, grad and all
        with torch.no_grad():
            old.data = new._inner
        cpu_tensor._inner = old
        provenance.remember(cpu_tensor, f"moved to {device_of(new)} with its module")

    def _set_data(self, target: SimCudaTensor, new) -> None:
        """`param.data = other`: same device keeps the wrapper; `.cpu()` turns it back into a CPU tensor."""
        if is_sim(new) and device_of(new) == device_of(target):
            target._inner.data = new._inner
        elif not is_sim(new):
            old = target._inner
            torch.utils.swap_tensors(target, old)  # `target` is the CPU tensor again
            with torch.no_grad():
                target.data = new
        else:
            raise SimulatorUnsupported("moving a module between two simulated GPUs")

    # -- special methods ----------------------------------------------------------------------------

    def _to(self, func, args, kwargs):
        tensor = args[0]
        kwargs = dict(kwargs)
        copy = bool(kwargs.pop("copy", False))  # Tensor.to takes it; the parser does not (GradScaler passes it)
        device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*args[1:], **kwargs)
        return self._move(tensor, device, dtype, memory_format, copy, ".to()")

    def _cuda(self, func, args, kwargs):
        tensor = args[0]
        requested = args[1] if len(args) > 1 else kwargs.get("device")
        if isinstance(requested, int):
            device = torch.device("cuda", requested)
        elif requested is None:
            device = torch.device("cuda")
        else:
            device = torch.device(requested)
        return self._move(tensor, device, None, None, False, ".cuda()")

    def _cpu(self, func, args, kwargs):
        return self._move(args[0], torch.device("cpu"), None, None, False, ".cpu()")

    def _move(self, tensor, device, dtype, memory_format, copy, how=".type_as()"):
        moved = self._moved(tensor, device, dtype, memory_format, copy)
        if moved is not tensor and device_of(moved) != device_of(tensor):
            provenance.remember(moved, f"moved to {device_of(moved)} by {how}")
        return moved

    def _moved(self, tensor, device, dtype, memory_format, copy):
        current = device_of(tensor)
        target = current if device is None else (self.state.normalize(device) if device.type == "cuda" else device)
        inner = unwrap(tensor)
        converted = inner.to(dtype=dtype or inner.dtype, memory_format=memory_format or torch.preserve_format, copy=copy)
        if target == current:
            if converted is inner:
                return tensor
            return wrap(converted, target) if target.type == "cuda" else converted
        if target.type not in ("cuda", "cpu"):
            raise SimulatorUnsupported(f"moving tensors to {target} while simulating CUDA")
        if converted is inner:
            converted = inner.clone()  # a move across devices is a copy, as on real hardware
        return wrap(converted, target) if target.type == "cuda" else converted

    def _numpy(self, func, args, kwargs):
        if is_sim(args[0]):
            raise provenance.attach(TypeError(NUMPY_MESSAGE.format(device=device_of(args[0]))), [args[0]], [device_of(args[0])])
        return func(*args, **kwargs)

    def _pin_memory(self, func, args, kwargs):
        return args[0]

    def _is_pinned(self, func, args, kwargs):
        return False

    def _repr(self, func, args, kwargs):
        tensor = args[0]
        if not is_sim(tensor):
            return func(*args, **kwargs)
        text = repr(tensor._inner)
        suffix = f"device='{device_of(tensor)}'"
        for marker in (", grad_fn=", ", requires_grad=True"):
            if marker in text:
                return text.replace(marker, f", {suffix}{marker}", 1)
        return text[:-1] + f", {suffix})"

    def _type_as(self, func, args, kwargs):
        tensor, other = args[0], args[1]
        return self._move(tensor, device_of(other), other.dtype, None, False)

    def _type(self, func, args, kwargs):
        """`x.type()` names the CUDA type (`torch.cuda.FloatTensor`); `x.type(torch.FloatTensor)` and
        `x.type("torch.LongTensor")` are CPU types: the result is on the CPU, as on a real GPU."""
        tensor = args[0]
        requested = args[1] if len(args) > 1 else kwargs.get("dtype")
        if requested is None:
            return "torch.cuda." + unwrap(tensor).type().rsplit(".", 1)[-1] if is_sim(tensor) else func(*args, **kwargs)
        if isinstance(requested, torch.dtype):
            return self._move(tensor, None, requested, None, False, ".type()")
        name = requested if isinstance(requested, str) else f"{getattr(requested, '__module__', '')}.{getattr(requested, '__name__', '')}"
        if not name.startswith("torch."):
            raise SimulatorUnsupported(f"Tensor.type({requested!r})")
        dtype = torch.empty(0).type(name.replace("torch.cuda.", "torch.", 1)).dtype
        device = torch.device("cuda") if name.startswith("torch.cuda.") else torch.device("cpu")
        return self._move(tensor, device, dtype, None, False, ".type()")

    def _reduce_ex(self, func, args, kwargs):
        tensor = args[0]
        if not is_sim(tensor):
            with provenance.hidden(tensor):
                return func(*args, **kwargs)
        from devfix.sim.serialization import reduce_sim_tensor

        return reduce_sim_tensor(tensor)

    def _deepcopy(self, func, args, kwargs):
        tensor, memo = args[0], args[1] if len(args) > 1 else {}
        if not is_sim(tensor):
            return func(*args, **kwargs)
        import copy

        inner = copy.deepcopy(tensor._inner, memo)
        result_class = SimCudaParameter if isinstance(tensor, torch.nn.Parameter) else SimCudaTensor
        result = result_class(inner, device_of(tensor))
        memo[id(tensor)] = result
        return result


_HANDLERS = {
    "to": SimulatedCudaMode._to,
    "cuda": SimulatedCudaMode._cuda,
    "cpu": SimulatedCudaMode._cpu,
    "numpy": SimulatedCudaMode._numpy,
    "__array__": SimulatedCudaMode._numpy,
    "pin_memory": SimulatedCudaMode._pin_memory,
    "is_pinned": SimulatedCudaMode._is_pinned,
    "__repr__": SimulatedCudaMode._repr,
    "type_as": SimulatedCudaMode._type_as,
    "type": SimulatedCudaMode._type,
    "__reduce_ex__": SimulatedCudaMode._reduce_ex,
    "__deepcopy__": SimulatedCudaMode._deepcopy,
}


def _property_access(func) -> tuple[str, str] | None:
    name = getattr(func, "__name__", "")
    if name not in ("__get__", "__set__"):
        return None
    owner = getattr(func, "__self__", None)
    return ("get" if name == "__get__" else "set", getattr(owner, "__name__", ""))


def _is_tensor_method(func) -> bool:
    return getattr(func, "__objclass__", None) in (torch._C.TensorBase, torch.Tensor) or getattr(func, "__qualname__", "").startswith(("Tensor.", "TensorBase."))


def _number_of(value: object) -> object:
    """A simulated 0-dim tensor given where torch reads a number (a factory's bounds, size or fill
    value): the number, as torch would read it; a size given as a tuple has its items read too."""
    if is_sim(value) and value.dim() == 0:
        return unwrap(value).item()
    if type(value) in (tuple, list) and any(is_sim(item) for item in value):
        return type(value)(_number_of(item) for item in value)
    return value


def _slice_bounds_as_ints(value: object) -> object:
    """`x[:n]` or `x[i, :n] = v` with `n` an element of a GPU tensor: a slice reads its bounds as ints
    (`__index__`), so no device meets `x`; the simulated ones are read here, before the CPU op sees them."""
    if isinstance(value, slice):
        return slice(*(int(unwrap(bound)) if is_sim(bound) else bound for bound in (value.start, value.stop, value.step)))
    if type(value) is tuple and any(isinstance(item, slice) for item in value):
        return tuple(_slice_bounds_as_ints(item) for item in value)
    return value


def _size_as_ints(value: object) -> object:
    """`(w, 8)` given to `F.interpolate` with `w` a 0-dim integer tensor: torch reads an int list as
    ints (`__index__`), whatever device the tensor is on, so no device meets the input. Only a list
    or tuple with a Python int among its items is taken for a size (`torch.cat([a, b])` holds tensors)."""
    if not isinstance(value, (list, tuple)) or not any(type(item) is int for item in value):
        return value
    items = []
    for item in value:
        inner = unwrap(item)
        if type(item) is int:
            items.append(item)
        elif isinstance(inner, torch.Tensor) and inner.dim() == 0 and not inner.is_floating_point() and not inner.is_complex():
            items.append(int(inner))
        else:
            return value
    return type(value)(items) if type(value) in (list, tuple) else value
