"""A GPU flag hard-coded to `True`: `use_cuda = True`, then `if use_cuda: model = model.cuda()`.

The CUDA code is guarded, but by a constant: without a GPU the program fails ("Torch not compiled
with CUDA enabled") as if nothing were guarded. The smallest correct change is the flag itself,
`use_cuda = torch.cuda.is_available()`: on a GPU machine it is `True` as before, and elsewhere the
program takes the path its author wrote for the CPU.

A flag counts only when the facts say so, whatever its name: the name is bound once in the whole
file, to the literal `True` (so no argument, loop or later assignment can change it), and some
`if`, `while` or conditional expression tests it (alone or in an `and`, without asking
`torch.cuda.is_available()` itself) and runs CUDA-only code in the branch it guards: `.cuda()`,
`"cuda"`/`"cuda:0"`, a `torch.cuda.<X>Tensor` type, or a `torch.cuda` call that needs CUDA.
"""

from __future__ import annotations

import ast
import re

from devfix.analysis.ast_nodes import every_node
from devfix.analysis.imports import ImportTable
from devfix.analysis.torch_api import CUDA_LITERALS, CUDA_ONLY_FUNCTIONS

# a line that may bind a flag: `use_cuda = True` (the text is read before any tree is walked)
_FLAG_LINE = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*True[ \t]*(?:#.*)?$", re.MULTILINE)


def hardcoded_gpu_flags(tree: ast.Module, text: str, imports: ImportTable) -> dict[int, str]:
    """The lines of `NAME = True` that bind such a flag → its name."""
    candidates = set(_FLAG_LINE.findall(text))
    if not candidates:
        return {}
    bindings: dict[str, int] = {}  # how many times each candidate is bound
    set_true: dict[str, ast.Assign] = {}
    tests: list[tuple[ast.expr, list[ast.AST]]] = []  # (test, what runs when it holds)
    for node in every_node(tree):
        for name in _bound(node):
            if name in candidates:
                bindings[name] = bindings.get(name, 0) + 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and (
                isinstance(node.value, ast.Constant) and node.value.value is True):
            set_true[node.targets[0].id] = node
        if isinstance(node, (ast.If, ast.While)):
            tests.append((node.test, list(node.body)))
        elif isinstance(node, ast.IfExp):
            tests.append((node.test, [node.body]))
    flags = {name: assignment for name, assignment in set_true.items() if bindings.get(name) == 1}
    guarding = {name for test, branch in tests for name in _tested_names(test, imports) & set(flags)
                if any(_needs_cuda(node, imports) for statement in branch for node in every_node(statement))}
    return {flags[name].lineno: name for name in guarding}


def _bound(node: ast.AST) -> list[str]:
    """Every name `node` binds (or declares `global`: another scope may then rebind it)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.alias):
        return [node.asname or node.name.split(".")[0]]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    return []


def _tested_names(test: ast.expr, imports: ImportTable) -> set[str]:
    """`flag`, or the names of an `and` of terms, unless a term asks whether CUDA is available."""
    terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    if any(_asks_availability(term, imports) for term in terms):
        return set()
    return {term.id for term in terms if isinstance(term, ast.Name)}


def _asks_availability(term: ast.expr, imports: ImportTable) -> bool:
    return any(isinstance(node, ast.Call) and (imports.qualify(node.func) or "").startswith("torch.cuda.")
               for node in every_node(term))


def _needs_cuda(node: ast.AST, imports: ImportTable) -> bool:
    """`.cuda()`, a CUDA literal where a device stands (`.to("cuda")`, `device="cuda"`,
    `torch.device("cuda")`, `device = "cuda"`; not a message that says "cuda"), a CUDA tensor type,
    or a `torch.cuda` call that needs CUDA."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cuda":
        return not (imports.qualify(node.func) or "").startswith("torch.")  # `x.cuda()`, not a module named so
    if isinstance(node, ast.Call):
        placing = (isinstance(node.func, ast.Attribute) and node.func.attr == "to") or imports.qualify(node.func) == "torch.device"
        given = [*node.args[:1]] if placing else []
        return any(_is_cuda_literal(value) for value in [*given, *(keyword.value for keyword in node.keywords if keyword.arg == "device")])
    if isinstance(node, ast.Assign):
        return _is_cuda_literal(node.value)
    if isinstance(node, ast.Attribute):
        qualified = imports.qualify(node) or ""
        return (qualified.startswith("torch.cuda.") and qualified.endswith("Tensor")) or qualified in CUDA_ONLY_FUNCTIONS
    return False


def _is_cuda_literal(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value in CUDA_LITERALS
