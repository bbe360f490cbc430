"""Is a value built on the host? A proof from one scope's bindings, for rules that move what a
model on a device is fed: literals, numpy values, CPU factories of the scope, `.cpu()` copies, and
arithmetic and tensor methods of those, never a parameter (but one proven a Python number), a loop
variable or anything moved."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import libcst as cst

from devfix.analysis.cst_bindings import bound_names
from devfix.analysis.kinds import NUMBER_BUILTINS, Kind, makes_no_tensor
from devfix.analysis.placement import PlacementFacts, is_cast
from devfix.analysis.tensors import is_factory_call
from devfix.analysis.torch_api import (
    CPU_TENSOR_TYPES,
    DATA_FACTORIES,
    DEVICE_CHANGING_METHODS,
    MOVED_AFTER,
    is_library_constant,
)
from devfix.analysis.torch_names import keyword, spreads_keywords

MAX_DEPTH = 10  # names resolve to earlier lines, so chains end; this bounds the cost (a causal mask's
# `(torch.triu(torch.ones(n, n)) == 1).transpose(0, 1)` then `mask.float().masked_fill(...)` is 8 deep).
# The parts of one expression (a method's receiver, an item's container, operands, a display's
# items) are at its depth: the source bounds them (`w.mm(w.t()).float().unsqueeze(0)`); names
# followed and calls' arguments count.


class HostContext(NamedTuple):
    """What `host_made` reads: one scope's bindings, qualified names, and the file's helpers."""

    facts: PlacementFacts
    qualified: Callable[[cst.CSTNode], set[str]]
    cpu_helper: Callable[[str], bool]
    device_callables: frozenset[str] = frozenset()  # names that make or hold device values (`Tensor = torch.cuda.FloatTensor`)
    kind_of: Callable[[cst.CSTNode], Kind] | None = None  # the value analysis's kind of a name where it is read


def host_made(value: cst.BaseExpression, line: int, depth: int, where: HostContext, host_names: frozenset[str] = frozenset()) -> bool:
    """Built on the host from what `facts` (one scope's bindings) shows: literals, numpy values,
    CPU factories of the scope, and arithmetic and methods of those (not a parameter, a loop
    variable or anything moved), what the file's CPU-tensor helpers return, and comprehensions of
    those over host values. `host_names`: a comprehension's targets that run over host values."""
    if depth > MAX_DEPTH:
        return False
    again = lambda inner: host_made(inner, line, depth + 1, where, host_names)  # noqa: E731
    chained = lambda inner: host_made(inner, line, depth, where, host_names)  # noqa: E731  (a part of the same expression)
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.List, cst.Tuple)):
        return all(chained(element.value) for element in getattr(value, "elements", ()))
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return _comprehension_host_made(value, line, depth, where, host_names)
    names = where.qualified(value) if isinstance(value, (cst.Name, cst.Attribute)) else set()
    if names and all(is_library_constant(name) for name in names):
        return True  # `np.float32`, `torch.long`: what a cast is given
    if isinstance(value, cst.Name):
        if value.value in host_names:
            return True
        binding = where.facts._binding_before(value.value, line)
        if binding is None and value.value in where.facts.global_bindings:  # `data` the top level binds once, read in a function
            binding, top = where.facts.global_bindings[value.value]
            where = where._replace(facts=top)
            line = binding.line + 1
        if where.kind_of is not None and where.kind_of(value) is Kind.SCALAR:
            return True  # a parameter or loop index the value analysis proves a Python number (`scale: float`, `i` of `enumerate`)
        if binding is not None and isinstance(binding.value, cst.List) and not binding.value.elements:
            return _filled_on_the_host(value, binding, line, depth, where)
        if binding is None or isinstance(binding.value, (cst.List, cst.Tuple, cst.Dict)):
            return False  # a container bound to a name may be filled later (`masks.append(mask)`)
        if isinstance(binding.value, cst.ListComp) and (
                value.value in where.facts.appended or len(where.facts.bindings.get(value.value, ())) != 1):
            return False  # so may a list a comprehension made, unless it is its name's one value, never appended to
        if binding.value is None or not host_made(binding.value, binding.line, depth + 1, where):
            return False
        return _reaching_before_host_made(value, binding, line, depth, where)
    if isinstance(value, (cst.Subscript, cst.Attribute)):
        return chained(value.value)
    if isinstance(value, cst.BinaryOperation):
        return chained(value.left) and chained(value.right)
    if isinstance(value, cst.UnaryOperation):
        return chained(value.expression)
    if isinstance(value, cst.Comparison):  # `torch.triu(torch.ones(n, n)) == 0`
        operands = [value.left, *(target.comparator for target in value.comparisons)]
        return all(chained(operand) for operand in operands)
    if not isinstance(value, cst.Call):
        return False
    callee = value.func.value if isinstance(value.func, cst.Name) else None
    if callee is not None and (callee in where.facts.moved or callee in where.device_callables):
        return False  # `generator(z)` of a moved model; `Tensor(...)` where `Tensor = torch.cuda.FloatTensor if cuda else ...`
    names = where.qualified(value.func)
    if any(makes_no_tensor(name) for name in names):
        return False  # `torch.device("cpu")`, `torch.cuda.current_device()`: no tensor to place
    if names & DATA_FACTORIES and value.args and value.args[0].keyword is None \
            and where.facts.is_device_value(value.args[0].value, before_line=line):
        return False  # lightly's `torch.tensor(k ** -e)` of `k = torch.arange(n, device=device)`: the copy stays there
    if is_factory_call(value, where.qualified) or names & MOVED_AFTER:
        return keyword(value, "device") is None and not spreads_keywords(value)  # `**tkwargs` may hold the device
    if any(name.startswith(("numpy.", "torchvision.datasets.", "PIL.")) for name in names):
        return True  # numpy values, PIL images, and datasets that load onto the CPU
    if where.kind_of is not None and isinstance(value.func, (cst.Name, cst.Attribute)) and where.kind_of(value.func) is Kind.IMAGE_TRANSFORM:
        return True  # `transform(image)`, `self.transform(image)` of a `Compose([..., ToTensor()])`: a new CPU tensor
    if isinstance(value.func, cst.Attribute) and not any(name.startswith("torch.") for name in names):
        # a method of a value (libcst also names `image.unsqueeze` after the local `image`)
        if value.func.attr.value == "cpu" and not value.args:
            return True  # a host copy, wherever its source lives
        if value.func.attr.value == "type" and len(value.args) == 1 and where.qualified(value.args[0].value) & CPU_TENSOR_TYPES:
            return True  # `x.type(torch.FloatTensor)`: a CPU tensor type, wherever `x` lives
        if value.func.attr.value in DEVICE_CHANGING_METHODS and not is_cast(value, where.qualified):
            return False
        return chained(value.func.value) and all(again(arg.value) for arg in value.args if arg.keyword is None)
    if isinstance(value.func, cst.Name) and where.cpu_helper(value.func.value):
        return True  # a helper of the file that returns CPU tensors: `preprocess(photo)`
    if callee is not None and callee not in where.facts.bindings and where.facts.returns_device is not None \
            and where.facts.returns_device(callee):
        return False  # `batchify(corpus, 4)`, a function of the file whose every return is moved (`.to(device)`)
    if isinstance(value.func, cst.Name) and value.func.value in NUMBER_BUILTINS and names <= {value.func.value, f"builtins.{value.func.value}"}:
        return True  # `float(s)`: a Python number, whatever it is given
    arguments = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
    return bool(arguments) and all(again(argument) for argument in arguments)


def _filled_on_the_host(read: cst.Name, binding, line: int, depth: int, where: HostContext) -> bool:
    """`layer_of = []` filled only by `layer_of.append(torch.ones(n) * i)` (every append of that
    binding, also those a loop runs after `line`), no item of it stored and the list handed to no
    call before `line` (which might put anything in it): a list of host tensors (yolov7's
    `from_which_layer`)."""
    facts, name = where.facts, read.value
    filled = facts.filled_before(name, binding, line)
    if not filled or name in facts.items_changed:
        return False
    return all(host_made(value, at, depth + 1, where) for at, value in filled) and _reaching_before_host_made(read, binding, line, depth, where)


def _reaching_before_host_made(read: cst.Name, binding, line: int, depth: int, where: HostContext) -> bool:
    """A binding in a block that may not run (`if isinstance(x, np.ndarray): x = torch.from_numpy(x)`),
    read after that block, may leave the value before it in place (`PlacementFacts.reaching_past`):
    that one must be host-made too (a parameter never is, but one proven a Python number where it
    is read); none before it is only a NameError."""
    reaching, from_the_start = where.facts.reaching_past(read.value, binding, line)
    if any(earlier.value is None or not host_made(earlier.value, earlier.line, depth + 1 + index, where)
           for index, earlier in enumerate(reaching)):
        return False
    return not from_the_start or read.value not in where.facts.parameters or (
        where.kind_of is not None and where.kind_of(read) is Kind.SCALAR)


def _comprehension_host_made(
    value: cst.ListComp | cst.GeneratorExp, line: int, depth: int, where: HostContext, host_names: frozenset[str]
) -> bool:
    """`[torch.from_numpy(r) for r in rows]`: every iterable is made on the host (its items then
    are: the targets join `host_names`), and so is the element; or the element is made on the host
    whatever the items are (`[torch.tensor(ids) for ids in batch]`)."""
    if host_made(value.elt, line, depth + 1, where, host_names):
        return True
    for_in: cst.CompFor | None = value.for_in
    while for_in is not None:
        if not host_made(for_in.iter, line, depth + 1, where, host_names):
            return False
        host_names |= bound_names(for_in.target)
        for_in = for_in.inner_for_in
    return host_made(value.elt, line, depth + 1, where, host_names)
