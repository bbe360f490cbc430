"""DF026 layer-replaced-after-move: a layer given to a model after the model moved stays on the CPU.

    Before:  model = models.resnet18(weights=...).to(device)
             model.fc = nn.Linear(512, 3)
    After:   model.fc = nn.Linear(512, 3).to(device)

Fine-tuning replaces a classifier head (`model.fc = ...`; an item of a container,
`model.classifier[6] = ...`, is not followed) after the pretrained model was moved; the new layer
is built on the CPU and
`model(x.to(device))` then raises "Input type (torch.cuda.FloatTensor) and weight type
(torch.FloatTensor) should be the same". The new layer goes where the model was moved: the device
the move names, else (`.cuda()`) the model's own device, `next(model.parameters()).device`.

Refuses: layers that hold no parameters (`nn.ReLU()`, `nn.Identity()`), layers built with `device=`
or moved where they are built (also every layer with parameters of an `nn.Sequential` head), a model moved again after the replacement (`model.to(device)`
moves the new layer too) or whose new layer is moved later (`model.fc.to(device)`), and a model
whose last move in the scope does not reach the name as it is here (rebound in between).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.placement import as_move, device_code
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_names import holds_state, keyword
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import moved_to
from devfix.findings import Safety


class LayerReplacedAfterMove(ScopeTracker, DevfixRule):
    CODE = "DF026"
    NAME = "layer-replaced-after-move"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Layer assigned to a model after the model moved to the device"

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        if len(original_node.targets) != 1:
            return updated_node
        target = original_node.targets[0].target
        value = original_node.value
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and isinstance(value, cst.Call)):
            return updated_node
        if not self.builds_module(value) or not holds_state(value, self.qualified) or keyword(value, "device") is not None:
            return updated_node
        if self._items_placed(value):
            return updated_node  # `nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, 3).to(device))`: placed where it is built
        owner, attribute = target.value.value, target.attr.value
        facts = self.scope_facts(original_node)
        line = self.line_of(original_node)
        move = facts.moved_at(owner, line)
        if move is None or self.line_of(move.call) >= line:
            return updated_node
        if any(self.line_of(later.call) > line for later in facts.moves.get(owner, ())) or self._moved_later(original_node, owner, attribute, line):
            return updated_node
        device = device_code(move.device) or f"next({owner}.parameters()).device"
        if not self.report(value, f"`{owner}.{attribute}` is given a new layer after `{owner}` moved to its device; "
                           "the layer's parameters stay on the CPU", fix_title=f"move the new layer to `{device}`"):
            return updated_node
        return updated_node.with_changes(value=moved_to(updated_node.value, device))

    def _items_placed(self, value: cst.Call) -> bool:
        """An `nn.Sequential(...)` whose every item holding parameters is moved or given `device=`
        where it is built."""
        if "torch.nn.Sequential" not in self.qualified(value.func) or not value.args:
            return False
        if any(arg.star or not isinstance(arg.value, cst.Call) for arg in value.args):
            return False  # `nn.Sequential(*layers)`: items not seen here
        holding = [arg.value for arg in value.args if holds_state(arg.value, self.qualified)]
        return all(as_move(item, self.qualified) is not None or (isinstance(item, cst.Call) and keyword(item, "device") is not None)
                   for item in holding)

    def _moved_later(self, node: cst.CSTNode, owner: str, attribute: str, line: int) -> bool:
        """`model.fc.to(device)` (or `model.fc = model.fc.to(device)`) after `line` in the scope."""
        finder = _Moves(f"{owner}.{attribute}", self.qualified)
        self.enclosing_scope(node).visit(finder)
        return any(self.line_of(call) > line for call in finder.found)


class _Moves(cst.CSTVisitor):
    def __init__(self, receiver: str, qualified) -> None:
        self.receiver, self.qualified = receiver, qualified
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if as_move(node, self.qualified) is not None and isinstance(node.func, cst.Attribute) \
                and cst.Module([]).code_for_node(node.func.value) == self.receiver:
            self.found.append(node)
