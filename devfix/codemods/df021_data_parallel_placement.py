"""DF021 data-parallel-placement: placements that break under `nn.DataParallel`; reported, never
rewritten.

    model = Net().to("cuda:0")
    model = nn.DataParallel(model, device_ids=[1, 2])
        DataParallel keeps the module on device_ids[0] (cuda:1) and fails with "module must have
        its parameters and buffers on device cuda:1 (device_ids[0]) but found one of them on
        device: cuda:0"

    class Net(nn.Module):
        def __init__(self, device):
            ...
            self.device = device
        def forward(self, x):
            mask = torch.ones(x.size(0), device=self.device)
    model = nn.DataParallel(Net(device))
        each replica runs `forward` on its own GPU with its own slice of the batch, but
        `self.device` is the GPU fixed at construction: every replica makes `mask` there, and the
        second replica fails with "... found at least two devices, cuda:1 and cuda:0"

Each finding says which value sits on which device. No fix: with one GPU (or none) the code
runs, and the right change (the input's device, a buffer, other `device_ids`) depends on the
module and the machine. Inputs need no move at all: DataParallel scatters them from any device.

Refuses: a module moved to `cuda`, `cuda:0` or `.cuda()` with the default `device_ids` (all
GPUs, starting at 0); `device=` taken from a parameter or an input (`x.device`, which follows
the replica); modules that are not wrapped in this file.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.placement import as_move
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_names import keyword
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety

DATA_PARALLEL = frozenset({
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel",
})


class DataParallelPlacement(ScopeTracker, DevfixRule):
    CODE = "DF021"
    NAME = "data-parallel-placement"
    SAFETY = Safety.UNSAFE
    REPORT_ONLY = True
    DESCRIPTION = "Placement that breaks under nn.DataParallel (module off device_ids[0], a device fixed at construction)"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        wrapped = _WrappedClasses(self)
        node.visit(wrapped)
        self._wrapped = wrapped.classes  # class name → line of the DataParallel call
        self._fixed_devices: set[str] = set()
        self._wrapped_line: int | None = None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._wrapped_line = self._wrapped.get(node.name.value)
        self._fixed_devices = _devices_stored_at_construction(node) if self._wrapped_line is not None else set()

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._fixed_devices, self._wrapped_line = set(), None
        return updated_node

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualified(node.func) & DATA_PARALLEL:
            self._check_module_device(node)
        elif self._fixed_devices:
            self._check_fixed_device(node)

    def _check_module_device(self, call: cst.Call) -> None:
        """The wrapped module must already be on device_ids[0]."""
        if not call.args or call.args[0].keyword is not None:
            return
        first_id = _first_device_id(call)
        if first_id is None:
            return
        module = call.args[0].value
        move = as_move(module, self.qualified)
        if move is None and isinstance(module, cst.Name):
            move = self.scope_facts(call).moved.get(module.value)
            if move is not None and self.line_of(move.call) > self.line_of(call):
                move = None
        index = _device_index(move) if move is not None else None
        if index is None or index == first_id:
            return
        name = cst.Module([]).code_for_node(module)
        self.report(call, f"DataParallel keeps the module on device_ids[0], cuda:{first_id}, but `{name}` is on cuda:{index}: "
                    f"\"module must have its parameters and buffers on device cuda:{first_id}\"; move it to cuda:{first_id} "
                    "or list its GPU first in device_ids", fixable=False)

    def _check_fixed_device(self, call: cst.Call) -> None:
        """`device=self.device` (or `.to(self.device)`) in a method of a wrapped module."""
        device = keyword(call, "device")
        value = device.value if device is not None else None
        if value is None and isinstance(call.func, cst.Attribute) and call.func.attr.value == "to" and call.args:
            value = call.args[0].value
        if not (isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self"):
            return
        if value.attr.value not in self._fixed_devices:
            return
        self.report(value, f"this module runs under nn.DataParallel (line {self._wrapped_line}): each replica runs on its own "
                    f"GPU, but `self.{value.attr.value}` is the device fixed at construction, so every replica puts this "
                    "tensor there; take the device from the input (`x.device`) or make the tensor a buffer", fixable=False)


class _WrappedClasses(cst.CSTVisitor):
    """Classes of the file whose instances are wrapped in DataParallel: `DataParallel(Net(...))`,
    or `model = Net(...)` then `DataParallel(model)` in the same scope."""

    def __init__(self, rule: DataParallelPlacement) -> None:
        self.rule = rule
        self.classes: dict[str, int] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if not (self.rule.qualified(node.func) & DATA_PARALLEL) or not node.args:
            return
        module = node.args[0].value
        while isinstance(module, cst.Call) and isinstance(module.func, cst.Attribute) and module.func.attr.value in ("to", "cuda"):
            module = module.func.value  # `DataParallel(Net().to(device))`
        if isinstance(module, cst.Name):
            bindings = self.rule.scope_facts(node).bindings.get(module.value, ())
            values = [binding.value for binding in bindings if binding.line <= self.rule.line_of(node)]
            module = values[-1] if values else None
        if isinstance(module, cst.Call) and isinstance(module.func, cst.Name):
            self.classes.setdefault(module.func.value, self.rule.line_of(node))


def _devices_stored_at_construction(class_node: cst.ClassDef) -> set[str]:
    """`self.<name> = <parameter>` in `__init__` where the parameter is named in a `device=` or
    `.to()` use of `self.<name>` elsewhere: a device captured once, not a property."""
    stored: set[str] = set()
    for statement in class_node.body.body:
        if not (isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__"):
            continue
        parameters = {param.name.value for param in statement.params.params}
        finder = _SelfStores(parameters)
        statement.body.visit(finder)
        stored |= finder.stored
    properties = {
        statement.name.value for statement in class_node.body.body
        if isinstance(statement, cst.FunctionDef) and any(
            isinstance(decorator.decorator, cst.Name) and decorator.decorator.value == "property" for decorator in statement.decorators
        )
    }
    return stored - properties


class _SelfStores(cst.CSTVisitor):
    def __init__(self, parameters: set[str]) -> None:
        self.parameters = parameters
        self.stored: set[str] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            attribute = target.target
            if (
                isinstance(attribute, cst.Attribute) and isinstance(attribute.value, cst.Name) and attribute.value.value == "self"
                and isinstance(node.value, cst.Name) and node.value.value in self.parameters
            ):
                self.stored.add(attribute.attr.value)


def _first_device_id(call: cst.Call) -> int | None:
    """device_ids[0] when written as a list or tuple of integers; 0 when device_ids is not given."""
    ids = keyword(call, "device_ids")
    positional = [arg for arg in call.args if arg.keyword is None]
    if ids is None and len(positional) < 2:
        return 0
    value = ids.value if ids is not None else positional[1].value
    if isinstance(value, (cst.List, cst.Tuple)) and value.elements and isinstance(value.elements[0].value, cst.Integer):
        return int(value.elements[0].value.value)
    return None


def _device_index(move) -> int | None:
    """The GPU a move names: `.cuda()` / "cuda" → 0, `.cuda(1)` / "cuda:1" → 1; None otherwise."""
    if move.device is None:  # `.cuda(...)` or a CUDA literal
        call = move.call
        if call.func.attr.value == "cuda":
            given = [arg for arg in call.args if arg.keyword is None]
            if not given:
                return 0
            return int(given[0].value.value) if isinstance(given[0].value, cst.Integer) else None
        literal = next((arg.value for arg in call.args if isinstance(arg.value, cst.SimpleString)), None)
        return _literal_index(literal)
    return _literal_index(move.device) if isinstance(move.device, cst.SimpleString) else None


def _literal_index(literal: cst.SimpleString | None) -> int | None:
    if literal is None:
        return None
    text = literal.evaluated_value
    if text == "cuda":
        return 0
    if isinstance(text, str) and text.startswith("cuda:") and text[5:].isdigit():
        return int(text[5:])
    return None
