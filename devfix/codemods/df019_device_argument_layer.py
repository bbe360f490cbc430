"""DF019 device-argument-layer: a layer that takes a `device` argument places only part of its state.

    Before:  def __init__(self, device):
                 self.cache = torch.randn(10, device=device)
                 self.weight = nn.Parameter(torch.randn(10))
    After:       self.weight = nn.Parameter(torch.randn(10, device=device))

A constructor that receives a device promises that its state lives there; a Parameter or tensor
created without it stays on the CPU, and the first forward pass mixes devices. So does any other
method of the layer given a device that makes tensors on it (YOLOv3's `create_grids(self, ng,
device)` builds its grid with `torch.arange(..., device=device)` but stores `self.ng =
torch.tensor(ng)` on the CPU, which the loss then multiplies with targets on the GPU). (Not "different
device objects": `torch.device` values compare equal by value.) Every factory call in `__init__`
that builds state without a device gets `device=<the argument>`, so all state is created on the
same device, as the caller asked.

Refuses: layers whose state is all placed already, or built without any device (those follow
`.to()` once registered: see DF014/DF003), and sub-layers (`nn.Linear(...)` takes `device=` too,
but moving the whole module is the caller's job).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.tensors import is_factory_call
from devfix.analysis.torch_names import keyword
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import add_keyword
from devfix.findings import Safety

DEVICE_PARAMETERS = ("device", "dev", "torch_device")


class DeviceArgumentLayer(ScopeTracker, DevfixRule):
    CODE = "DF019"
    NAME = "device-argument-layer"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Layer taking a device argument creates part of its state without it"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._unplaced: dict[cst.Call, str] = {}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not self.is_module_classdef(node):
            return
        for method in node.body.body:
            if not isinstance(method, cst.FunctionDef):
                continue
            parameters = (*method.params.params, *method.params.kwonly_params)
            device = next((p.name.value for p in parameters if p.name.value in DEVICE_PARAMETERS), None)
            if device is None:
                continue
            finder = _StateFactories(self.qualified)
            method.body.visit(finder)
            if method.name.value == "__init__":
                placed = any(_uses(call, device) for call in finder.calls)
            else:  # `create_grids(self, ng, device)`: the method makes its tensors on `device` (`torch.arange(n, device=device)`)
                placed = any(_uses(call, device) for call in _factories(method.body, self.qualified))
            unplaced = [call for call in finder.calls if keyword(call, "device") is None and keyword(call, "generator") is None]
            if placed and unplaced:
                for call in unplaced:
                    self._unplaced[call] = device

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        device = self._unplaced.get(original_node)
        if device is None:
            return updated_node
        code = cst.Module([]).code_for_node(original_node.func)
        if not self.report(original_node, f"`{code}(...)` ignores the layer's `{device}` argument while other state uses it: "
                           "the state ends up on two devices", fix_title=f"create it on `{device}` too"):
            return updated_node
        return add_keyword(updated_node, "device", device)


class _StateFactories(cst.CSTVisitor):
    """Factory calls whose tensors become `self.<attr>` state (directly or inside nn.Parameter)."""

    def __init__(self, qualified) -> None:
        self.qualified = qualified
        self.calls: list[cst.Call] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(t.target, cst.Attribute) and cst.Module([]).code_for_node(t.target.value) == "self" for t in node.targets):
            self._collect(node.value)

    def _collect(self, value: cst.BaseExpression) -> None:
        if is_factory_call(value, self.qualified):
            self.calls.append(value)
        elif isinstance(value, cst.Call):
            names = self.qualified(value.func)
            if any(name.startswith("torch.nn.Parameter") for name in names) and value.args:
                self._collect(value.args[0].value)
            elif isinstance(value.func, cst.Attribute) and not names and value.func.attr.value not in ("to", "cuda"):
                self._collect(value.func.value)
        elif isinstance(value, cst.BinaryOperation):
            self._collect(value.left)
            self._collect(value.right)


def _factories(body: cst.CSTNode, qualified) -> list[cst.Call]:
    """Every factory call in `body` (not in nested functions)."""
    found: list[cst.Call] = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> None:
            if is_factory_call(node, qualified):
                found.append(node)

    body.visit(Finder())
    return found


def _uses(call: cst.Call, device: str) -> bool:
    argument = keyword(call, "device")
    return argument is not None and cst.Module([]).code_for_node(argument.value) == device
