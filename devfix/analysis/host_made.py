"""Is a value built on the host? A proof from one scope's bindings, for rules that move what a
model on a device is fed: literals, numpy values, CPU factories of the scope, and arithmetic and
tensor methods of those, never a parameter, a loop variable or anything moved."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import libcst as cst

from devfix.analysis.placement import PlacementFacts, is_cast
from devfix.analysis.tensors import is_factory_call
from devfix.analysis.torch_api import DEVICE_CHANGING_METHODS, MOVED_AFTER
from devfix.analysis.torch_names import keyword


class HostContext(NamedTuple):
    """What `host_made` reads: one scope's bindings, qualified names, and the file's helpers."""

    facts: PlacementFacts
    qualified: Callable[[cst.CSTNode], set[str]]
    cpu_helper: Callable[[str], bool]
    device_callables: frozenset[str] = frozenset()  # names that make or hold device values (`Tensor = torch.cuda.FloatTensor`)


def host_made(value: cst.BaseExpression, line: int, depth: int, where: HostContext) -> bool:
    """Built on the host from what `facts` (one scope's bindings) shows: literals, numpy values,
    CPU factories of the scope, and arithmetic and methods of those (not a parameter, a loop
    variable or anything moved), and what the file's CPU-tensor helpers return."""
    if depth > 6:
        return False
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.List, cst.Tuple)):
        return all(host_made(element.value, line, depth + 1, where) for element in getattr(value, "elements", ()))
    if isinstance(value, cst.Name):
        binding = where.facts._binding_before(value.value, line)
        if binding is None or isinstance(binding.value, (cst.List, cst.Tuple, cst.Dict)):
            return False  # a container bound to a name may be filled later (`masks.append(mask)`)
        return binding.value is not None and host_made(binding.value, binding.line, depth + 1, where)
    if isinstance(value, (cst.Subscript, cst.Attribute)):
        return host_made(value.value, line, depth + 1, where)
    if isinstance(value, cst.BinaryOperation):
        return host_made(value.left, line, depth + 1, where) and host_made(value.right, line, depth + 1, where)
    if isinstance(value, cst.UnaryOperation):
        return host_made(value.expression, line, depth + 1, where)
    if isinstance(value, cst.Comparison):  # `torch.triu(torch.ones(n, n)) == 0`
        operands = [value.left, *(target.comparator for target in value.comparisons)]
        return all(host_made(operand, line, depth + 1, where) for operand in operands)
    if not isinstance(value, cst.Call):
        return False
    callee = value.func.value if isinstance(value.func, cst.Name) else None
    if callee is not None and (callee in where.facts.moved or callee in where.device_callables):
        return False  # `generator(z)` of a moved model; `Tensor(...)` where `Tensor = torch.cuda.FloatTensor if cuda else ...`
    names = where.qualified(value.func)
    if is_factory_call(value, where.qualified) or names & MOVED_AFTER:
        return keyword(value, "device") is None
    if any(name.startswith(("numpy.", "torchvision.datasets.")) for name in names):
        return True  # numpy values, and datasets that load onto the CPU
    if isinstance(value.func, cst.Attribute) and not any(name.startswith("torch.") for name in names):
        # a method of a value (libcst also names `image.unsqueeze` after the local `image`)
        if value.func.attr.value in DEVICE_CHANGING_METHODS and not is_cast(value, where.qualified):
            return False
        receiver_host = host_made(value.func.value, line, depth + 1, where)
        return receiver_host and all(host_made(arg.value, line, depth + 1, where) for arg in value.args if arg.keyword is None)
    if isinstance(value.func, cst.Name) and where.cpu_helper(value.func.value):
        return True  # a helper of the file that returns CPU tensors: `preprocess(photo)`
    arguments = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
    return bool(arguments) and all(host_made(argument, line, depth + 1, where) for argument in arguments)
