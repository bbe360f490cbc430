"""Which arguments a file hands to its own functions and plain classes that never move them.

`trainer = Trainer(model, loader, optimizer)` or `train(model, loader)`: whether `model` stays on
the CPU depends on what that code does with it. When the callee is a top-level function or a
plain class of the same file (no base class, no decorator, defined once, never subclassed) and the
parameter is only ever called (`model(x)`), asked for a method that is no move (`model.train()`,
`model.parameters()`), or handed on to such a parameter again, the instance is not moved there.
A class keeps the parameter when `__init__` stores it once as `self.<attr>` and every read of
`self.<attr>` in its methods is such a use, and no code outside the class reads `.<attr>` but as
such a use either. Anything else (a rebinding, a return, a container, an unknown callee, a
`*args` parameter, `model.modules()`, `model.cuda()`) may move it, and the argument is not kept.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from devfix.analysis.ast_nodes import FUNCTIONS, children, defined_once, every_node, is_self_attribute

REACHING_INSIDE = frozenset({  # methods that move the module or hand out its submodules, which may be moved
    "to", "cuda", "to_empty", "xpu", "mps", "ipu", "apply", "_apply", "modules", "children", "named_modules",
    "named_children", "get_submodule", "register_module", "add_module",
})
RETURNING_ITSELF = frozenset({  # Module methods that return the module (`model.eval().cuda()` moves it)
    "train", "eval", "float", "double", "half", "bfloat16", "cpu", "type", "requires_grad_", "share_memory",
})
DEPTH = 4


class KeepingUses:
    """Answers, for a read of a value, whether that use keeps the value where it is (see above)."""

    def __init__(self, tree: ast.Module, imported: Callable[[str], tuple[KeepingUses, str] | None] = lambda name: None) -> None:
        """`imported` answers, for a name the file imports, the `KeepingUses` of the project's file
        that defines it and its name there (`from trainer import Trainer`)."""
        self.tree = tree
        self.imported = imported
        self.parents: dict[int, ast.AST] = {}
        for node in every_node(tree):
            for child in children(node):
                self.parents[id(child)] = node
        subclassed = {
            base.id for node in every_node(tree) if isinstance(node, ast.ClassDef) for base in node.bases if isinstance(base, ast.Name)
        }
        self.callees: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]] = {}
        for statement in tree.body:
            if isinstance(statement, FUNCTIONS) and not statement.decorator_list \
                    and defined_once(tree.body, (*FUNCTIONS, ast.ClassDef), statement.name) is statement:
                self.callees[statement.name] = (statement, None)
            elif isinstance(statement, ast.ClassDef) and _plain(statement) and statement.name not in subclassed \
                    and defined_once(tree.body, (*FUNCTIONS, ast.ClassDef), statement.name) is statement:
                init = defined_once(statement.body, FUNCTIONS, "__init__")
                if isinstance(init, ast.FunctionDef) and not init.decorator_list:
                    self.callees[statement.name] = (init, statement)
        self.memo: dict[tuple[str, str], bool] = {}
        self.stored: dict[tuple[str, str], frozenset[str]] = {}  # (class, parameter) → the attributes `__init__` keeps it in

    def keeps(self, node: ast.expr) -> bool:
        """This read (a `Name` load) is called, asked for a method that is no move, or handed to a
        callee of the file that keeps it."""
        return self._keeping_use(node, DEPTH)

    def _keeps_argument(self, call: ast.Call, argument: ast.expr, depth: int) -> bool:
        """The call hands `argument` to a parameter of a callee of the file, or of the project's
        file it imports the callee from, that keeps it."""
        if depth == 0 or not isinstance(call.func, ast.Name):
            return False
        if call.func.id in self.callees:
            return self.keeps_argument_of(call.func.id, call, argument, depth)
        found = self.imported(call.func.id)
        if found is None or not found[0].keeps_argument_of(found[1], call, argument, depth):
            return False
        stored = found[0].stored.get((found[1], found[0].parameter_for(found[1], call, argument)), frozenset())
        return all(self._reads_keep(attribute, depth) for attribute in stored)  # `trainer.model.cuda()` here

    def _reads_keep(self, attribute: str, depth: int) -> bool:
        """This file never stores `.<attribute>` and every read of it keeps the value."""
        stores, reads = self._attribute_uses(attribute)
        return not stores and all(self._keeping_use(node, depth) for node in reads)

    def _attribute_uses(self, attribute: str) -> tuple[list[ast.Attribute], list[ast.Attribute]]:
        """The stores and the reads of `.<attribute>` in the file."""
        nodes = [node for node in every_node(self.tree) if isinstance(node, ast.Attribute) and node.attr == attribute]
        return [node for node in nodes if not isinstance(node.ctx, ast.Load)], [node for node in nodes if isinstance(node.ctx, ast.Load)]

    def keeps_argument_of(self, callee: str, call: ast.Call, argument: ast.expr, depth: int) -> bool:
        """`call` (of this file or another) hands `argument` to a parameter of this file's `callee`
        that keeps it."""
        parameter = self.parameter_for(callee, call, argument)
        if parameter is None:
            return False
        function, class_def = self.callees[callee]
        key = (callee, parameter)
        if key not in self.memo:
            self.memo[key] = False  # a cycle keeps nothing it has not proven
            self.memo[key] = self._keeps_parameter(function, class_def, parameter, depth - 1, key)
        return self.memo[key]

    def parameter_for(self, callee: str, call: ast.Call, argument: ast.expr) -> str | None:
        """The parameter of this file's `callee` that `call` hands `argument` to; None when unknown
        (`*args`, `**kwargs`, a `*rest` parameter)."""
        if callee not in self.callees:
            return None
        if any(isinstance(item, ast.Starred) for item in call.args) or any(keyword.arg is None for keyword in call.keywords):
            return None
        function, class_def = self.callees[callee]
        positional = [arg.arg for arg in [*function.args.posonlyargs, *function.args.args]]
        if class_def is not None:
            positional = positional[1:]
        if argument in call.args:
            index = call.args.index(argument)
            return positional[index] if index < len(positional) else None
        parameter = next(keyword.arg for keyword in call.keywords if keyword.value is argument)
        named = [*function.args.args, *function.args.kwonlyargs][1 if class_def is not None else 0:]
        return parameter if parameter in {arg.arg for arg in named} else None

    def _keeps_parameter(self, function, class_def: ast.ClassDef | None, parameter: str, depth: int, key: tuple[str, str]) -> bool:
        """Every read of the parameter in the function keeps it; it is bound nowhere else there;
        for a class, stored once as `self.<attr>`, which the class and the file keep (and the
        attribute is noted in `stored`, for the other files that build the class to check)."""
        stored: list[str] = []
        for node in every_node(function):
            if isinstance(node, ast.Name) and node.id == parameter:
                if not isinstance(node.ctx, ast.Load):
                    return False
                parent = self.parents.get(id(node))
                if class_def is not None and isinstance(parent, ast.Assign) and parent.value is node \
                        and len(parent.targets) == 1 and is_self_attribute(parent.targets[0]) and parent in function.body:
                    stored.append(parent.targets[0].attr)
                elif not self._keeping_use(node, depth):
                    return False
            elif isinstance(node, (ast.Global, ast.Nonlocal)) and parameter in node.names:
                return False
        self.stored[key] = frozenset(stored)
        return all(self._keeps_attribute(class_def, attribute, depth) for attribute in stored)

    def _keeps_attribute(self, class_def: ast.ClassDef, attribute: str, depth: int) -> bool:
        """`self.<attribute>` is stored once in the class, and every read of `.<attribute>` in the
        file keeps the value."""
        stores, reads = self._attribute_uses(attribute)
        return len(stores) == 1 and is_self_attribute(stores[0]) and _inside(stores[0], class_def, self.parents) \
            and all(self._keeping_use(node, depth) for node in reads)

    def _keeping_use(self, node: ast.expr, depth: int) -> bool:
        """`value(...)`, `value.method(...)` with a method that is no move, `value.a.b(...)` so, or
        `value` handed to a callee of the file that keeps it."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.keyword):
            call = self.parents.get(id(parent))
            return isinstance(node, ast.Name) and isinstance(call, ast.Call) and self._keeps_argument(call, node, depth)
        if isinstance(parent, ast.Call):
            if parent.func is node:
                return True
            return isinstance(node, ast.Name) and self._keeps_argument(parent, node, depth)
        if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr not in REACHING_INSIDE:
            above = self.parents.get(id(parent))
            if isinstance(above, ast.Call) and above.func is parent:
                # `model.eval()` gives the module back: what is done with that must keep it too
                return parent.attr not in RETURNING_ITSELF or isinstance(self.parents.get(id(above)), ast.Expr) \
                    or self._keeping_use(above, depth)
            return isinstance(above, ast.Attribute) and above.value is parent and self._keeping_use(parent, depth)
        return False


def _plain(class_def: ast.ClassDef) -> bool:
    """No base but `object`, no decorator, no metaclass: every method it has is in the file."""
    return not class_def.decorator_list and not class_def.keywords and all(
        isinstance(base, ast.Name) and base.id == "object" for base in class_def.bases
    )


def _inside(node: ast.AST, class_def: ast.ClassDef, parents: dict[int, ast.AST]) -> bool:
    while node is not None:
        if node is class_def:
            return True
        node = parents.get(id(node))
    return False
