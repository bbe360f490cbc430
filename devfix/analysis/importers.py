"""Who calls a top-level function of a module from the files beside it, and with what.

A helper module's function (`evaluate(model, loader)` in `helpers.py`) learns what its parameters
hold only from its callers, which live in other files (`train.py` passes `DataLoader(...)`). The
files of the helper's directory and of the one above it (where a script importing a package's
module sits) are read with `ast`; a call counts when the file's imports resolve its name to the
helper's module. A file that uses the function otherwise than calling it (hands it on, wraps it)
makes the callers unknown. What a call passes is summarised where it is found (which arguments are
DataLoaders), so that no file's tree outlives its reading: a run keeps many answers, and trees held
in memory make every later parse pay for the garbage collector's walks over them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from devfix.analysis.ast_nodes import Binding, every_node, scope_bindings, scope_nodes
from devfix.analysis.imports import ImportTable
from devfix.analysis.moves import is_cast, is_move
from devfix.analysis.torch_api import DATALOADER_NAMES, LEAVING_PLACEMENT_METHODS

LOOPS = (ast.For, ast.AsyncFor, ast.While)
MAX_FILES = 200  # a directory with more Python files than this is a library, not a script's neighbours


@dataclass(frozen=True)
class ForeignCall:
    """One call of the function in another file: where, what it passes by keyword, which of its
    arguments (by position or keyword) are DataLoaders, and which are names bound only by the result
    of a call of another function (`test_loader` of `train_loader, test_loader = make_loaders()`, by
    that function's qualified name, for the project to judge)."""

    file: str
    line: int
    keywords: frozenset[str]
    loaders: frozenset[int | str]
    unpacks: bool  # `*args` or `**kwargs`: which parameter gets what is unknown
    bound_by: tuple[tuple[int | str, str], ...] = ()
    moved: frozenset[int | str] = frozenset()  # arguments that are names moved before the call (`model.to(device)`)
    device_values: frozenset[int | str] = frozenset()  # arguments that may be on a device (`_may_be_on_a_device`)
    built_by: tuple[tuple[int | str, str], ...] = ()  # arguments written as a call (`nn.CrossEntropyLoss()`) → what it calls


Resolve = Callable[[Path, str], "Path | None"]  # (importing file, dotted module) → its file


def neighbour_files(target: Path) -> list[Path]:
    """The Python files of `target`'s directory and of its parent, but `target`; none when a
    directory holds too many to be a script's neighbours."""
    found: list[Path] = []
    for directory in (target.parent, target.parent.parent):
        try:
            files = sorted(path for path in directory.glob("*.py") if path.is_file() and path != target)
        except OSError:
            continue
        if len(files) > MAX_FILES:
            return []
        found += files
    return found


def calls_in_tree(
    file: Path, tree: ast.Module, imports: ImportTable, target: Path, function: str, resolve: Resolve,
) -> list[ForeignCall] | None:
    """The calls of `function` of module file `target` in `file` (its tree and imports); None when
    the file uses it otherwise than calling it by a name its imports resolve to `target`."""
    names = {local for local, qualified in imports.names.items() if _refers_to(qualified, function, file, target, resolve)}
    modules = {local for local, qualified in imports.names.items() if resolve(file, qualified) == target}
    if not names and not modules:
        return []
    calls: list[ForeignCall] = []
    uses = 0
    for scope in _scopes(tree):
        for node in scope_nodes(scope):
            if _names_the_function(node, names, modules, function):
                uses += 1
            elif isinstance(node, ast.Call) and _names_the_function(node.func, names, modules, function):
                calls.append(_summarised(file, node, scope, imports))
    if uses != len(calls):  # a use that is not the `func` of one of the calls
        return None
    return sorted(calls, key=lambda found: found.line)


def passes_a_loader(call: ForeignCall, position: int, parameter: str) -> bool:
    """The call passes `DataLoader(...)` for the parameter, or a name its scope binds only to one."""
    key = given_key(call, position, parameter)
    return key is not None and key in call.loaders


def given_key(call: ForeignCall, position: int, parameter: str) -> int | str | None:
    """How the call gives the parameter: by keyword, else by position; None when it unpacks."""
    if call.unpacks:
        return None
    return parameter if parameter in call.keywords else position


def _summarised(file: Path, call: ast.Call, scope: list[ast.stmt], imports: ImportTable) -> ForeignCall:
    unpacks = any(isinstance(arg, ast.Starred) for arg in call.args) or any(keyword.arg is None for keyword in call.keywords)
    given: list[tuple[int | str, ast.expr]] = [*enumerate(call.args), *((keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg)]
    loaders = frozenset(key for key, value in given if not unpacks and _is_a_loader(value, scope, imports))
    bound_by = tuple((key, qualified) for key, value in given if not unpacks and (qualified := _bound_by_a_call(value, scope, imports)))
    moved = frozenset(key for key, value in given if not unpacks and _moved_before(value, call.lineno, scope, imports))
    bindings = scope_bindings(scope_nodes(scope)) if not unpacks else {}
    on_device = frozenset(key for key, value in given if not unpacks and _may_be_on_a_device(value, call.lineno, scope, bindings, imports))
    keywords = frozenset(keyword.arg for keyword in call.keywords if keyword.arg)
    built_by = tuple((key, qualified) for key, value in given if not unpacks and isinstance(value, ast.Call)
                     and (qualified := imports.qualify(value.func)) is not None)
    return ForeignCall(str(file), call.lineno, keywords, loaders, unpacks, bound_by, moved, on_device, built_by)


def passes_a_built_value(call: ForeignCall, position: int, parameter: str, accepts: Callable[[str], bool]) -> bool:
    """The call passes, for the parameter, a call written in place whose qualified callee `accepts`
    takes (`Trainer(model, nn.CrossEntropyLoss())`)."""
    key = given_key(call, position, parameter)
    built = dict(call.built_by).get(key) if key is not None else None
    return built is not None and accepts(built)


def passes_a_device_value(call: ForeignCall, position: int, parameter: str) -> bool:
    """The call passes, for the parameter, a value that may be on a device (`_may_be_on_a_device`)."""
    key = given_key(call, position, parameter)
    return key is not None and key in call.device_values


def passes_a_moved_name(call: ForeignCall, position: int, parameter: str) -> bool:
    """The call passes, for the parameter, a name moved to a device before it (`model.to(device)`)."""
    key = given_key(call, position, parameter)
    return key is not None and key in call.moved


def _moved_before(value: ast.expr, line: int, scope: list[ast.stmt], imports: ImportTable) -> bool:
    """`model` moved on an earlier line of the scope (`model = Net().to(device)`, `model.cuda()`),
    and not bound again between that move and `line`."""
    if not isinstance(value, ast.Name):
        return False
    moves, bindings = [], []
    for node in scope_nodes(scope):
        if isinstance(node, ast.Call) and is_move(node, imports) and isinstance(node.func.value, ast.Name) and node.func.value.id == value.id:
            moves.append(node.lineno)
        elif isinstance(node, ast.Assign) and _binds(node, value.id):
            (moves if is_move(node.value, imports) else bindings).append(node.lineno)
        elif _rebinds(node, value.id):
            bindings.append(node.lineno)
    last = max((at for at in moves if at < line), default=None)
    return last is not None and not any(last < at < line for at in bindings)


def _may_be_on_a_device(
    value: ast.expr, line: int, scope: list[ast.stmt], bindings: dict[str, list[Binding]], imports: ImportTable, depth: int = 0,
) -> bool:
    """A move (`x.to(device)`), a name moved before `line`, what one returns (`model(x)`), a tensor
    method or item of such a value (`model(x).argmax(1)`, `out[0]`; not `.cpu()`, `.item()`), or a
    name whose last binding before `line` gives one (`logits = model(x)`) and that no loop around
    the call binds again after it: for "may it be on a device?" questions (does `.numpy()` need
    `.cpu()`?), never to move something there."""
    if depth > 8:
        return False
    again = lambda inner: _may_be_on_a_device(inner, line, scope, bindings, imports, depth + 1)  # noqa: E731
    if is_move(value, imports) or _moved_before(value, line, scope, imports):
        return True
    if isinstance(value, ast.Subscript):
        return again(value.value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return _moved_before(value.func, line, scope, imports)  # the output of a moved model
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        method = value.func.attr
        if method in LEAVING_PLACEMENT_METHODS or (method in ("to", "type") and not is_cast(value, imports)):
            return False
        return again(value.func.value)
    if not isinstance(value, ast.Name):
        return False
    bound_here = bindings.get(value.id, [])
    before = [(at, bound) for at, bound in bound_here if at < line]
    if not before or before[-1][1] is None:
        return False  # unbound here, or bound otherwise
    loops = [node for node in scope_nodes(scope) if isinstance(node, LOOPS) and node.lineno <= line <= (node.end_lineno or node.lineno)]
    if depth == 0 and any(loop.lineno <= at <= (loop.end_lineno or loop.lineno) for at, _ in bound_here if at > line for loop in loops):
        return False  # bound again later in a loop around the call: the next round may bring that value
    at, bound = before[-1]
    return _may_be_on_a_device(bound, at, scope, bindings, imports, depth + 1)  # its names as they were before that line


def _bound_by_a_call(value: ast.expr, scope: list[ast.stmt], imports: ImportTable) -> str | None:
    """The qualified name of the imported function whose result alone binds the name (`a, b = f()`
    or `a = f()`), for the project to say what it returns."""
    if not isinstance(value, ast.Name):
        return None
    nodes = list(scope_nodes(scope))
    bindings = [node for node in nodes if isinstance(node, ast.Assign) and any(
        isinstance(inner, ast.Name) and inner.id == value.id for target in node.targets for inner in every_node(target))]
    others = [node for node in nodes if not isinstance(node, ast.Assign) and _rebinds(node, value.id)]
    if len(bindings) != 1 or others or not isinstance(bindings[0].value, ast.Call):
        return None
    qualified = imports.qualify(bindings[0].value.func)
    return qualified if qualified is not None and "." in qualified else None


def _is_a_loader(value: ast.expr, scope: list[ast.stmt], imports: ImportTable) -> bool:
    """`DataLoader(...)`, or a name the scope binds only to one."""
    if isinstance(value, ast.Call):
        return _builds_a_loader(value, imports)
    if not isinstance(value, ast.Name):
        return False
    bound = [node.value for node in scope_nodes(scope) if isinstance(node, ast.Assign) and _binds(node, value.id)]
    others = [node for node in scope_nodes(scope) if _rebinds(node, value.id)]
    return bool(bound) and not others and all(isinstance(built, ast.Call) and _builds_a_loader(built, imports) for built in bound)


def _refers_to(qualified: str, function: str, file: Path, target: Path, resolve: Resolve) -> bool:
    owner, _, name = qualified.rpartition(".")
    return name == function and bool(owner) and resolve(file, owner) == target


def _names_the_function(node: ast.AST, names: set[str], modules: set[str], function: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names
    return isinstance(node, ast.Attribute) and node.attr == function and isinstance(node.value, ast.Name) and node.value.id in modules


def _scopes(tree: ast.Module) -> list[list[ast.stmt]]:
    """The module's statements and those of every function in it, each a scope of its own."""
    functions = [node for node in every_node(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [tree.body, *(function.body for function in functions)]


def _builds_a_loader(call: ast.Call, imports: ImportTable) -> bool:
    return imports.qualify(call.func) in DATALOADER_NAMES


def _binds(node: ast.Assign, name: str) -> bool:
    return len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name


def _rebinds(node: ast.AST, name: str) -> bool:
    """A binding of `name` other than a plain `name = value` (a loop, `with`, augmented, unpacked)."""
    if isinstance(node, ast.Assign):
        return not _binds(node, name) and any(isinstance(inner, ast.Name) and inner.id == name for target in node.targets for inner in every_node(target))
    if isinstance(node, (ast.For, ast.AsyncFor, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
        return any(isinstance(inner, ast.Name) and inner.id == name for inner in every_node(node.target))
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return any(item.optional_vars is not None and any(isinstance(inner, ast.Name) and inner.id == name for inner in every_node(item.optional_vars)) for item in node.items)
    return False
