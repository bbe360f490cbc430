"""Facts about one `nn.Module` class body: its methods and what they assign to `self`.

Module-state rules (buffers, containers, tensors in forward) all ask the same questions: is this
class a Module, which attributes does `__init__` assign and from what, and which other methods
read or reassign them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from devfix.analysis.call_sites import argument_for
from devfix.analysis.cst_bindings import target_leaves
from devfix.analysis.project import ProjectIndex
from devfix.analysis.torch_api import JOINS, TENSOR_OUTPUT_LAYERS
from devfix.analysis.torch_names import QualifiedNames, holds_state


@dataclass
class AttributeUse:
    assignments: list[tuple[str, cst.Assign]] = field(default_factory=list)  # (method, statement)
    read_in: set[str] = field(default_factory=set)
    appended: list[cst.Call] = field(default_factory=list)  # self.x.append(value) calls
    other_uses: set[str] = field(default_factory=set)  # attribute/method names used on self.x
    # `self.G, self.D = G.to(device), D.to(device)`: (method, statement, the item assigned to self.x);
    # not among `assignments`, whose readers read `statement.value`
    unpacked: list[tuple[str, cst.Assign, cst.BaseExpression]] = field(default_factory=list)


@dataclass
class ClassFacts:
    methods: dict[str, cst.FunctionDef]
    attributes: dict[str, AttributeUse]
    super_init_line: int | None


def is_module_class(node: cst.ClassDef, filename: str, project: ProjectIndex, qualified: QualifiedNames) -> bool:
    for base in node.bases:
        names = qualified(base.value) or {cst.Module([]).code_for_node(base.value)}
        if any(project.is_module_class(filename, name) is True for name in names):
            return True
    return False


def class_facts(node: cst.ClassDef, line_of) -> ClassFacts:
    methods = {
        statement.name.value: statement
        for statement in (node.body.body if isinstance(node.body, cst.IndentedBlock) else [])
        if isinstance(statement, cst.FunctionDef)
    }
    attributes: dict[str, AttributeUse] = {}
    super_init_line = None
    for name, method in methods.items():
        visitor = _SelfUses(name, attributes, line_of)
        method.body.visit(visitor)
        if name == "__init__":
            super_init_line = visitor.super_init_line
    return ClassFacts(methods, attributes, super_init_line)


def stored_once_in_init(facts: ClassFacts, line_of) -> list[tuple[str, cst.Assign]]:
    """(attribute, statement) for what a Module's `__init__` assigns by one single-target statement
    after `super().__init__()`, assigns nowhere else (nor updates in place, nor registers as a buffer or
    parameter: assigning a registered name updates that state), and another method reads: the state
    `.to()` must move for those methods (DF014's tensors, DF027's distributions)."""
    if facts.super_init_line is None:
        return []
    found = []
    for name, use in facts.attributes.items():
        if len(use.assignments) != 1 or use.assignments[0][0] != "__init__" or use.other_uses & {"augmented assignment", "registered"}:
            continue
        statement = use.assignments[0][1]
        if use.read_in - {"__init__"} and len(statement.targets) == 1 and line_of(statement) > facts.super_init_line:
            found.append((name, statement))
    return found


def stored_in_either_branch(facts: ClassFacts, line_of, parent_of) -> list[tuple[str, cst.Assign, frozenset[str]]]:
    """(attribute, statement, falsy names) for what a Module's `__init__` assigns by two
    single-target statements after `super().__init__()`, the only statement of each branch of one
    `if`/`else` to assign it (AGNN's `if requires_grad: self.beta = Parameter(...)` / `else:
    self.beta = Variable(torch.zeros(1), requires_grad=requires_grad)`), nowhere else, and another
    method reads: each store is what the attribute holds when its branch runs. `falsy`: the name the
    `if` tests, where the statement is in the branch that runs when it is false (`requires_grad`
    in the `else` of `if requires_grad:`, or in the body of `if not requires_grad:`)."""
    if facts.super_init_line is None:
        return []
    found = []
    for name, use in facts.attributes.items():
        if len(use.assignments) != 2 or any(method != "__init__" for method, _ in use.assignments) \
                or use.other_uses & {"augmented assignment", "registered"} or not use.read_in - {"__init__"}:
            continue
        statements = [statement for _, statement in use.assignments]
        if any(len(statement.targets) != 1 or line_of(statement) <= facts.super_init_line for statement in statements):
            continue
        branches = [_branch_of(statement, parent_of) for statement in statements]
        if None in branches or branches[0][0] is not branches[1][0] or branches[0][1] == branches[1][1]:
            continue
        for statement, (if_node, in_else) in zip(statements, branches):
            test = if_node.test
            negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
            tested = test.expression if negated else test
            falsy = frozenset({tested.value}) if isinstance(tested, cst.Name) and in_else != negated else frozenset()
            found.append((name, statement, falsy))
    return found


def _branch_of(statement: cst.Assign, parent_of) -> tuple[cst.If, bool] | None:
    """The `if` (with a plain `else`) whose body or `else` holds the statement directly, and
    whether it is the `else`."""
    line = parent_of(statement)
    block = parent_of(line) if isinstance(line, cst.SimpleStatementLine) else None
    owner = parent_of(block) if isinstance(block, cst.IndentedBlock) else None
    if isinstance(owner, cst.Else):
        if_node = parent_of(owner)
        return (if_node, True) if isinstance(if_node, cst.If) else None
    if isinstance(owner, cst.If) and isinstance(owner.orelse, cst.Else) and owner.body is block:
        return owner, False
    return None


PARAMETERIZED_LAYERS = frozenset({
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "MultiheadAttention", "Transformer", "TransformerEncoder",
    "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer", "PReLU", "Parameter",
})


def builds_torch_layer(value: cst.BaseExpression | None, qualified: QualifiedNames, layers: frozenset[str]) -> bool:
    """`nn.Linear(...)`, however torch.nn is imported, for a layer class named in `layers`."""
    return isinstance(value, cst.Call) and any(
        name.startswith("torch.nn.") and name.rsplit(".", 1)[-1] in layers for name in qualified(value.func)
    )


def tensor_layer_attributes(class_def: cst.ClassDef, qualified: QualifiedNames) -> frozenset[str]:
    """`self.<name>` attributes that the class's `__init__` assigns a torch.nn layer of
    TENSOR_OUTPUT_LAYERS, once: `self.<name>(x)` is a tensor on the module's device."""
    body = class_def.body.body if isinstance(class_def.body, cst.IndentedBlock) else []
    init = next((item for item in body if isinstance(item, cst.FunctionDef) and item.name.value == "__init__"), None)
    if init is None:
        return frozenset()
    facts = class_facts(class_def, lambda node: 0)
    found = set()
    for name, use in facts.attributes.items():
        if len(use.assignments) != 1 or use.assignments[0][0] != "__init__":
            continue
        if builds_torch_layer(use.assignments[0][1].value, qualified, TENSOR_OUTPUT_LAYERS):
            found.add(name)
    return frozenset(found)


def holds_parameters(facts: ClassFacts, qualified: QualifiedNames) -> bool:
    """`__init__` builds a torch.nn layer that has parameters (`nn.Linear`, `nn.LSTM`, ...) or an
    `nn.Parameter`, alone or among the layers it gives `nn.Sequential`/`nn.ModuleList` (hgraph2graph's
    `nn.Sequential(nn.Embedding(...), nn.Dropout(dropout))`): the module is meant to move as a
    whole, and `next(self.parameters())` exists and follows `.to()`."""
    return any(
        method_name == "__init__" and _builds_parameterized_layer(statement.value, qualified)
        for use in facts.attributes.values()
        for method_name, statement in use.assignments
    )


def _builds_parameterized_layer(value: cst.BaseExpression | None, qualified: QualifiedNames) -> bool:
    if builds_torch_layer(value, qualified, PARAMETERIZED_LAYERS):
        return True
    if not builds_torch_layer(value, qualified, frozenset({"Sequential", "ModuleList"})):
        return False
    items = []
    for arg in value.args:
        if isinstance(arg.value, (cst.List, cst.Tuple)) and not arg.star:
            items += [element.value for element in arg.value.elements if isinstance(element, cst.Element)]
        elif not arg.star and arg.keyword is None:
            items.append(arg.value)
    return any(_builds_parameterized_layer(item, qualified) for item in items)


def module_input(method: cst.FunctionDef, facts: ClassFacts, builds_module: Callable[[cst.Call], bool]) -> str | None:
    """The first parameter `method` hands straight to one of the class's submodules (attributes
    that every assignment, all in `__init__`, builds as a Module): a tensor input, whose device the
    module runs on."""
    submodules = {
        name for name, use in facts.attributes.items()
        if use.assignments and all(
            method_name == "__init__" and isinstance(statement.value, cst.Call) and builds_module(statement.value)
            for method_name, statement in use.assignments
        )
    }
    fed = names_fed_to_submodules(method, submodules)
    return next((param.name.value for param in method.params.params[1:] if param.name.value in fed), None)


def is_self_attribute(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def parameters_device_owner(value: cst.BaseExpression | None) -> str | None:
    """`m` of `next(m.parameters()).device` (or `next(iter(m.parameters())).device`): the name whose
    parameters' device the expression reads."""
    if not (isinstance(value, cst.Attribute) and value.attr.value == "device"):
        return None
    owner = first_parameter_owner(value.value)
    return owner.value if isinstance(owner, cst.Name) else None


def first_parameter_owner(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """`m` (a name, `self.lstm`, ...) of `next(m.parameters())` or `next(iter(m.parameters()))`."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "next" and len(value.args) == 1):
        return None
    inner = value.args[0].value
    if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "iter" and len(inner.args) == 1:
        inner = inner.args[0].value
    if isinstance(inner, cst.Call) and not inner.args and isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "parameters":
        return inner.func.value
    return None


def self_attribute_nodes(node: cst.CSTNode, name: str) -> list[cst.Attribute]:
    """The `self.<name>` nodes under `node` (a method, or a class's body), reads and stores alike."""
    found: list[cst.Attribute] = []

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            if is_self_attribute(attribute) and attribute.attr.value == name:
                found.append(attribute)

    node.visit(Finder())
    return found


def stores_of_self_attribute(class_def: cst.ClassDef, name: str) -> int:
    """How many statements of the class's methods store `self.<name>` (plain, tuple, annotated and
    augmented assignments, `setattr(self, "<name>", ...)`)."""
    finder = _SelfAttributeStores(name)
    class_def.body.visit(finder)
    return finder.count


class _SelfAttributeStores(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name, self.count = name, 0

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False  # a nested class's `self` is another object

    def _targets(self, target: cst.BaseExpression) -> None:
        self.count += sum(1 for leaf in target_leaves(target) if is_self_attribute(leaf) and leaf.attr.value == self.name)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._targets(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "setattr" and len(node.args) >= 2:
            owner, attribute = node.args[0].value, node.args[1].value
            if isinstance(owner, cst.Name) and owner.value == "self" and isinstance(attribute, cst.SimpleString):
                if attribute.evaluated_value == self.name:
                    self.count += 1


class _SelfUses(cst.CSTVisitor):
    def __init__(self, method: str, attributes: dict[str, AttributeUse], line_of) -> None:
        self.method, self.attributes, self.line_of = method, attributes, line_of
        self.super_init_line: int | None = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def _use(self, name: str) -> AttributeUse:
        return self.attributes.setdefault(name, AttributeUse())

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if is_self_attribute(target.target):
                self._use(target.target.attr.value).assignments.append((self.method, node))
            elif isinstance(target.target, (cst.Tuple, cst.List)) and isinstance(node.value, (cst.Tuple, cst.List)) \
                    and len(target.target.elements) == len(node.value.elements) \
                    and not any(isinstance(item, cst.StarredElement) for item in (*target.target.elements, *node.value.elements)):
                for element, item in zip(target.target.elements, node.value.elements):
                    if is_self_attribute(element.value):
                        self._use(element.value.attr.value).unpacked.append((self.method, node, item.value))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if is_self_attribute(node.target):
            self._use(node.target.attr.value).other_uses.add("augmented assignment")

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if is_self_attribute(node.value):  # self.x.<attr>
            self._use(node.value.attr.value).other_uses.add(node.attr.value)
        if is_self_attribute(node):
            self._use(node.attr.value).read_in.add(self.method)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "append" and is_self_attribute(func.value):
            self._use(func.value.attr.value).appended.append(node)
        if (isinstance(func, cst.Attribute) and func.attr.value in STATE_REGISTRARS and isinstance(func.value, cst.Name)
                and func.value.value == "self" and node.args and isinstance(node.args[0].value, cst.SimpleString)):
            registered = node.args[0].value.evaluated_value
            if isinstance(registered, str):
                self._use(registered).other_uses.add("registered")  # `self.register_buffer("w", w)`: state `.to()` moves
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "__init__"
            and isinstance(func.value, cst.Call)
            and isinstance(func.value.func, cst.Name)
            and func.value.func.value == "super"
            and self.super_init_line is None
        ):
            self.super_init_line = self.line_of(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        for side in (node.left, node.right):
            if is_self_attribute(side):
                self._use(side.attr.value).other_uses.add("arithmetic")


def nn_prefix(module: cst.Module) -> str | None:
    """How this file spells `torch.nn`: `nn` (`from torch import nn`, `import torch.nn as nn`) or
    `torch.nn` (`import torch`); None when neither is imported."""
    has_torch = False
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and cst.Module([]).code_for_node(small.module or cst.Name("")) == "torch":
                if not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        if cst.Module([]).code_for_node(alias.name) == "nn":
                            return alias.asname.name.value if alias.asname else "nn"
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = cst.Module([]).code_for_node(alias.name)
                    if name == "torch.nn" and alias.asname is not None:
                        return alias.asname.name.value
                    if name == "torch" and alias.asname is None:
                        has_torch = True
    return "torch.nn" if has_torch else None


def names_fed_to_submodules(method: cst.FunctionDef, submodules: set[str], qualified: QualifiedNames | None = None) -> set[str]:
    """Parameters passed straight to a submodule (`self.conv(x)`): they are its tensor inputs. With
    `qualified`, also those joined into its input (`self.lin(torch.cat([x, h], dim=1))`)."""
    names: set[str] = set()

    def joined(value: cst.BaseExpression) -> list[cst.BaseExpression]:
        if qualified is None or not isinstance(value, cst.Call) or not value.args or not qualified(value.func) & JOINS:
            return []
        parts = value.args[0].value
        return [element.value for element in parts.elements] if isinstance(parts, (cst.List, cst.Tuple)) else []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if is_self_attribute(node.func) and node.func.attr.value in submodules:
                values = [value for arg in node.args for value in (arg.value, *joined(arg.value))]
                names.update(value.value for value in values if isinstance(value, cst.Name))

    method.body.visit(Finder())
    return names


def indexings_fed_to_submodules(method: cst.FunctionDef, submodules: set[str]) -> set[str]:
    """The code of indexed names passed straight to a submodule (`self.loss(input[-1], t)`)."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if is_self_attribute(node.func) and node.func.attr.value in submodules:
                found.update(cst.Module([]).code_for_node(arg.value) for arg in node.args
                             if isinstance(arg.value, cst.Subscript) and isinstance(arg.value.value, cst.Name))

    method.body.visit(Finder())
    return found


MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


def is_literal(value: cst.BaseExpression) -> bool:
    """A number (signed or not), a string, True, False or None, or a tuple or list display of those
    (a loss's `weights=(1.0, 0.5)`: `.to()` moves no Python container)."""
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    if isinstance(value, (cst.Tuple, cst.List)):
        return all(isinstance(element, cst.Element) and is_literal(element.value) for element in value.elements)
    return isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(value, cst.Name) and value.value in ("True", "False", "None")
    )
STATE_REGISTRARS = frozenset({"register_buffer", "register_parameter", "add_module", "register_module"})


def top_level_class(module: cst.Module, name: str) -> cst.ClassDef | None:
    """The top-level class `name`, when the file defines it exactly once."""
    found = [statement for statement in module.body if isinstance(statement, cst.ClassDef) and statement.name.value == name]
    return found[0] if len(found) == 1 else None


def builds_stateless_instance(call: cst.Call, class_def: cst.ClassDef, qualified: QualifiedNames, plain=is_literal) -> bool:
    """`call` builds an instance of `class_def` that holds no tensor state: the class stores only
    literals and `__init__` parameters in `self` (`stored_parameters_of_a_stateless_module`), their
    defaults are literals, and `call` gives them values that `plain` accepts."""
    stored = stored_parameters_of_a_stateless_module(class_def, qualified)
    if stored is None:
        return False
    if not stored:
        return True
    if any(arg.star for arg in call.args):
        return False
    init = next(item for item in class_def.body.body if isinstance(item, cst.FunctionDef) and item.name.value == "__init__")
    positional = [param.name.value for param in (*init.params.posonly_params, *init.params.params)][1:]
    defaults = {param.name.value: param.default for param in (*init.params.params, *init.params.kwonly_params)}
    if any(defaults.get(parameter) is not None and not is_literal(defaults[parameter]) for parameter in stored):
        return False  # `weight=torch.ones(3)`: the default may be a tensor
    for parameter in stored:
        value = argument_for(call, parameter, positional)  # None: not given, the default stands
        if value is not None and not plain(value):
            return False
    return True


def stored_parameters_of_a_stateless_module(class_def: cst.ClassDef, qualified: QualifiedNames) -> set[str] | None:
    """For a direct `nn.Module` subclass whose methods store in `self` only literals, `__init__`
    parameters (`self.temperature = temperature`), arithmetic of those (`self.confidence = 1.0 -
    smoothing`) and torch.nn modules without state
    (`self.loss = nn.MSELoss()`), and register nothing: the names of those parameters. Given no
    Module or Parameter for them, it holds no state and `.to()` changes nothing. None when that is
    not proven."""
    if not class_def.bases or not all(qualified(base.value) & MODULE_BASES for base in class_def.bases):
        return None
    body = class_def.body.body if isinstance(class_def.body, cst.IndentedBlock) else []
    init = next((item for item in body if isinstance(item, cst.FunctionDef) and item.name.value == "__init__"), None)
    parameters = set() if init is None else {param.name.value for param in [*init.params.params, *init.params.kwonly_params]}
    stores = _SelfStores(parameters - {"self"}, qualified)
    class_def.body.visit(stores)
    return None if stores.unproven else stores.stored


class _SelfStores(cst.CSTVisitor):
    def __init__(self, parameters: set[str], qualified: QualifiedNames) -> None:
        self.parameters, self.qualified = parameters, qualified
        self.stored: set[str] = set()
        self.unproven = False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._store(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._store(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._store(node.target, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in STATE_REGISTRARS:
            self.unproven = True
        if isinstance(func, cst.Name) and func.value == "setattr":
            self.unproven = True

    def _store(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            if values is not None and len(values) == len(target.elements) and not any(
                    isinstance(element, cst.StarredElement) for element in (*target.elements, *values)):
                for element, item in zip(target.elements, values):  # `self.low, self.high = low, high`
                    self._store(element.value, item.value)
            elif any(is_self_attribute(element.value) for element in target.elements):
                self.unproven = True  # which value goes where is not followed
            return
        if not is_self_attribute(target) or value is None:
            return
        if is_literal(value) or self._stateless_torch_module(value):
            return
        names = _arithmetic_names(value)  # `self.confidence = 1.0 - smoothing`: numbers if what it is given is
        if names is not None and names <= self.parameters:
            self.stored |= names
            return
        self.unproven = True

    def _stateless_torch_module(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.IfExp):
            return self._stateless_torch_module(value.body) and self._stateless_torch_module(value.orelse)
        return isinstance(value, cst.Call) and any(name.startswith("torch.nn.") for name in self.qualified(value.func)) \
            and not holds_state(value, self.qualified)


def _arithmetic_names(value: cst.BaseExpression) -> set[str] | None:
    """The names an arithmetic expression of names and literals reads (`1.0 - smoothing` →
    {"smoothing"}); None when it reads anything else (a call, an attribute, a subscript)."""
    if is_literal(value):
        return set()
    if isinstance(value, cst.Name):
        return {value.value}
    if isinstance(value, cst.UnaryOperation):
        return _arithmetic_names(value.expression)
    if isinstance(value, cst.BinaryOperation):
        left, right = _arithmetic_names(value.left), _arithmetic_names(value.right)
        return None if left is None or right is None else left | right
    return None

