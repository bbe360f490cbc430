"""DF027 distribution-attribute: a Module keeps a `torch.distributions` object built from CPU
tensors, so `.to()` leaves its tensors behind.

    Before:  self.prior = Normal(torch.zeros(z_dim), torch.ones(z_dim))
    After:   self.register_buffer("prior_loc", torch.zeros(z_dim), persistent=False)
             self.register_buffer("prior_scale", torch.ones(z_dim), persistent=False)

             @property
             def prior(self):
                 return Normal(self.prior_loc, self.prior_scale)

A distribution is not a Module: `model.to(device)` moves parameters and buffers, never the
tensors a `Normal` or `MultivariateNormal` holds, and `kl_divergence(q, self.prior)` or
`self.base_dist.log_prob(z)` then fails on a GPU (Lightning #12943, ray #14659; PyTorch's
maintainers advise building distributions lazily, pytorch #31009). The tensors become
non-persistent buffers (they follow every `.to()`, `state_dict()` keys stay the same) and the
attribute becomes a read-only property that builds the distribution from them where it is read.
Sampling draws the same numbers as before.

Applies to a single `self.x = <distribution>(...)` in `__init__` (after `super().__init__()`) of a
class known to be an `nn.Module`, read by another method, when each argument is a tensor
expression made there without a device, or a literal number, and at least one is a tensor.

Refuses: a distribution whose draws only choose among the module's own methods' arguments
(kornia's `TrivialAugment`: `idx = self.rand_selector.sample((1,))`, then
`self.get_children_by_indices(idx)` picks a child on the host; on a GPU the draws would come from
the CUDA generator, other choices for the same seed), attributes assigned anywhere else in the file (a property cannot be assigned), arguments
placed with a device (`torch.zeros(n, device=device)`) or moved, arguments devfix cannot prove to be
tensors or constants beside a CPU tensor (`Normal(torch.zeros(d), sigma)`, `sigma` a parameter of
`__init__`: reported, no fix), distributions that wrap another (`Independent(Normal(...), 1)`: not
followed), and buffer names already used in the file.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.module_classes import class_facts, stored_once_in_init
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.tensors import is_tensor_expression
from devfix.analysis.torch_api import DISTRIBUTION_PARAMETERS
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import add_method_after_init, register_buffer
from devfix.findings import Safety

DISTRIBUTIONS = "torch.distributions."
PLACING = ("device=", ".to(", ".cuda(", ".cpu(")


class DistributionAttribute(ScopeTracker, DevfixRule):
    CODE = "DF027"
    NAME = "distribution-attribute"
    SAFETY = Safety.SAFE
    DESCRIPTION = "torch.distributions object kept as a Module attribute: .to(device) does not move its tensors"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._plans: dict[cst.Assign, _Plan] = {}  # statement → its buffers and property
        self._applied: list[_Plan] = []  # plans whose fix was applied: their classes get the property
        self._stores = _AttributeStores()
        node.visit(self._stores)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not self.is_module_classdef(node):
            return
        facts = class_facts(node, self.line_of)
        init = facts.methods.get("__init__")
        if init is None or facts.super_init_line is None:
            return
        for name, statement in stored_once_in_init(facts, self.line_of):
            value = statement.value
            if not isinstance(value, cst.Call):
                continue
            parameters = self._parameters_of(value)
            if parameters is None or self._stores.count.get(name, 0) != 1 or name in facts.methods:
                continue
            if _draws_only_choices(name, facts):
                continue  # kornia's TrivialAugment: it picks children on the host, from the CPU generator
            plan = self._plan(name, value, parameters, self.scope_tensors(init.body), node)
            if plan is not None:
                self._plans[statement] = plan

    def _parameters_of(self, call: cst.Call) -> tuple[str, ...] | None:
        """The parameter names of the torch distribution `call` builds, or None."""
        for qualified in self.qualified(call.func):
            if qualified.startswith(DISTRIBUTIONS) and qualified.rsplit(".", 1)[-1] in DISTRIBUTION_PARAMETERS:
                return DISTRIBUTION_PARAMETERS[qualified.rsplit(".", 1)[-1]]
        return None

    def _plan(self, name: str, call: cst.Call, parameters: tuple[str, ...], tensors: set[str], class_node: cst.ClassDef) -> _Plan | None:
        """What the fix writes, when an unplaced CPU tensor is among the arguments; a plan
        without buffers (`fixable` False) when that tensor sits beside an argument devfix cannot
        keep (it is then reported only)."""
        buffers: list[tuple[str, cst.BaseExpression]] = []
        arguments: list[tuple[str | None, str | None, cst.Arg]] = []  # (keyword, buffer, arg)
        fixable = True
        for index, arg in enumerate(call.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            parameter = keyword if keyword is not None else (parameters[index] if index < len(parameters) and not arg.star else None)
            code = cst.Module([]).code_for_node(arg.value).replace(" ", "")
            if parameter is not None and parameter != "validate_args" and is_tensor_expression(arg.value, tensors, self.qualified):
                if any(placing in code for placing in PLACING):
                    return None  # placed on purpose (or moved): the distribution lives where it was put
                buffer = f"{name}_{parameter}"
                buffers.append((buffer, arg.value))
                arguments.append((keyword, buffer, arg))
            elif parameter is not None and _is_literal(arg.value):
                arguments.append((keyword, None, arg))
            else:
                fixable = False
        if not buffers:
            return None
        if any(self._stores.names_used(buffer) for buffer, _ in buffers):
            fixable = False
        return _Plan(name, class_node, call, buffers, arguments, fixable)

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel:
        if len(original_node.body) != 1 or original_node.body[0] not in self._plans:
            return updated_node
        plan = self._plans[original_node.body[0]]
        message = f"`self.{plan.name}` is a torch.distributions object built from CPU tensors: `.to(device)` does not move them"
        if not plan.fixable:
            self.report(original_node.body[0], message + "; devfix cannot rebuild it from buffers here", fixable=False)
            return updated_node
        if not self.report(original_node.body[0], message, fix_title=f"keep its tensors as buffers and build `{plan.name}` in a property"):
            return updated_node
        self._applied.append(plan)
        lines = []
        for index, (buffer, value) in enumerate(plan.buffers):
            line = cst.SimpleStatementLine([cst.Expr(register_buffer(buffer, value))])
            lines.append(line.with_changes(leading_lines=updated_node.leading_lines) if index == 0 else line)
        return cst.FlattenSentinel(lines)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        for plan in reversed([plan for plan in self._applied if plan.class_node is original_node]):
            updated_node = add_method_after_init(updated_node, plan.property_code())
        return updated_node


class _Plan:
    """One attribute's fix: the buffers it registers and the property that rebuilds it."""

    def __init__(self, name: str, class_node: cst.ClassDef, call: cst.Call, buffers, arguments, fixable: bool) -> None:
        self.name, self.class_node, self.call = name, class_node, call
        self.buffers, self.arguments, self.fixable = buffers, arguments, fixable

    def property_code(self) -> str:
        """`@property def prior(self): return Normal(self.prior_loc, self.prior_scale)`: the
        constructor as written, each tensor argument read from its buffer, the rest as it was."""
        module = cst.Module([])
        parts = []
        for keyword, buffer, arg in self.arguments:
            value = f"self.{buffer}" if buffer is not None else module.code_for_node(arg.value)
            parts.append(f"{keyword}={value}" if keyword is not None else value)
        callee = module.code_for_node(self.call.func)
        return f"@property\ndef {self.name}(self):\n    return {callee}({', '.join(parts)})\n"


class _AttributeStores(cst.CSTVisitor):
    """How often the file stores each attribute name (`x.prior = ...`, `del x.prior`), and every
    name and attribute name it uses (a buffer's name must be new)."""

    def __init__(self) -> None:
        self.count: dict[str, int] = {}
        self.used: set[str] = set()

    def names_used(self, name: str) -> bool:
        return name in self.used

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        for target in _targets(node.target):
            self.count[target] = self.count.get(target, 0) + 1

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for target in _targets(node.target):
            self.count[target] = self.count.get(target, 0) + 2  # never "stored once"

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        for target in _targets(node.target):
            self.count[target] = self.count.get(target, 0) + 1

    def visit_Del(self, node: cst.Del) -> None:
        for target in _targets(node.target):
            self.count[target] = self.count.get(target, 0) + 2

    def visit_Name(self, node: cst.Name) -> None:
        self.used.add(node.value)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if isinstance(value, str) and value.isidentifier():
            self.used.add(value)  # `getattr(self, "prior_loc")`, `register_buffer("prior_loc", ...)`


def _draws_only_choices(name: str, facts) -> bool:
    """Every read of `self.<name>` outside `__init__` is a `.sample(...)` whose draw goes only to
    methods of the class (`self.get_children_by_indices(idx)`, not a layer it holds) or is returned:
    nothing there meets a tensor on a device."""
    draws = 0
    for method_name, method in facts.methods.items():
        if method_name != "__init__":
            # a method's names are its own; layers are the attributes it assigns
            reads = _DistributionReads(name, {attribute for attribute, use in facts.attributes.items() if use.assignments})
            method.body.visit(reads)
            if reads.other:
                return False
            draws += reads.draws
    return draws > 0


class _DistributionReads(cst.CSTVisitor):
    def __init__(self, name: str, attributes: set[str]) -> None:
        self.name, self.attributes = name, attributes
        self.draws, self.other = 0, False  # `other`: a read that is no such draw, or a draw used otherwise
        self.drawn: set[str] = set()  # names a draw is bound to
        self.allowed: set[int] = set()  # ids of reads and drawn names where they are allowed

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._is_draw(node.value) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.drawn.add(node.targets[0].target.value)
            self.draws += 1
            self.allowed.add(id(node.value.func.value))
            self.allowed.add(id(node.targets[0].target))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                and func.attr.value not in self.attributes:
            for arg in node.args:  # a method of the class, not a layer it holds
                if isinstance(arg.value, cst.Name) and arg.value.value in self.drawn:
                    self.allowed.add(id(arg.value))
                elif self._is_draw(arg.value):
                    self.draws += 1
                    self.allowed.add(id(arg.value.func.value))

    def visit_Return(self, node: cst.Return) -> None:
        if isinstance(node.value, cst.Name) and node.value.value in self.drawn:
            self.allowed.add(id(node.value))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == "self" and node.attr.value == self.name and id(node) not in self.allowed:
            self.other = True

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.drawn and id(node) not in self.allowed:
            self.other = True

    def _is_draw(self, value: cst.BaseExpression) -> bool:
        return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("sample", "rsample")
                and isinstance(value.func.value, cst.Attribute) and isinstance(value.func.value.value, cst.Name)
                and value.func.value.value.value == "self" and value.func.value.attr.value == self.name)


def _targets(target: cst.BaseExpression) -> list[str]:
    """The attribute names a target stores (`self.prior`, `a.b, c.d = ...`)."""
    if isinstance(target, cst.Attribute):
        return [target.attr.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _targets(element.value)]
    return []


def _is_literal(value: cst.BaseExpression) -> bool:
    """A number, True/False/None, or a negated number: kept as written in the property."""
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    return isinstance(value, (cst.Integer, cst.Float)) or (isinstance(value, cst.Name) and value.value in ("True", "False", "None"))

