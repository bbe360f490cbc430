"""DF004 constructor-device: a tensor created without `device=` meets a tensor that may be on a GPU.

    Before:  target = torch.arange(z1.size(0))
             loss = F.cross_entropy(z1 @ z2.T, target)
    After:   target = torch.arange(z1.size(0), device=z1.device)

Inside a function, a factory call (`torch.zeros/ones/empty/full/rand/randn/randint/randperm/arange/
linspace/logspace/eye/tensor/as_tensor`) whose result is combined with a tensor `x` — arithmetic,
comparison, `torch.cat`/`where`/`F.*` arguments, a method of `x`, or indexing the new tensor by `x`
— gets `device=x.device`, where `x` is a parameter or earlier local that is certainly a tensor. The
fix follows the tensor it meets, so it is right on every device.

Refuses: calls that already have `device=` or a `generator=` (a CPU generator is deliberate),
`*_like`/`new_*`/`torch.from_numpy`/legacy constructors (already correct or no `device=`), 0-dim
literals such as `torch.tensor(0.0)` in pointwise ops (allowed next to CUDA tensors), tensors
handed to `torch.nn.utils.rnn` (lengths must stay on the CPU), and values only used on the host.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.tensors import is_factory_call, tensor_names
from devfix.analysis.torch_names import keyword
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety

HOST_SIDE_PREFIXES = ("torch.nn.utils.rnn.",)
NOT_COMBINING_METHODS = frozenset({"to", "type_as", "copy_", "view_as", "expand_as", "new_tensor", "new_zeros", "new_ones", "new_full", "new_empty", "split", "tensor_split"})
SOURCE_WRAPPERS = frozenset({"torch.tril", "torch.triu", "torch.diag", "torch.cumsum", "torch.cumprod", "torch.outer", "torch.exp", "torch.log", "torch.sin", "torch.cos", "torch.sqrt", "torch.pow", "torch.meshgrid", "torch.flip"})


class ConstructorDevice(ScopeTracker, DevfixRule):
    CODE = "DF004"
    NAME = "constructor-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Tensor created on the CPU next to a tensor that may be on a device"
    TRIGGERS = ('torch.', 'from torch')

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._aligned: dict[cst.Call, str] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        finder = _Combinations(self, node)
        node.body.visit(finder)
        for call, reference in finder.aligned.items():
            self._aligned.setdefault(call, reference)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        reference = self._aligned.get(original_node)
        if reference is None:
            return updated_node
        factory = cst.Module([]).code_for_node(original_node.func)
        apply = self.report(
            original_node,
            f"`{factory}(...)` is created on the CPU but meets `{reference}`, which may be on a GPU",
            fix_title=f"create it on `{reference}.device`",
        )
        return add_keyword(updated_node, "device", f"{reference}.device") if apply else updated_node


def add_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    """`f(a, b)` → `f(a, b, name=value)`, keeping a trailing comma style if there was one."""
    new_arg = cst.Arg(
        value=cst.parse_expression(value),
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    args = list(call.args)
    if args:
        last = args[-1]
        if isinstance(last.comma, cst.Comma):
            new_arg = new_arg.with_changes(comma=last.comma)
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        else:
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, new_arg])


class _Combinations(cst.CSTVisitor):
    """Factory calls of one function that meet a known tensor, with the tensor they meet."""

    def __init__(self, rule: ConstructorDevice, function: cst.FunctionDef) -> None:
        self.rule = rule
        self.qualified = rule.qualified
        self.tensors = tensor_names(function, rule.qualified)
        self.parameters = rule.scope_parameters(function.body)
        self.first_line = _first_bindings(function, rule)
        self.fresh_names: dict[str, list[cst.Call]] = {}
        self.aligned: dict[cst.Call, str] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        sources = self._sources(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Name) and sources:
                self.fresh_names.setdefault(target.target.value, []).extend(sources)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._meet([node.left, node.right], pointwise=not isinstance(node.operator, cst.MatrixMultiply))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._meet([node.left, *(item.comparator for item in node.comparisons)], pointwise=True)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        indices = [element.slice.value for element in node.slice if isinstance(element.slice, cst.Index)]
        reference = next((self._reference(index) for index in indices if self._reference(index)), None)
        if reference is not None:
            self._align(self._fresh(node.value), reference)  # a CPU table indexed by device indices

    def visit_Call(self, node: cst.Call) -> None:
        names = self.qualified(node.func)
        if any(name.startswith(HOST_SIDE_PREFIXES) for name in names):
            return
        values = [arg.value for arg in node.args]
        values += [element.value for value in values if isinstance(value, (cst.List, cst.Tuple)) for element in value.elements]
        if any(name.startswith("torch.") for name in names) and not is_factory_call(node, self.qualified):
            pointwise = any(name.rsplit(".", 1)[1] in ("where", "add", "mul", "sub", "div", "maximum", "minimum", "clamp") for name in names)
            self._meet(values, pointwise=pointwise)
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value not in NOT_COMBINING_METHODS:
            reference = self._reference(node.func.value)
            if reference is not None:
                for value in values:
                    self._align(self._fresh(value, pointwise=True), reference)

    def _meet(self, operands: list[cst.BaseExpression], pointwise: bool) -> None:
        references = [reference for operand in operands if (reference := self._reference(operand))]
        if not references:
            return
        for operand in operands:
            self._align(self._fresh(operand, pointwise), references[0])

    def _align(self, calls: list[cst.Call], reference: str) -> None:
        for call in calls:
            if self._defined_before(reference, call):
                self.aligned.setdefault(call, reference)

    def _reference(self, expression: cst.BaseExpression) -> str | None:
        """A known tensor name inside `expression` (`x0` in `alpha_bar.sqrt() * x0`, `ids[:, 1:]`)."""
        if isinstance(expression, cst.Name):
            known = expression.value in self.tensors and expression.value not in self.fresh_names
            return expression.value if known else None
        if isinstance(expression, cst.BinaryOperation):
            return self._reference(expression.left) or self._reference(expression.right)
        if isinstance(expression, cst.Subscript):
            return self._reference(expression.value)
        if isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute) and not self.qualified(expression.func):
            return self._reference(expression.func.value)
        return None

    def _fresh(self, expression: cst.BaseExpression, pointwise: bool = False) -> list[cst.Call]:
        if isinstance(expression, cst.Name):
            return list(self.fresh_names.get(expression.value, []))
        sources = self._sources(expression)
        if pointwise:
            sources = [call for call in sources if not _is_zero_dim_literal(call)]
        return sources

    def _sources(self, expression: cst.BaseExpression) -> list[cst.Call]:
        """The factory calls that an expression's value is built from."""
        if isinstance(expression, cst.Name):
            return list(self.fresh_names.get(expression.value, []))
        if is_factory_call(expression, self.qualified):
            call = expression
            has_device = keyword(call, "device") is not None or keyword(call, "generator") is not None
            return [] if has_device else [call]
        if isinstance(expression, cst.Call):
            names = self.qualified(expression.func)
            if names & SOURCE_WRAPPERS:
                return [call for arg in expression.args for call in self._sources(arg.value)]
            if any(name.startswith("torch.") for name in names):
                return []
            if isinstance(expression.func, cst.Attribute) and expression.func.attr.value not in ("to", "cuda", "cpu", "tolist", "item", "numpy"):
                return self._sources(expression.func.value)  # a tensor method: `.bool()`, `.unsqueeze(0)`
            return []
        if isinstance(expression, cst.BinaryOperation):
            return self._sources(expression.left) + self._sources(expression.right)
        if isinstance(expression, (cst.List, cst.Tuple)):
            return [call for element in expression.elements for call in self._sources(element.value)]
        if isinstance(expression, cst.Subscript):
            return self._sources(expression.value)
        return []

    def _defined_before(self, reference: str, call: cst.Call) -> bool:
        if reference in self.parameters:
            return True
        line = self.first_line.get(reference)
        return line is not None and line < self.rule.line_of(call)


def _first_bindings(function: cst.FunctionDef, rule: ConstructorDevice) -> dict[str, int]:
    facts = rule.scope_facts(function.body)
    return {name: min(binding.line for binding in bindings) for name, bindings in facts.bindings.items()}


def _is_zero_dim_literal(call: cst.Call) -> bool:
    """`torch.tensor(0.0)`, `torch.tensor(-1)`: behaves like a Python number next to CUDA tensors."""
    if not call.args:
        return False
    first = call.args[0].value
    if isinstance(first, cst.UnaryOperation):
        first = first.expression
    return isinstance(first, (cst.Integer, cst.Float)) and cst.Module([]).code_for_node(call.func).endswith("tensor")
