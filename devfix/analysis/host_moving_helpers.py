"""Which parameters does a function bring to the host in place, and leave there? DF030's facts.

    def plot_decision_boundary(model, X, y):
        model.to("cpu")  # "works better with NumPy + Matplotlib"
        X, y = X.to("cpu"), y.to("cpu")
        ...

`Module.to()` moves the Module itself: a caller's model that was on a GPU is on the CPU after the
call, and the caller's next step with device inputs fails (learnpytorch.io's helper functions).
Proven when a simple statement of the function's own body (not in a branch, a loop or another
block) calls `p.to("cpu")`, `p.to(torch.device("cpu"))`, `p.to(device="cpu")` or `p.cpu()` for a
parameter `p` that nothing binds before it, as the statement or in it (`torch.save(p.cpu().
state_dict(), path)`: a Module's `.cpu()` moves the Module), and nothing in the function moves `p`
again, binds it, or hands it back (`return p`, `return p, history`; its output, `return p(x)`, is no
hand-back). Whether `p` is a Module is the caller's to prove (on a tensor the statement would be a
copy, nothing in place).
"""

from __future__ import annotations

import ast

from devfix.analysis.ast_nodes import COMPREHENSIONS, FUNCTIONS, parameters, store_targets
from devfix.analysis.imports import ImportTable
from devfix.analysis.torch_api import CPU_LITERALS, DEVICE_CHANGING_METHODS


def parameters_moved_to_host(function: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportTable) -> dict[int, str]:
    """Position → name of each positional parameter the function leaves on the host in place."""
    positional = [argument.arg for argument in [*function.args.posonlyargs, *function.args.args]]
    found: dict[int, str] = {}
    for statement in function.body:
        for name, call in host_moves(statement, imports):
            if name not in positional or _bound_before(function, name, statement.lineno) \
                    or _moved_or_handed_back_after(function, name, statement, call):
                continue
            found[positional.index(name)] = name
    return found


def host_moves(statement: ast.stmt, imports: ImportTable) -> list[tuple[str, ast.Call]]:
    """The calls a simple statement surely runs (not in a lambda, a comprehension, a conditional
    expression's branch or after `and`/`or`) that bring a name to the host: `p.cpu()`,
    `p.to("cpu")`, `p.to(torch.device("cpu"))`, `p.to(device="cpu")`, as the statement or in it
    (`torch.save(p.cpu().state_dict(), path)`), with the name."""
    if not isinstance(statement, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return []
    found = []
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Lambda, *COMPREHENSIONS)):
            continue
        if isinstance(node, ast.IfExp):  # only its test surely runs
            pending.append(node.test)
            continue
        if isinstance(node, ast.BoolOp):  # only its first operand surely runs
            pending.append(node.values[0])
            continue
        pending.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and _to_the_host(node, imports):
            found.append((node.func.value.id, node))
    return found


def _to_the_host(call: ast.Call, imports: ImportTable) -> bool:
    if call.func.attr == "cpu":
        return not call.args and not call.keywords
    if call.func.attr != "to" or len(call.args) + len(call.keywords) != 1:
        return False
    given = call.args[0] if call.args else call.keywords[0].value if call.keywords[0].arg == "device" else None
    return given is not None and _names_the_host(given, imports)


def _names_the_host(value: ast.expr, imports: ImportTable) -> bool:
    if isinstance(value, ast.Constant):
        return value.value in CPU_LITERALS
    return (isinstance(value, ast.Call) and imports.qualify(value.func) == "torch.device" and len(value.args) == 1
            and not value.keywords and isinstance(value.args[0], ast.Constant) and value.args[0].value in CPU_LITERALS)


def _bound_before(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, line: int) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load) and node.lineno < line
               for statement in function.body for node in ast.walk(statement))


def _moved_or_handed_back_after(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, statement: ast.stmt, move: ast.Call) -> bool:
    """From the statement of the move on: another move of the name (`p.to(device)`, `p.cuda()`), a
    binding of it, a `return` that gives it back, or a nested function that may do any of these later."""
    for node in ast.walk(function):
        if node is function or getattr(node, "lineno", 0) < statement.lineno or node is move:
            continue
        if isinstance(node, (*FUNCTIONS, ast.Lambda)) and name in {argument.arg for argument in parameters(node)} | _names_in(node):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DEVICE_CHANGING_METHODS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            return True
        if any(name in _names_in(target) for target in store_targets(node)) or isinstance(node, ast.NamedExpr) and node.target.id == name:
            return True
        if isinstance(node, (ast.Return, ast.Yield)) and node.value is not None and _hands_back(node.value, name):
            return True
    return False


def _hands_back(value: ast.expr, name: str) -> bool:
    """`return model`, `return model, history`: the name itself (not `model(X)`, its output)."""
    items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    return any(isinstance(item, ast.Name) and item.id == name or isinstance(item, ast.Starred) for item in items) \
        or isinstance(value, ast.Dict) and any(isinstance(item, ast.Name) and item.id == name for item in value.values)


def _names_in(node: ast.AST) -> set[str]:
    return {inner.id for inner in ast.walk(node) if isinstance(inner, ast.Name)}
