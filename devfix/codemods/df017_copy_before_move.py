"""DF017 copy-before-move: a copy of a model (EMA, teacher) taken before the model moved stays on
the CPU.

    Before:  ema = copy.deepcopy(model)          After:  ema = copy.deepcopy(model).to(device)
             model.to(device)                             model.to(device)

`copy.deepcopy` copies the model where it is; moving the original later does not move the copy, and
the EMA update (`e.mul_(d).add_(p)` over `zip(ema.parameters(), model.parameters())`) or a forward
pass of the copy then mixes devices. The copy goes to the device the model goes to.

Refuses: copies taken after the move (already on the device), copies that are moved anywhere, and
deliberate CPU copies (an update loop that moves tensors itself with `.to(...)`/`.cpu()`).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.device_scope import DeviceChoice, device_for
from devfix.analysis.placement import device_code
from devfix.analysis.scopes import ScopeTracker
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import moved_to
from devfix.findings import Safety

DEEPCOPY = frozenset({"copy.deepcopy"})
MOVING_METHODS = frozenset({"to", "cpu", "cuda"})


class CopyBeforeMove(ScopeTracker, DevfixRule):
    CODE = "DF017"
    NAME = "copy-before-move"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Copy of a model taken before the model moved to the device"

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        value = original_node.value
        if len(original_node.targets) != 1 or not isinstance(original_node.targets[0].target, cst.Name):
            return updated_node
        if not (isinstance(value, cst.Call) and self.qualified(value.func) & DEEPCOPY and value.args):
            return updated_node
        source = value.args[0].value
        if not isinstance(source, cst.Name):
            return updated_node
        copy_name = original_node.targets[0].target.value
        facts = self.scope_facts(original_node)
        move = facts.moved.get(source.value)
        if move is None or copy_name in facts.moved or self.line_of(move.call) <= self.line_of(original_node):
            return updated_node
        usage = _CopyUsage(copy_name, source.value)
        self.enclosing_scope(original_node).visit(usage)
        if not usage.used_with_model or usage.moves_itself:
            return updated_node
        reusable = device_code(move.device)
        choice = DeviceChoice(reusable) if reusable is not None else device_for(self, original_node)
        message = f"`{copy_name}` copies `{source.value}` before `{source.value}` moves to its device; the copy stays behind"
        if choice is None:
            self.report(original_node.value, message, fixable=False)
            return updated_node
        if not self.report(original_node.value, message, fix_title=f"move `{copy_name}` to `{choice.name}` too"):
            return updated_node
        device = self.use_device(choice)
        moved = moved_to(updated_node.value, device)
        return updated_node.with_changes(value=moved)


class _CopyUsage(cst.CSTVisitor):
    """Is the copy used next to the model (called, or zipped with its parameters), and does that
    code move tensors itself (a deliberate CPU copy)?"""

    def __init__(self, copy_name: str, model_name: str) -> None:
        self.copy_name, self.model_name = copy_name, model_name
        self.used_with_model = False
        self.moves_itself = False
        self._in_update = 0

    def visit_For(self, node: cst.For) -> None:
        code = cst.Module([]).code_for_node(node.iter)
        if f"{self.copy_name}." in code and f"{self.model_name}." in code:
            self.used_with_model = True
            self._in_update += 1

    def leave_For(self, original_node: cst.For) -> None:
        code = cst.Module([]).code_for_node(original_node.iter)
        if f"{self.copy_name}." in code and f"{self.model_name}." in code:
            self._in_update -= 1

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == self.copy_name:
            self.used_with_model = True
        if self._in_update and isinstance(node.func, cst.Attribute) and node.func.attr.value in MOVING_METHODS:
            self.moves_itself = True
