"""Which names a Module class and its base classes register as buffers or parameters.

`self.x = tensor` in a subclass whose base registered `x` (`self.register_buffer("_mean_base",
...)` in sbi's `ConditionalVectorFieldEstimator`, another file of the project) updates that buffer:
DF014 must not register it again (a second registration, non-persistent, drops the key from the
state dict, and checkpoints no longer load). Read with Python's `ast`; a base of the same file is
followed, one of another file of the project through `ProjectIndex`'s class resolver.
"""

from __future__ import annotations

import ast

from devfix.analysis.ast_nodes import dotted_head
from devfix.analysis.forward_items import ClassResolver

REGISTERING_METHODS = frozenset({"register_buffer", "register_parameter"})
DEPTH = 4


def registered_by_bases(tree: ast.Module, class_name: str, resolve_class: ClassResolver | None = None) -> frozenset[str]:
    """The names the bases of the top-level class `class_name` (not the class itself) register."""
    class_def = _top_level_class(tree, class_name)
    if class_def is None:
        return frozenset()
    found: set[str] = set()
    for base in class_def.bases:
        found |= _registered_by(tree, _written(base), resolve_class, DEPTH)
    return frozenset(found)


def _registered_by(tree: ast.Module, written: str | None, resolve_class: ClassResolver | None, depth: int) -> frozenset[str]:
    if written is None or depth == 0:
        return frozenset()
    local = _top_level_class(tree, written)
    if local is None:
        held = resolve_class(written) if resolve_class is not None else None
        if held is None:
            return frozenset()
        tree, written, resolve_class = held
        local = _top_level_class(tree, written)
        if local is None:
            return frozenset()
    found = set(_registered_in(local))
    for base in local.bases:
        found |= _registered_by(tree, _written(base), resolve_class, depth - 1)
    return frozenset(found)


def _registered_in(class_def: ast.ClassDef) -> set[str]:
    """`self.register_buffer("name", ...)`, `self.register_parameter(name="name", ...)` in its methods."""
    found = set()
    for node in ast.walk(class_def):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in REGISTERING_METHODS:
            named = node.args[0] if node.args else next((keyword.value for keyword in node.keywords if keyword.arg == "name"), None)
            if isinstance(named, ast.Constant) and isinstance(named.value, str):
                found.add(named.value)
    return found


def _top_level_class(tree: ast.Module, name: str) -> ast.ClassDef | None:
    return next((node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name), None)


def _written(base: ast.expr) -> str | None:
    """`Base`, `estimators.Base`: the base as the file writes it."""
    return ast.unparse(base) if dotted_head(base) is not None else None
