"""Qualified names of libcst nodes, and the torch facts the rules read from them (the plain names
themselves live in `analysis.torch_api`)."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devfix.analysis.cst_metadata import scope_qualified_names
from devfix.analysis.torch_api import CUDA_LITERALS, DEVICE_CONSTRUCTOR, LOSS_TENSOR_KEYWORDS, PARAMETER_FREE_NN

QualifiedNames = Callable[[cst.CSTNode], set[str]]



def qualified_names(visitor: cst.MetadataDependent, node: cst.CSTNode) -> set[str]:
    """Qualified names of a dotted name (`torch.nn.functional.relu`, `F.relu`, `zeros`).

    Empty for anything else: libcst names `torch.triu(x).bool` "torch.triu.bool", which is a
    method of a tensor, not a torch function."""
    if not _is_dotted_name(node):
        return set()
    return scope_qualified_names(visitor, node)


def _is_dotted_name(node: cst.CSTNode) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def call_names(visitor: cst.MetadataDependent, node: cst.CSTNode) -> set[str]:
    """Qualified names of the callee when `node` is a call, else the empty set."""
    return qualified_names(visitor, node.func) if isinstance(node, cst.Call) else set()


def is_cuda_literal(node: cst.BaseExpression) -> bool:
    """`"cuda"` or `"cuda:0"`: the hard-coded single-GPU device (other indices are deliberate)."""
    return isinstance(node, cst.SimpleString) and node.evaluated_value in CUDA_LITERALS


def is_cuda_device_expression(node: cst.BaseExpression, qualified: QualifiedNames) -> bool:
    """A CUDA literal, or `torch.device("cuda")` / `torch.device("cuda", 0)`."""
    if is_cuda_literal(node):
        return True
    if not isinstance(node, cst.Call) or DEVICE_CONSTRUCTOR not in qualified(node.func):
        return False
    args = node.args
    if len(args) == 1 and is_cuda_literal(args[0].value):
        return True
    return (
        len(args) == 2
        and isinstance(args[0].value, cst.SimpleString)
        and args[0].value.evaluated_value == "cuda"
        and isinstance(args[1].value, cst.Integer)
        and args[1].value.value == "0"
    )


def torch_alias(module: cst.Module) -> str | None:
    """The local name bound to the `torch` package by a top-level `import torch [as T]` (or
    `import torch.optim`, which binds `torch` as well), also one under a top-level `if` or `try`
    (`if is_torch_available(): import torch`: a file that must import without torch)."""
    for statement in _module_level(module.body):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if isinstance(alias.name, cst.Name) and alias.name.value == "torch":
                            return alias.asname.name.value if alias.asname else "torch"
                    if any(dotted_head(alias.name) == "torch" and alias.asname is None for alias in small.names):
                        return "torch"  # `import torch.utils.data` binds `torch` too
    return None


_BLOCKS = (cst.If, cst.Else, cst.Try, cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.With)


def _module_level(statements):
    """The statements that run at import: those of the module's body and of the blocks of its
    `if`, `try` and `with` statements (not of functions or classes)."""
    for statement in statements:
        yield statement
        if not isinstance(statement, _BLOCKS):
            continue
        yield from _module_level(statement.body.body if isinstance(statement.body, cst.IndentedBlock) else [])
        for part in (getattr(statement, "orelse", None), *getattr(statement, "handlers", ()), getattr(statement, "finalbody", None)):
            if part is not None:
                yield from _module_level([part])


def dotted_head(name: cst.BaseExpression) -> str | None:
    """`torch` of `torch.utils.data` (the libcst twin of `ast_nodes.dotted_head`)."""
    while isinstance(name, cst.Attribute):
        name = name.value
    return name.value if isinstance(name, cst.Name) else None


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def spreads_keywords(call: cst.Call) -> bool:
    """`torch.ones(n, **tkwargs)`: the spread mapping may give any keyword, `device=` among them."""
    return any(arg.star == "**" for arg in call.args)


def name_of(node: cst.CSTNode) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


MODULE_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})


def holds_state(constructor: cst.Call, qualified: QualifiedNames) -> bool:
    """False for torch.nn classes known to hold no parameters or buffers (`nn.ReLU()`, a loss
    without `weight=`): calling them with device tensors works wherever they live; and for a
    container of modules the object holds already (pytorch-ood's `Sequential(*self.model[: i +
    1])`): it owns nothing of its own, its layers are wherever the object's model is."""
    for name in qualified(constructor.func):
        if name.startswith("torch.nn."):
            class_name = name.rsplit(".", 1)[1]
            if class_name in PARAMETER_FREE_NN:
                return False
            if class_name in MODULE_CONTAINERS and constructor.args and all(_held_by_self(arg.value) for arg in constructor.args):
                return False
            if class_name.endswith("Loss"):
                return any(arg.keyword is None or arg.keyword.value in LOSS_TENSOR_KEYWORDS for arg in constructor.args)
    return True


def builds_a_metric(constructor: cst.BaseExpression, qualified: QualifiedNames) -> bool:
    """`torchmetrics.Accuracy(...)`, `MulticlassF1Score(...)` imported from torchmetrics: a Module
    whose `update(preds, target)` adds its inputs into states that stay where the metric is."""
    return isinstance(constructor, cst.Call) and any(name.startswith("torchmetrics.") for name in qualified(constructor.func))


def _held_by_self(value: cst.BaseExpression) -> bool:
    """`self.model`, `self.model[: i + 1]`, `self.blocks[0]`: state the object holds."""
    while isinstance(value, (cst.Subscript, cst.Attribute)):
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name):
            return value.value.value == "self"
        value = value.value
    return False
