"""Items of a Module's `forward` tuple that may be no tensor.

`loss, kl_div, wacc = model(*batch)` of a moved model: the rules take every item for a device
tensor, but hgraph2graph's `HierVAE.forward` returns `loss + beta * kl_div, kl_div.item(), wacc`,
and its decoder's `assm_acc` is the number `1` on one path. `kl_div.detach().cpu()` would raise
AttributeError on a float, so such items get no tensor method.

An item may be no tensor when some `return` of `forward` gives, at its position of a tuple display,
a number, `None`, `x.item()`, `x.tolist()`, `x.numpy()`, `float(...)`/`int(...)`/`len(...)`,
arithmetic of such values only, or a name some binding in `forward` gives such a value, also by
unpacking a tuple display or what a submodule the class builds in `__init__` returns at that position
(read the same way, a few classes deep, in the file or through `resolve_class`, which finds a class
as the file writes it: its file's tree, its name there, and the resolver for that file).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from devfix.analysis.ast_nodes import scope_nodes

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
HOST_METHODS = frozenset({"item", "tolist", "numpy"})
HOST_BUILTINS = frozenset({"float", "int", "len", "round", "bool"})
DEPTH = 3

# a class name as a file writes it → (the tree of the file holding it, its name there, that file's resolver)
ClassResolver = Callable[[str], "tuple[ast.Module, str, ClassResolver | None] | None"]


def host_item_positions(tree: ast.Module, class_name: str, resolve_class: ClassResolver | None = None, depth: int = DEPTH) -> frozenset[int]:
    """The positions of the tuple `forward` of the top-level class `class_name` returns whose item
    may be no tensor (see the module docstring)."""
    class_def = next((node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == class_name), None)
    forward = next((item for item in class_def.body if isinstance(item, ast.FunctionDef) and item.name == "forward"), None) \
        if class_def is not None else None
    if forward is None or depth == 0:
        return frozenset()
    reader = _Items(tree, class_def, forward, resolve_class, depth)
    found = set()
    for node in scope_nodes(forward.body, FUNCTIONS):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            found.update(position for position, item in enumerate(node.value.elts) if reader.may_be_host(item))
    return frozenset(found)


class _Items:
    def __init__(self, tree: ast.Module, class_def: ast.ClassDef, forward: ast.FunctionDef,
                 resolve_class: ClassResolver | None, depth: int) -> None:
        self.tree, self.class_def, self.resolve_class, self.depth = tree, class_def, resolve_class, depth
        self.assignments = [node for node in scope_nodes(forward.body, FUNCTIONS) if isinstance(node, ast.Assign)]
        self.reading: set[str] = set()

    def may_be_host(self, item: ast.expr) -> bool:
        if isinstance(item, ast.Constant):
            return item.value is None or isinstance(item.value, (bool, int, float))
        if isinstance(item, ast.Call):
            func = item.func
            return (isinstance(func, ast.Attribute) and func.attr in HOST_METHODS) or (isinstance(func, ast.Name) and func.id in HOST_BUILTINS)
        if isinstance(item, ast.BinOp):
            return self.may_be_host(item.left) and self.may_be_host(item.right)
        if isinstance(item, ast.UnaryOp):
            return self.may_be_host(item.operand)
        if isinstance(item, ast.IfExp):
            return self.may_be_host(item.body) or self.may_be_host(item.orelse)
        if isinstance(item, ast.Name) and item.id not in self.reading:
            self.reading.add(item.id)
            try:
                return any(self._binding_may_be_host(assignment, item.id) for assignment in self.assignments)
            finally:
                self.reading.discard(item.id)
        return False

    def _binding_may_be_host(self, assignment: ast.Assign, name: str) -> bool:
        for target in assignment.targets:
            if isinstance(target, ast.Name) and target.id == name:
                return self.may_be_host(assignment.value)
            if isinstance(target, ast.Tuple) and not any(isinstance(element, ast.Starred) for element in target.elts):
                positions = [index for index, element in enumerate(target.elts) if isinstance(element, ast.Name) and element.id == name]
                if positions and self._unpacked_may_be_host(assignment.value, positions[0], len(target.elts)):
                    return True
        return False

    def _unpacked_may_be_host(self, value: ast.expr, position: int, count: int) -> bool:
        if isinstance(value, ast.Tuple) and len(value.elts) == count:
            return self.may_be_host(value.elts[position])  # `assm_loss, assm_acc = 0, 1`
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name)
                and value.func.value.id == "self"):
            return False
        held = self._submodule_class(value.func.attr)  # `loss, wacc = self.decoder(...)`
        if held is None:
            return False
        return position in host_item_positions(*held, self.depth - 1)

    def _submodule_class(self, attribute: str) -> tuple[ast.Module, str, ClassResolver | None] | None:
        init = next((item for item in self.class_def.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
        built = [
            node.value for node in (scope_nodes(init.body, FUNCTIONS) if init is not None else ())
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
                and target.attr == attribute for target in node.targets)
        ]
        if len(built) != 1 or not isinstance(built[0], ast.Call) or not isinstance(built[0].func, (ast.Name, ast.Attribute)):
            return None
        written = ast.unparse(built[0].func)
        if isinstance(built[0].func, ast.Name) and any(isinstance(node, ast.ClassDef) and node.name == written for node in self.tree.body):
            return self.tree, written, self.resolve_class
        return self.resolve_class(written) if self.resolve_class is not None else None
