"""Where, in a method of a plain class, a name meets what a moved model attribute returned.

A DQN agent's `learn()` feeds `states` to `self.q`, then computes
`rewards + gamma * self.target(next_states).max(1)[0] * (1 - dones)` and
`self.q(states).gather(1, actions)`: `rewards`, `dones` and `actions` never reach the model, yet
each meets its output, on the model's device. The walk follows the method in order: a name holds
an output when its latest assignment is computed from a model call or from such a name (through
tensor methods, arithmetic, indexing, and the calls the rule says give a result where their tensor
arguments are: `torch.log_softmax(self.policy(s), -1)`). A
meeting is an operand of arithmetic whose other side holds an output (the names of that operand,
through arithmetic, tensor methods and indexing), or an argument of a method of an output that
must share its device (`gather`, `index_select`, `masked_fill`, ...), or of a call the rule says
puts its arguments together (a loss attribute of the class, `F.cross_entropy`). The rule decides
which of the names met are tensors made on the host.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devfix.analysis.module_classes import is_self_attribute
from devfix.analysis.torch_api import NON_TENSOR_METHODS

MEETING_METHODS = frozenset({
    "gather", "index_select", "scatter", "scatter_", "scatter_add", "scatter_add_", "masked_fill", "masked_fill_",
    "masked_select", "take_along_dim", "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "matmul", "mm",
    "bmm", "where", "lerp", "lerp_",
})
LEAVES_THE_DEVICE = NON_TENSOR_METHODS | {"cpu", "to", "cuda", "type"}


class OutputMeetings(cst.CSTVisitor):
    """Run it over a method's body; `met` then maps each Name node that meets an output to the
    model attribute whose output it meets."""

    def __init__(self, models: set[str], meets: Callable[[cst.Call], bool] | None = None,
                 follows: Callable[[cst.Call], bool] | None = None) -> None:
        self.models = models
        self.meets = meets  # calls whose arguments share a device: a loss attribute, `F.cross_entropy`
        self.follows = follows  # calls whose result is where their tensor arguments are: `torch.log_softmax(out, -1)`
        self.outputs: dict[str, str] = {}  # name → the model whose output it holds
        self.met: dict[cst.Name, str] = {}
        self.met_in_calls: set[cst.Name] = set()  # those met only as arguments of a `meets` call
        self.met_method_calls: dict[cst.Arg, str] = {}  # `self.bce(out, self._labels(n))`: an argument that calls a method of the class
        # `self.bce(self.D(fake), torch.ones(n, 1))`: a call (not of the class's own methods) met where
        # it is made, the start of a chain of tensor methods (`torch.ones(n).float()`); the rule says which are factories
        self.met_calls: dict[cst.Call, str] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Assign(self, original_node: cst.Assign) -> None:
        model = self.output_of(original_node.value)
        for target in original_node.targets:
            if isinstance(target.target, cst.Name):
                if model is not None:
                    self.outputs[target.target.value] = model
                else:
                    self.outputs.pop(target.target.value, None)  # rebound to something else

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        for side, other in ((node.left, node.right), (node.right, node.left)):
            model = self.output_of(side)
            if model is not None and self.output_of(other) is None:
                self._meet_call(other, model)
                for name in operand_names(other):
                    self.met.setdefault(name, model)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in MEETING_METHODS:
            model = self.output_of(func.value)
            if model is not None:
                for arg in node.args:
                    if arg.keyword is None and not arg.star and self.output_of(arg.value) is None:
                        for name in operand_names(arg.value):  # `actions` of `.gather(1, actions.unsqueeze(1))`
                            self.met.setdefault(name, model)
        if self.meets is not None and self.meets(node):
            # `self.loss_fct(shift_logits.view(-1, n), shift_label.view(-1))` with the logits an output
            values = [arg.value for arg in node.args if not arg.star]
            model = next((found for value in values if (found := self.output_of(value)) is not None), None)
            if model is not None:
                for arg in node.args:
                    value = arg.value
                    if not arg.star and isinstance(value, cst.Call) and is_self_attribute(value.func) and value.func.attr.value not in self.models:
                        self.met_method_calls[arg] = model
                for value in values:
                    if self.output_of(value) is None:
                        self._meet_call(value, model)
                        for name in operand_names(value):
                            if name not in self.met:
                                self.met[name] = model
                                self.met_in_calls.add(name)

    def _meet_call(self, value: cst.BaseExpression, model: str) -> None:
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Call) \
                and value.func.attr.value not in LEAVES_THE_DEVICE:
            value = value.func.value  # `torch.ones(n).float()`
        if isinstance(value, cst.Call) and not is_self_attribute(value.func):
            self.met_calls.setdefault(value, model)

    def output_of(self, value: cst.BaseExpression) -> str | None:
        """The model whose output `value` holds or is computed from, if any."""
        if isinstance(value, cst.Name):
            return self.outputs.get(value.value)
        if isinstance(value, cst.Call):
            func = value.func
            if is_self_attribute(func) and func.attr.value in self.models:
                return func.attr.value
            if isinstance(func, cst.Attribute) and is_self_attribute(func.value) and func.value.attr.value in self.models:
                return func.value.attr.value  # `self.model.decode(z)`
            if self.follows is not None and self.follows(value):  # `torch.log_softmax(self.policy(s), -1)`
                return next((found for arg in value.args if not arg.star and (found := self.output_of(arg.value)) is not None), None)
            if isinstance(func, cst.Attribute) and not is_self_attribute(func) and func.attr.value not in LEAVES_THE_DEVICE:
                return self.output_of(func.value)  # `self.q(s).max(1)`; not `.cpu()`, `.to(other)`, `.item()`
            return None
        if isinstance(value, cst.BinaryOperation):
            return self.output_of(value.left) or self.output_of(value.right)
        if isinstance(value, cst.UnaryOperation):
            return self.output_of(value.expression)
        if isinstance(value, cst.Subscript):
            return self.output_of(value.value)
        return None


def operand_names(value: cst.BaseExpression) -> list[cst.Name]:
    """The names an operand is computed from: `dones` of `(1 - dones)`, `mask` of `mask.float()`."""
    if isinstance(value, cst.Name):
        return [value]
    if isinstance(value, cst.BinaryOperation):
        return operand_names(value.left) + operand_names(value.right)
    if isinstance(value, cst.UnaryOperation):
        return operand_names(value.expression)
    if isinstance(value, cst.Subscript):
        return operand_names(value.value)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not is_self_attribute(value.func):
        return operand_names(value.func.value)
    return []
