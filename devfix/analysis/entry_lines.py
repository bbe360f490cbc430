"""From which lines of a module's top level each of its top-level functions runs.

A model the top level moves (`policy.to(device)`) is on the device inside a function only when the
function runs after that move; a function called first and the model moved later (a warm-up probe)
still sees it on the CPU. A function that nothing at the top level calls, but a framework runs (a
decorated route, a handler handed to a UI), runs after the move when the top level calls nothing
but set-up code between the model's first binding and its move. DF004 reads the order from here,
on Python's `ast`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from devfix.analysis.ast_nodes import FUNCTIONS, scope_nodes


def top_level_entry_lines(tree: ast.Module) -> dict[str, list[int] | None]:
    """Each top-level function → the lines of the top-level calls that run it, directly or through
    other top-level functions; None when something else may run it (a method, a callback: a name
    read without being called, or a decorated function nothing here calls), so its order is unknown."""
    functions = {node.name: node for node in tree.body if isinstance(node, FUNCTIONS)}
    callers: dict[str, set[str]] = {name: set() for name in functions}  # callee → the functions that call it
    direct: dict[str, list[int]] = {name: [] for name in functions}
    unknown: set[str] = set()
    for statement in tree.body:
        called = {id(node.func) for node in ast.walk(statement) if isinstance(node, ast.Call)}
        for node in ast.walk(statement):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in functions):
                continue
            if id(node) not in called or isinstance(statement, ast.ClassDef):
                unknown.add(node.id)  # handed on (`map(f, xs)`), or run by a method at some time
            elif isinstance(statement, FUNCTIONS):
                callers[node.id].add(statement.name)
            else:
                direct[node.id].append(node.lineno)
    called_here = {callee for callee, by in callers.items() if by} | {callee for callee, at in direct.items() if at}
    unknown |= {name for name, node in functions.items() if node.decorator_list and name not in called_here}  # `@app.route("/")`
    lines: dict[str, list[int] | None] = {}
    for name in functions:
        found, seen, pending = [], set(), [name]
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            if current in unknown:
                found = None
                break
            seen.add(current)
            found += direct[current]
            pending += callers[current]
        lines[name] = sorted(found) if found is not None else None
    return lines


def first_top_level_binding(tree: ast.Module, name: str) -> int | None:
    """The first line where the module's top level (its `if __name__ == "__main__":` block too, not
    its functions and classes) binds `name`."""
    lines = [
        node.lineno for node in scope_nodes(tree.body)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
    ]
    return min(lines) if lines else None


def only_setup_between(tree: ast.Module, after: int, before: int, is_setup: Callable[[ast.Call], bool]) -> bool:
    """Do the top-level statements that start after line `after` and before line `before` call only
    what `is_setup` accepts? A callback (a route, a handler a UI calls) that reads a global bound on
    line `after` and moved on line `before` cannot run in between then: nothing there calls it."""
    for node in scope_nodes(tree.body):
        if isinstance(node, ast.Call) and after < node.lineno < before and not is_setup(node):
            return False
    return True
