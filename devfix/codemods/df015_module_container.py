"""DF015 module-container: submodules kept in a plain list or dict are invisible to `.to()`.

    Before:  self.heads = [nn.Linear(d, k) for k in sizes]
    After:   self.heads = nn.ModuleList([nn.Linear(d, k) for k in sizes])

Modules in a Python list or dict are not registered: `model.to(device)`, `model.parameters()` and
`state_dict()` never see them, so they stay on the CPU (and are never trained). Lists become
`nn.ModuleList`, string-keyed dicts `nn.ModuleDict`, lists of Parameters `nn.ParameterList`; an
empty list filled by `.append(Module)` in `__init__` becomes an empty `nn.ModuleList()`. A dict
comprehension becomes `nn.ModuleDict` when its keys are proven strings (`nn.ModuleDict` raises on
any other): written there, or the keys of a dict of strings (the strings of a list) that every
construction of the class in the file passes for the `__init__` parameter it iterates
(`{name: nn.Linear(d, k) for name, k in tasks.items()}` with `Heads({"color": 3})`); else it is
reported without a fix.

Unsafe: the registered layers now appear in `parameters()` (an optimizer built from it trains
them) and in `state_dict()` (old checkpoints lack their keys). That is usually the intent: the old
model silently never trained them.

Refuses: containers nothing reads (no method of the class, nothing else in the file: their
layers never run, so where they are matters to nothing; d2l's demo of a list beside a ModuleList
prints the difference on purpose), lists mixing Modules with other values, containers used with `+`/`*` or sorted, assigned
outside `__init__`, or set with `object.__setattr__` (deliberately unregistered), and the containers of a
class that registers modules itself (`self.add_module(str(i), layer)` for each item of `self.layers`,
`register_module`, `register_parameter`, `setattr(self, ...)`: a ModuleList or ParameterList would
register them twice, under new state-dict keys that pretrained checkpoints lack), and lists the class
hands to such a container itself (`self.blocks = nn.ModuleList(self.blocks_list)`, darts' N-HiTS).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.call_sites import constructor_values_for
from devfix.analysis.module_classes import class_facts, is_self_attribute, nn_prefix
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_api import PARAMETER_CLASSES
from devfix.analysis.torch_names import holds_state
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety

LIST_ONLY_METHODS = frozenset({"sort", "copy", "index", "count", "remove", "reverse", "clear"})
REGISTERING_CONTAINERS = frozenset({
    "torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict", "torch.nn.ParameterList", "torch.nn.ParameterDict",
})


class ModuleContainer(ScopeTracker, DevfixRule):
    CODE = "DF015"
    NAME = "module-container"
    SAFETY = Safety.UNSAFE
    DESCRIPTION = "Submodules or Parameters in a plain list/dict: not registered, not moved"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._containers: dict[cst.Assign, tuple[str, str, bool]] = {}  # → attribute, container class, fix proven

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not self.is_module_classdef(node):
            return
        if _registers_modules_itself(node):
            return  # `self.add_module(str(i), layer)` over the list's items: they are registered already
        facts = class_facts(node, self.line_of)
        wrapped = self._wrapped_in_containers(node)
        for name, use in facts.attributes.items():
            if len(use.assignments) != 1 or use.assignments[0][0] != "__init__" or name in wrapped:
                continue
            if use.other_uses & (LIST_ONLY_METHODS | {"arithmetic", "augmented assignment"}):
                continue
            statement = use.assignments[0][1]
            if not use.read_in - {"__init__"} and not self._read_elsewhere(name, node.name.value):
                continue  # its layers never run: where they are matters to nothing (d2l's list-versus-ModuleList demo)
            if isinstance(statement.value, cst.DictComp):
                if self._builds_module(statement.value.value) and holds_state(statement.value.value, self.qualified):
                    self._containers[statement] = (name, "ModuleDict", self._string_keys(statement.value, node))
                continue
            kind = self._container_kind(statement.value, use.appended)
            if kind is not None:
                self._containers[statement] = (name, kind, True)

    def _wrapped_in_containers(self, class_def: cst.ClassDef) -> set[str]:
        """Attributes the class hands to a registering container (`self.blocks =
        nn.ModuleList(self.blocks_list)` of darts' N-HiTS, `nn.Sequential(*self.layers)`): their
        items are registered already, under the container's name."""
        wrapped: set[str] = set()

        class Containers(cst.CSTVisitor):
            def visit_Call(inner, node: cst.Call) -> None:
                if self.qualified(node.func) & REGISTERING_CONTAINERS:
                    wrapped.update(arg.value.attr.value for arg in node.args if is_self_attribute(arg.value))

        class_def.body.visit(Containers())
        return wrapped

    def _read_elsewhere(self, name: str, class_name: str) -> bool:
        """Some `<value>.<name>` of the file outside the class (`net.heads[0](x)`) other than
        `self.<name>` of an unrelated class, or `self.<name>` in a subclass of the file."""
        finder = _AttributeReads(name, class_name)
        self.module.visit(finder)
        return finder.found

    def _string_keys(self, comprehension: cst.DictComp, class_def: cst.ClassDef) -> bool:
        """Every key of the comprehension is a string (`nn.ModuleDict` raises on any other): a
        string written there, or the keys of a dict (or the items of a list) of strings that every
        construction of the class in the file passes for the `__init__` parameter iterated
        (`{name: nn.Linear(d, k) for name, k in tasks.items()}` with `Heads({"color": 3})`)."""
        key = comprehension.key
        if isinstance(key, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            return True
        loop = comprehension.for_in
        if not isinstance(key, cst.Name) or loop.inner_for_in is not None or loop.ifs:
            return False
        target, iterated, keys_only = loop.target, loop.iter, True
        if isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Attribute) and not iterated.args \
                and iterated.func.attr.value in ("items", "keys"):
            keys_only = iterated.func.attr.value == "keys"
            iterated = iterated.func.value
        elif not isinstance(target, cst.Name):
            return False
        named = target if keys_only else (target.elements[0].value if isinstance(target, cst.Tuple) and len(target.elements) == 2 else None)
        if not (isinstance(named, cst.Name) and named.value == key.value and isinstance(iterated, cst.Name)):
            return False
        values = constructor_values_for(self.module, class_def, iterated.value)
        return bool(values) and all(_string_keyed(value, sequence_too=keys_only and iterated is loop.iter) for value in values)

    def _container_kind(self, value: cst.BaseExpression, appended: list[cst.Call]) -> str | None:
        if isinstance(value, cst.List) and not value.elements:
            items = [call.args[0].value for call in appended if len(call.args) == 1]
            if items and len(items) == len(appended) and all(self._builds_module(item) for item in items):
                return "ModuleList" if any(holds_state(item, self.qualified) for item in items) else None
            return None
        if isinstance(value, cst.List):
            items = [element.value for element in value.elements if isinstance(element, cst.Element)]
        elif isinstance(value, cst.ListComp):
            items = [value.elt]
        elif isinstance(value, cst.Dict):
            if not _string_keyed(value, sequence_too=False):
                return None
            items = [element.value for element in value.elements]
            if items and all(self._builds_module(item) for item in items):
                return "ModuleDict" if any(holds_state(item, self.qualified) for item in items) else None
            return None
        else:
            return None
        if items and all(self._builds_module(item) for item in items):
            return "ModuleList" if any(holds_state(item, self.qualified) for item in items) else None
        if items and all(isinstance(item, cst.Call) and self.qualified(item.func) & PARAMETER_CLASSES for item in items):
            return "ParameterList"
        return None

    def _builds_module(self, item: cst.BaseExpression) -> bool:
        if not isinstance(item, cst.Call) or self.qualified(item.func) & PARAMETER_CLASSES:
            return False
        return self.builds_module(item)

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        plan = self._containers.get(original_node)
        if plan is None:
            return updated_node
        name, kind, proven = plan
        prefix = nn_prefix(self.module)
        message = (f"`self.{name}` holds {'Parameters' if kind == 'ParameterList' else 'submodules'} in a plain "
                   f"{'dict' if kind == 'ModuleDict' else 'list'}: `.to(device)` and `parameters()` never see them")
        if not proven:
            self.report(original_node.value, message + f" (`{prefix or 'nn'}.ModuleDict` needs string keys)", fixable=False)
            return updated_node
        if prefix is None:
            self.report(original_node.value, message, fixable=False)
            return updated_node
        if not self.report(original_node.value, message + " (the fix makes them trainable and adds state_dict keys)",
                           fix_title=f"wrap it in `{prefix}.{kind}`"):
            return updated_node
        empty = isinstance(updated_node.value, cst.List) and not updated_node.value.elements
        arguments = [] if empty else [cst.Arg(updated_node.value)]
        wrapped = cst.Call(func=cst.parse_expression(f"{prefix}.{kind}"), args=arguments)
        return updated_node.with_changes(value=wrapped)


def _registers_modules_itself(class_def: cst.ClassDef) -> bool:
    """The class calls `self.add_module(...)`, `self.register_module(...)`, `self.register_parameter(...)`
    (monai's `GaussianFilter` registers each Parameter of its `self.sigma` list) or `setattr(self, ...)`."""

    class Registration(cst.CSTVisitor):
        found = False

        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                    and func.attr.value in ("add_module", "register_module"):
                self.found = True
            elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                    and func.attr.value == "register_parameter" and len(node.args) > 1 and isinstance(node.args[1].value, cst.Name) \
                    and node.args[1].value.value != "None":
                self.found = True  # a Parameter made elsewhere (an item of a list), not `register_parameter("b", None)`
            elif isinstance(func, cst.Name) and func.value == "setattr" and node.args \
                    and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "self":
                self.found = True

    registration = Registration()
    class_def.body.visit(registration)
    return registration.found


def _string_keyed(value: cst.BaseExpression, sequence_too: bool) -> bool:
    """A dict display whose every key is a string written there; with `sequence_too`, also a list,
    tuple or set display of strings (what `for name in names` iterates)."""
    if isinstance(value, cst.Dict):
        return all(isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) for element in value.elements)
    if sequence_too and isinstance(value, (cst.List, cst.Tuple, cst.Set)):
        return all(isinstance(element, cst.Element) and isinstance(element.value, cst.SimpleString) for element in value.elements)
    return False


class _AttributeReads(cst.CSTVisitor):
    """`<value>.<name>` read from an instance (not `self`), or `self.<name>` in a class whose bases
    name `class_name`."""

    def __init__(self, name: str, class_name: str) -> None:
        self.name, self.class_name, self.found = name, class_name, False
        self.subclass: list[bool] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.subclass.append(any(cst.Module([]).code_for_node(base.value).split(".")[-1] == self.class_name for base in node.bases))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.subclass.pop()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != self.name:
            return
        on_self = isinstance(node.value, cst.Name) and node.value.value == "self"
        if not on_self or (self.subclass and self.subclass[-1]):
            self.found = True
