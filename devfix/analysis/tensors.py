"""Which names in a function certainly hold tensors, and which calls create fresh tensors.

A fix that writes `x.device` must be sure `x` is a tensor: numpy arrays, lists and floats have no
`.device`. The evidence is local: an annotation, a tensor-only method or attribute used on the
name, or an assignment from a torch call or a tensor method.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devfix.analysis.cst_bindings import assigned_pairs
from devfix.analysis.kinds import TENSOR_TO_TENSOR_METHODS
from devfix.analysis.torch_api import (
    FACTORY_FUNCTIONS,
    LEGACY_CPU_CONSTRUCTORS,
    MOVED_AFTER,
    NON_TENSOR_ANNOTATIONS,
    NON_TENSOR_METHODS,
    REDUCTIONS_WITH_INDICES,
    SCALAR_ANNOTATIONS,
    TENSOR_ANNOTATIONS,
    TENSOR_ONLY_MEMBERS,
    TUPLE_KEYWORDS,
    TUPLE_RESULTS,
    WHOLE_REDUCTIONS,
    is_torch_tensor_function,
)
from devfix.analysis.torch_names import QualifiedNames

BoundValue = Callable[[str, int], tuple[cst.BaseExpression | None, int]]  # (name, line) → the reaching binding's value and line
NumberTest = Callable[[str], bool]  # a name holds a Python number


def is_factory_call(node: cst.CSTNode, qualified: QualifiedNames) -> bool:
    return isinstance(node, cst.Call) and bool(qualified(node.func) & FACTORY_FUNCTIONS)


def chain_root(expression: cst.BaseExpression) -> cst.BaseExpression:
    """`torch.cat(xs)` in `torch.cat(xs).detach()`: the value a tensor-method chain starts from."""
    while isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute) and not isinstance(expression.func.value, cst.Name):
        expression = expression.func.value
    return expression


def subscript_root(value: cst.BaseExpression) -> cst.BaseExpression:
    """`self.pe` of `self.pe[:n]`, `out.shape` of `out.shape[1:]`: what a chain of subscripts reads."""
    while isinstance(value, cst.Subscript):
        value = value.value
    return value


def without_tensor_methods(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """`model(x)` of `model(x).argmax(1).float()`: tensor methods keep their receiver's device."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in TENSOR_TO_TENSOR_METHODS:
        value = value.func.value
    return value


def tensor_names(scope: cst.FunctionDef | cst.Module, qualified: QualifiedNames) -> set[str]:
    """Parameters and locals of a function (or a module's globals) that hold tensors wherever bound.

    `.to()`, `.cuda()`, `.float()` alone are not evidence: Modules have them too."""
    return tensor_evidence(scope, qualified)[1]


def tensor_evidence(scope: cst.FunctionDef | cst.Module, qualified: QualifiedNames) -> tuple[set[str], set[str]]:
    """`tensor_names`, in one walk, as a pair: first the names their uses and annotations prove
    (`x.size(0)`, `torch.cat([x, y])`, `x: Tensor`), then those with the names some assignment
    computes with tensors added (another binding of such a name may hold a number: `s = s *
    torch.randn(1)[0]` of a float `s`)."""
    finder = _TensorEvidence(qualified)
    if isinstance(scope, cst.Module):
        for statement in scope.body:
            statement.visit(finder)
        params = []
    else:
        scope.body.visit(finder)
        params = [*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params]
    names = set(finder.evidenced)
    for param in params:
        annotation = param.annotation.annotation if param.annotation is not None else None
        if annotation is None:
            continue
        annotated = qualified(annotation) | {_code(annotation)}
        if annotated & TENSOR_ANNOTATIONS:
            names.add(param.name.value)
        elif annotated & SCALAR_ANNOTATIONS or _annotates_no_tensor(annotation, qualified):
            finder.rebound_to_non_tensors.add(param.name.value)
    left_out = finder.rebound_to_non_tensors | finder.imported | {"self", "cls"}
    used = names - left_out
    changed = True
    while changed:  # `sim = z1 @ z2.T / tau`: what is computed from tensors is a tensor
        changed = False
        for name, value in finder.assignments:
            if name not in names and is_tensor_expression(value, names, qualified):
                names.add(name)
                changed = True
    return used, names - left_out


NUMBER_CALLS = frozenset({"builtins.len", "builtins.int", "builtins.float"})  # a Python number whatever they are given


def is_number_expression(value: cst.BaseExpression, tensors: set[str], qualified: QualifiedNames) -> bool:
    """Arithmetic of numbers: `math.log(10000) / (half_dim - 1)`, `2 * len(xs)`. Its leaves are
    literals, names or `self.<attr>` that are no known tensor, and calls of `math` and `numpy`
    functions (CMT's `np.log(1e4) / half_dim`) and of `len`/`int`/`float`, one at least (`half_dim - 1` alone may be a tensor's arithmetic). A name
    bound so, then to a tensor, is a number where it is read before the second binding
    (`emb = torch.exp(torch.arange(n) * -emb)`)."""
    return _number_leaves(value, tensors, qualified) is True


def _number_leaves(value: cst.BaseExpression, tensors: set[str], qualified: QualifiedNames) -> bool | None:
    """None when some leaf may be a tensor; else whether some leaf is a call that gives a number."""
    if isinstance(value, (cst.Integer, cst.Float)):
        return False
    if isinstance(value, cst.Name):
        return None if value.value in tensors else False
    if isinstance(value, cst.Attribute):
        return False if isinstance(value.value, cst.Name) and value.value.value == "self" else None
    if isinstance(value, cst.UnaryOperation) and not isinstance(value.operator, cst.Not):
        return _number_leaves(value.expression, tensors, qualified)
    if isinstance(value, cst.BinaryOperation) and not isinstance(value.operator, cst.MatrixMultiply):
        left, right = _number_leaves(value.left, tensors, qualified), _number_leaves(value.right, tensors, qualified)
        return None if left is None or right is None else left or right
    if isinstance(value, cst.Call):
        names = qualified(value.func)
        # `np.log(10000)`: a numpy scalar or array, on the host (numpy refuses a CUDA tensor)
        return True if any(name.startswith(("math.", "numpy.")) for name in names) or names & NUMBER_CALLS else None
    return None


def is_tensor_expression(value: cst.BaseExpression, tensors: set[str], qualified: QualifiedNames,
                         self_tensors: frozenset[str] = frozenset()) -> bool:
    """Certainly a tensor: a torch op, arithmetic or a tensor method on known tensors (names in
    `tensors`, `self.<attr>` for attributes in `self_tensors`)."""
    def tensor(part: cst.BaseExpression) -> bool:
        return is_tensor_expression(part, tensors, qualified, self_tensors)

    if isinstance(value, cst.Name):
        return value.value in tensors
    if isinstance(value, cst.BinaryOperation):
        return tensor(value.left) or tensor(value.right)
    if isinstance(value, cst.Comparison):
        operands = [value.left, *(item.comparator for item in value.comparisons)]
        return any(tensor(operand) for operand in operands)
    if isinstance(value, cst.UnaryOperation) and not isinstance(value.operator, cst.Not):
        return tensor(value.expression)
    if isinstance(value, cst.Attribute) and value.attr.value in ("T", "mT", "data", "grad"):
        return tensor(value.value)
    if isinstance(value, cst.Attribute) and self_tensors and isinstance(value.value, cst.Name) and value.value.value == "self":
        return value.attr.value in self_tensors
    if isinstance(value, cst.Subscript):
        return tensor(value.value)
    if isinstance(value, cst.Call):
        method = value.func.attr.value if isinstance(value.func, cst.Attribute) else None
        if gives_a_tuple(value, qualified):
            return False
        if method is not None and method not in NON_TENSOR_METHODS and tensor(value.func.value):
            return True  # a tensor method of a known tensor (libcst also names `betas.sqrt` "betas.sqrt")
        names = qualified(value.func)
        if names:
            return bool(names & LEGACY_CPU_CONSTRUCTORS) or is_torch_tensor_function(names)  # `torch.Tensor(anchors)`
        if method is not None and method not in NON_TENSOR_METHODS:
            return tensor(value.func.value)
    return False




def gives_a_tuple(call: cst.Call, qualified: QualifiedNames) -> bool:
    """`torch.split(x, 2)`, `x.sort()`, `x.max(dim=1)`, `torch.unique(x, return_counts=True)`,
    `torch.where(mask)`: a tuple of tensors, by the function or method's name (`torch.max(a, b)` of
    two tensors, a tensor, is refused with the others)."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    if name is None:
        return False
    positional = [arg for arg in call.args if arg.keyword is None and arg.star == ""]
    keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    function = any(qualified_name.startswith("torch.") for qualified_name in qualified(func))  # not a method of a tensor
    given_a_dimension = "dim" in keywords or len(positional) > (1 if function else 0)
    return (
        name in TUPLE_RESULTS or bool(keywords & TUPLE_KEYWORDS)
        or (name in REDUCTIONS_WITH_INDICES and given_a_dimension)
        or (name == "where" and len(call.args) == 1)
    )


class _TensorEvidence(cst.CSTVisitor):
    def __init__(self, qualified: QualifiedNames) -> None:
        self.qualified = qualified
        self.evidenced: set[str] = set()
        self.rebound_to_non_tensors: set[str] = set()
        self.assignments: list[tuple[str, cst.BaseExpression]] = []
        self.imported: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.attr.value in TENSOR_ONLY_MEMBERS \
                and not any(name.startswith(("torch.", "numpy.")) for name in self.qualified(node)):
            self.evidenced.add(node.value.value)  # `x.device`, not `torch.device` nor `torch.split` of the module

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            self.imported.add(_code(alias.asname.name if alias.asname else alias.name).split(".")[0])

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                self.imported.add(_code(alias.asname.name if alias.asname else alias.name))

    def visit_Call(self, node: cst.Call) -> None:
        """`torch.cat([a, b])`, `torch.where(mask, ...)`: the first argument of a torch op is a tensor
        (not that of a factory, of `torch.from_numpy` or of a legacy constructor: data, an array)."""
        names = self.qualified(node.func)
        if not node.args or node.args[0].keyword is not None or names & (FACTORY_FUNCTIONS | MOVED_AFTER) or not is_torch_tensor_function(names):
            return
        self.evidenced.update(_operand_names(node.args[0].value))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for name, value in assigned_pairs(target.target, node.value):
                if isinstance(value, (cst.List, cst.Dict, cst.Tuple, cst.SimpleString, cst.Integer, cst.Float, cst.ListComp)):
                    self.rebound_to_non_tensors.add(name.value)
                else:
                    self.assignments.append((name.value, value))


def _operand_names(value: cst.BaseExpression) -> set[str]:
    """Names given whole to a torch op (`x`, `[a, b]`, `-x`). Not operands of arithmetic inside
    it: in `torch.exp(t / dim)` the divisor may well be a Python number."""
    if isinstance(value, cst.Name):
        return {value.value}
    if isinstance(value, (cst.List, cst.Tuple)):
        return {name for element in value.elements for name in _operand_names(element.value)}
    if isinstance(value, cst.UnaryOperation):
        return _operand_names(value.expression)
    return set()


def _annotates_no_tensor(annotation: cst.BaseExpression, qualified: QualifiedNames) -> bool:
    """`rng: torch.Generator | None`, `Optional[torch.device]`: every type the annotation names
    (None aside) is one no tensor is (`rng.device` is then a generator's, no evidence of a tensor)."""
    parts: list[cst.BaseExpression] = []
    stack = [annotation]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            stack += [node.left, node.right]
        elif isinstance(node, cst.Subscript) and qualified(node.value) & {"typing.Optional", "typing.Union"}:
            stack += [element.slice.value for element in node.slice if isinstance(element.slice, cst.Index)]
        elif not (isinstance(node, cst.Name) and node.value == "None"):
            parts.append(node)
    return bool(parts) and all((qualified(part) | {_code(part)}) & NON_TENSOR_ANNOTATIONS for part in parts)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def is_whole_reduction(call: cst.Call) -> bool:
    """`x.sum()`, `x.mean()`: a 0-dim result (no dimension given)."""
    reduces = isinstance(call.func, cst.Attribute) and call.func.attr.value in WHOLE_REDUCTIONS
    return reduces and not any(arg.keyword is None or arg.keyword.value == "dim" for arg in call.args)


# methods that keep a tensor's shape when called with no argument
SHAPE_KEEPING_METHODS = frozenset({
    "long", "int", "short", "float", "double", "half", "bool", "detach", "clone", "abs", "neg", "floor", "ceil",
    "round", "exp", "log", "sqrt", "sigmoid", "contiguous",
})


ZERO_DIM, ONE_ELEMENT = "0-dim", "one element"


def is_zero_dim_value(expression: cst.BaseExpression, bound: BoundValue, number: NumberTest, line: int) -> bool:
    """`(min_value.long()).squeeze()` of `min_value = torch.rand(1) * n`, `loss.sum()`: a 0-dim
    tensor, which a CUDA tensor accepts beside it in arithmetic and comparisons whatever its
    device (torchaudio's `mask_along_axis`). `bound(name, line)` is the value and line of the
    binding of `name` reaching `line`; `number(name)` says a name holds a Python number."""
    return _small_shape(expression, bound, number, line, 0) == ZERO_DIM


def _small_shape(expression: cst.BaseExpression, bound: BoundValue, number: NumberTest, line: int, depth: int) -> str | None:
    """ZERO_DIM, ONE_ELEMENT (`torch.rand(1)`, `torch.zeros((1,))`, `torch.tensor([x])`), or None
    (unknown or larger), through names, arithmetic with numbers and shape-keeping methods."""
    if isinstance(expression, cst.Name):
        value, at = bound(expression.value, line)
        return _small_shape(value, bound, number, at, depth + 1) if value is not None and depth < 6 else None
    if isinstance(expression, cst.BinaryOperation) and not isinstance(expression.operator, cst.MatrixMultiply):
        shapes = [None if _is_number(side, number) else _small_shape(side, bound, number, line, depth)
                  for side in (expression.left, expression.right)]
        tensors = [shape for side, shape in zip((expression.left, expression.right), shapes) if not _is_number(side, number)]
        if not tensors or None in tensors:
            return None
        return ZERO_DIM if all(shape == ZERO_DIM for shape in tensors) else ONE_ELEMENT
    if not isinstance(expression, cst.Call):
        return None
    name = _code(expression.func)
    positional = [arg.value for arg in expression.args if arg.keyword is None]
    if name.split(".")[-1] in ("rand", "randn", "zeros", "ones", "empty") and name.startswith("torch."):
        display = len(positional) == 1 and isinstance(positional[0], (cst.Tuple, cst.List))
        sizes = [element.value for element in positional[0].elements] if display else positional
        return ONE_ELEMENT if len(sizes) == 1 and isinstance(sizes[0], cst.Integer) and sizes[0].value == "1" else None
    if name in ("torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor") and len(positional) == 1:
        data = positional[0]
        single = isinstance(data, cst.List) and len(data.elements) == 1 and not isinstance(data.elements[0].value, (cst.List, cst.Tuple))
        return ONE_ELEMENT if single else None
    if not isinstance(expression.func, cst.Attribute):
        return None
    if is_whole_reduction(expression):
        return ZERO_DIM
    receiver = _small_shape(expression.func.value, bound, number, line, depth)
    if expression.func.attr.value == "squeeze" and not expression.args:
        return ZERO_DIM if receiver is not None else None
    return receiver if expression.func.attr.value in SHAPE_KEEPING_METHODS and not expression.args else None


def _is_number(expression: cst.BaseExpression, number: NumberTest) -> bool:
    if isinstance(expression, cst.UnaryOperation):
        expression = expression.expression
    if isinstance(expression, cst.Subscript) and isinstance(expression.value, cst.Attribute):
        return expression.value.attr.value == "shape"  # `x.shape[1]`
    if isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute):
        return expression.func.attr.value in ("size", "dim", "numel", "item") and len(expression.args) == (expression.func.attr.value == "size")
    if isinstance(expression, cst.Call) and isinstance(expression.func, cst.Name):
        return expression.func.value in ("len", "int", "float")
    return isinstance(expression, (cst.Integer, cst.Float)) or (isinstance(expression, cst.Name) and number(expression.value))


def is_zero_dim_literal(call: cst.Call) -> bool:
    """`torch.tensor(0.0)`, `torch.tensor(-1)`: behaves like a Python number next to CUDA tensors."""
    if not call.args:
        return False
    first = call.args[0].value
    if isinstance(first, cst.UnaryOperation):
        first = first.expression
    return isinstance(first, (cst.Integer, cst.Float)) and cst.Module([]).code_for_node(call.func).endswith("tensor")
