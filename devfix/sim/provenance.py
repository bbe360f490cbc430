"""Where the tensors of a simulated run come from, so a device error can say how its operands got
where they are: "`mask` (created on cpu by torch.ones at train.py:41) met `logits` (cuda:0, moved
by .to() at train.py:18) at train.py:44".

An origin is the innermost frame in the user's own code (not torch, not devfix, not an installed
package or the standard library) when a tensor is created by a factory or changes device; results
of operations inherit their first operand's origin. One frame walk per factory and move, with a
verdict cached per code object: the per-operation cost is one attribute read and one write.
"""

from __future__ import annotations

import sys
import sysconfig
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import CodeType

import torch

ATTRIBUTE = "_devfix_origin"
# torch functions whose result is a new tensor the program made (not derived from its operands)
CREATING = frozenset({
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
    "randperm", "arange", "range", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like",
    "full_like", "rand_like", "randn_like", "randint_like", "stack", "cat", "concat", "tril_indices",
    "triu_indices", "load",
})

# of those, the ones that join tensors the program made: `torch.cat(rewards)` of CPU tensors made
# by `torch.tensor([r])` comes from where those were made, which is where a fix belongs
JOINING = frozenset({"stack", "cat", "concat"})


@dataclass(frozen=True)
class Origin:
    """`event` happened at `path`:`line`: "created on cpu by torch.ones", "moved to cuda:0 by .to()"."""

    path: str
    line: int
    event: str

    def describe(self) -> str:
        return f"{self.event} at {_short(self.path)}:{self.line}"


@dataclass(frozen=True)
class Operand:
    device: str
    origin: Origin | None


@dataclass(frozen=True)
class Meeting:
    """The operands of a call that raised a device error, and where in the user's code it was made."""

    operands: tuple[Operand, ...]
    site: Origin | None


def _library_roots() -> tuple[str, ...]:
    """The standard library, every site-packages (a venv's and the system's it may see), torch's
    and devfix's own directories."""
    import site

    paths = [sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    paths += [*site.getsitepackages(), site.getusersitepackages(), Path(torch.__file__).parent, Path(__file__).resolve().parents[1]]
    return tuple(sorted({str(Path(path).resolve()) + "/" for path in paths}))


_LIBRARY_ROOTS = _library_roots()
_IS_USER_CODE: dict[CodeType, bool] = {}


def _is_user_code(code: CodeType) -> bool:
    verdict = _IS_USER_CODE.get(code)
    if verdict is None:
        filename = code.co_filename
        verdict = not filename.startswith("<") and not (str(Path(filename).resolve()) + "/").startswith(_LIBRARY_ROOTS)
        _IS_USER_CODE[code] = verdict
    return verdict


def user_site(event: str) -> Origin | None:
    """The innermost frame of the user's own code that is running now, with `event`."""
    frame = sys._getframe(1)
    while frame is not None:
        if _is_user_code(frame.f_code):
            return Origin(frame.f_code.co_filename, frame.f_lineno, event)
        frame = frame.f_back
    return None


def remember(value: object, event: str) -> None:
    """Record where `value` (a tensor, or a tuple/list of them) was made or moved."""
    origin = user_site(event)
    if origin is not None:
        _set(value, origin)


def inherit(value: object, source: torch.Tensor) -> None:
    """A result takes its operand's origin: it was computed from it, where it lives. (The instance
    dict is read directly: a missing attribute costs an exception on this per-operation path.)"""
    origin = source.__dict__.get(ATTRIBUTE)
    if origin is not None and value is not source:
        _set(value, origin)


_DEVFIX_ROOT = str(Path(__file__).resolve().parents[1]) + "/"


def called_by_user_code() -> bool:
    """The torch call being simulated was made by the user's own code itself (not by a library on
    its behalf: a DataLoader's collate stacks items, and the batch comes from the loop)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_DEVFIX_ROOT):
        frame = frame.f_back
    return frame is not None and _is_user_code(frame.f_code)


def inherit_any(value: object, sources: list[torch.Tensor]) -> bool:
    """`inherit` from the first of `sources` that has an origin; False when none has one."""
    for source in sources:
        if isinstance(source, torch.Tensor) and ATTRIBUTE in source.__dict__:
            inherit(value, source)
            return True
    return False


def origin_of(value: object) -> Origin | None:
    return value.__dict__.get(ATTRIBUTE) if isinstance(value, torch.Tensor) else None


def _set(value: object, origin: Origin) -> None:
    if isinstance(value, torch.Tensor):
        value.__dict__[ATTRIBUTE] = origin
    elif isinstance(value, (tuple, list)):
        for item in value:
            if isinstance(item, torch.Tensor):
                _set(item, origin)


@contextmanager
def hidden(tensor: torch.Tensor) -> Iterator[None]:
    """Pickle `tensor` as if devfix had never seen it: an attribute in its instance dict would make
    `torch.save` write it (and `torch.load(weights_only=True)` refuse the file). Put back after only
    when the dict is otherwise empty: torch then pickles no state at all, while a dict with other
    attributes is pickled after this returns, and the origin must not be in it."""
    origin = tensor.__dict__.pop(ATTRIBUTE, None)
    restore = origin is not None and not tensor.__dict__
    try:
        yield
    finally:
        if restore:
            tensor.__dict__[ATTRIBUTE] = origin


def attach(error: BaseException, tensors: list[torch.Tensor], devices: list[torch.device]) -> BaseException:
    """Give a device error its operands' origins and the site of the call (`error.devfix_meeting`);
    the message stays CUDA's own."""
    operands = tuple(Operand(str(device), origin_of(tensor)) for tensor, device in zip(tensors, devices))
    error.devfix_meeting = Meeting(operands, user_site("met"))
    error.devfix_operands = tensors  # the objects themselves, to name them from the frame's variables
    return error


def meeting_of(error: BaseException) -> Meeting | None:
    return getattr(error, "devfix_meeting", None)


def operand_objects(error: BaseException) -> list[torch.Tensor]:
    return list(getattr(error, "devfix_operands", ()))


def _short(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path
