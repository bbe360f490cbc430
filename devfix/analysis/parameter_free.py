"""Modules the file proves hold no parameters.

`next(self.parameters())` raises StopIteration in a module without parameters, on every machine. A
rule that would give a module its own device that way first asks whether the layers it builds may
hold any: conditional-flow-matching's `AugmentationModule` holds only `nn.ModuleList(regs)` of
regularizer classes of its own file, none with a parameter.

A module is proven parameter-free when it is a torch.nn class without state (`nn.ReLU()`, a loss
given no tensor), a container (`nn.ModuleList(terms)`, `nn.Sequential(*layers)`) whose items, all
found in the method that builds it, are such modules, or a class of the file deriving from
`nn.Module` (or from such a class) whose methods build only such modules and no `nn.Parameter`, and
that registers none by `register_parameter` or `add_module`; such a class of another file of the
project too (`ProjectIndex.imported_class_is_parameter_free`). A value handed in from outside (`self.net
= net`) is not looked at: "parameter-free" only ever leads a rule to leave code alone.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from devfix.analysis.torch_names import QualifiedNames, holds_state

CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})
REGISTERING_METHODS = frozenset({"register_parameter", "add_module", "register_module"})
DEPTH = 4


def builds_parameter_free_module(value: cst.BaseExpression, builder: cst.FunctionDef | None, module: cst.Module,
                                 qualified: QualifiedNames, depth: int = DEPTH,
                                 imported_free: Callable[[str], bool] | None = None) -> bool:
    """`value`, a call in the method `builder`, builds a Module the file proves holds no parameter;
    with `imported_free`, which answers for a qualified class name of another file of the project,
    also one of those (lightly's `VICRegLLoss` holding only `VICRegLoss(...)`)."""
    if not isinstance(value, cst.Call) or depth == 0:
        return False
    names = qualified(value.func)
    if any(name.startswith("torch.nn.") for name in names):
        if not holds_state(value, qualified):
            return True
        if not names & CONTAINERS:
            return False
        items = _container_items(value, builder)
        return items is not None and all(builds_parameter_free_module(item, builder, module, qualified, depth - 1, imported_free)
                                         for item in items)
    class_def = _local_class(value.func, module)
    if class_def is None:
        return imported_free is not None and any(imported_free(name) for name in names)
    return class_is_parameter_free(class_def, module, qualified, depth - 1)


def class_is_parameter_free(class_def: cst.ClassDef, module: cst.Module, qualified: QualifiedNames, depth: int = DEPTH) -> bool:
    """A class of the file whose bases and methods build no parameter (see the module docstring)."""
    if depth == 0:
        return False
    for base in class_def.bases:
        if "torch.nn.Module" in qualified(base.value):
            continue
        local = _local_class(base.value, module)
        if local is None or not class_is_parameter_free(local, module, qualified, depth - 1):
            return False
    methods = [item for item in class_def.body.body if isinstance(item, cst.FunctionDef)] \
        if isinstance(class_def.body, cst.IndentedBlock) else []
    for method in methods:
        finder = _BuiltValues()
        method.body.visit(finder)
        if finder.registers:
            return False
        for value in finder.values:
            if _builds_something(value, qualified, module) and not builds_parameter_free_module(value, method, module, qualified, depth - 1):
                return False
    return True


def _builds_something(value: cst.Call, qualified: QualifiedNames, module: cst.Module) -> bool:
    """A call that may build a Module or a Parameter: of a torch.nn class (not `F.relu`) or of a
    class of the file."""
    return any(name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper() for name in qualified(value.func)) \
        or _local_class(value.func, module) is not None


def _local_class(func: cst.BaseExpression, module: cst.Module) -> cst.ClassDef | None:
    if not isinstance(func, cst.Name):
        return None
    return next((item for item in module.body if isinstance(item, cst.ClassDef) and item.name.value == func.value), None)


def _container_items(container: cst.Call, builder: cst.FunctionDef | None) -> list[cst.BaseExpression] | None:
    """The modules `nn.ModuleList(terms)` holds: displayed in its arguments, or put into a list the
    method binds only to displays and fills only by `append`/`extend`/`+=` (None where any is unknown)."""
    items: list[cst.BaseExpression] = []
    for arg in container.args:
        if arg.keyword is not None:
            continue
        displayed = _displayed(arg.value)
        if displayed is not None:
            items += displayed
        elif isinstance(arg.value, cst.Name) and builder is not None:
            filled = _ListFilling(arg.value.value)
            builder.body.visit(filled)
            if filled.unknown or not filled.bound:
                return None
            items += filled.items
        else:
            return None
    return items


def _displayed(value: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(value, (cst.List, cst.Tuple)):
        return [element.value for element in value.elements] if all(isinstance(e, cst.Element) for e in value.elements) else None
    if isinstance(value, cst.Dict):
        return [element.value for element in value.elements] if all(isinstance(e, cst.DictElement) for e in value.elements) else None
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return [value.elt]
    if isinstance(value, cst.DictComp):
        return [value.value]
    return None


class _ListFilling(cst.CSTVisitor):
    """How a method binds and fills one local list."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.items: list[cst.BaseExpression] = []
        self.bound = False
        self.unknown = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(target.target, cst.Name) and target.target.value == self.name for target in node.targets):
            self._add(node.value)
            self.bound = True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == self.name:
            self._add(node.value)

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == self.name:
            self.unknown = True

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self.name:
            if func.attr.value == "append" and len(node.args) == 1:
                self.items.append(node.args[0].value)
            elif func.attr.value == "extend" and len(node.args) == 1:
                self._add(node.args[0].value)
            elif func.attr.value in ("insert", "__setitem__"):
                self.unknown = True

    def _add(self, value: cst.BaseExpression) -> None:
        displayed = _displayed(value)
        if displayed is None:
            self.unknown = True
        else:
            self.items += displayed


class _BuiltValues(cst.CSTVisitor):
    """Every call of a method (what may build its layers), and whether it registers a parameter or
    a module by name."""

    def __init__(self) -> None:
        self.values: list[cst.Call] = []
        self.registers = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self.values.append(node)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in REGISTERING_METHODS:
            self.registers = True
        if isinstance(node.func, cst.Name) and node.func.value == "setattr":
            self.registers = True
