"""Does a method combine what it reads from a Module attribute with a tensor it brought to the host?

    noise = self(yt.to(self.device), t.to(self.device)).cpu()
    step = yt - torch.sign(noise) * self.betas[t]

The method keeps its arithmetic on the CPU on purpose (the model's output comes back with `.cpu()`),
and the table `self.betas` is a CPU tensor it computes with there. Registering the table as a buffer
(DF014) would move it with the model, and the product above would then mix a CPU tensor with a CUDA
one: the fix would only move the error. Such a table is left as it is.

Host values are names bound, in the method, to an expression that ends with `.cpu()` (through
tensor methods: `.cpu().detach()`, not `.cpu().item()` or `.numpy()`, which are no tensors), and
the names computed from them with operators and `torch` functions. Values read from the attribute
are `self.<name>` and the names computed from it in any way.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.cst_bindings import names_in
from devfix.analysis.module_classes import is_self_attribute
from devfix.analysis.parameter_meetings import assignments_of
from devfix.analysis.torch_api import NON_TENSOR_METHODS, is_torch_tensor_function
from devfix.analysis.torch_names import QualifiedNames


def combines_with_host_values(method: cst.FunctionDef, attribute: str, qualified: QualifiedNames) -> bool:
    """Does `method` put a value read from `self.<attribute>` into one arithmetic operation with a
    tensor it brought to the host?"""
    assignments = assignments_of(method)
    host: set[str] = set()
    read: set[str] = set()
    for _ in range(len(assignments) + 1):  # to a fixed point: each pass adds names or stops
        before = (len(host), len(read))
        for targets, value in assignments:
            if _on_the_host(value, host, qualified):
                host |= targets
            if _reads(value, attribute, read):
                read |= targets
        if (len(host), len(read)) == before:
            break
    finder = _Meetings(attribute, host, read, qualified)
    method.body.visit(finder)
    return finder.found


def _on_the_host(expression: cst.BaseExpression, host: set[str], qualified: QualifiedNames) -> bool:
    """A tensor brought to the host: `out.cpu()`, `out.cpu().detach()`, a name bound to one, or an
    operation or `torch` function of one (`torch.sign(-noise)`)."""
    if isinstance(expression, cst.Name):
        return expression.value in host
    if isinstance(expression, (cst.BinaryOperation,)):
        return _on_the_host(expression.left, host, qualified) or _on_the_host(expression.right, host, qualified)
    if isinstance(expression, cst.UnaryOperation) and not isinstance(expression.operator, cst.Not):
        return _on_the_host(expression.expression, host, qualified)
    if isinstance(expression, cst.Subscript):
        return _on_the_host(expression.value, host, qualified)
    if not isinstance(expression, cst.Call) or not isinstance(expression.func, cst.Attribute):
        return False
    method = expression.func.attr.value
    if method == "cpu":
        return True
    if method in NON_TENSOR_METHODS or method in ("to", "cuda", "type", "type_as"):
        return False
    if is_torch_tensor_function(qualified(expression.func)):
        return any(_on_the_host(arg.value, host, qualified) for arg in expression.args)
    return _on_the_host(expression.func.value, host, qualified)  # a tensor method: `noise.detach()`


def _reads(expression: cst.CSTNode, attribute: str, read: set[str]) -> bool:
    """`self.<attribute>` or a name computed from it occurs in `expression`."""
    if read & names_in(expression):
        return True
    finder = _AttributeRead(attribute)
    expression.visit(finder)
    return finder.found


class _AttributeRead(cst.CSTVisitor):
    def __init__(self, attribute: str) -> None:
        self.attribute, self.found = attribute, False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.found = self.found or (is_self_attribute(node) and node.attr.value == self.attribute)


class _Meetings(cst.CSTVisitor):
    """An arithmetic operation with a host value on one side and a read of the attribute on the other."""

    def __init__(self, attribute: str, host: set[str], read: set[str], qualified: QualifiedNames) -> None:
        self.attribute, self.host, self.read, self.qualified, self.found = attribute, host, read, qualified, False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        left_host, right_host = _on_the_host(node.left, self.host, self.qualified), _on_the_host(node.right, self.host, self.qualified)
        left_read, right_read = _reads(node.left, self.attribute, self.read), _reads(node.right, self.attribute, self.read)
        if (left_host and not left_read and right_read and not right_host) or (
                right_host and not right_read and left_read and not left_host):
            self.found = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False
