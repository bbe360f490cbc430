"""DF011 loss-weight-device: a functional loss gets class weights that stay on the CPU.

    Before:  loss = F.cross_entropy(logits, y, weight=class_weights)
    After:   loss = F.cross_entropy(logits, y, weight=class_weights.to(logits.device))

`weight=`, `pos_weight=` and similar tensors must live with the input; PyTorch raises "Expected all
tensors to be on the same device" (or "... but got weight is on cpu"). The weight follows the
loss input at the call, which is right on every device. Loss *modules* built with a weight
(`nn.CrossEntropyLoss(weight=w)`) and torchmetrics objects are moved at construction by DF003;
fresh literals (`pos_weight=torch.tensor([3.0])`) get `device=` from DF004.

Refuses: weights already on a device or already moved at the call, inputs devfix cannot place on a
device, and anything but a plain name or attribute as the weight.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_api import FUNCTIONAL_LOSSES
from devfix.analysis.torch_names import keyword
from devfix.codemods.base import DevfixRule
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
        if original_node.args[0].keyword is not None or not facts.is_device_value(loss_input):
            return updated_node
        reference = cst.Module([]).code_for_node(loss_input)
        if not isinstance(loss_input, cst.Name):
            return updated_node  # `weight.to(model(x).device)` would run the model twice
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
                moved = cst.Call(func=cst.Attribute(value=args[index].value, attr=cst.Name("to")),
                                 args=[cst.Arg(cst.parse_expression(f"{reference}.device"))])
                args[index] = args[index].with_changes(value=moved)
                changed = True
        return updated_node.with_changes(args=args) if changed else updated_node
