"""Plain classes that keep copies of a model's parameters, made when they are built (an EMA), or by
a method called after (`ema.register()`).

`ema = EMA(model)` copies each parameter (`p.detach().clone()`, `copy.deepcopy(model)`) where the
model is at that moment; a model moved afterwards (`model.to(device)`) leaves the copies behind,
and the method that blends them with the parameters (`self.shadow[name].mul_(d).add_(p)`) then
mixes devices. DF022 moves the model first, as it does for optimizer state.

Proven from the class's code, never from its name: a top-level class with no base, whose
`__init__` keeps on `self` copies of what a parameter's `parameters()`, `named_parameters()`,
`state_dict()` or `buffers()` give (or a `copy.deepcopy` of the parameter), and another of whose
methods reads those attributes inside a loop over some model's parameters (where the blending
happens). A class that names a device or moves anything (`.to()`, `.cpu()`, `.cuda()`) may keep its
copies on the host on purpose, and is left out.
"""

from __future__ import annotations

import ast

from devfix.analysis.ast_nodes import every_node, is_self_attribute, parameters
from devfix.analysis.imports import ImportTable

PARAMETER_SOURCES = frozenset({"parameters", "named_parameters", "state_dict", "buffers", "named_buffers"})
PLACING_METHODS = frozenset({"to", "cpu", "cuda"})
DEEPCOPY = frozenset({"copy.deepcopy"})


def classes_copying_parameters(tree: ast.Module, imports: ImportTable) -> dict[str, tuple[int, str, str | None]]:
    """Class name → (position after `self`, name) of the `__init__` parameter whose tensors the
    class copies and later blends with a model's parameters, and the method that makes the copies:
    None for `__init__` itself, else one that takes no argument and copies the model `__init__`
    kept (the common EMA's `register()`: `self.shadow[name] = param.data.clone()`)."""
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.bases or node.keywords or _places(node):
            continue
        methods = [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
        inits = [method for method in methods if method.name == "__init__"]
        if len(inits) != 1:
            continue
        init = inits[0]
        given = [argument.arg for argument in parameters(init)[1:]]
        for position, name in enumerate(given):
            attributes = _kept_attributes(init, name)
            kept = _kept_copies(init, {name} | attributes, imports)
            copier = None
            if not kept and attributes:  # made later, by a method of no argument (`ema.register()`)
                copier = next((method for method in methods if method is not init and len(parameters(method)) == 1
                               and _kept_copies(method, attributes, imports)), None)
                kept = _kept_copies(copier, attributes, imports) if copier is not None else set()
            if kept and any(_blends(method, kept) for method in methods if method is not init and method is not copier):
                found[node.name] = (position, name, copier.name if copier is not None else None)
                break
    return found


def _places(class_node: ast.ClassDef) -> bool:
    """The class moves something or names a device: its copies may be where it wants them."""
    for node in every_node(class_node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PLACING_METHODS:
            return True
        if isinstance(node, ast.Name) and "device" in node.id or isinstance(node, ast.Attribute) and "device" in node.attr:
            return True
        if isinstance(node, ast.keyword) and node.arg == "device":
            return True
    return False


def _kept_attributes(init: ast.FunctionDef | ast.AsyncFunctionDef, parameter: str) -> set[str]:
    """The `self` attributes `__init__` keeps the parameter in (`self.model = model`)."""
    return {
        target.attr for statement in init.body if isinstance(statement, ast.Assign)
        and isinstance(statement.value, ast.Name) and statement.value.id == parameter
        for target in statement.targets if is_self_attribute(target)
    }


def _kept_copies(function: ast.FunctionDef | ast.AsyncFunctionDef, aliases: set[str], imports: ImportTable) -> set[str]:
    """The `self` attributes the function stores copies of the tensors of `aliases` in."""
    kept: set[str] = set()
    for statement in every_node(function):
        if isinstance(statement, ast.Assign):
            targets = [_stored_attribute(target) for target in statement.targets]
            if any(targets) and _copies(statement.value, aliases, imports):
                kept.update(target for target in targets if target)
        elif isinstance(statement, (ast.For, ast.AsyncFor)) and _reads_tensors_of(statement.iter, aliases):
            for inner in every_node(statement):
                if isinstance(inner, ast.Assign) and _is_clone(inner.value):
                    kept.update(target for target in map(_stored_attribute, inner.targets) if target)
    return kept


def _copies(value: ast.expr, aliases: set[str], imports: ImportTable) -> bool:
    """`copy.deepcopy(model)`, or a comprehension over the model's tensors that clones them."""
    if isinstance(value, ast.Call) and imports.qualify(value.func) in DEEPCOPY and value.args:
        return _root(value.args[0]) in aliases
    if isinstance(value, (ast.DictComp, ast.ListComp)):
        element = value.value if isinstance(value, ast.DictComp) else value.elt
        return _reads_tensors_of(value.generators[0].iter, aliases) and _is_clone(element)
    return False


def _reads_tensors_of(iterable: ast.expr, aliases: set[str]) -> bool:
    """`model.named_parameters()`, `model.state_dict().items()`, `self.model.parameters()`."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and iterable.func.attr in ("items", "values"):
        iterable = iterable.func.value
    return (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and iterable.func.attr in PARAMETER_SOURCES
            and _root(iterable.func.value) in aliases)


def _is_clone(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "clone"


def _blends(method: ast.FunctionDef | ast.AsyncFunctionDef, kept: set[str]) -> bool:
    """The method reads a kept attribute in a loop (or comprehension) over a model's tensors, not
    over the copies' own alone (`zip(self.ema.parameters(), model.parameters())` counts)."""
    for loop in every_node(method):
        if isinstance(loop, (ast.For, ast.AsyncFor)):
            iterables, body = [loop.iter], loop.body
        elif isinstance(loop, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            iterables = [generator.iter for generator in loop.generators]
            body = [loop.key, loop.value] if isinstance(loop, ast.DictComp) else [loop.elt]
        else:
            continue
        iterated = [node for iterable in iterables for node in every_node(iterable) if isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute) and node.func.attr in PARAMETER_SOURCES
                    and _stored_attribute(node.func.value) not in kept]
        if iterated and any(_stored_attribute(node) in kept for part in [*iterables, *body] for node in every_node(part)):
            return True
    return False


def _stored_attribute(node: ast.AST) -> str | None:
    """`x` of `self.x` or of `self.x[key]`."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return node.attr if is_self_attribute(node) else None


def _root(node: ast.expr) -> str | None:
    """`model` of `model`, `x` of `self.x` (a kept alias of the parameter)."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if is_self_attribute(node) else None
