"""Can a tensor factory without `device=` meet a value that may be a tensor? DF004's screen.

DF004 aligns a factory call (`torch.zeros(n)`) with a tensor it meets in the same function:
arithmetic, comparisons, indexing, torch functions, tensor methods and Module calls. Most model
code has factories (parameter initialisers, drop-path schedules `torch.linspace(...).split(...)`,
`init_values * torch.ones(dim)`) that never meet a tensor, and building a libcst tree only to
learn that is most of a check's cost. This walk follows the same structure as the rule, with
Python's `ast`, and over-approximates each of its conditions: where it says no, the rule cannot
find anything (`tests/analysis/test_screen.py` holds it to that over every fixture and program).

Per function (and the module's top level), as the rule scopes it:
  - a name *may hold a factory* when one of its assignments in that scope is built from one
    (through names, arithmetic, indexing and tensor methods, to a fixed point);
  - an expression *may be a tensor reference* when it reaches a name the value analysis has not
    proven to be a number, list, array or other non-tensor, and that is not an import;
  - a meeting needs both among the values that meet, or a factory fed to a callable that may be
    a Module (a name assigned from a call, or moved with `.to()`/`.cuda()`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from devfix.analysis.imports import ImportTable
from devfix.analysis.kinds import Kind
from devfix.analysis.placement import CPU_LITERALS, TORCH_DTYPES
from devfix.analysis.tensors import (
    DEVICE_CHANGING_METHODS,
    FACTORY_FUNCTIONS,
    HOST_SIDE_PREFIXES,
    MOVED_AFTER,
    NON_TENSOR_METHODS,
    NOT_COMBINING_METHODS,
    SOURCE_WRAPPERS,
    is_torch_tensor_function,
)

KindAt = Callable[[ast.Name], Kind]
NOT_SOURCE_METHODS = frozenset({"to", "cuda", "cpu", "tolist", "item", "numpy"})


def factory_may_meet_tensor(tree: ast.Module, imports: ImportTable, kind_at: KindAt) -> bool:
    """False only when no factory call of the file can meet a tensor the way DF004 looks for."""
    callables = _maybe_modules(tree, imports)
    moves_something = any(_is_move_of_a_name(node, imports) for node in ast.walk(tree))
    return any(
        _Scope(body, imports, kind_at, callables, parameters if moves_something else set()).has_meeting()
        for body, parameters in _scopes(tree)
    )


def _scopes(tree: ast.Module) -> Iterator[tuple[list[ast.stmt], set[str]]]:
    """The module's top level and every function body (class bodies are not DF004's), with the
    parameters of top-level functions (a model a caller moved may come in through them)."""
    yield tree.body, set()
    top_level = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            names = {argument.arg for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
            yield node.body, names if id(node) in top_level else set()


def _maybe_modules(tree: ast.Module, imports: ImportTable) -> set[str]:
    """Names that may hold a Module: assigned from a call, or moved (`net.to(device)`)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name))
        elif _is_move_of_a_name(node, imports):
            names.add(node.func.value.id)
    return names


def _is_move_of_a_name(node: ast.AST, imports: ImportTable) -> bool:
    """`net.to(device)`, `net.cuda()`: not a cast (`.to(torch.float16)`) nor `.to("cpu")`, as
    `analysis.placement.as_move` reads moves."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)):
        return False
    if node.func.attr == "cuda":
        return True
    if node.func.attr != "to":
        return False
    device = next((keyword.value for keyword in node.keywords if keyword.arg == "device"), node.args[0] if node.args else None)
    if device is None or (isinstance(device, ast.Constant) and device.value in CPU_LITERALS):
        return False
    qualified = imports.qualify(device) or ""
    return not (qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in TORCH_DTYPES)


def _own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of one scope: not those of nested functions and classes (lambdas are in)."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append(child)


class _Scope:
    def __init__(self, body: list[ast.stmt], imports: ImportTable, kind_at: KindAt, callables: set[str], models: set[str]) -> None:
        """`models`: parameters that may hold a model a caller moved (when the file moves any)."""
        self.imports, self.kind_at, self.callables, self.models = imports, kind_at, callables, models
        self.nodes = list(_own_nodes(body))
        self.holders: dict[str, int] = {}  # name → first line where it is bound to a factory's value

    def has_meeting(self) -> bool:
        calls = [node for node in self.nodes if isinstance(node, ast.Call)]
        if self._feeds_a_moved_callable(calls):
            return True
        if not any(self._is_source_call(call) for call in calls):
            return False
        self._find_holders()
        return any(self._meets(node) for node in self.nodes)

    def _feeds_a_moved_callable(self, calls: list[ast.Call]) -> bool:
        """`model(img)` where `model` moved in this scope, or is a parameter its callers may have
        moved: a host-made local (from this scope or a helper of the file that returns CPU
        tensors) moves where it is fed, factory or not."""
        moved = {call.func.value.id for call in calls if _is_move_of_a_name(call, self.imports)} | self.models
        for node in self.nodes:  # `model = Net().to(device)`
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                    and node.value.func.attr in ("to", "cuda"):
                moved.update(target.id for target in node.targets if isinstance(target, ast.Name))
        return any(
            isinstance(call.func, ast.Name) and call.func.id in moved and any(isinstance(arg, ast.Name) for arg in call.args)
            for call in calls
        )

    def _find_holders(self) -> None:
        """Names assigned here from something built from a factory, with the first line of such an
        assignment (DF004 looks at the assignment before a read), to a fixed point."""
        assignments = []
        for node in self.nodes:
            if isinstance(node, ast.Assign):
                assignments += [(target, node.value, node.lineno) for target in node.targets]
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                assignments.append((node.target, node.value, node.lineno))
        changed = True
        while changed:
            changed = False
            for target, value, line in assignments:
                if not self._has_sources(value):
                    continue
                for name in _bound_names(target):
                    if line < self.holders.get(name, line + 1):
                        self.holders[name] = line
                        changed = True

    def _is_source_call(self, call: ast.Call) -> bool:
        if any(keyword.arg in ("device", "generator") for keyword in call.keywords):
            return False
        qualified = self.imports.qualify(call.func) or ""
        return qualified in FACTORY_FUNCTIONS or qualified in MOVED_AFTER

    def _has_sources(self, node: ast.AST | None) -> bool:
        """The value may be built from a factory call without a device (DF004's `_sources`)."""
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return self.holders.get(node.id, node.lineno) < node.lineno
        if isinstance(node, ast.Call):
            if self._is_source_call(node):
                return True
            qualified = self.imports.qualify(node.func) or ""
            if qualified in SOURCE_WRAPPERS:
                return any(self._has_sources(arg) for arg in _values(node))
            if qualified.startswith("torch."):
                return False
            if isinstance(node.func, ast.Attribute) and node.func.attr not in NOT_SOURCE_METHODS:
                return self._has_sources(node.func.value)
            return False
        if isinstance(node, ast.BinOp):
            return self._has_sources(node.left) or self._has_sources(node.right)
        if isinstance(node, ast.UnaryOp):
            return self._has_sources(node.operand)
        if isinstance(node, ast.Compare):
            return any(self._has_sources(operand) for operand in [node.left, *node.comparators])
        if isinstance(node, (ast.List, ast.Tuple)):
            return any(self._has_sources(element) for element in node.elts)
        if isinstance(node, ast.Subscript):
            return self._has_sources(node.value)
        if isinstance(node, ast.Starred):
            return self._has_sources(node.value)
        return False

    def _may_reference(self, node: ast.AST | None) -> bool:
        """The value may be a tensor the factory could be aligned with (DF004's `_reference`)."""
        if isinstance(node, ast.Name):
            return node.id not in self.imports.names and not self.kind_at(node).is_known_non_tensor
        if isinstance(node, ast.BinOp):
            return self._may_reference(node.left) or self._may_reference(node.right)
        if isinstance(node, (ast.Subscript, ast.Starred)):
            return self._may_reference(node.value)
        if not isinstance(node, ast.Call) or (self.imports.qualify(node.func) or "") in FACTORY_FUNCTIONS:
            return False
        qualified = self.imports.qualify(node.func)
        if qualified is not None and is_torch_tensor_function({qualified}):
            return bool(node.args) and self._may_reference(node.args[0])
        if isinstance(node.func, ast.Attribute):
            if node.func.attr in NON_TENSOR_METHODS | DEVICE_CHANGING_METHODS:
                return False
            return self._may_reference(node.func.value)
        if isinstance(node.func, ast.Name) and node.func.id in self.callables:
            return any(self._may_reference(value) for value in _values(node))
        return False

    def _meets(self, node: ast.AST) -> bool:
        if isinstance(node, ast.BinOp):
            return self._both([node.left, node.right])
        if isinstance(node, ast.Compare):
            return self._both([node.left, *node.comparators])
        if isinstance(node, ast.Subscript):
            index = node.slice
            indices = index.elts if isinstance(index, ast.Tuple) else [index]
            return self._has_sources(node.value) and any(
                self._may_reference(item) for item in indices if not isinstance(item, ast.Slice)
            )
        if isinstance(node, ast.Call):
            return self._call_meets(node)
        return False

    def _call_meets(self, call: ast.Call) -> bool:
        qualified = self.imports.qualify(call.func)
        if qualified is not None and qualified.startswith(HOST_SIDE_PREFIXES):
            return False
        values = _values(call)
        values += [element for value in values if isinstance(value, (ast.List, ast.Tuple)) for element in value.elts]
        if isinstance(call.func, ast.Name) and call.func.id in self.callables:
            # fed to a Module: it goes with the Module's other inputs or where the Module moved
            return any(self._has_sources(value) for value in values)
        if qualified is not None and qualified.startswith("torch."):
            tensor_function = is_torch_tensor_function({qualified}) and qualified not in FACTORY_FUNCTIONS
            return tensor_function and self._both(values)
        if isinstance(call.func, ast.Attribute) and call.func.attr not in NOT_COMBINING_METHODS:
            # a tensor's method given a fresh tensor, or a fresh tensor's method given a tensor
            receiver = call.func.value
            given_sources = any(self._has_sources(value) for value in values)
            given_reference = any(self._may_reference(value) for value in values)
            return (given_sources and self._may_reference(receiver)) or (given_reference and self._has_sources(receiver))
        return False

    def _both(self, values: list[ast.expr]) -> bool:
        return any(self._has_sources(value) for value in values) and any(self._may_reference(value) for value in values)


def _bound_names(target: ast.expr) -> Iterator[str]:
    """The names an assignment target binds (`a`, `a, (b, *c)`), not those it only reads (`a[i] =`)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


def _values(call: ast.Call) -> list[ast.expr]:
    """Every argument's value, positional and keyword, as libcst's `Arg.value` lists them."""
    return [*call.args, *(keyword.value for keyword in call.keywords)]
