"""Random draws onto a device from a CPU generator (DF025).

`torch.randn(n, 8, generator=g, device=device)` with `g = torch.Generator().manual_seed(0)` raises
"Expected a 'cuda' device type for generator but found 'cpu'" as soon as `device` is a GPU: a
generator only draws on its own device. This finds such calls with Python's `ast`:

- a draw: `torch.randn`, `torch.rand`, `torch.randint`, `torch.randperm`, `torch.normal`, given
  `generator=` and `device=`;
- a CPU generator: `torch.Generator()`, `torch.Generator("cpu")`, `torch.Generator(device="cpu")`,
  maybe followed by `.manual_seed(s)` (which returns the generator), written in the call or bound
  to a name by one assignment of the scope the call reads it from (the enclosing function that
  binds it, else the module's top level), and never declared `global`;
- a device that may be a GPU: anything but a CPU literal (`"cpu"`, `torch.device("cpu")`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from devfix.analysis.ast_nodes import FUNCTIONS, children, every_node, parameters, scope_bindings, scope_nodes
from devfix.analysis.imports import ImportTable

DRAWS = frozenset({"torch.randn", "torch.rand", "torch.randint", "torch.randperm", "torch.normal"})
GENERATOR = "torch.Generator"
SEEDING_METHODS = frozenset({"manual_seed"})  # they return the generator itself


@dataclass(frozen=True)
class CpuGeneratorDraw:
    call: ast.Call
    generator: str  # the generator as written (`g`, `torch.Generator().manual_seed(0)`)


def cpu_generator_draws(tree: ast.Module, imports: ImportTable) -> dict[tuple[int, int], CpuGeneratorDraw]:
    """(line, byte column) of each draw → the draw, for draws from a CPU generator onto a device
    that may be a GPU."""
    declared_global = {name for node in every_node(tree) if isinstance(node, (ast.Global, ast.Nonlocal)) for name in node.names}
    found = {}
    for call, functions in _calls_with_scopes(tree):
        if imports.qualify(call.func) not in DRAWS:
            continue
        given = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg is not None}
        generator, device = given.get("generator"), given.get("device")
        if generator is None or device is None or _is_cpu(device, imports) or any(keyword.arg is None for keyword in call.keywords):
            continue
        if _is_cpu_generator(generator, imports) or (
            isinstance(generator, ast.Name) and generator.id not in declared_global
            and _bound_to_a_cpu_generator(generator.id, functions, tree, imports)
        ):
            found[(call.lineno, call.col_offset)] = CpuGeneratorDraw(call, ast.unparse(generator))
    return found


def _calls_with_scopes(tree: ast.Module) -> Iterator[tuple[ast.Call, tuple[ast.AST, ...]]]:
    """Every call, with the functions around it (innermost last)."""
    stack: list[tuple[ast.AST, tuple[ast.AST, ...]]] = [(tree, ())]
    while stack:
        node, functions = stack.pop()
        if isinstance(node, ast.Call):
            yield node, functions
        inner = (*functions, node) if isinstance(node, (*FUNCTIONS, ast.Lambda)) else functions
        stack.extend((child, inner) for child in children(node))


def _bound_to_a_cpu_generator(name: str, functions: tuple[ast.AST, ...], tree: ast.Module, imports: ImportTable) -> bool:
    """The scope the name is read from binds it once, to a CPU generator (a parameter, or a
    binding `scope_bindings` does not see, such as an import or a loop, is not one)."""
    for function in reversed(functions):
        body = function.body if isinstance(function.body, list) else [ast.Expr(function.body)]
        nodes = list(scope_nodes(body, (*FUNCTIONS, ast.ClassDef)))
        if name in {argument.arg for argument in parameters(function)}:
            return False  # what the caller gives may reach the draw (deepinv's tests rebind a `rng` fixture under an `if`)
        if _binds(nodes, name):
            return _one_cpu_generator(scope_bindings(nodes).get(name, []), imports) and _binding_count(nodes, name) == 1
    nodes = list(scope_nodes(tree.body, (*FUNCTIONS, ast.ClassDef)))
    return _one_cpu_generator(scope_bindings(nodes).get(name, []), imports) and _binding_count(nodes, name) == 1 \
        and not _defined_otherwise(tree, name)


def _one_cpu_generator(bindings: list, imports: ImportTable) -> bool:
    return len(bindings) == 1 and bindings[0][1] is not None and _is_cpu_generator(bindings[0][1], imports)


def _binds(nodes: list[ast.AST], name: str) -> bool:
    return _binding_count(nodes, name) > 0


def _binding_count(nodes: list[ast.AST], name: str) -> int:
    """Every way a scope's own nodes bind `name`: stores, deletions, `except ... as`, imports."""
    count = 0
    for node in nodes:
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            count += 1
        elif isinstance(node, ast.ExceptHandler) and node.name == name:
            count += 1
        elif isinstance(node, ast.alias) and (node.asname or node.name.partition(".")[0]) == name:
            count += 1
    return count


def _defined_otherwise(tree: ast.Module, name: str) -> bool:
    """A `def`, `class` or import of the top level with that name (they bind it too)."""
    return any(isinstance(node, (*FUNCTIONS, ast.ClassDef)) and node.name == name for node in tree.body)


def _is_cpu_generator(value: ast.expr, imports: ImportTable) -> bool:
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in SEEDING_METHODS:
        value = value.func.value
    if not (isinstance(value, ast.Call) and imports.qualify(value.func) == GENERATOR):
        return False
    devices = [*value.args, *(keyword.value for keyword in value.keywords if keyword.arg == "device")]
    if any(keyword.arg not in ("device",) for keyword in value.keywords):
        return False
    return not devices or (len(devices) == 1 and _is_cpu(devices[0], imports))


def _is_cpu(device: ast.expr, imports: ImportTable) -> bool:
    """`"cpu"` or `torch.device("cpu")`."""
    if isinstance(device, ast.Constant):
        return device.value == "cpu"
    return isinstance(device, ast.Call) and imports.qualify(device.func) == "torch.device" and len(device.args) == 1 \
        and not device.keywords and isinstance(device.args[0], ast.Constant) and device.args[0].value == "cpu"
