"""Calls of a class's methods from its other methods (`self.get_target(x, real)`): what they are
given, and where their results go.

A GAN loss builds its target in a helper, `get_target_tensor(self, input, real)`, which `forward`
calls with the tensor it feeds to `self.loss`, and whose result it feeds there too. Inside the
helper nothing says that `input` is a tensor, nor that the result meets a layer; its callers do.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devfix.analysis.call_sites import argument_for
from devfix.analysis.cst_bindings import bound_names
from devfix.analysis.module_classes import is_self_attribute, names_fed_to_submodules
from devfix.analysis.placement import as_move
from devfix.analysis.tensors import subscript_root
from devfix.analysis.torch_api import LEAVING_PLACEMENT_METHODS, METADATA_ATTRIBUTES
from devfix.analysis.torch_names import QualifiedNames

SelfCalls = dict[str, list[tuple[cst.FunctionDef, cst.Call]]]


def self_calls(methods: dict[str, cst.FunctionDef]) -> SelfCalls:
    """Method name → (calling method, call) for every `self.<name>(...)` in the class's methods."""
    calls: SelfCalls = {}
    for caller in methods.values():
        finder = _SelfCalls(set(methods))
        caller.body.visit(finder)
        for name, call in finder.calls:
            calls.setdefault(name, []).append((caller, call))
    return calls


def parameters_given_tensors(
    methods: dict[str, cst.FunctionDef], tensors_in: Callable[[cst.FunctionDef], set[str]], calls: SelfCalls | None = None,
    proven_tensor: Callable[[cst.Name], bool] = lambda name: False,
) -> dict[str, set[str]]:
    """Method name → its parameters that every call of it in the class (one at least) is given a
    name holding a tensor for, as `tensors_in(caller)` tells (it may also hold the code of
    indexings known to be tensors, `input[-1]`) or the value analysis proves where the call reads
    it (`proven_tensor`: `self._mask(ilen)` for `ilen` an element of a tensor `forward` is given)."""
    given: dict[str, set[str]] = {}
    cache: dict[int, set[str]] = {}

    def holds_tensor(caller: cst.FunctionDef, value: cst.BaseExpression | None) -> bool:
        if id(caller) not in cache:
            cache[id(caller)] = tensors_in(caller)
        if isinstance(value, cst.Subscript):
            return cst.Module([]).code_for_node(value) in cache[id(caller)]  # `input[-1]`, fed to a submodule there too
        return isinstance(value, cst.Name) and (value.value in cache[id(caller)] or proven_tensor(value))

    for name, sites in (calls if calls is not None else self_calls(methods)).items():
        method = methods[name]
        everything = [param.name.value for param in [*method.params.posonly_params, *method.params.params]]
        positional = everything if _is_staticmethod(method) else everything[1:]  # a static method has no `self`
        keyword_only = [param.name.value for param in method.params.kwonly_params]
        for parameter in [*positional, *keyword_only]:
            if all(holds_tensor(caller, argument_for(call, parameter, positional)) for caller, call in sites):
                given.setdefault(name, set()).add(parameter)
    return given


def _is_staticmethod(method: cst.FunctionDef) -> bool:
    return any(isinstance(decorator.decorator, cst.Name) and decorator.decorator.value == "staticmethod" for decorator in method.decorators)


def results_fed_to_submodules(
    methods: dict[str, cst.FunctionDef], submodules: set[str], calls: SelfCalls | None = None, qualified: QualifiedNames | None = None,
) -> set[str]:
    """Methods whose result some caller passes to a submodule: `self.loss(x, self.target(x))`, or
    through a name bound only to its results (`target = self.target(x)`; `self.loss(x, target)`,
    or with `qualified` joined into its input: `self.lin(torch.cat([x, target], 1))`)."""
    fed: set[str] = set()
    uses: dict[int, tuple[_ResultUses, set[str]]] = {}  # each caller walked once
    for name, sites in (calls if calls is not None else self_calls(methods)).items():
        for caller, call in sites:
            if id(caller) not in uses:
                finder = _ResultUses(submodules)
                caller.body.visit(finder)
                uses[id(caller)] = finder, names_fed_to_submodules(caller, submodules, qualified)
            finder, fed_names = uses[id(caller)]
            bound = finder.bound_to.get(id(call))
            bound_and_fed = bound is not None and finder.bindings.get(bound) == finder.results.get((bound, name)) and bound in fed_names
            if id(call) in finder.passed or bound_and_fed:
                fed.add(name)
    return fed


def results_joining_inputs(
    class_node: cst.ClassDef, method: str, inputs_of: Callable[[cst.FunctionDef], set[str]], qualified: QualifiedNames,
) -> dict[cst.Call, str] | None:
    """Each `self.<method>(...)` call of the class, with the input it is put together with in an
    operation: `x + self.positional_encoding(x.size(1))` in a method whose parameter `x` holds a
    tensor (`inputs_of(caller)`: its parameters proven tensors), or through a local bound once to
    the call whose every read is such an operand (`freqs = self.frequencies()`, then
    `t[:, None].float() * freqs[None]`). None unless the class uses
    `self.<method>` only so, or where its result needs nothing (moved where it is made,
    `self.method(n).to(x.device)`, or read on the host, `self.method(n).numel()`: not in the
    answer), at least once, in its own methods: a result that goes anywhere else has no input to
    follow. A lazy cache counts too: `self.pe = self._build(x.size(1))` in the method that then
    reads `x + self.pe[:, :n]`, where the class binds `self.pe` to nothing else but None and reads
    it nowhere else but in None tests and its size (`_attribute_input`)."""
    found: dict[cst.Call, str] = {}
    uses = settled = 0
    for caller in class_node.body.body:
        if not isinstance(caller, cst.FunctionDef):
            continue
        finder = _JoinedResults(method, qualified)
        caller.body.visit(finder)
        uses, settled = uses + finder.uses, settled + finder.settled
        joined = finder.joined + finder.joined_locals() + [
            (call, name) for attribute, call in finder.attribute_calls.items()
            if (name := _attribute_input(class_node, caller, attribute, call)) is not None
        ]
        inputs = inputs_of(caller) if joined and caller.name.value != method else set()
        found.update((call, name) for call, name in joined if name in inputs)
    return found if uses and len(found) + settled == uses else None


class _JoinedResults(cst.CSTVisitor):
    """`self.<method>` references of one method, and the calls of it that are an operand of an
    operation whose other operand is a plain name."""

    def __init__(self, method: str, qualified: QualifiedNames) -> None:
        self.method, self.qualified = method, qualified
        self.uses = 0  # in nested functions too
        self.settled = 0  # calls whose result is moved where it is made, or read on the host
        self.joined: list[tuple[cst.Call, str]] = []  # not in nested functions: their names are their own
        self.nesting = 0
        self.bound: dict[str, list[cst.Call]] = {}  # local → the calls `local = self.<method>(...)` binds it to
        self.bindings: dict[str, int] = {}  # local → how many statements bind it (2 for a loop or `+=`: never once)
        self.stores: dict[str, int] = {}  # name → how many of its mentions are assignment or loop targets
        self.mentions: dict[str, int] = {}  # name → how many times the body mentions it
        self.local_joins: dict[str, list[str | None]] = {}  # local → the root of what each operation puts it with
        self.attribute_calls: dict[str, cst.Call] = {}  # `self.pe = self.<method>(...)`: attribute → the call

    def joined_locals(self) -> list[tuple[cst.Call, str]]:
        """`(call, input)` for each local bound once to a call of the method whose every read is an
        operand beside the same plain name's value (`t[:, None].float() * freqs[None]`)."""
        found = []
        for local, calls in self.bound.items():
            roots = self.local_joins.get(local, [])
            reads = self.mentions.get(local, 0) - self.stores.get(local, 0)
            if self.bindings.get(local) == 1 and len(calls) == 1 and roots and reads == len(roots) \
                    and None not in roots and len(set(roots)) == 1:
                found.append((calls[0], roots[0]))
        return found

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._store(bound_names(target.target), 1)
        target = node.targets[0].target if len(node.targets) == 1 else None
        if not self.nesting and isinstance(target, cst.Name) and self._is_a_call(node.value):
            self.bound.setdefault(target.value, []).append(node.value)
        elif not self.nesting and target is not None and is_self_attribute(target) and self._is_a_call(node.value):
            self.attribute_calls[target.attr.value] = node.value

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for name in bound_names(node.target):  # `x += ...` reads `x` too: its mention stays a read
            self.bindings[name] = self.bindings.get(name, 0) + 2

    def visit_For(self, node: cst.For) -> None:
        self._store(bound_names(node.target), 2)

    def _store(self, names: set[str], weight: int) -> None:
        for name in names:
            self.bindings[name] = self.bindings.get(name, 0) + weight
            self.stores[name] = self.stores.get(name, 0) + 1

    def visit_Name(self, node: cst.Name) -> None:
        self.mentions[node.value] = self.mentions.get(node.value, 0) + 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.nesting += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.nesting -= 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if is_self_attribute(node) and node.attr.value == self.method:
            self.uses += 1
        elif node.attr.value in LEAVING_PLACEMENT_METHODS | METADATA_ATTRIBUTES and self._is_a_call(node.value):
            self.settled += 1  # `self.method(n).numel()`, `.shape`

    def visit_Call(self, node: cst.Call) -> None:
        move = as_move(node, self.qualified)
        if move is not None and self._is_a_call(move.receiver):
            self.settled += 1

    def _is_a_call(self, node: cst.BaseExpression) -> bool:
        return _is_self_call(node) and node.func.attr.value == self.method

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if not self.nesting and self._is_a_call(side) and isinstance(other, cst.Name):
                self.joined.append((side, other.value))
            local = _subscripted_name(side)
            if not self.nesting and local is not None:
                root = _value_root(other)
                self.local_joins.setdefault(local, []).append(root.value if root is not None else None)


def _attribute_input(class_node: cst.ClassDef, caller: cst.FunctionDef, attribute: str, call: cst.Call) -> str | None:
    """The one plain name `self.<attribute>` is put together with in operations, when the class
    binds the attribute to nothing but None and `call` (in `caller`), and reads it nowhere but
    in `caller`: as such an operand (through items, `self.pe[:, :n]`), in None tests, or for its
    size (`self.pe.size(1) < x.size(1)`)."""
    reads = _AttributeReads(attribute)
    class_node.body.visit(reads)
    if reads.bound != [call] or reads.other_bindings or reads.unaccounted or reads.read_in != {caller}:
        return None
    roots = set(reads.joined)
    return next(iter(roots)) if len(roots) == 1 and None not in roots and reads.joined else None


class _AttributeReads(cst.CSTVisitor):
    """Bindings and reads of `self.<attribute>` across a class, by method."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute
        self.bound: list[cst.Call] = []  # calls bound to it
        self.other_bindings = 0  # values bound to it but None and calls
        self.read_in: set[cst.FunctionDef] = set()  # the methods that read the attribute
        self.unaccounted = 0  # reads in methods that are neither joins, None tests nor sizes
        self.joined: list[str | None] = []  # the root of what each operation puts it with
        self._method: cst.FunctionDef | None = None
        self._accounted: set[int] = set()  # ids of reads already judged
        self._targets: set[int] = set()  # ids of the attribute nodes that are assignment targets

    def _is_it(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Attribute) and is_self_attribute(node) and node.attr.value == self.attribute

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._method is None:
            self._method = node

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        if original_node is self._method:
            self._method = None

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if self._is_it(target.target):
                self._targets.add(id(target.target))
                if isinstance(node.value, cst.Call):
                    self.bound.append(node.value)
                elif not (isinstance(node.value, cst.Name) and node.value.value == "None"):
                    self.other_bindings += 1
            elif any(self._is_it(element) for element in _target_elements(target.target)):
                self.other_bindings += 1  # `self.pe, n = ...`

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self._is_it(node.target):
            self.other_bindings += 1

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        for side, other in ((node.left, node.right), (node.right, node.left)):
            read = subscript_root(side)
            if self._is_it(read):
                self._accounted.add(id(read))
                root = _value_root(other)
                self.joined.append(root.value if root is not None else None)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)) \
                and isinstance(node.comparisons[0].comparator, cst.Name) and node.comparisons[0].comparator.value == "None" \
                and self._is_it(node.left):
            self._accounted.add(id(node.left))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self._is_it(node.value) and node.attr.value in METADATA_ATTRIBUTES | {"size", "dim", "numel"}:
            self._accounted.add(id(node.value))
        if self._is_it(node) and id(node) not in self._targets and self._method is not None:
            self.read_in.add(self._method)

    def leave_Attribute(self, original_node: cst.Attribute) -> None:
        if self._is_it(original_node) and id(original_node) not in self._targets and id(original_node) not in self._accounted \
                and self._method is not None:
            self.unaccounted += 1


def _target_elements(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [element.value for element in target.elements]
    return []


def _subscripted_name(node: cst.BaseExpression) -> str | None:
    """`freqs` of `freqs` or `freqs[None]`."""
    node = subscript_root(node)
    return node.value if isinstance(node, cst.Name) else None


def _value_root(node: cst.BaseExpression) -> cst.Name | None:
    """`t` of `t[:, None].float()`: the name under items and tensor methods."""
    while True:
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            return node if isinstance(node, cst.Name) else None


class _SelfCalls(cst.CSTVisitor):
    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.calls: list[tuple[str, cst.Call]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function's `self` is the same, but its calls run when it is called

    def visit_Call(self, node: cst.Call) -> None:
        if is_self_attribute(node.func) and node.func.attr.value in self.names:
            self.calls.append((node.func.attr.value, node))


class _ResultUses(cst.CSTVisitor):
    """Where the results of a caller's `self.<method>(...)` calls go."""

    def __init__(self, submodules: set[str]) -> None:
        self.submodules = submodules
        self.passed: set[int] = set()  # calls passed straight to a submodule
        self.bound_to: dict[int, str] = {}  # call → the name it is assigned to
        self.bindings: dict[str, int] = {}  # name → how many times the caller binds it
        self.results: dict[tuple[str, str], int] = {}  # (name, method) → ... to a result of that method

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for name in bound_names(target.target):
                self.bindings[name] = self.bindings.get(name, 0) + 1
        value = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and _is_self_call(value):
            name = node.targets[0].target.value
            key = (name, value.func.attr.value)
            self.results[key] = self.results.get(key, 0) + 1
            self.bound_to[id(value)] = name

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for name in bound_names(node.target):
            self.bindings[name] = self.bindings.get(name, 0) + 1

    def visit_For(self, node: cst.For) -> None:
        for name in bound_names(node.target):
            self.bindings[name] = self.bindings.get(name, 0) + 1

    def visit_Call(self, node: cst.Call) -> None:
        if is_self_attribute(node.func) and node.func.attr.value in self.submodules:
            self.passed.update(id(arg.value) for arg in node.args if _is_self_call(arg.value))


def _is_self_call(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and is_self_attribute(value.func)
