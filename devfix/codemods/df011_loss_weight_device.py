"""DF011 loss-weight-device: a functional loss gets class weights that stay on the CPU.

    Before:  loss = F.cross_entropy(logits, y, weight=class_weights)
    After:   loss = F.cross_entropy(logits, y, weight=class_weights.to(logits.device))

The device is read from the name behind the input: `F.nll_loss(scores.log_softmax(-1), y,
weight=w)` gets `w.to(scores.device)` (tensor methods and indexing keep the device).

`weight=`, `pos_weight=` and similar tensors must live with the input; PyTorch raises "Expected all
tensors to be on the same device" (or "... but got weight is on cpu"). The weight follows the
loss input at the call, which is right on every device. Loss *modules* built with a weight
(`nn.CrossEntropyLoss(weight=w)`) and torchmetrics objects are moved at construction by DF003;
fresh literals (`pos_weight=torch.tensor([3.0])`) get `device=` from DF004.

In a helper (`def loss_fn(logits, y)`), the input counts as on a device when every call of the
helper in the file passes one (`loss_fn(model(x), y)` with the model moved).

Refuses: weights already on a device or already moved at the call, inputs devfix cannot place on a
device, and anything but a plain name or attribute as the weight.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.call_sites import arguments_for
from devfix.analysis.placement import HOST_METHODS, PlacementFacts
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_api import FUNCTIONAL_LOSSES
from devfix.analysis.torch_names import keyword
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import moved_to
from devfix.findings import Safety

TENSOR_KEYWORDS = ("weight", "pos_weight")


class LossWeightDevice(ScopeTracker, DevfixRule):
    CODE = "DF011"
    NAME = "loss-weight-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Class weights of a functional loss left on the CPU"

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not self.qualified(original_node.func) & FUNCTIONAL_LOSSES or not original_node.args:
            return updated_node
        loss_input = original_node.args[0].value
        facts = self.scope_facts(original_node)
        if original_node.args[0].keyword is not None:
            return updated_node
        tensor = _tensor_behind(loss_input)
        if tensor is None:
            return updated_node  # `weight.to(model(x).device)` would run the model twice
        if not facts.is_device_value(loss_input) and not self._callers_pass_device_values(original_node, tensor, facts):
            return updated_node
        reference = tensor.value
        args = list(updated_node.args)
        changed = False
        for name in TENSOR_KEYWORDS:
            weight = keyword(original_node, name)
            if weight is None or not isinstance(weight.value, (cst.Name, cst.Attribute)) or facts.is_device_value(weight.value):
                continue
            code = cst.Module([]).code_for_node(weight.value)
            if self.report(weight.value, f"`{name}={code}` stays on the CPU while `{reference}` may be on a GPU",
                           fix_title=f"move it to `{reference}.device` at the call"):
                index = list(original_node.args).index(weight)
                moved = moved_to(args[index].value, f"{reference}.device")
                args[index] = args[index].with_changes(value=moved)
                changed = True
        return updated_node.with_changes(args=args) if changed else updated_node

    def _callers_pass_device_values(self, call: cst.Call, loss_input: cst.Name, facts: PlacementFacts) -> bool:
        """`def loss_fn(logits, y): return F.cross_entropy(logits, y, weight=w)`, where every call
        of `loss_fn` in the file passes a device value for `logits` (`loss_fn(model(x), y)`)."""
        function = self.enclosing_scope(call)
        if not isinstance(function, cst.FunctionDef):
            return False
        if loss_input.value not in self.scope_parameters(call) or loss_input.value in facts.bindings:
            return False
        passed = arguments_for(self.module, function, loss_input.value)
        return passed is not None and all(self.scope_facts(caller).is_device_value(value) for caller, value in passed)


def _tensor_behind(expression: cst.BaseExpression) -> cst.Name | None:
    """The name whose device the loss input has: `logits` for `logits`, `logits.log_softmax(-1)`,
    `logits[:, 0]` (tensor methods and indexing keep the device; moves and host methods do not)."""
    while True:
        if isinstance(expression, cst.Name):
            return expression
        if isinstance(expression, cst.Subscript):
            expression = expression.value
        elif (
            isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute)
            and expression.func.attr.value not in HOST_METHODS | {"to", "cuda"}
        ):
            expression = expression.func.value
        else:
            return None
