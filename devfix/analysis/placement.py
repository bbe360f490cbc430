"""Where values live inside one function (or a module's top level): which names were moved to a
device, which hold device tensors, which are Module instances built in that scope.

The analysis is flow-insensitive and deliberately conservative: a name assigned in more than one
way, or handed to code devfix cannot see, is not reported as anything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst

from devfix.analysis.torch_names import QualifiedNames, is_cuda_device_expression, keyword

MOVE_METHODS = frozenset({"to", "cuda"})
HOST_METHODS = frozenset({"cpu", "numpy", "item", "tolist", "size", "dim", "numel"})
TORCH_DTYPES = frozenset(
    {
        "float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8",
        "int16", "int32", "int64", "long", "short", "uint8", "bool", "complex64", "complex128",
    }
)
CPU_LITERALS = frozenset({"cpu"})


@dataclass(frozen=True)
class Move:
    """A `.to(...)`/`.cuda()` call: `device` is its device argument, None for `.cuda()`."""

    receiver: cst.BaseExpression
    device: cst.BaseExpression | None
    call: cst.Call


@dataclass
class PlacementFacts:
    moved: dict[str, Move] = field(default_factory=dict)
    device_values: set[str] = field(default_factory=set)
    assignments: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    escaped: set[str] = field(default_factory=set)
    called: set[str] = field(default_factory=set)
    modules_on_device: set[str] = field(default_factory=set)
    qualified: QualifiedNames = lambda node: set()

    def is_device_value(self, expression: cst.BaseExpression) -> bool:
        """True when `expression` certainly evaluates to something on a device."""
        move = as_move(expression, self.qualified)
        if move is not None:
            return True
        if isinstance(expression, cst.Name):
            return expression.value in self.device_values
        if isinstance(expression, (cst.Attribute, cst.Subscript)):
            return self.is_device_value(expression.value)
        if isinstance(expression, cst.BinaryOperation):
            return self.is_device_value(expression.left) or self.is_device_value(expression.right)
        if isinstance(expression, cst.Call):
            callee = expression.func
            if isinstance(callee, cst.Name) and (callee.value in self.moved or callee.value in self.modules_on_device):
                return True  # output of a module that lives on a device
            if isinstance(callee, cst.Attribute) and callee.attr.value not in HOST_METHODS:
                return self.is_device_value(callee.value)
        return False


def as_move(node: cst.CSTNode, qualified: QualifiedNames) -> Move | None:
    """`x.cuda()` or `x.to(<device>)` (not `x.to(torch.float16)` nor `x.to("cpu")`)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return None
    method = node.func.attr.value
    if method == "cuda":
        return Move(node.func.value, None, node)
    if method != "to":
        return None
    device_arg = keyword(node, "device")
    positional = [arg for arg in node.args if arg.keyword is None]
    device = device_arg.value if device_arg else (positional[0].value if positional else None)
    if device is None or _is_dtype(device, qualified) or _is_cpu_literal(device):
        return None
    if is_cuda_device_expression(device, qualified):
        return Move(node.func.value, None, node)
    return Move(node.func.value, device, node)


def collect(
    statements: Iterable[cst.CSTNode], qualified: QualifiedNames, modules_on_device: Iterable[str] = ()
) -> PlacementFacts:
    """Facts of one scope. Loop targets count as unknown until reassigned (`x = x.to(device)`);
    `modules_on_device` are callables known to run on a device (their outputs are device values)."""
    collector = _Collector(qualified)
    for statement in statements:
        statement.visit(collector)
    facts = PlacementFacts(
        assignments=collector.assignments, escaped=collector.escaped, called=collector.called, qualified=qualified
    )
    facts.moved = collector.moved
    facts.modules_on_device = set(modules_on_device)
    counts = Counter(collector.assigned_names)
    changed = True
    while changed:  # propagate "on a device" through assignments until nothing new is learnt
        changed = False
        for name, values in collector.assignments.items():
            if name in facts.device_values or counts[name] != len(values):
                continue
            if values and all(facts.is_device_value(value) for value in values):
                facts.device_values.add(name)
                changed = True
    return facts


def root_name(expression: cst.BaseExpression) -> str | None:
    """`a` for `a`, `a.b.c`, `a[0]`, `a.f().g`; None for anything else."""
    while True:
        if isinstance(expression, cst.Name):
            return expression.value
        if isinstance(expression, (cst.Attribute, cst.Subscript)):
            expression = expression.value
        elif isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute):
            expression = expression.func.value
        else:
            return None


class _Collector(cst.CSTVisitor):
    def __init__(self, qualified: QualifiedNames) -> None:
        self.qualified = qualified
        self.moved: dict[str, Move] = {}
        self.assignments: dict[str, list[cst.BaseExpression]] = {}
        self.assigned_names: list[str] = []
        self.escaped: set[str] = set()
        self.called: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function is a scope of its own

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._record_target(target.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.assigned_names.append(node.target.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._record_target(node.target, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.called.add(node.func.value)
        move = as_move(node, self.qualified)
        if move is not None and isinstance(move.receiver, cst.Name):
            self.moved.setdefault(move.receiver.value, move)
        for arg in node.args:
            if isinstance(arg.value, cst.Name):
                self.escaped.add(arg.value.value)

    def _record_target(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.assigned_names.append(target.value)
            self.assignments.setdefault(target.value, []).append(value)
            move = as_move(value, self.qualified)
            if move is not None:
                self.moved.setdefault(target.value, move)
        elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
            if len(target.elements) == len(value.elements):
                for element, element_value in zip(target.elements, value.elements):
                    self._record_target(element.value, element_value.value)
                return
            self.assigned_names.extend(_target_names(target))
        else:
            self.assigned_names.extend(_target_names(target))


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _target_names(element.value)]
    return []


def _is_dtype(node: cst.BaseExpression, qualified: QualifiedNames) -> bool:
    return any(name.startswith("torch.") and name.rsplit(".", 1)[1] in TORCH_DTYPES for name in qualified(node))


def _is_cpu_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value in CPU_LITERALS
