"""Which attributes of the file's Module classes hold plain CPU tensors: `.to()` leaves them behind.

`model = Net().to(device)` moves `Net`'s parameters and buffers; `self.class_weights =
torch.tensor([1.0, 2.0])` in its `__init__` is neither, so `model.class_weights` is still on the
CPU after the move (`nn.CrossEntropyLoss(weight=model.class_weights)` then meets device outputs).
An attribute of a moved model is on the device only if it is one of those two; the placement facts
(`PlacementFacts.is_device_value`) ask this module which attributes certainly are not.

Only what the file proves counts: a top-level class defined once whose every base is
`torch.nn.Module` itself (a base of the file or of a library might register the name as a buffer,
and then assigning it updates that buffer), that stores the attribute in one `self.<name> = ...`
statement of its methods, nowhere else in the class (no `register_buffer`, `setattr` or augmented
store) nor through an instance anywhere in the file (`model.class_weights = w.to(device)`), from a
torch factory called without a device (`torch.tensor(...)`, `torch.ones(3)`).
"""

from __future__ import annotations

import ast

from devfix.analysis.ast_nodes import FUNCTIONS, every_node, is_self_attribute, store_targets
from devfix.analysis.imports import ImportTable
from devfix.analysis.torch_api import FACTORY_FUNCTIONS

MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


def plain_tensor_attributes(tree: ast.Module, imports: ImportTable) -> dict[str, frozenset[str]]:
    """Class name → the attributes its instances keep as CPU tensors that `.to()` does not move."""
    defined: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            defined[node.name] = defined.get(node.name, 0) + 1
    found = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and defined[node.name] == 1 and node.bases \
                and all(imports.qualify(base) in MODULE_BASES for base in node.bases) and not node.keywords:
            attributes = _plain_tensors(node, imports)
            if attributes:
                found[node.name] = attributes
    if not found:
        return found  # most files: no walk of the whole tree
    stored_from_outside = _stored_from_outside(tree)
    return {name: left for name, attributes in found.items() if (left := attributes - stored_from_outside)}


def _stored_from_outside(tree: ast.Module) -> frozenset[str]:
    """Attribute names stored through anything but `self`, anywhere in the file: `model.class_weights
    = model.class_weights.to(device)`, `model.w.data = ...` may put the attribute on a device."""
    found = set()
    for node in every_node(tree):
        for target in store_targets(node):
            found.update(inner.attr for inner in every_node(target) if isinstance(inner, ast.Attribute) and not is_self_attribute(inner))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and len(node.args) > 1 \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            found.add(node.args[1].value)
    return frozenset(found)


def _plain_tensors(class_node: ast.ClassDef, imports: ImportTable) -> frozenset[str]:
    stores: dict[str, list[ast.expr | None]] = {}  # attribute → the values stored in it (None: a store of another form)
    for node in every_node(class_node):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for inner in every_node(target):
                    if is_self_attribute(inner):
                        stores.setdefault(inner.attr, []).append(node.value if inner is target else None)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and is_self_attribute(node.target):
            stores.setdefault(node.target.attr, []).append(None)
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            called = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            if called in ("setattr", "register_buffer", "register_parameter", "add_module", "register_module"):
                named = node.args[1] if called == "setattr" and len(node.args) > 1 else node.args[0] if node.args else None
                if not (isinstance(named, ast.Constant) and isinstance(named.value, str)):
                    return frozenset()  # a name computed at run time may be any attribute
                stores.setdefault(named.value, []).append(None)
        elif isinstance(node, ast.Delete):
            stores.update({target.attr: [None] for target in node.targets if is_self_attribute(target)})
    return frozenset(name for name, values in stores.items() if len(values) == 1 and _host_factory(values[0], imports))


def _host_factory(value: ast.expr | None, imports: ImportTable) -> bool:
    """A torch factory called without a device (nor `pin_memory`, nor a star): made on the CPU
    (as long as no default device is set: the caller's question)."""
    return (
        isinstance(value, ast.Call) and imports.qualify(value.func) in FACTORY_FUNCTIONS
        and not any(keyword.arg in (None, "device") for keyword in value.keywords)
        and not any(isinstance(argument, ast.Starred) for argument in value.args)
    )
