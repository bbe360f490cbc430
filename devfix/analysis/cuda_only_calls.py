"""Calls of `torch.cuda` that need CUDA to run, where nothing checks for CUDA first (DF024); and
pinned memory (`x.pin_memory()`, `torch.empty(n, pin_memory=True)`), which needs an accelerator.

`torch.cuda.synchronize()`, `torch.cuda.get_device_name(0)`, `torch.cuda.Event(...)`, entering
`with torch.cuda.device(0):` and their kin raise "Torch not compiled with CUDA enabled" (or "No
CUDA GPUs are available") on a machine without CUDA, even in a program that chose the CPU there:
the timing loop of a script that runs anywhere, a `print` of the GPU's name. The queries that
answer on any machine (`is_available`, `device_count`, `memory_allocated`, `manual_seed`,
`empty_cache`) are not here.

A call counts as checked (left alone) when it runs only after a test that asks about CUDA or a
GPU (`torch.cuda.is_available()`, `device.type == "cuda"`, `args.cuda`, `use_gpu`):
- it is under such an `if`/`while`/conditional expression, or after one in `a and b`;
- a statement before it in an enclosing block leaves when the test says so
  (`if device.type != "cuda": return`), or asserts it (`assert torch.cuda.is_available()`);
- it is inside a `try` whose handler catches what the call raises;
- its function is decorated with such a test (`@unittest.skipIf(not torch.cuda.is_available(), ...)`),
  or the file calls the function and every call is itself checked.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from devfix.analysis.ast_nodes import FUNCTIONS, children, every_node
from devfix.analysis.imports import ImportTable
from devfix.analysis.torch_api import CUDA_ONLY_FUNCTIONS, GUARD_WORDS

CAUGHT = frozenset({"Exception", "BaseException", "AssertionError", "RuntimeError"})
EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
PRINTERS = frozenset({"print", "builtins.print"})
CALLER_DEPTH = 3  # functions checked through their callers, this many calls up


PIN_METHOD = "pin_memory()"  # `x.pin_memory()`: page-locked memory needs an accelerator
PIN_KEYWORD = "pin_memory=True"  # `torch.empty(n, pin_memory=True)`: the same, at construction
DEVICE_CONTEXT = "torch.cuda.device"  # `with torch.cuda.device(0):` selects a GPU on entering: none, it raises


@dataclass(frozen=True)
class UncheckedCudaCall:
    """An unchecked call; `guardable` when it is the whole of an expression statement, alone or
    printed (`print(torch.cuda.get_device_name(0))`): the statement can run only when CUDA is
    available and nothing else changes. `name` is the `torch.cuda` function, or `PIN_METHOD` /
    `PIN_KEYWORD` for pinned memory, which raises "Cannot access accelerator device when none is
    available" on a CPU-only machine."""

    call: ast.Call
    name: str  # `torch.cuda.synchronize`
    guardable: bool


def unchecked_cuda_only_calls(tree: ast.Module, imports: ImportTable) -> dict[tuple[int, int], UncheckedCudaCall]:
    """(line, byte column) of each call → the call, for the calls nothing checks."""
    calls = [(node, name) for node in every_node(tree) if isinstance(node, ast.Call) and (name := _needs_cuda(node, imports))]
    if not calls:
        return {}
    checks = _Checks(tree)
    return {
        (call.lineno, call.col_offset): UncheckedCudaCall(call, name, name in CUDA_ONLY_FUNCTIONS and _guardable(call, checks.parents, imports))
        for call, name in calls
        if not checks.checked(call, CALLER_DEPTH) and (name != DEVICE_CONTEXT or _hard_codes_a_gpu(call, imports))
    }


def _hard_codes_a_gpu(call: ast.Call, imports: ImportTable) -> bool:
    """`torch.cuda.device(0)`, `torch.cuda.device("cuda:0")`, `torch.cuda.device(torch.device("cuda"))`:
    a literal GPU. A name or an attribute may hold -1 where there is no CUDA (SimCLR's
    `args.gpu_index = -1` on the CPU, for `with torch.cuda.device(args.gpu_index):`), and DF024's own
    fix, `0 if torch.cuda.is_available() else -1`, is no literal either."""
    index = call.args[0] if len(call.args) == 1 and not call.keywords else None
    if isinstance(index, ast.Call) and imports.qualify(index.func) == "torch.device" and len(index.args) == 1 and not index.keywords:
        index = index.args[0]
    if isinstance(index, ast.Constant) and isinstance(index.value, str):
        return index.value.startswith("cuda")
    return isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool) and index.value >= 0


def _needs_cuda(call: ast.Call, imports: ImportTable) -> str | None:
    qualified = imports.qualify(call.func)
    if qualified in CUDA_ONLY_FUNCTIONS or qualified == DEVICE_CONTEXT:
        return qualified
    if isinstance(call.func, ast.Attribute) and call.func.attr == "pin_memory" and not call.args and not call.keywords:
        return PIN_METHOD
    pinned = any(keyword.arg == "pin_memory" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True
                 for keyword in call.keywords)
    if pinned and (qualified or "").startswith("torch.") and not (qualified or "").startswith("torch.utils."):
        return PIN_KEYWORD  # (a DataLoader's `pin_memory=True` only warns without an accelerator)
    return None


class _Checks:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: dict[int, ast.AST] = {id(child): node for node in every_node(tree) for child in children(node)}
        self._callers: dict[str, list[ast.Call]] | None = None

    def checked(self, node: ast.AST, depth: int) -> bool:
        child, current = node, self.parents.get(id(node))
        while current is not None:
            if _tested_branch(current, child) or _after_an_exit(current, child) or _caught(current, child):
                return True
            if isinstance(current, FUNCTIONS):
                return _decorated_with_a_test(current) or (depth > 0 and self._every_caller_checked(current, depth - 1))
            child, current = current, self.parents.get(id(current))
        return False

    def _every_caller_checked(self, function: ast.FunctionDef | ast.AsyncFunctionDef, depth: int) -> bool:
        """The file calls the function (`f(...)`, `self.f(...)`), and every such call is checked."""
        callers = self._calls_by_name().get(function.name, [])
        return bool(callers) and all(self.checked(call, depth) for call in callers)

    def _calls_by_name(self) -> dict[str, list[ast.Call]]:
        if self._callers is None:
            self._callers = {}
            for node in every_node(self.tree):
                if isinstance(node, ast.Call):
                    func = node.func
                    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                    if name is not None:
                        self._callers.setdefault(name, []).append(node)
        return self._callers


def _asks_about_cuda(test: ast.expr) -> bool:
    return GUARD_WORDS.search(ast.unparse(test)) is not None


def _tested_branch(parent: ast.AST, child: ast.AST) -> bool:
    if isinstance(parent, (ast.If, ast.While, ast.IfExp)):
        return child is not parent.test and _asks_about_cuda(parent.test)
    if isinstance(parent, ast.BoolOp):
        before = parent.values[: next(index for index, value in enumerate(parent.values) if value is child)]
        return any(_asks_about_cuda(value) for value in before)
    return False


def _after_an_exit(parent: ast.AST, child: ast.AST) -> bool:
    """`child` is a statement of a block of `parent` after `if <test>: ... return` or `assert <test>`."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(statement is child for statement in block):
            for statement in block:
                if statement is child:
                    return False
                if isinstance(statement, ast.Assert) and _asks_about_cuda(statement.test):
                    return True
                if isinstance(statement, ast.If) and _asks_about_cuda(statement.test) and _exits(statement.body):
                    return True
    return False


def _exits(block: list[ast.stmt]) -> bool:
    last = block[-1]
    if isinstance(last, EXITS):
        return True
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and ast.unparse(last.value.func) in ("sys.exit", "exit", "quit")


def _caught(parent: ast.AST, child: ast.AST) -> bool:
    """In the body of a `try` whose handlers catch what a call without CUDA raises."""
    if not (isinstance(parent, ast.Try) and any(statement is child for statement in parent.body)):
        return False
    for handler in parent.handlers:
        caught = handler.type
        names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
        if caught is None or any(isinstance(name, (ast.Name, ast.Attribute)) and ast.unparse(name).rsplit(".", 1)[-1] in CAUGHT for name in names):
            return True
    return False


def _decorated_with_a_test(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(_asks_about_cuda(decorator) for decorator in function.decorator_list)


def _guardable(call: ast.Call, parents: dict[int, ast.AST], imports: ImportTable) -> bool:
    statement, printed = parents.get(id(call)), None
    while statement is not None and not isinstance(statement, ast.stmt):
        if isinstance(statement, ast.Call) and imports.qualify(statement.func) in PRINTERS:
            printed = statement
        statement = parents.get(id(statement))
    if not isinstance(statement, ast.Expr):
        return False
    if statement.value is call:
        return True
    # a `print` of it, and nothing else is called there: without CUDA nothing else is skipped
    return printed is not None and statement.value is printed and all(
        node is printed or (imports.qualify(node.func) or "").startswith("torch.cuda.")
        for node in every_node(printed) if isinstance(node, ast.Call)
    )
