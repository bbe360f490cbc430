"""Which models does a plain class keep unmoved while its methods move their inputs? DF003's
facts for trainer objects.

    class Trainer:
        def __init__(self, model, loader):
            self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            self.model = model
        def train(self):
            for x, y in self.loader:
                x, y = x.to(self.device), y.to(self.device)
                loss = self.criterion(self.model(x), y)

The batches go to `self.device` and the model stays on the CPU: the first GPU step fails.
`self.model = model.to(self.device)` fixes it where the object keeps the model. Proven when:

- the class is no Module (DF003 moves Module instances where they are built) and `__init__`
  stores `self.<model>` once, in a statement of its own body, from one of its parameters or from
  a Module it builds there; the class stores it nowhere else;
- `__init__` stores `self.<device>` once, in a statement of its body before that one, and the
  class stores it nowhere else; or the module binds a name once, in one assignment before the
  class (`device = torch.device(...)`), which no `global` statement and no code of the class binds;
- a method calls `self.<model>(...)` with an argument it moved to that device before the call
  (`x = x.to(self.device)`, `x, y = x.to(self.device), y.to(self.device)`, or `x.to(device)`
  in the call);
- the class reads `self.<model>` only to call it or a method of it that places nothing
  (`self.model.parameters()`, `.train()`, `self.model.decode(z)`; not `.to()`, `.cuda()`, `.cpu()`,
  `.half()`): nothing moves it, wraps it or hands it to other code; nothing in the file moves any
  `<something>.<model>` either;
- for a model given to `__init__`: the file or the files beside it construct the class, and every
  construction gives a Module built at the call (`Trainer(Net(), loader)`) or a name every binding
  of which in that file builds one and that nothing there moves (a moved model's own device may be
  another one); a class defined in `trainer.py` and built in `main.py` is read in both
  (`ProjectIndex.constructions_give_unmoved_modules`);
- the Module may hold state: not one of torch.nn's parameter-free classes, nor a loss given no
  tensor (`self.criterion = nn.MSELoss()` works with device inputs wherever it lives) or only
  tensors placed where it is built (`weight=torch.tensor(w).to(device)`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from devfix.analysis.ast_nodes import every_node, is_self_attribute, scope_nodes, store_targets
from devfix.analysis.imports import ImportTable
from devfix.analysis.moves import is_move, places_anything
from devfix.analysis.screen import may_hold_state

MOVING_METHODS = frozenset({"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "type", "xpu", "mps"})


ConstructedBeside = Callable[[str, int, str], "bool | None"]  # (class, position, parameter) → None: not built beside


def unmoved_object_models(
    tree: ast.Module, imports: ImportTable, builds_a_module: Callable[[ast.Call], bool], constructed_beside: ConstructedBeside | None = None,
) -> dict[str, dict[str, str]]:
    """Class name → model attribute → the device its inputs are moved to (`self.device`, or a
    name the module binds once before the class: `device`). `constructed_beside` says whether every
    construction of a class in the files beside this one gives an unmoved Module built there."""
    moved_anywhere = {
        node.func.value.attr for node in every_node(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MOVING_METHODS
        and isinstance(node.func.value, ast.Attribute)
    }
    found: dict[str, dict[str, str]] = {}
    for class_def in tree.body:
        if not isinstance(class_def, ast.ClassDef) or _may_be_a_module(class_def):
            continue
        models = _kept_models(tree, class_def, imports, builds_a_module, moved_anywhere, _module_devices(tree, class_def), constructed_beside)
        if models:
            found[class_def.name] = models
    return found


def _may_be_a_module(class_def: ast.ClassDef) -> bool:
    """A class with a base (it may be a Module, or a framework's class that places models)."""
    return bool(class_def.bases) and not all(isinstance(base, ast.Name) and base.id == "object" for base in class_def.bases)


def _kept_models(
    tree: ast.Module, class_def: ast.ClassDef, imports: ImportTable, builds_a_module: Callable[[ast.Call], bool], moved_anywhere: set[str],
    module_devices: set[str], constructed_beside: ConstructedBeside | None,
) -> dict[str, str]:
    init = next((item for item in class_def.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
    if init is None:
        return {}
    stores = _self_stores(class_def)
    given = [argument.arg for argument in init.args.args[1:]]
    kept: dict[str, tuple[int, ast.expr]] = {}
    for statement in init.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and is_self_attribute(statement.targets[0]):
            attribute = statement.targets[0].attr
            if stores.get(attribute) == 1:
                kept[attribute] = (statement.lineno, statement.value)
    found: dict[str, str] = {}
    for attribute, (line, value) in kept.items():
        if attribute in moved_anywhere or not _only_called(class_def, attribute):
            continue
        if isinstance(value, ast.Call):
            if not _builds_state(value, imports, builds_a_module):
                continue
        elif not (isinstance(value, ast.Name) and value.id in given):
            continue
        devices = {f"self.{device}" for device, (device_line, _) in kept.items() if device_line < line} | module_devices
        device = _device_of_moved_inputs(class_def, attribute, devices)
        if device is None:
            continue
        if isinstance(value, ast.Name) and not _given_unmoved_modules(tree, class_def.name, given.index(value.id), value.id, imports,
                                                                    builds_a_module, constructed_beside):
            continue
        found[attribute] = device
    return found


def _given_unmoved_modules(
    tree: ast.Module, class_name: str, position: int, keyword: str, imports: ImportTable, builds_a_module: Callable[[ast.Call], bool],
    constructed_beside: ConstructedBeside | None,
) -> bool:
    """The class is constructed, here or in the files beside, and every construction gives the
    parameter an unmoved Module built there."""
    is_the_class = lambda func: isinstance(func, ast.Name) and func.id == class_name  # noqa: E731
    here = constructions_give_unmoved_modules(tree, is_the_class, position, keyword, imports, builds_a_module)
    beside = constructed_beside(class_name, position, keyword) if constructed_beside is not None else None
    return here is not False and beside is not False and (here is True or beside is True)


def _module_devices(tree: ast.Module, class_def: ast.ClassDef) -> set[str]:
    """Names the module binds once, in an assignment of the name alone before the class, that no
    `global` statement rebinds and no code of the class binds (a parameter, a local)."""
    top: dict[str, list[ast.AST]] = {}
    for node in scope_nodes(tree.body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            top.setdefault(node.id, []).append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                top.setdefault((alias.asname or alias.name).split(".")[0], []).append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top.setdefault(node.name, []).append(node)
    rebound = {name for node in every_node(tree) if isinstance(node, (ast.Global, ast.Nonlocal)) for name in node.names}
    rebound |= {node.id for node in every_node(class_def) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    rebound |= {node.arg for node in every_node(class_def) if isinstance(node, ast.arg)}
    once = {
        statement.targets[0].id for statement in tree.body
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
        and statement.lineno < class_def.lineno
    }
    return {name for name in once if len(top.get(name, ())) == 1 and name not in rebound}


def _self_stores(class_def: ast.ClassDef) -> dict[str, int]:
    """How many statements of the class store each `self.<attr>` (also in tuples, augmented, deleted)."""
    counts: dict[str, int] = {}
    for node in every_node(class_def):
        for target in store_targets(node):
            for inner in ast.walk(target):
                if is_self_attribute(inner) and isinstance(inner.ctx, (ast.Store, ast.Del)):
                    counts[inner.attr] = counts.get(inner.attr, 0) + 1
    return counts


def _only_called(class_def: ast.ClassDef, attribute: str) -> bool:
    """Every read of `self.<attribute>` calls it, or calls a method of it that places nothing
    (`self.model.parameters()`, `.eval()`, a method of its own class: `self.model.decode(z)`)."""
    parents: dict[int, ast.AST] = {}
    for node in every_node(class_def):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in every_node(class_def):
        if not (is_self_attribute(node) and node.attr == attribute and isinstance(node.ctx, ast.Load)):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Call) and parent.func is node:
            continue
        if isinstance(parent, ast.Attribute) and parent.attr not in MOVING_METHODS:
            call = parents.get(id(parent))
            if isinstance(call, ast.Call) and call.func is parent:
                continue
        return False
    return True


def _device_of_moved_inputs(class_def: ast.ClassDef, attribute: str, devices: set[str]) -> str | None:
    """The device (one of `devices`) that a method moves an argument of `self.<attribute>(...)` to."""
    for method in class_def.body:
        if not isinstance(method, ast.FunctionDef) or method.name == "__init__":
            continue
        moves = _bindings_moved(method)
        for node in every_node(method):
            if not (isinstance(node, ast.Call) and is_self_attribute(node.func) and node.func.attr == attribute):
                continue
            for argument in node.args:
                device = _moved_to(argument)
                if device is None and isinstance(argument, ast.Name):
                    earlier = [(line, device) for name, line, device in moves if name == argument.id and line < node.lineno]
                    device = sorted(earlier, key=lambda binding: binding[0])[-1][1] if earlier else None  # (the last one on a line wins)
                if device in devices:
                    return device
    return None


def _bindings_moved(method: ast.FunctionDef) -> list[tuple[str, int, str | None]]:
    """(name, line, device) of each binding in the method, in the order of the source; the device
    is None where the value is no move (`x.to(self.device)`, `x.to(device)`), or where the binding is under an `if` or `try` (the call may
    then get the value unmoved): such a later binding ends the move."""
    found: list[tuple[str, int, str | None]] = []

    def visit(statements: list[ast.stmt], conditional: bool) -> None:
        for statement in statements:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
                if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
                    pairs = list(zip(target.elts, value.elts))
                else:
                    pairs = [(target, value if isinstance(target, ast.Name) else None)]
                for item, part in pairs:
                    if not isinstance(item, (ast.Name, ast.Tuple, ast.List, ast.Starred)):
                        continue  # `self.x = ...`, `table[i] = ...` bind no name
                    for name in (inner for inner in ast.walk(item) if isinstance(inner, ast.Name)):
                        moved = _moved_to(part) if part is not None and name is item and not conditional else None
                        found.append((name.id, statement.lineno, moved))
            elif isinstance(statement, (ast.For, ast.AsyncFor)):
                found.extend((name.id, statement.lineno, None) for name in ast.walk(statement.target) if isinstance(name, ast.Name))
            elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)) and isinstance(statement.target, ast.Name):
                found.append((statement.target.id, statement.lineno, None))
            inner_conditional = conditional or isinstance(statement, (ast.If, ast.Try, ast.Match))
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(statement, field, None)
                if isinstance(block, list):
                    visit([item for item in block if isinstance(item, ast.stmt)], inner_conditional)
            for handler in getattr(statement, "handlers", ()):
                visit(handler.body, True)

    visit(method.body, False)
    return found


def _moved_to(value: ast.expr) -> str | None:
    """`self.device` of `x.to(self.device)`, `device` of `x.to(device)` (also followed by a cast or `.float()`)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr == "to":
            device = next((keyword.value for keyword in value.keywords if keyword.arg == "device"), value.args[0] if value.args else None)
            if device is not None and is_self_attribute(device):
                return f"self.{device.attr}"
            return device.id if isinstance(device, ast.Name) else None
        if value.func.attr not in ("float", "long", "int", "half", "double", "bool", "contiguous"):
            return None
        value = value.func.value
    return None


def constructions_give_unmoved_modules(
    tree: ast.Module, is_the_class: Callable[[ast.expr], bool], position: int, keyword: str, imports: ImportTable,
    builds_a_module: Callable[[ast.Call], bool],
) -> bool | None:
    """Every construction of the class in the file (a call whose callee `is_the_class`) gives the
    parameter a Module built at the call, or a name the file binds only to such builds and never
    moves; None when the file constructs it nowhere."""
    constructions = [node for node in every_node(tree) if isinstance(node, ast.Call) and is_the_class(node.func)]
    if not constructions:
        return None
    for call in constructions:
        if any(isinstance(argument, ast.Starred) for argument in call.args) or any(item.arg is None for item in call.keywords):
            return False
        given = next((item.value for item in call.keywords if item.arg == keyword), call.args[position] if position < len(call.args) else None)
        if isinstance(given, ast.Call):
            if not _builds_state(given, imports, builds_a_module):
                return False
        elif not (isinstance(given, ast.Name) and _bound_only_to_built_modules(tree, given.id, imports, builds_a_module)):
            return False
    return True


def _bound_only_to_built_modules(tree: ast.Module, name: str, imports: ImportTable, builds_a_module: Callable[[ast.Call], bool]) -> bool:
    """Every binding of `name` in the file, in any scope, builds a Module (no move), no function
    takes a parameter of that name, and nothing moves it."""
    values = []
    for node in every_node(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    values.append(node.value)
                elif _stores(target, name):
                    return False
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)) and _stores(node.target, name):
            return False
        elif isinstance(node, ast.NamedExpr) and node.target.id == name:
            return False
        elif isinstance(node, (ast.With, ast.AsyncWith)) and any(item.optional_vars is not None and _stores(item.optional_vars, name) for item in node.items):
            return False
        elif isinstance(node, ast.arg) and node.arg == name:
            return False
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MOVING_METHODS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            return False
    return bool(values) and all(isinstance(value, ast.Call) and _builds_state(value, imports, builds_a_module) for value in values)


def _builds_state(call: ast.Call, imports: ImportTable, builds_a_module: Callable[[ast.Call], bool]) -> bool:
    """A Module built here, not moved, that may hold parameters or buffers (`screen.may_hold_state`:
    not `nn.ReLU()`, nor `nn.MSELoss()`, which works with device inputs wherever it lives), and not a
    loss given only tensors placed where it is built (`weight=torch.tensor(w).to(device)`)."""
    if not builds_a_module(call) or is_move(call, imports) or not may_hold_state(call, imports):
        return False
    class_name = (imports.qualify(call.func) or "").rsplit(".", 1)[-1]
    given = [*call.args, *(keyword.value for keyword in call.keywords)]
    return not class_name.endswith("Loss") or not all(places_anything(value, imports) for value in given)


def _stores(target: ast.expr, name: str) -> bool:
    return any(isinstance(inner, ast.Name) and inner.id == name for inner in ast.walk(target))
