"""Which names of a file hold instances of one of its Module classes, and only ever are called.

`model = Pool().to(device)` then `model(x, lengths)`: `Pool.forward` receives what those calls give
(`nn.Module.__call__` hands its arguments to `forward`), so the value analysis can give `forward`'s
parameters the kinds the calls pass, as it does for plain functions. That needs every call of the
`forward` to be known: the class is only built (not subclassed, passed on or read otherwise), each
name built from it is bound only to such an instance and only called or asked for an attribute
(`model.eval()`, `model.parameters()`: not handed to other code, which might call it), and nothing
calls `forward` by name or calls `self(...)`. An instance called where it is built (`Loss()(x, y)`)
is such a holder too.

A layer of another Module class of the file is such a holder too: `self.time_mlp =
nn.Sequential(SinusoidalPosEmb(dim), nn.Linear(dim, dim))` then `self.time_mlp(time)` in a method
hands `time` to `SinusoidalPosEmb.forward` (a Sequential gives its input to its first module), when
that one assignment is the attribute's only store in the file and every read of it is such a call
in a method of the holding class. Every construction of the class must be held by a name or a layer
found so: an instance built anywhere else (`run(Pool())`) may be called with anything.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable

from devfix.analysis.ast_nodes import every_node, is_self_attribute
from devfix.analysis.keeping_callees import RETURNING_ITSELF

KEEPING_THE_INSTANCE = frozenset({"to", "cuda", "cpu", "eval", "train", "float", "double", "half", "bfloat16", "requires_grad_"})
SEQUENTIAL = "torch.nn.Sequential"


@dataclass(frozen=True)
class Instances:
    """Where the file keeps instances of its Module classes, each only ever called."""

    names: dict[str, str] = field(default_factory=dict)  # `model` → `Pool`
    layers: dict[tuple[str, str], str] = field(default_factory=dict)  # (`Denoiser`, `time_mlp`) → `SinusoidalPosEmb`
    immediate: dict[int, str] = field(default_factory=dict)  # id of the call `Loss()(x, y)` → `Loss`

    def classes(self) -> set[str]:
        return {*self.names.values(), *self.layers.values(), *self.immediate.values()}

    def called_at(self, call: ast.Call) -> str | None:
        """The class whose instance `call` calls where it builds it (`Loss()(x, y)`, `Loss().to(device)(x, y)`)."""
        return self.immediate.get(id(call))


def called_instances(tree: ast.Module, module_classes: set[str], qualify: Callable[[ast.expr], str | None] | None = None,
                     imported: frozenset[str] = frozenset()) -> Instances:
    """The names and layers that only hold an instance of one of the file's `module_classes` and
    are only called (see the module's docstring). `qualify` resolves `nn.Sequential`; without it no
    Sequential is read. `imported`: Module classes of another file as this one names them (`from
    model import Pooler`), whose own file tells whether their methods call `self(...)`."""
    modules: dict[str, ast.ClassDef | None] = {
        node.name: node for node in tree.body if isinstance(node, ast.ClassDef) and node.name in module_classes}
    modules.update({name: None for name in imported if name not in modules})
    if not modules:
        return Instances()
    nodes = list(every_node(tree))
    if any(isinstance(node, ast.Attribute) and node.attr == "forward" for node in nodes):
        return Instances()
    built: dict[str, set[str | None]] = {}  # name → the classes (None: something else) it is bound to, in any scope
    assigned = {  # the `Name` target of each `name = value` statement → its value
        id(node.targets[0]): node.value for node in nodes
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    }
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            # `name = Pool(...)`: the class built; any other binding (a loop, `a, b = ...`): not only an instance
            built.setdefault(node.id, set()).add(_built_class(assigned[id(node)], modules) if id(node) in assigned else None)
        elif isinstance(node, ast.arg):
            built.setdefault(node.arg, set()).add(None)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                built.setdefault(name, set()).add(None)
    reads = _reads(nodes)
    instances = {
        name: next(iter(bound)) for name, bound in built.items()
        if len(bound) == 1 and None not in bound and all(use in ("call", "attribute") for use in reads.get(name, ()))
    }
    held = {id(_construction(assigned[id(node)])) for node in nodes if isinstance(node, ast.Name) and node.id in instances and id(node) in assigned}
    layers = _layers(tree, modules, nodes, qualify)
    held |= {construction for _, construction in layers.values()}
    immediate = {  # `Loss()(x, y)`: an instance called where it is built, and never again
        id(node): class_name for node in nodes
        if isinstance(node, ast.Call) and (class_name := _built_class(node.func, modules)) is not None
    }
    held |= {id(_construction(node.func)) for node in nodes if id(node) in immediate}
    usable = {  # built only where held (every read of the class's name is such a call), never calling itself
        class_name for class_name in modules
        if all(use == "call" for use in reads.get(class_name, ())) and (modules[class_name] is None or not calls_itself(modules[class_name]))
        and all(id(node) in held for node in nodes if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == class_name)
    }
    return Instances(
        {name: class_name for name, class_name in instances.items() if class_name in usable},
        {key: class_name for key, (class_name, _) in layers.items() if class_name in usable},
        {call: class_name for call, class_name in immediate.items() if class_name in usable},
    )


def _built_class(value: ast.expr, modules: dict[str, ast.ClassDef | None]) -> str | None:
    """`Pool()`, `Pool(...).to(device).eval()`: the class built; None for anything else."""
    value = _construction(value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in modules:
        return value.func.id
    return None


def _construction(value: ast.expr) -> ast.expr:
    """`Pool(...)` of `Pool(...).to(device).eval()`."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in KEEPING_THE_INSTANCE:
        value = value.func.value
    return value


def _layers(tree: ast.Module, modules: dict[str, ast.ClassDef | None], nodes: list[ast.AST], qualify) -> dict[tuple[str, str], tuple[str, int]]:
    """(holding class, attribute) → (the class held, the id of its construction), for the layers of
    the module's docstring: `self.enc = Pool(...)` or `self.mlp = nn.Sequential(Pool(...), ...)`,
    the attribute's one store of the file, every read of it a call `self.<attribute>(...)` in a
    method of the holding class."""
    found: dict[tuple[str, str], tuple[str, int]] = {}
    called: dict[tuple[str, str], set[int]] = {}  # (class, attribute) → the ids of the reads its methods' calls make
    for holder in tree.body:
        if not isinstance(holder, ast.ClassDef):
            continue
        for method in holder.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in every_node(method):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and is_self_attribute(node.targets[0]):
                    held = _held_module(node.value, modules, qualify)
                    if held is not None:
                        found[(holder.name, node.targets[0].attr)] = held
                elif isinstance(node, ast.Call) and is_self_attribute(node.func):
                    called.setdefault((holder.name, node.func.attr), set()).add(id(node.func))
    if not found:
        return {}
    holders: dict[str, set[str]] = {}  # an attribute name held in several classes: each read may be any of them
    for holder, attribute in found:
        holders.setdefault(attribute, set()).add(holder)
    stores: dict[str, int] = {}
    foreign: set[str] = set()  # attributes read otherwise than called by their holder's methods
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr in holders:
            if not isinstance(node.ctx, ast.Load):
                stores[node.attr] = stores.get(node.attr, 0) + 1
            elif not any(id(node) in called.get((holder, node.attr), ()) for holder in holders[node.attr]):
                foreign.add(node.attr)
    return {
        key: held for key, held in found.items()
        if stores.get(key[1]) == 1 and key[1] not in foreign and len(holders[key[1]]) == 1
    }


def _held_module(value: ast.expr, modules: dict[str, ast.ClassDef | None], qualify) -> tuple[str, int] | None:
    """The class a layer's value holds and the id of its construction: `Pool(...)` (moved or
    not), or the first module of `nn.Sequential(Pool(...), ...)`."""
    value = _construction(value)
    if qualify is not None and isinstance(value, ast.Call) and qualify(value.func) == SEQUENTIAL and value.args \
            and not value.keywords and not any(isinstance(arg, ast.Starred) for arg in value.args):
        value = _construction(value.args[0])
    built = _built_class(value, modules)
    return None if built is None else (built, id(value))


def _reads(nodes: list[ast.AST]) -> dict[str, list[str]]:
    """Each name read → how each read uses it: "call" (`name(...)`), "attribute" (`name.x`), or
    "value" (also `net = name.eval()`: a method that gives the instance back, used otherwise than as
    a statement, hands it on)."""
    calls = {id(node.func): node for node in nodes if isinstance(node, ast.Call)}
    statements = {id(node.value) for node in nodes if isinstance(node, ast.Expr)}
    owners = {id(node.value): node for node in nodes if isinstance(node, ast.Attribute)}
    uses: dict[str, list[str]] = {}
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            attribute = owners.get(id(node))
            if id(node) in calls:
                use = "call"
            elif attribute is None:
                use = "value"
            elif attribute.attr in RETURNING_ITSELF and id(attribute) in calls and id(calls[id(attribute)]) not in statements:
                use = "value"
            else:
                use = "attribute"
            uses.setdefault(node.id, []).append(use)
    return uses


def calls_itself(class_node: ast.ClassDef) -> bool:
    """`self(...)` in a method: `forward` then gets what that call gives too."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "self" for node in every_node(class_node))
