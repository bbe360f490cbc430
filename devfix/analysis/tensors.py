"""Which names in a function certainly hold tensors, and which calls create fresh tensors.

A fix that writes `x.device` must be sure `x` is a tensor: numpy arrays, lists and floats have no
`.device`. The evidence is local: an annotation, a tensor-only method or attribute used on the
name, or an assignment from a torch call or a tensor method.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.torch_names import QualifiedNames

FACTORY_FUNCTIONS = frozenset(
    f"torch.{name}"
    for name in (
        "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "range",
        "linspace", "logspace", "eye", "tensor", "as_tensor", "tril_indices", "triu_indices",
    )
)
NON_TENSOR_TORCH_CALLS = frozenset(
    {"torch.device", "torch.Size", "torch.dtype", "torch.Generator", "torch.no_grad", "torch.is_tensor", "torch.numel", "torch.manual_seed", "torch.get_default_dtype"}
)
TENSOR_ONLY_MEMBERS = frozenset(
    {
        "device", "is_cuda", "requires_grad", "grad", "size", "view", "unsqueeze", "contiguous", "masked_fill",
        "masked_fill_", "to", "detach", "dim", "float", "long", "half", "bool", "int", "cuda", "cpu", "numel",
        "type_as", "expand", "expand_as", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor",
        "backward", "softmax", "log_softmax", "argmax", "permute", "clamp", "index_select", "masked_select",
        "scatter_", "gather", "chunk", "split", "unbind", "detach_", "sigmoid", "relu", "matmul", "bmm",
    }
)
TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "Tensor", "torch.nn.Parameter"})


def is_factory_call(node: cst.CSTNode, qualified: QualifiedNames) -> bool:
    return isinstance(node, cst.Call) and bool(qualified(node.func) & FACTORY_FUNCTIONS)


def tensor_names(function: cst.FunctionDef, qualified: QualifiedNames) -> set[str]:
    """Parameters and locals of `function` that hold tensors wherever they are bound."""
    finder = _TensorEvidence(qualified)
    function.body.visit(finder)
    names = set(finder.evidenced)
    for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
        annotation = param.annotation.annotation if param.annotation is not None else None
        if annotation is not None and (qualified(annotation) | {_code(annotation)}) & TENSOR_ANNOTATIONS:
            names.add(param.name.value)
    changed = True
    while changed:  # `sim = z1 @ z2.T / tau`: arithmetic on tensors gives tensors
        changed = False
        for name, value in finder.derived:
            if name not in names and _mentions_tensor(value, names):
                names.add(name)
                changed = True
    return names - finder.rebound_to_non_tensors


def _mentions_tensor(value: cst.BaseExpression, names: set[str]) -> bool:
    if isinstance(value, cst.Name):
        return value.value in names
    if isinstance(value, cst.BinaryOperation):
        return _mentions_tensor(value.left, names) or _mentions_tensor(value.right, names)
    if isinstance(value, cst.UnaryOperation):
        return _mentions_tensor(value.expression, names)
    if isinstance(value, cst.Attribute) and value.attr.value in ("T", "mT", "data"):
        return _mentions_tensor(value.value, names)
    if isinstance(value, cst.Subscript):
        return _mentions_tensor(value.value, names)
    return False


class _TensorEvidence(cst.CSTVisitor):
    def __init__(self, qualified: QualifiedNames) -> None:
        self.qualified = qualified
        self.evidenced: set[str] = set()
        self.rebound_to_non_tensors: set[str] = set()
        self.derived: list[tuple[str, cst.BaseExpression]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.attr.value in TENSOR_ONLY_MEMBERS:
            self.evidenced.add(node.value.value)

    def visit_Call(self, node: cst.Call) -> None:
        """`torch.cat([a, b])`, `torch.where(mask, ...)`: the first argument of a torch op is a tensor."""
        names = self.qualified(node.func)
        if not node.args or node.args[0].keyword is not None or names & (FACTORY_FUNCTIONS | NON_TENSOR_TORCH_CALLS):
            return
        if not any(name.startswith("torch.") and name.rsplit(".", 1)[1][:1].islower() for name in names):
            return
        first = node.args[0].value
        elements = [element.value for element in first.elements] if isinstance(first, (cst.List, cst.Tuple)) else [first]
        self.evidenced.update(element.value for element in elements if isinstance(element, cst.Name))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                if self._makes_tensor(node.value):
                    self.evidenced.add(target.target.value)
                elif isinstance(node.value, (cst.List, cst.Dict, cst.Tuple, cst.SimpleString, cst.Integer, cst.Float, cst.ListComp)):
                    self.rebound_to_non_tensors.add(target.target.value)
                else:
                    self.derived.append((target.target.value, node.value))

    def _makes_tensor(self, value: cst.BaseExpression) -> bool:
        if not isinstance(value, cst.Call):
            return False
        names = self.qualified(value.func)
        if any(name.startswith("torch.") for name in names) and not names & NON_TENSOR_TORCH_CALLS:
            return not any(name.startswith(("torch.nn.", "torch.optim.", "torch.utils.")) and name.rsplit(".", 1)[1][:1].isupper() for name in names)
        return isinstance(value.func, cst.Attribute) and value.func.attr.value in TENSOR_ONLY_MEMBERS - {"size", "dim", "numel", "device", "backward", "split", "chunk", "unbind"}


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)
