"""DF016's question on Python's `ast`: in a Module class, can a method's CPU-made tensor reach a
submodule call, meet a submodule's output, or be returned?

The screen asks it so that a class where no factory's value goes anywhere needs no libcst tree.
It over-approximates `codemods.df016_method_tensor_device` (tested in `tests/analysis/test_screen.py`):
the order of statements is ignored, every `self.<attr> = <call>` of `__init__` may be a submodule,
and every returned factory counts (the rule returns only from methods without tensor inputs), with the
methods of its named values where the class calls the method (the rule: where a caller feeds the result
to a submodule).
"""

from __future__ import annotations

import ast

from devfix.analysis.ast_nodes import FUNCTIONS, dotted_head, is_self_attribute, scope_nodes
from devfix.analysis.imports import ImportTable
from devfix.analysis.torch_api import FACTORY_LAST_NAMES, LEGACY_DTYPES, WHOLE_REDUCTIONS

MOVES = frozenset({"to", "cuda", "cpu"})


def factory_helpers(tree: ast.Module, imports: ImportTable) -> frozenset[str]:
    """Top-level functions of the file that call a torch factory without `device=` (`causal_mask(n)`):
    what a method gets from them may be a CPU tensor (DF016 asks `analysis.host_helpers`)."""
    return frozenset(
        node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(is_unplaced_factory(call, imports) for call in scope_nodes(node.body, FUNCTIONS))
    )


def is_unplaced_factory(node: ast.AST, imports: ImportTable) -> bool:
    """`torch.zeros(n)`, `torch.arange(t)`: a torch factory call given no `device=`."""
    return isinstance(node, ast.Call) and not any(keyword.arg == "device" for keyword in node.keywords) and _is_torch_factory(node, imports)


def _is_torch_factory(call: ast.Call, imports: ImportTable) -> bool:
    qualified = imports.qualify(call.func) or ""
    return qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in FACTORY_LAST_NAMES


def class_feeds_fresh_tensors(class_node: ast.ClassDef, imports: ImportTable, helpers: frozenset[str] = frozenset()) -> bool:
    """Some method but `__init__` sends a factory's tensor made without `device=` where DF016 looks;
    a call of one of the file's `helpers` (`factory_helpers`) counts as a factory."""
    methods = [node for node in class_node.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    init = next((method for method in methods if method.name == "__init__"), None)
    submodules = set()
    for builder in _building_methods(methods, init):  # `__init__`, and what it calls on `self` (`self._create_layers()`)
        submodules |= _called_attributes(builder)
    held_values = attributes_given_values(init) if init is not None else set()
    feeding = {method.name for method in methods if method.name != "__init__" and _passes_a_name_to(method, submodules)}
    called = {node.func.attr for node in ast.walk(class_node) if isinstance(node, ast.Call) and is_self_attribute(node.func)}
    return any(_Method(method, submodules, imports, feeding, held_values, method.name in called, helpers).feeds()
               for method in methods if method.name != "__init__")


def _building_methods(methods: list, init: ast.FunctionDef | ast.AsyncFunctionDef | None) -> list:
    """`__init__` and the methods of the class it calls on `self`, and those they call, in turn."""
    by_name = {method.name: method for method in methods}
    found, queue = [], [init] if init is not None else []
    while queue:
        method = queue.pop()
        if method in found:
            continue
        found.append(method)
        queue.extend(by_name[node.func.attr] for node in scope_nodes(method.body, FUNCTIONS)
                     if isinstance(node, ast.Call) and is_self_attribute(node.func) and node.func.attr in by_name)
    return found


def _passes_a_name_to(method: ast.FunctionDef | ast.AsyncFunctionDef, submodules: set[str]) -> bool:
    """The method hands a name to a submodule (`self.ode_f(x, h, tau)`): a call of it may feed its
    arguments there (the rule asks which parameter; the screen takes any)."""
    return any(
        isinstance(node, ast.Call) and is_self_attribute(node.func) and node.func.attr in submodules
        and any(isinstance(argument, ast.Name) for argument in _arguments(node))
        for node in scope_nodes(method.body, FUNCTIONS)
    )




def attributes_given_values(init: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """`self.<attr>` that `__init__` assigns what may be a CPU tensor type (`self.Tensor = tensor`,
    the rule proves it): a `<X>Tensor` attribute, or a parameter whose default is one."""
    arguments = init.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = dict(zip([argument.arg for argument in positional][len(positional) - len(arguments.defaults):], arguments.defaults))
    defaults.update((argument.arg, default) for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is not None)

    def may_be_a_type(value: ast.expr) -> bool:
        if isinstance(value, ast.Name):
            value = defaults.get(value.id)
        return isinstance(value, ast.Attribute) and value.attr in LEGACY_DTYPES

    return {
        target.attr for node in scope_nodes(init.body, FUNCTIONS) if isinstance(node, ast.Assign)
        and may_be_a_type(node.value) for target in node.targets if is_self_attribute(target)
    }


def _called_attributes(init: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """`self.<attr>` that every assignment in `__init__` sets to a call (what may build a submodule)."""
    built: dict[str, bool] = {}
    for node in scope_nodes(init.body, FUNCTIONS):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if is_self_attribute(target):
                    built[target.attr] = built.get(target.attr, True) and isinstance(node.value, ast.Call)
    return {name for name, all_calls in built.items() if all_calls}


class _Method:
    def __init__(
        self, method: ast.FunctionDef | ast.AsyncFunctionDef, submodules: set[str], imports: ImportTable, feeding: set[str],
        held_values: set[str] = frozenset(), called_by_the_class: bool = False, helpers: frozenset[str] = frozenset(),
    ) -> None:
        self.submodules, self.imports, self.feeding, self.held_values = submodules, imports, feeding, held_values
        self.helpers = helpers - _local_names(method)
        # a result the class's own calls may hand to a submodule: the rule follows methods of its named values
        self.returns_named = called_by_the_class
        self.nodes = list(scope_nodes(method.body, FUNCTIONS))
        self.fresh: set[str] = set()  # names that may hold a factory's tensor
        self.fresh_for_returns: set[str] = set()  # the same, without methods of named values (as DF016 returns)
        self.outputs: set[str] = set()  # names that may hold what a submodule returned

    def feeds(self) -> bool:
        if not any(isinstance(node, ast.Call) and self._is_factory(node) for node in self.nodes):
            return False
        self._bind_names()
        for node in self.nodes:
            if isinstance(node, ast.Return) and node.value is not None and self._fed(node.value, named=self.returns_named):
                return True
            if isinstance(node, ast.Call) and self._is_submodule_call(node) and any(self._fed(value) for value in _arguments(node)):
                return True
            if isinstance(node, ast.Call) and _is_method_call(node, self.feeding) and any(self._fed(value) for value in _arguments(node)):
                return True
            if isinstance(node, ast.BinOp):
                for side, other in ((node.left, node.right), (node.right, node.left)):
                    if self._is_output(side) and self._fed(other):
                        return True
        return False

    def _bind_names(self) -> None:
        """`fresh` and `outputs` to a fixed point (the rule follows them in order; any order here)."""
        assignments = [node for node in self.nodes if isinstance(node, ast.Assign)]
        changed = True
        while changed:
            changed = False
            for node in assignments:
                for target in node.targets:
                    pairs = _pairs(target, node.value)
                    fresh = {name for name, value in pairs if value is not None and self._sources(value)}
                    returned = {name for name, value in pairs if value is not None and self._sources(value, named=False)}
                    outputs = {name for name, _ in pairs} if self._is_output(node.value) else set()
                    if not (fresh <= self.fresh and returned <= self.fresh_for_returns and outputs <= self.outputs):
                        self.fresh |= fresh
                        self.fresh_for_returns |= returned
                        self.outputs |= outputs
                        changed = True

    def _fed(self, value: ast.expr, named: bool = True) -> bool:
        if isinstance(value, (ast.Tuple, ast.List)):
            return any(self._fed(element, named) for element in value.elts)
        if isinstance(value, ast.Starred):
            return self._fed(value.value, named)
        return self._sources(value, named)

    def _sources(self, value: ast.expr, named: bool = True) -> bool:
        """A factory's unplaced tensor may be (part of) `value`. Without `named`, methods of named
        values are not followed (DF016 does not, for what a method returns)."""
        again = lambda inner: self._sources(inner, named)
        if isinstance(value, ast.Name) or is_self_attribute(value):
            return _key(value) in (self.fresh if named else self.fresh_for_returns)
        if isinstance(value, ast.Call):
            if self._is_factory(value):
                return not any(keyword.arg in ("device", "generator") for keyword in value.keywords)
            qualified = self.imports.qualify(value.func)
            if isinstance(value.func, ast.Attribute) and not (qualified or "").startswith("torch."):
                # a method of a value; not a whole reduction (`lengths.sum()` is 0-dim, as DF016 reads it)
                follows = named or dotted_head(value.func) is None
                return follows and value.func.attr not in MOVES and not _is_whole_reduction(value) and again(value.func.value)
            if (qualified or "").startswith("torch."):
                return any(again(argument) for argument in _arguments(value))
            return False
        if isinstance(value, ast.BinOp):
            return again(value.left) or again(value.right)
        if isinstance(value, (ast.List, ast.Tuple)):  # `torch.stack([xs, ys], -1)`
            return any(again(element) for element in value.elts)
        if isinstance(value, ast.Compare):  # `torch.triu(torch.ones(n, n)) == 1`
            return any(again(operand) for operand in (value.left, *value.comparators))
        if isinstance(value, ast.UnaryOp):
            return again(value.operand)
        if isinstance(value, ast.IfExp):
            return again(value.body) or again(value.orelse)
        if isinstance(value, (ast.Subscript, ast.Starred)):
            return again(value.value)
        return False

    def _is_output(self, value: ast.expr) -> bool:
        """`value` may hold what a submodule returned (`self.fc(x)`, `torch.relu(self.fc(x)) * 2`)."""
        if isinstance(value, ast.Name):
            return value.id in self.outputs
        if isinstance(value, ast.BinOp):
            return self._is_output(value.left) or self._is_output(value.right)
        if isinstance(value, ast.UnaryOp):
            return self._is_output(value.operand)
        if isinstance(value, (ast.Subscript, ast.Attribute, ast.Starred)):
            return self._is_output(value.value)
        if isinstance(value, ast.Call):
            if self._is_submodule_call(value):
                return True
            qualified = self.imports.qualify(value.func)
            if isinstance(value.func, ast.Attribute) and not (qualified or "").startswith("torch."):  # as in `_sources`
                return self._is_output(value.func.value)
            if (qualified or "").startswith("torch."):
                return any(self._is_output(argument) for argument in _arguments(value))
        return False

    def _is_submodule_call(self, call: ast.Call) -> bool:
        return is_self_attribute(call.func) and call.func.attr in self.submodules

    def _is_factory(self, call: ast.Call) -> bool:
        if is_self_attribute(call.func) and call.func.attr in self.held_values:
            return True  # `self.Tensor(input.size())`
        if isinstance(call.func, ast.Name) and call.func.id in self.helpers:
            return True  # `causal_mask(t)` of the file
        return _is_torch_factory(call, self.imports)


def _local_names(method: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The method's parameters and the names it binds: they shadow the file's functions."""
    names = {argument.arg for argument in ast.walk(method.args) if isinstance(argument, ast.arg)}
    return names | {node.id for node in scope_nodes(method.body, FUNCTIONS) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}


def _key(value: ast.expr) -> str:
    """A name, or `self.<attr>` (a method may cache a tensor there and read it back)."""
    return value.id if isinstance(value, ast.Name) else f"self.{value.attr}"


def _pairs(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr | None]]:
    """(name, the value it takes when known) for a name, `self.<attr>` or a tuple of names."""
    if isinstance(target, ast.Name) or is_self_attribute(target):
        return [(_key(target), value)]
    if not isinstance(target, ast.Tuple):
        return []
    names = [element.value if isinstance(element, ast.Starred) else element for element in target.elts]
    # `ys, xs = torch.meshgrid(...)`: a call's parts may each be what the whole is (any call, to over-approximate)
    values = value.elts if isinstance(value, ast.Tuple) and len(value.elts) == len(names) else \
        [value] * len(names) if isinstance(value, ast.Call) else [None] * len(names)
    return [(name.id, item) for name, item in zip(names, values) if isinstance(name, ast.Name)]


def _is_method_call(call: ast.Call, methods: set[str]) -> bool:
    """`self.<method>(...)` of one of `methods`, or `self(...)` when `forward` is one (DF016's `self(z)`)."""
    if isinstance(call.func, ast.Name) and call.func.id == "self":
        return "forward" in methods
    return is_self_attribute(call.func) and call.func.attr in methods


def _arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(keyword.value for keyword in call.keywords)]


def _is_whole_reduction(call: ast.Call) -> bool:
    """`x.sum()`: 0-dim, no dimension given (`analysis.tensors.is_whole_reduction`)."""
    reduces = isinstance(call.func, ast.Attribute) and call.func.attr in WHOLE_REDUCTIONS
    return reduces and not call.args and not any(keyword.arg == "dim" for keyword in call.keywords)
