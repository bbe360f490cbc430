"""Functions whose every `return` is a tensor computed from some of their parameters by operations
that keep a tensor's device: given a tensor on a GPU there, they give one back on it.

    def accuracy(logits, labels):
        preds = logits.argmax(1)
        return (preds == labels).float().mean()

`accs.append(accuracy(logits, labels))` with `logits` a moved model's output appends GPU tensors:
what a rule brings to the host before numpy sees the list (DF008). A plain function may return a
float (`return loss.item()`), so only what this analysis proves counts: returns built from the
parameters (and names the function binds once to such values) with operators, subscripts, the tensor
methods below and torch's tensor functions; never through another call, `.item()`, `.tolist()`,
`.cpu()`, `.size()` or a builtin.
"""

from __future__ import annotations

import ast

from devfix.analysis.ast_nodes import FUNCTIONS, is_number_literal, scope_bindings, scope_nodes
from devfix.analysis.imports import ImportTable
from devfix.analysis.torch_api import FACTORY_FUNCTIONS, is_torch_tensor_function

# tensor methods whose result is one tensor on the receiver's device (not `max`/`sort`/`topk`,
# which may give tuples, nor `size`/`item`/`tolist`/`cpu`/`to`)
DEVICE_KEEPING_METHODS = frozenset({
    "abs", "add", "all", "any", "argmax", "argmin", "argsort", "bool", "ceil", "clamp", "clamp_min", "clone",
    "contiguous", "cumsum", "detach", "div", "double", "eq", "exp", "expand", "expand_as", "flatten", "float",
    "floor", "ge", "gt", "half", "int", "le", "log", "log_softmax", "logical_and", "logical_not", "logical_or",
    "long", "lt", "masked_fill", "mean", "mul", "ne", "neg", "norm", "permute", "pow", "prod", "reshape",
    "round", "sigmoid", "sign", "softmax", "sqrt", "squeeze", "std", "sub", "sum", "t", "tanh", "transpose",
    "unsqueeze", "var", "view", "view_as",
})
DEVICE_KEEPING_ATTRIBUTES = frozenset({"T", "mT", "data"})
DEPTH = 8  # names followed through this many bindings

Followed = tuple[tuple[int, str], ...]  # (position, or -1 for keyword-only; name) of each parameter


def followed_parameters(function: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportTable) -> Followed:
    """The parameters every `return` of `function` computes its tensor from (empty when some
    `return` is anything else, or the function is a generator)."""
    nodes = list(scope_nodes(function.body, (*FUNCTIONS, ast.ClassDef, ast.Lambda)))
    if any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in nodes):
        return ()
    returns = [node.value for node in nodes if isinstance(node, ast.Return)]
    if not returns or any(value is None for value in returns):
        return ()
    judge = _Judge(scope_bindings(nodes), set(named_parameters(function)), imports)
    leaves: set[str] = set()
    for value in returns:
        found = judge.leaves(value, DEPTH)
        if not found:
            return ()
        leaves |= found
    return as_followed(function, leaves)


def named_parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The function's positional parameters in order, then its keyword-only ones (no `*args`, `**kwargs`)."""
    arguments = function.args
    return [argument.arg for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]


def as_followed(function: ast.FunctionDef | ast.AsyncFunctionDef, names) -> Followed:
    """`names` of the function's parameters as `Followed`: each with its position, -1 for keyword-only."""
    arguments = function.args
    positional = [argument.arg for argument in [*arguments.posonlyargs, *arguments.args]]
    return tuple((positional.index(name) if name in positional else -1, name) for name in sorted(names))


def followed_arguments(call: ast.Call, followed: Followed) -> list[ast.expr]:
    """What `call` gives the followed parameters (none when it unpacks `*args` or `**kwargs`)."""
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(keyword.arg is None for keyword in call.keywords):
        return []
    given = []
    for position, name in followed:
        named = [keyword.value for keyword in call.keywords if keyword.arg == name]
        if named:
            given.append(named[0])
        elif 0 <= position < len(call.args):
            given.append(call.args[position])
    return given


class _Judge:
    def __init__(self, bindings, parameters: set[str], imports: ImportTable) -> None:
        self.bindings, self.parameters, self.imports = bindings, parameters, imports

    def leaves(self, value: ast.expr, depth: int) -> set[str] | None:
        """The parameters `value` is computed from, when it is a tensor wherever they are tensors
        (at least one); None otherwise."""
        if depth <= 0:
            return None
        if isinstance(value, ast.Name):
            if value.id in self.parameters:
                return {value.id} if value.id not in self.bindings else None  # a rebound parameter is not followed
            bound = self.bindings.get(value.id, [])
            return self.leaves(bound[0][1], depth - 1) if len(bound) == 1 and bound[0][1] is not None else None
        if isinstance(value, ast.Attribute):
            return self.leaves(value.value, depth) if value.attr in DEVICE_KEEPING_ATTRIBUTES else None
        if isinstance(value, ast.Subscript):
            return self.leaves(value.value, depth)
        if isinstance(value, ast.UnaryOp) and not isinstance(value.op, ast.Not):
            return self.leaves(value.operand, depth)
        if isinstance(value, ast.BinOp):
            return self._either(value.left, value.right, depth)
        if isinstance(value, ast.Compare) and len(value.comparators) == 1 and not isinstance(value.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
            return self._either(value.left, value.comparators[0], depth)
        if isinstance(value, ast.Call):
            return self._call(value, depth)
        return None

    def _either(self, left: ast.expr, right: ast.expr, depth: int) -> set[str] | None:
        """An operator's operands: tensors from the parameters, or plain numbers."""
        sides = [set() if is_number_literal(side) else self.leaves(side, depth) for side in (left, right)]
        if any(side is None for side in sides):
            return None
        return sides[0] | sides[1] or None

    def _call(self, call: ast.Call, depth: int) -> set[str] | None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in DEVICE_KEEPING_METHODS and self.imports.qualify(func) is None:
            return self.leaves(func.value, depth)  # `x.float()`, not `torch.float` or a module's function
        qualified = self.imports.qualify(func)
        if qualified is not None and qualified not in FACTORY_FUNCTIONS and is_torch_tensor_function({qualified}) and call.args:
            return self.leaves(call.args[0].value if isinstance(call.args[0], ast.Starred) else call.args[0], depth)
        return None


