"""Which parameters of a Module's `forward` only ever become `pack_padded_sequence`'s lengths, read
with `ast`, through submodules and across the files of a run.

`analysis.packed_lengths` answers for a `forward` of the file a rule rewrites; a model is often
built from classes of other files (`Classifier` in `model.py` hands `lengths` to its `Encoder`,
which packs). A caller must leave such lengths on the CPU however the batch moves: on a device,
packing raises "'lengths' argument should be a 1D CPU int64 tensor".
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from devfix.analysis.ast_nodes import defined_once, last_method
from devfix.analysis.imports import ImportTable

PACKING_FUNCTIONS = frozenset({"torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pack_padded_sequence.__call__"})
HOST_CONVERSIONS = frozenset({"cpu", "tolist"})

SUBMODULE_DEPTH = 3  # `forward` → `self.encoder(...)` → its `self.rnn_block(...)`: this many hops

Packing = tuple[tuple[str, ...], frozenset[str]]  # a forward's positional parameters, those only packed
# (a class name the file imports, hops left) → the answer for that class in its own file, or None
ClassResolver = Callable[[str, int], "Packing | None"]


def forward_packing_parameters(
    tree: ast.Module, imports: ImportTable, class_name: str, resolve: ClassResolver | None = None, depth: int = SUBMODULE_DEPTH,
) -> Packing | None:
    """(the positional parameters of `class_name.forward` after `self`, those only packed as
    lengths): read only as `pack_padded_sequence`'s lengths, brought to the host, or handed to a
    submodule built in `__init__` (`self.encoder = Encoder(...)`, a class of this file or, through
    `resolve`, of another) whose own `forward` only packs them. None when the class or its `forward`
    is not found."""
    class_def = defined_once(tree.body, (ast.ClassDef,), class_name)
    forward = last_method(class_def, "forward") if class_def is not None else None
    if forward is None:
        return None
    positional = tuple(argument.arg for argument in [*forward.args.posonlyargs, *forward.args.args])[1:]
    names = set(positional) | {argument.arg for argument in forward.args.kwonlyargs}
    submodules = _submodule_classes(class_def)
    packed: set[str] = set()
    other: set[str] = set()
    accounted: set[int] = set()
    for node in ast.walk(forward):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not forward:
            other |= names & {name.id for name in ast.walk(node) if isinstance(name, ast.Name)}
        elif isinstance(node, ast.Call):
            _account_call(node, names, imports, packed, accounted, lambda sub, index, keyword: _sub_packs(
                tree, imports, submodules, sub, index, keyword, resolve, depth))
        elif isinstance(node, ast.Name) and node.id in names and (isinstance(node.ctx, ast.Store) or isinstance(node.ctx, ast.Del)):
            other.add(node.id)
    for node in ast.walk(forward):
        if isinstance(node, ast.Name) and node.id in names and id(node) not in accounted:
            other.add(node.id)
    return positional, frozenset(packed - other)


def _account_call(call: ast.Call, names: set[str], imports: ImportTable, packed: set[str], accounted: set[int], sub_packs) -> None:
    """Record the parameters `call` reads as lengths: packing's lengths, `.cpu()`/`.tolist()`, or an
    argument of `self.<sub>(...)` that the submodule only packs."""
    qualified = imports.qualify(call.func) or ""
    if qualified in PACKING_FUNCTIONS:
        lengths = _ast_lengths(call)
        if isinstance(lengths, ast.Name) and lengths.id in names:
            packed.add(lengths.id)
            accounted.add(id(lengths))
        return
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in HOST_CONVERSIONS and isinstance(func.value, ast.Name) and func.value.id in names:
        packed.add(func.value.id)
        accounted.add(id(func.value))
        return
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        if any(isinstance(arg, ast.Starred) for arg in call.args) or any(keyword.arg is None for keyword in call.keywords):
            return
        given = [(arg, index, None) for index, arg in enumerate(call.args)] + [(keyword.value, -1, keyword.arg) for keyword in call.keywords]
        for value, index, keyword in given:
            if isinstance(value, ast.Name) and value.id in names and sub_packs(func.attr, index, keyword):
                packed.add(value.id)
                accounted.add(id(value))


def _sub_packs(tree, imports, submodules: dict[str, str], attribute: str, index: int, keyword: str | None, resolve, depth: int) -> bool:
    """Does submodule `self.<attribute>`'s `forward` only pack what it gets at `index`/`keyword`?"""
    class_name = submodules.get(attribute)
    if class_name is None or depth <= 0:
        return False
    if defined_once(tree.body, (ast.ClassDef,), class_name) is not None:
        found = forward_packing_parameters(tree, imports, class_name, resolve, depth - 1)
    else:
        found = resolve(class_name, depth - 1) if resolve is not None else None
    if found is None:
        return False
    positional, packing = found
    parameter = keyword if keyword is not None else (positional[index] if 0 <= index < len(positional) else None)
    return parameter in packing


def _submodule_classes(class_def: ast.ClassDef) -> dict[str, str]:
    """`self.<name> = Cls(...)` in `__init__`, each name bound once there and nowhere else: name → `Cls`."""
    found: dict[str, list[str | None]] = {}
    init = last_method(class_def, "__init__")
    for method in (node for node in class_def.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for node in ast.walk(method):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    value = node.value if method is init and isinstance(node, ast.Assign) and len(node.targets) == 1 else None
                    built = value.func.id if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else None
                    found.setdefault(target.attr, []).append(built)
    return {name: built[0] for name, built in found.items() if len(built) == 1 and built[0] is not None}


def _ast_lengths(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "lengths":
            return keyword.value
    return call.args[1] if len(call.args) > 1 and not any(isinstance(arg, ast.Starred) for arg in call.args[:2]) else None
