"""Which Module classes of a file only ever have instances on the CPU, and its device variables.

A program that never moves its model (`model = Net()`, `out = model(x)`) runs the model's layers
on the CPU. When a method of `Net` puts its working tensors on the program's device variable
(`h = torch.zeros(b, n).to(DEVICE)` with `DEVICE = torch.device("cuda" if ... else "cpu")`), a
GPU machine meets CPU weights with a CUDA tensor (DF028). That needs every instance of the class
proven on the CPU:

- every construction of the class is held by a name or a layer that is only called or asked for
  an attribute (`analysis.module_instances.called_instances`: nothing hands it to other code), or
  by a name its scope binds once whose every read is called, asked for a method that is no move,
  or handed to a function or plain class of the file that never moves it
  (`analysis.keeping_callees`: `trainer = Trainer(model, loader)`);
- no such name is built moved (`Net().to(device)`) nor moved later (`model.to(device)`,
  `model.cuda()`), in any scope of the file;
- a layer (`self.cell = Cell(...)`) is not moved in the holding class, and every instance of the
  holding class is proven on the CPU in turn;
- some name holding the class, or holding a class that holds it, is read (the model runs);
- and (for the device names DF028 reads) the class does not place its own state: no
  `self.to(...)`, no layer built or moved onto a device in a method, no device read in `__init__`.

Whether other files build the class is the project's to say (the rule asks for it).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from devfix.analysis.ast_nodes import FUNCTIONS, every_node, is_self_attribute
from devfix.analysis.keeping_callees import KeepingUses
from devfix.analysis.module_instances import called_instances

MOVING_METHODS = frozenset({"to", "cuda", "to_empty", "xpu", "mps", "ipu"})
Imported = Callable[[str], "tuple[KeepingUses, str] | None"]  # an imported name → its file's KeepingUses, its name there
NOT_MOVING = frozenset({"eval", "train", "float", "double", "half", "bfloat16", "requires_grad_"})


def host_only_classes(tree: ast.Module, module_classes: set[str], qualify: Callable[[ast.expr], str | None],
                      imported: Imported = lambda name: None) -> frozenset[str]:
    """The Module classes of the file whose every instance the file keeps on the CPU (see above)."""
    instances = called_instances(tree, module_classes, qualify)
    if not instances.classes():
        return kept_by_locals(tree, module_classes, imported)
    nodes = list(every_node(tree))
    moved_names = {  # `model.to(device)`, `model.eval().cuda()`, and names bound to a moved value
        root.id for node in nodes
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MOVING_METHODS
        and isinstance(root := _chain_root(node.func.value), ast.Name)
    }
    moved_attributes = {  # `self.cell.to(device)`, `self.cell = Cell().to(device)`
        node.func.value.attr for node in nodes
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MOVING_METHODS
        and is_self_attribute(node.func.value)
    }
    for node in nodes:
        if isinstance(node, ast.Assign) and _moves(node.value):
            moved_names.update(target.id for target in node.targets if isinstance(target, ast.Name))
            moved_attributes.update(target.attr for target in node.targets if is_self_attribute(target))
    read = {node.id for node in nodes if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    names_of: dict[str, set[str]] = {}
    for name, class_name in instances.names.items():
        names_of.setdefault(class_name, set()).add(name)
    layers_of: dict[str, set[tuple[str, str]]] = {}
    for (holder, attribute), class_name in instances.layers.items():
        layers_of.setdefault(class_name, set()).add((holder, attribute))
    host: set[str] = set()
    running: set[str] = set()  # classes whose instances run: a name holding them is read
    changed = True
    while changed:
        changed = False
        for class_name in instances.classes() - host:
            names = names_of.get(class_name, set())
            layers = layers_of.get(class_name, set())
            if names & moved_names or any(attribute in moved_attributes or holder not in host for holder, attribute in layers):
                continue
            host.add(class_name)
            if names & read or any(holder in running for holder, _ in layers):
                running.add(class_name)
            changed = True
    return frozenset(host & running) | kept_by_locals(tree, module_classes - instances.classes(), imported)


def kept_by_locals(tree: ast.Module, module_classes: set[str], imported: Imported = lambda name: None) -> frozenset[str]:
    """The classes whose every construction is bound to a name its scope binds only there, each
    read of which keeps the instance (`analysis.keeping_callees`: called, asked for a method that
    is no move, handed to a function or plain class of the file that never moves it), one at least."""
    nodes = every_node(tree)
    constructions: dict[str, list[ast.Call]] = {}
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in module_classes:
            constructions.setdefault(node.func.id, []).append(node)
    if not constructions:
        return frozenset()
    uses = KeepingUses(tree, imported)
    class_reads: dict[str, int] = {}
    for node in nodes:
        if isinstance(node, ast.Name) and node.id in constructions:
            class_reads[node.id] = class_reads.get(node.id, 0) + 1
    return frozenset(
        class_name for class_name, calls in constructions.items()
        if class_reads.get(class_name) == len(calls) and all(_kept_local(call, uses) for call in calls)
    )


def _kept_local(construction: ast.Call, uses: KeepingUses) -> bool:
    """`model = Net(...)` (or `Net(...).eval()`) in a scope that binds `model` nowhere else, every
    read of it there keeping the instance, and one at least."""
    value: ast.expr = construction
    parent = uses.parents.get(id(value))
    while isinstance(parent, ast.Attribute) and parent.attr in NOT_MOVING:
        call = uses.parents.get(id(parent))
        if not (isinstance(call, ast.Call) and call.func is parent and not call.args and not call.keywords):
            return False
        value, parent = call, uses.parents.get(id(call))
    if not (isinstance(parent, ast.Assign) and parent.value is value and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    scope = parent
    while scope is not None and not isinstance(scope, (*FUNCTIONS, ast.Module)):
        scope = uses.parents.get(id(scope))
    scope = scope if scope is not None else uses.tree
    bindings, reads = 0, []
    for node in every_node(scope):
        if isinstance(node, ast.Name) and node.id == name:
            if isinstance(node.ctx, ast.Load):
                reads.append(node)
            else:
                bindings += 1
        elif (isinstance(node, ast.arg) and node.arg == name) or (isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names):
            return False
    return bindings == 1 and bool(reads) and all(uses.keeps(read) for read in reads)


def _chain_root(value: ast.expr) -> ast.expr:
    """`model` of `model.eval().float()`: what a chain of calls of methods that keep the instance starts from."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in NOT_MOVING:
        value = value.func.value
    return value


def _moves(value: ast.expr) -> bool:
    """`Net().to(device).eval()`: a chain of method calls with a move in it."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr in MOVING_METHODS:
            return True
        value = value.func.value
    return False


def program_device_names(tree: ast.Module) -> frozenset[str]:
    """Top-level names bound once in the file, at its top level, to a device that may be CUDA:
    `DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")`, `device = "cuda:0"`.
    A name bound anywhere else (a function's `global`, a loop) may be something else there."""
    candidates = {
        statement.targets[0].id for statement in tree.body
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
        and _names_cuda(statement.value)
    }
    if not candidates:
        return frozenset()  # most files: no walk of the whole tree
    bound: dict[str, int] = {}
    for node in every_node(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound[node.id] = bound.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bound[name] = bound.get(name, 0) + 2
    found = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name) \
                and statement.targets[0].id in candidates and bound.get(statement.targets[0].id) == 1:
            found.add(statement.targets[0].id)
    return frozenset(found)


def _names_cuda(value: ast.expr) -> bool:
    """A "cuda" or "cuda:N" string anywhere in the value, and nothing but literals, names,
    attributes, calls and conditionals (no lambda, comprehension or container)."""
    allowed = (ast.Constant, ast.Name, ast.Attribute, ast.Call, ast.IfExp, ast.Compare, ast.BoolOp, ast.UnaryOp,
               ast.Load, ast.keyword, ast.cmpop, ast.boolop, ast.unaryop)
    nodes = list(ast.walk(value))
    return all(isinstance(node, allowed) for node in nodes) and any(
        isinstance(node, ast.Constant) and isinstance(node.value, str) and (node.value == "cuda" or node.value.startswith("cuda:"))
        for node in nodes
    )


def program_devices_in_host_classes(
    tree: ast.Module, module_classes: set[str], qualify: Callable[[ast.expr], str | None],
    imported_device: Callable[[str], bool] = lambda name: False, kept_elsewhere: Callable[[str], bool] = lambda name: False,
    imported: Imported = lambda name: None, built_only_here: Callable[[str], bool] = lambda name: True,
) -> dict[str, frozenset[tuple[int, int]]]:
    """Host-only classes (`host_only_classes`) → where (line, byte column) their methods but
    `__init__` name a program device (`program_device_names`, or a name imported from a file of
    the project that binds it so: `imported_device`) to place tensors on (`.to(DEVICE)`,
    `device=DEVICE`), in a method that neither binds the name nor takes it as a parameter. A class
    the file never builds counts when the files beside it keep every instance on the CPU
    (`kept_elsewhere`); one it builds, when it keeps them so itself and no other file builds it
    (`built_only_here`)."""
    devices = set(program_device_names(tree))
    asked: dict[str, bool] = {}  # imported names → each is a program device of the file it comes from

    def is_device(name: str) -> bool:
        if name in devices:
            return True
        if name not in asked:
            asked[name] = imported_device(name)
        return asked[name]

    found: dict[str, set[tuple[int, int]]] = {}
    for class_node in tree.body:
        if not isinstance(class_node, ast.ClassDef) or class_node.name not in module_classes:
            continue
        places_itself = None
        for method in class_node.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.name == "__init__":
                continue
            local = _local_names(method)
            placed = {(name.lineno, name.col_offset) for name in _placing_names(method) if name.id not in local and is_device(name.id)}
            if placed and places_itself is None:
                places_itself = _places_itself(class_node, frozenset(devices | {name for name, known in asked.items() if known}))
            if placed and not places_itself:
                found.setdefault(class_node.name, set()).update(placed)
    if not found:
        return {}
    host = host_only_classes(tree, module_classes, qualify, imported)
    built = {node.func.id for node in every_node(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    return {
        class_name: frozenset(places) for class_name, places in found.items()
        if (class_name in host and built_only_here(class_name)) or (class_name not in built and kept_elsewhere(class_name))
    }


def _local_names(method: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names a method takes as parameters or binds anywhere in its body (assignments, loops,
    `with`/`except ... as`, imports, `global`)."""
    local = {arg.arg for arg in ast.walk(method.args) if isinstance(arg, ast.arg)}
    for node in ast.walk(method):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            local.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            local.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            local.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            local.update(node.names)
    return local


def _places_itself(class_node: ast.ClassDef, devices: frozenset[str]) -> bool:
    """The class moves itself or its layers (`self.to(DEVICE)`, `self.lin = nn.Linear(...).cuda()`,
    `self.proj.to(...)`), or its `__init__` reads a program device (`nn.Linear(4, 4, device=DEVICE)`,
    a buffer made there): its state may be on the device whatever the program does."""
    for node in ast.walk(class_node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MOVING_METHODS:
            receiver = node.func.value
            if (isinstance(receiver, ast.Name) and receiver.id == "self") or is_self_attribute(receiver):
                return True
        if isinstance(node, ast.Assign) and _moves(node.value) and any(is_self_attribute(target) for target in node.targets):
            return True
    init = next((node for node in class_node.body if isinstance(node, ast.FunctionDef) and node.name == "__init__"), None)
    return init is not None and any(isinstance(node, ast.Name) and node.id in devices for node in ast.walk(init))


def _placing_names(method: ast.AST) -> list[ast.Name]:
    """The names a method places on: `x.to(name)` (its one positional argument, or `device=name`)
    and `device=name` of any call."""
    found = []
    for node in ast.walk(method):
        if not isinstance(node, ast.Call):
            continue
        found += [keyword.value for keyword in node.keywords if keyword.arg == "device" and isinstance(keyword.value, ast.Name)]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "to" and len(node.args) == 1 and isinstance(node.args[0], ast.Name):
            found.append(node.args[0])
    return found
