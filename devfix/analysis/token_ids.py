"""Token ids a generation loop grows: where they may move as a whole.

`ids = tokenizer.encode(prompt, return_tensors="pt")`, then `logits = model(ids).logits` and
`ids = torch.cat([ids, next_id], -1)` in a loop, with `model` on a GPU: moving `ids` where the model
reads it leaves the join to meet the model's output (`next_id`) from the CPU. The ids must move
where they are made, and that is right only when every other read of the name takes a device
tensor as well: the model or a method of it, the join that grows it, a tokenizer's `decode` (which
copies to the host itself), `len(ids)`, its shape, and its own methods given only literals
(`ids.sum()`, `ids[0].tolist()`; not `.numpy()`).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.torch_api import LIST_JOINS
from devfix.analysis.torch_names import QualifiedNames

DECODERS = frozenset({"decode", "batch_decode"})  # a tokenizer's: `to_py_obj` brings a CUDA tensor to the host
METADATA = frozenset({"shape", "size", "dim", "numel", "device", "dtype"})
HOST_ONLY_METHODS = frozenset({"numpy", "__array__"})  # what a CUDA tensor refuses
LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.UnaryOperation)  # `ids.sum(-1)`, `ids.view(1, -1)`


def grows(value: cst.BaseExpression | None, name: str, qualified: QualifiedNames) -> bool:
    """`torch.cat([ids, next_id], dim=-1)`: a join of a display that holds `name` itself."""
    if not (isinstance(value, cst.Call) and value.args and qualified(value.func) & LIST_JOINS):
        return False
    parts = value.args[0].value
    return isinstance(parts, (cst.List, cst.Tuple)) and any(
        isinstance(element.value, cst.Name) and element.value.value == name for element in parts.elements
    )


def reads_take_device_tensors(scope: cst.CSTNode, name: str, models: set[str], qualified: QualifiedNames) -> bool:
    """Every read of `name` in `scope` (a function or the module, not the functions nested in it)
    hands it to one of `models` (`model(ids)`, `model.generate(ids)`), joins it (`torch.cat([ids,
    ...])`), decodes it (`tokenizer.decode(ids[0])`), or asks its length or shape."""
    reads = _Reads(name, models, qualified)
    (scope.body if isinstance(scope, cst.FunctionDef) else scope).visit(reads)
    return bool(reads.loads) and all(id(node) in reads.accepted for node in reads.loads)


class _Reads(cst.CSTVisitor):
    def __init__(self, name: str, models: set[str], qualified: QualifiedNames) -> None:
        self.name, self.models, self.qualified = name, models, qualified
        self.loads: list[cst.Name] = []
        self.accepted: set[int] = set()
        self.stored: set[int] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == self.name:
            self.stored.add(id(node.target))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name and id(node) not in self.stored:
            self.loads.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in METADATA:
            self._accept(node.value)  # `ids.shape[-1]`, `ids.size(1)`

    def visit_Call(self, node: cst.Call) -> None:
        callee = node.func.value if isinstance(node.func, cst.Attribute) else node.func
        values = [arg.value for arg in node.args]
        if isinstance(callee, cst.Name) and callee.value in self.models:
            for value in values:
                self._accept(value)  # `model(ids)`, `model.generate(ids, ...)`
        elif self.qualified(node.func) & LIST_JOINS and values and isinstance(values[0], (cst.List, cst.Tuple)):
            for element in values[0].elements:
                self._accept(element.value)
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value in DECODERS:
            for value in values:
                self._accept(value.value if isinstance(value, cst.Subscript) else value)  # `tokenizer.decode(ids[0])`
        elif isinstance(node.func, cst.Name) and node.func.value == "len" and len(values) == 1:
            self._accept(values[0])
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value not in HOST_ONLY_METHODS \
                and all(isinstance(value, LITERALS) for value in values):
            receiver = node.func.value  # `ids.sum()`, `ids[0].tolist()`: a method of the tensor alone
            self._accept(receiver.value if isinstance(receiver, cst.Subscript) else receiver)

    def _accept(self, value: cst.BaseExpression) -> None:
        if isinstance(value, cst.Name) and value.value == self.name:
            self.accepted.add(id(value))
