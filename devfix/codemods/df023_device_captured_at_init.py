"""DF023 device-captured-at-init: a Module stores its device when built, so it goes stale after `.to()`.

    Before:  def __init__(self):
                 ...
                 self.device = next(self.parameters()).device
             def forward(self, x):
                 mask = torch.ones(x.shape, device=self.device)
    After:   def __init__(self):
                 ...

             @property
             def device(self):
                 return next(self.parameters()).device

In `__init__` the parameters are still on the CPU, so `self.device` is the CPU forever; after
`model.to("cuda")` every tensor the methods build on `self.device` stays behind and meets the
moved parameters (catalogue P21). A property reads the device where the parameters are now; before
any move it gives the same value as the stored one.

Applies to an `nn.Module` subclass of torch's own classes whose `__init__` assigns
`self.device = next(self.parameters()).device` (or `next(iter(self.parameters())).device`) once,
where nothing else in the file assigns a `.device` attribute (an overridden `to` that sets
`moved.device`, another class's `self.device = device`): a read-only property would break it.

Refuses: a device the constructor is given (`self.device = device`: the layer places itself, see
DF019), classes that already define `device`, classes with bases of their own (one of them may
assign `self.device`, which a read-only property would break).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.module_classes import class_facts, parameters_device_owner
from devfix.analysis.scopes import ScopeTracker
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import add_device_property
from devfix.findings import Safety


class DeviceCapturedAtInit(ScopeTracker, DevfixRule):
    CODE = "DF023"
    NAME = "device-captured-at-init"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Module stores its device in __init__: stale after .to(); derive it instead"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._captures: dict[cst.Assign, cst.ClassDef] = {}
        self._fixed: set[cst.ClassDef] = set()
        self._device_assignments = _device_assignments(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not self.is_module_classdef(node) or not self._direct_subclass(node):
            return
        facts = class_facts(node, self.line_of)
        use = facts.attributes.get("device")
        if use is None or "device" in facts.methods or len(use.assignments) != 1:
            return
        method, statement = use.assignments[0]
        if method != "__init__" or parameters_device_owner(statement.value) != "self":
            return
        if self._device_assignments != 1 or not (use.read_in - {"__init__"}):
            return  # something else sets a `.device` (`moved.device = ...` in an overridden `to`)
        self._captures[statement] = node

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine):
        if len(original_node.body) != 1 or original_node.body[0] not in self._captures:
            return updated_node
        owner = self._captures[original_node.body[0]]
        if not self.report(original_node.body[0], "`self.device` is taken in `__init__`, while the parameters are still on the CPU: "
                           "after `.to(device)` it names the old device", fix_title="derive `device` from the parameters (a property)"):
            return updated_node
        self._fixed.add(owner)
        return cst.RemoveFromParent()

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        if original_node not in self._fixed:
            return updated_node
        return add_device_property(updated_node)

    def _direct_subclass(self, node: cst.ClassDef) -> bool:
        """Every base is one of torch's own classes (`nn.Module`): none can assign `self.device`."""
        return bool(node.bases) and all(
            any(name.startswith("torch.nn.") for name in self.qualified(base.value)) for base in node.bases
        )


def _device_assignments(module: cst.Module) -> int:
    """How many statements of the file assign a `.device` attribute (of `self` or anything else)."""
    count = 0

    class Finder(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            nonlocal count
            count += isinstance(node.target, cst.Attribute) and node.target.attr.value == "device"

    module.visit(Finder())
    return count
