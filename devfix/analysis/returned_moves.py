"""Functions that hand back what they moved: `def build_model(device): ...; return model.to(device)`.

A model built and placed by a function of its own (`get_model(args)`, `create_model(device)`) is
the usual shape of a training script, and `model = build_model(device)` then holds a model on the
device the caller passed, as surely as `model = Net().to(device)` does. `analysis.placement` counts
such a binding as a move (`PlacementFacts.add_returned_moves`), so the rules that ask "was this
model moved?" see the fact one call away. Proven, never guessed: every `return` gives a move, or a
name that a statement of the function's own body (not under a branch or a loop) moved after its
last other binding; the device is a parameter the function never rebinds or an attribute of one
(`args.device`), a name the file binds once at its top level (`device = torch.device(...)`: the
caller sees the same one), or CUDA itself (`.cuda()`, `"cuda"`, `torch.device("cuda")`); a
generator is no such function. A model a `train(model, loader)` moves to a device of its own and
hands to an optimizer (so it holds parameters) is on `next(model.parameters()).device` for the caller.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from devfix.analysis.ast_nodes import parameters, scope_bindings, scope_nodes
from devfix.analysis.imports import ImportTable
from devfix.analysis.moves import is_cast, is_move
from devfix.analysis.torch_api import PLACEMENT_KEEPING_METHODS

CUDA = (None, None, None)  # the device of `.cuda()` and of CUDA literals: no parameter names it
OWN = ("", None, None)  # a device of the function's own (`device = torch.device(...)` in `train`): only the model names it
Device = tuple[str | None, str | None, str | None]  # (parameter, attribute of it, global): ("device", None, None), ("args", "device", None), CUDA


@dataclass(frozen=True)
class ReturnedMove:
    """`parameter` is the one whose argument names the device (or holds it as `attribute`:
    `args.device`), None for CUDA itself or for `global_name`, a name the file binds once at its
    top level that names the device; `positional` the function's positional parameters, to find
    that argument at a call."""

    parameter: str | None
    positional: tuple[str, ...]
    attribute: str | None = None
    global_name: str | None = None
    own_device: bool = False  # a device the function chose itself: the caller names it by the model's parameters


def returned_move(
    function: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportTable, globals_once: frozenset[str] = frozenset(),
) -> ReturnedMove | None:
    """`globals_once`: the names the function's own file binds once at its top level (none for a
    function of another file: its caller cannot name them)."""
    read = _read_returns(function)
    if read is None:
        return None
    nodes, returns, bindings, names = read
    devices: set[Device] = set()
    for node in returns:
        move = _move_given_back(node, function.body, bindings, imports)
        device = _device_of(move, names, bindings, imports, globals_once) if move is not None else None
        if device is None and move is not None and _chosen_here(move, bindings) and _optimizes(move.func.value, nodes):
            device = OWN
        if device is None:
            return None
        devices.add(device)
    if len(devices) != 1:
        return None
    device = devices.pop()
    arguments = function.args
    positional = tuple(argument.arg for argument in (*arguments.posonlyargs, *arguments.args))
    if device == OWN:
        return ReturnedMove(None, positional, own_device=True)
    parameter, attribute, global_name = device
    return ReturnedMove(parameter, positional, attribute, global_name)


def returned_listed_moves(
    function: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportTable, globals_once: frozenset[str] = frozenset(),
) -> ReturnedMove | None:
    """An ensemble's builder: every `return` gives a list whose every element is a move to one
    device (`return [Net().to(device) for _ in range(n)]`, `return [g.to(device), d.to(device)]`,
    or a name bound once to `[]` that the function only appends moves to and returns). The device
    as for `returned_move`; a device of the function's own is not followed."""
    read = _read_returns(function)
    if read is None:
        return None
    nodes, returns, bindings, names = read
    devices: set[Device | None] = set()
    for node in returns:
        moves = _listed_moves(node.value, nodes, bindings, imports)
        if not moves:
            return None
        devices |= {_device_of(_placing_call(move, imports), names, bindings, imports, globals_once) for move in moves}
    if len(devices) != 1 or None in devices:
        return None
    arguments = function.args
    positional = tuple(argument.arg for argument in (*arguments.posonlyargs, *arguments.args))
    parameter, attribute, global_name = devices.pop()
    return ReturnedMove(parameter, positional, attribute, global_name)


def _listed_moves(value: ast.expr, nodes: list[ast.AST], bindings, imports: ImportTable) -> list[ast.Call] | None:
    """The moves a returned list holds, each element one (None when an element may be anything else)."""
    if isinstance(value, ast.ListComp):
        targets = {node.id for generator in value.generators for node in ast.walk(generator.target) if isinstance(node, ast.Name)}
        if any(isinstance(node, ast.Name) and node.id in targets for node in ast.walk(value.elt)):
            return None  # `[Net().to(device) for device in devices]`: one device per element, or a name of its own
        elements = [value.elt]
    elif isinstance(value, (ast.List, ast.Tuple)) and value.elts:
        elements = list(value.elts)
    elif isinstance(value, ast.Name) and _bound_once_to_an_empty_list(bindings.get(value.id, ())):
        elements = _appended_only(value.id, nodes)
        if not elements:
            return None
    else:
        return None
    return elements if all(isinstance(element, ast.Call) and is_move(element, imports) for element in elements) else None


def _bound_once_to_an_empty_list(bound: list) -> bool:
    return len(bound) == 1 and isinstance(bound[0][1], ast.List) and not bound[0][1].elts


def _appended_only(name: str, nodes: list[ast.AST]) -> list[ast.expr] | None:
    """What `name.append(v)` adds, when every read of `name` is such an append or a `return`."""
    appended: list[ast.expr] = []
    uses = 0
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _receiver_is(node.func.value, name):
            if node.func.attr != "append" or len(node.args) != 1 or node.keywords:
                return None
            appended.append(node.args[0])
        elif isinstance(node, ast.Return) and _receiver_is(node.value, name):
            uses += 1
    reads = sum(1 for node in nodes if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load))
    return appended if reads == len(appended) + uses else None


def _read_returns(function: ast.FunctionDef | ast.AsyncFunctionDef):
    """The function's nodes, its `return` statements (each giving a value), its bindings and its
    parameter names; None for a coroutine, a generator, or a function that may return None."""
    nodes = list(scope_nodes(function.body))
    if isinstance(function, ast.AsyncFunctionDef) or any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in nodes):
        return None
    returns = [node for node in nodes if isinstance(node, ast.Return)]
    if not returns or any(node.value is None for node in returns):
        return None
    return nodes, returns, scope_bindings(nodes), {argument.arg for argument in parameters(function)}


def _chosen_here(move: ast.Call, bindings) -> bool:
    """`.to(device)` of a local the function binds once to something other than a string
    (`device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`; `"cpu"` is no device
    the caller needs to follow)."""
    if move.func.attr != "to":
        return False
    device = _device_argument(move)
    bound = bindings.get(device.id, []) if isinstance(device, ast.Name) else []
    return len(bound) == 1 and bound[0][1] is not None and not isinstance(bound[0][1], ast.Constant)


def _optimizes(moved: ast.expr, nodes: list[ast.AST]) -> bool:
    """The function hands `moved.parameters()` to a call (an optimizer): `moved` is a Module that
    holds parameters, so `next(model.parameters()).device` names where it went."""
    return isinstance(moved, ast.Name) and any(
        isinstance(node, ast.Call) and any(
            isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "parameters"
            and _receiver_is(arg.func.value, moved.id) for arg in node.args)
        for node in nodes
    )


def _move_given_back(node: ast.Return, body: list[ast.stmt], bindings, imports: ImportTable) -> ast.Call | None:
    """The `.to()`/`.cuda()` call whose result `return` gives back: `return model.to(device)`, or
    `return model` after a statement of `body` that moved `model` and left it so."""
    value = node.value
    if is_move(value, imports):
        return _placing_call(value, imports)
    if not isinstance(value, ast.Name) or node not in body:
        return None
    name = value.id
    last = max((line for line, _ in bindings.get(name, ())), default=0)
    for statement in reversed(body[: body.index(node)]):
        move = _statement_move(statement, name, imports)
        if move is not None:
            return move if statement.lineno >= last else None
        if any(isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and _receiver_is(inner.func.value, name)
               and inner.func.attr in ("cpu", "to", "cuda") for inner in ast.walk(statement)):
            return None  # moved again under a branch, or back to the host
    return None


def _statement_move(statement: ast.stmt, name: str, imports: ImportTable) -> ast.Call | None:
    """`name.to(device)` as a statement, or `name = <move>` (`model = Net().to(device)`)."""
    if isinstance(statement, ast.Expr) and is_move(statement.value, imports) and _receiver_is(_placing_call(statement.value, imports).func.value, name):
        return _placing_call(statement.value, imports)
    if (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == name and is_move(statement.value, imports)):
        return _placing_call(statement.value, imports)
    return None


def _receiver_is(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _placing_call(node: ast.Call, imports: ImportTable) -> ast.Call:
    """The `.to()`/`.cuda()` of `Net().to(device).eval()`: below the methods that keep placement."""
    while isinstance(node.func, ast.Attribute) and (node.func.attr in PLACEMENT_KEEPING_METHODS or is_cast(node, imports)):
        node = node.func.value
    return node


def _device_of(move: ast.Call, names: set[str], bindings, imports: ImportTable, globals_once: frozenset[str]) -> Device | None:
    """The parameter that names the move's device (with `device` for `args.device`), the global
    that does, `CUDA`, or None when it is anything else."""
    if move.func.attr == "cuda":
        return CUDA if not move.args and not move.keywords else None
    device = _device_argument(move)
    if isinstance(device, ast.Attribute) and isinstance(device.value, ast.Name) and device.attr == "device":
        root = device.value.id  # `args.device`; `.to(x.dtype)` is a cast
        return (root, device.attr, None) if root in names and root not in bindings else None
    if isinstance(device, ast.Name) and device.id not in bindings:
        if device.id in names:
            return (device.id, None, None)
        return (None, None, device.id) if device.id in globals_once else None
    if isinstance(device, ast.Call) and imports.qualify(device.func) == "torch.device" and len(device.args) == 1 and not device.keywords:
        device = device.args[0]
    if isinstance(device, ast.Constant) and isinstance(device.value, str) and device.value.split(":")[0] == "cuda":
        return CUDA
    return None


def _device_argument(move: ast.Call) -> ast.expr | None:
    """What `.to(...)` is given as the device: `device=`, else its first argument."""
    return next((keyword.value for keyword in move.keywords if keyword.arg == "device"), move.args[0] if move.args else None)
