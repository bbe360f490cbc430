"""Small `ast` helpers the screens share: a fast walk, a scope's own nodes, the names a target
binds, what a statement stores into, a scope's bindings by line, a method chain's names, a function's
parameters, a dotted name's head, `self.<attr>`, and the names a torch op is given whole."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
NESTED_SCOPES = (*FUNCTIONS, ast.ClassDef, ast.Lambda)  # what `analysis.placement.collect` skips
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
LEAF_FIELDS = frozenset({"ctx", "op", "ops"})  # `Load()`, `Add()`, ...: nothing is ever looked for in them
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def children(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes` without the context and operator leaves, computed once per node and
    kept on it (the analyses walk each file several times: walking was most of their cost)."""
    found = getattr(node, "_devfix_children", None)
    if found is not None:
        return found
    fields = _CHILD_FIELDS.get(type(node))
    if fields is None:
        fields = _CHILD_FIELDS[type(node)] = tuple(name for name in node._fields if name not in LEAF_FIELDS)
    found: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            found.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            found.append(value)
    node._devfix_children = found  # the trees are never changed after parsing
    return found


def every_node(node: ast.AST) -> list[ast.AST]:
    """`ast.walk`'s nodes in `ast.walk`'s order (breadth first), without the leaves `children`
    skips; kept on the node, as the same subtrees are walked again (loops, rounds, rules).
    Callers must not change the list."""
    found = getattr(node, "_devfix_nodes", None)
    if found is not None:
        return found
    found = [node]
    index = 0
    while index < len(found):
        found.extend(children(found[index]))
        index += 1
    node._devfix_nodes = found
    return found


def scope_nodes(body: list[ast.stmt], nested: tuple[type, ...] = NESTED_SCOPES) -> Iterator[ast.AST]:
    """The nodes of one scope's statements, without those under the `nested` kinds of node (a
    `def` among the statements is yielded, its body is not)."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, nested):
            stack += [child for child in children(node) if not isinstance(child, nested)]


def bound_names(target: ast.expr) -> Iterator[str]:
    """The names an assignment target binds (`a`, `a, (b, *c)`), not those it only reads (`a[i] =`)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from bound_names(target.value)


Binding = tuple[int, "ast.expr | None"]  # (line, value): the value is None where devfix cannot see it


def scope_bindings(nodes: Iterable[ast.AST], augmented: bool = False) -> dict[str, list[Binding]]:
    """Each name's bindings among one scope's nodes, in source order, as `analysis.placement.collect`
    records them: assignments with their values; augmented assignments, `for` and `with` targets
    without one. Unpacking a display of the same length binds item by item; unpacking anything else
    binds each name to the whole value when it is a call (`out, (h, c) = lstm(x)`), else to nothing.
    With `augmented`, `total += loss` binds `total` to `total + loss` (the `total` in it is the
    value before), as `PlacementFacts.is_device_value` reads it."""
    found: list[tuple[int, int, ast.expr, ast.expr | None]] = []
    for node in nodes:
        if isinstance(node, ast.Assign):
            found += [(node.lineno, node.col_offset, target, node.value) for target in node.targets]
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            found.append((node.lineno, node.col_offset, node.target, node.value))
        elif augmented and isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            read = ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target)
            found.append((node.lineno, node.col_offset, node.target, ast.copy_location(ast.BinOp(read, node.op, node.value), node)))
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor)):
            found.append((node.lineno, node.col_offset, node.target, None))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            found += [(item.context_expr.lineno, item.context_expr.col_offset, item.optional_vars, None)
                      for item in node.items if item.optional_vars is not None]
    bindings: dict[str, list[Binding]] = {}
    for line, _, target, value in sorted(found, key=lambda binding: binding[:2]):
        _bind(bindings, target, value, line)
    return bindings


def dict_values_bound(loop: ast.For | ast.AsyncFor) -> tuple[str, ast.expr] | None:
    """`for k, v in d.items()` or `for v in d.values()`: the name bound to each value, with `d`
    (as `analysis.placement` records it)."""
    call = loop.iter
    if not (isinstance(call, ast.Call) and not call.args and not call.keywords and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ITERABLES)):
        return None
    target = loop.target
    if call.func.attr == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        target = target.elts[1]
    elif call.func.attr != "values":
        return None
    return (target.id, call.func.value) if isinstance(target, ast.Name) else None


def loop_elements(nodes: Iterable[ast.AST]) -> dict[str, list[tuple[int, ast.expr]]]:
    """Names a loop of one scope binds to elements of a value, with the loop's line and that value
    (an element lives where the value does): `y` → `ys` for `for y in ys` (or `for i, y in
    enumerate(ys)`); `t` → `ys.view(-1)` and `p` → `preds` for `for t, p in zip(ys.view(-1), preds)`. As `analysis.placement` records them."""
    found: dict[str, list[tuple[int, ast.expr]]] = {}
    for loop in nodes:
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            continue
        iterable, target = loop.iter, loop.target
        if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate"
                and isinstance(target, ast.Tuple) and len(target.elts) == 2 and iterable.args and not isinstance(iterable.args[0], ast.Starred)):
            iterable, target = iterable.args[0], target.elts[1]  # `for i, img in enumerate(samples)`
        if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "zip" and not iterable.keywords
                and isinstance(target, ast.Tuple) and len(target.elts) == len(iterable.args)):
            pairs = list(zip(target.elts, iterable.args))
        else:
            pairs = [(target, iterable)]
        for name, value in pairs:
            if isinstance(name, ast.Name) and isinstance(value, ITERABLES):
                found.setdefault(name.id, []).append((loop.lineno, value))
    return found


ITERABLES = (ast.Name, ast.Attribute, ast.Subscript, ast.Call)  # `ys`, `self.ys`, `ys[0]`, `ys.view(-1)`


def _bind(bindings: dict[str, list[Binding]], target: ast.expr, value: ast.expr | None, line: int) -> None:
    if isinstance(target, ast.Name):
        bindings.setdefault(target.id, []).append((line, value))
    elif isinstance(target, (ast.Tuple, ast.List)):
        elements = [element.value if isinstance(element, ast.Starred) else element for element in target.elts]
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(elements):
            for element, item in zip(elements, value.elts):
                _bind(bindings, element, item.value if isinstance(item, ast.Starred) else item, line)
        else:
            for element in elements:
                _bind(bindings, element, value if isinstance(value, ast.Call) else None, line)


def latest_binding(bindings: dict[str, list[Binding]], name: str, line: int,
                   exclusive: list[tuple[int, int, int, int]] = ()) -> Binding | None:
    """What `name` holds where read on `line`: its latest binding on an earlier line, not in an
    `if` body whose `else` holds the line (`exclusive`, from `exclusive_branches`)."""
    earlier = [binding for binding in bindings.get(name, ()) if binding[0] < line and not any(
        first <= binding[0] <= last and other <= line <= other_last for first, last, other, other_last in exclusive)]
    return max(earlier, key=lambda binding: binding[0]) if earlier else None


def exclusive_branches(nodes: Iterable[ast.AST]) -> list[tuple[int, int, int, int]]:
    """For each `if` with an `else` (or `elif`) among a scope's nodes: its body's first and last
    line, then its `else`'s first line and the line its last simple statement starts on, as
    `analysis.placement` records them (`PlacementFacts.exclusive`)."""
    found = []
    for node in nodes:
        if isinstance(node, ast.If) and node.orelse and node.body:
            other = node.body[-1].end_lineno + 1  # the `else:` (or `elif`) line, which `ast` does not keep
            found.append((node.body[0].lineno, other - 1, other, _last_simple_line(node.orelse[-1])))
    return found


def _last_simple_line(node: ast.AST) -> int:
    """The line the last simple statement under a statement starts on."""
    while True:
        if isinstance(node, ast.Try) and (node.finalbody or node.orelse or node.handlers):
            node = (node.finalbody or node.orelse or node.handlers)[-1]
        elif getattr(node, "orelse", None):
            node = node.orelse[-1]
        elif isinstance(getattr(node, "body", None), list) and node.body:
            node = node.body[-1]
        else:
            return node.lineno


def method_chain(node: ast.expr) -> set[str]:
    """Method and attribute names along `a.b().c[0].d()`: {"b", "c", "d"} (as DF008 reads them)."""
    names = set()
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return names


def parameters(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.arg]:
    """A function's named parameters: positional-only, ordinary and keyword-only (not `*args`, `**kw`)."""
    arguments = function.args
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]


def defined_once(body: list[ast.stmt], kinds: tuple[type, ...], name: str):
    """The one definition of `name` among `body`'s statements of those kinds, or None (none, or several)."""
    found = [node for node in body if isinstance(node, kinds) and node.name == name]
    return found[0] if len(found) == 1 else None


def last_method(class_def: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    """The method `name` the class body defines (the last definition wins, as in Python)."""
    found = [node for node in class_def.body if isinstance(node, ast.FunctionDef) and node.name == name]
    return found[-1] if found else None


def dotted_head(node: ast.expr) -> str | None:
    """`a` of `a.b.c`, when the expression is a dotted name."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def may_name_a_device(call: ast.Call) -> bool:
    """`device=` given, or `**tkwargs` spread, which may hold it (botorch's `{"device": x.device, ...}`)."""
    return any(keyword.arg in ("device", None) for keyword in call.keywords)


def store_targets(node: ast.AST) -> list[ast.expr]:
    """What a statement (or a comprehension) stores into or deletes."""
    if isinstance(node, (ast.Assign, ast.Delete)):
        return node.targets
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    return []


def is_self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def operand_names(value: ast.expr) -> set[str]:
    """Names given whole to a torch op (`x`, `[a, b]`, `-x`), as `analysis.tensors` reads them."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, (ast.List, ast.Tuple)):
        return {name for element in value.elts for name in operand_names(element)}
    if isinstance(value, ast.UnaryOp):
        return operand_names(value.operand)
    return set()


def is_number_literal(value: ast.expr) -> bool:
    """A number literal, signed or not (`3`, `-0.5`; not `True`)."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    return isinstance(value, ast.Constant) and isinstance(value.value, (int, float)) and not isinstance(value.value, bool)
