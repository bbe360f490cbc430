"""A factory a function returns beside a tensor computed from its parameters, where every caller
puts the two together.

    def info_nce_loss(features, n, temperature=0.07):   logits, labels = info_nce_loss(model(x), n)
        ...                                             loss = criterion(logits, labels)
        logits = torch.cat([positives, negatives], dim=1)
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        return logits / temperature, labels

SimCLR's contrastive loss: `labels` meets `logits` only in the caller, where `logits` is on the
device of the features the model gave. Made on `logits.device` inside the function, the labels are
where their partner is on every device, and the callers need no change. Proven, never guessed:

- the function is defined once (a top-level function, or a method of a top-level class), is no
  generator, and ends with its only `return`, a tuple display;
- the factory's item is a name the function's body binds last, at its top level, to a factory
  without `device=`, `generator=` or `out=` (or tensor methods of one: `torch.full(...).long()`),
  and reads nowhere after;
- the partner item is computed from a name (through arithmetic, indexing and tensor methods that
  keep a tensor's device) that the value analysis proves a tensor there, bound only above the
  factory, and computed from the function's parameters (not a method's `self`) through torch's
  tensor operations and the calls of its object's attributes (a layer's output);
- every use of the function's name in the file is such a call unpacked into one name per item,
  and in the caller's scope the two names are then given to one call or one operator; for a
  Module's `forward`, every call of the names that only hold its instances (MoCo's `output,
  target = model(im_q, im_k)`, then `criterion(output, target)`); a top-level function no other
  file of the project uses (`FileFacts.returned_pairs` asks `analysis.importers`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from devfix.analysis.ast_nodes import FUNCTIONS, is_number_literal, scope_bindings, scope_nodes
from devfix.analysis.following_returns import DEVICE_KEEPING_ATTRIBUTES, DEVICE_KEEPING_METHODS, named_parameters
from devfix.analysis.imports import ImportTable
from devfix.analysis.torch_api import FACTORY_FUNCTIONS, is_torch_tensor_function

DEPTH = 12  # bindings followed back to the parameters
PLACING_KEYWORDS = frozenset({"device", "generator", "out"})


@dataclass(frozen=True)
class ReturnedPair:
    function_line: int  # the `def` line
    binding_line: int  # where the factory's name is bound (`labels = torch.zeros(...)`)
    name: str  # `labels`
    partner: str  # `logits`: the factory is made on its device


def returned_pairs(tree: ast.Module, imports: ImportTable, is_tensor: Callable[[ast.Name], bool],
                   forward_calls: Callable[[str], list[ast.Call] | None]) -> list[ReturnedPair]:
    """The pairs of the file's functions and methods (see the module's docstring).
    `forward_calls(class_name)`: every call of the Module class's instances, when the file shows
    them all (`analysis.module_instances`), the uses of its `forward`; None otherwise."""
    found: list[ReturnedPair] = []
    for function, class_name in _candidates(tree):
        pair = _pair_in(function, imports, class_name is not None)
        if pair is None:
            continue
        partner_item, factory_item, found_pair, partner = pair
        if class_name is None:  # `info_nce_loss(features)`
            uses = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == function.name and isinstance(node.ctx, ast.Load)]
        elif function.name == "forward":  # `output, target = model(im_q, im_k)`
            calls = forward_calls(class_name)
            uses = [call.func for call in calls] if calls is not None else None
        else:  # `self.info_nce_loss(features)`, or the method read from anything else
            uses = [node for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == function.name]
        # the value analysis last: most files never need it
        if uses and _every_caller_joins(tree, uses, partner_item, factory_item) and is_tensor(partner):
            found.append(found_pair)
    return found


def _candidates(tree: ast.Module):
    """Top-level functions and methods of top-level classes (with the class's name), each defined
    once where it is."""
    def once(body: list[ast.stmt]):
        functions = [node for node in body if isinstance(node, FUNCTIONS)]
        names = [function.name for function in functions]
        return [function for function in functions if names.count(function.name) == 1]

    for function in once(tree.body):
        yield function, None
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for function in once(node.body):
                yield function, node.name


def _pair_in(function, imports: ImportTable, is_method: bool) -> tuple[int, int, ReturnedPair, ast.Name] | None:
    """(the partner's item, the factory's item, the pair, the partner's name where it is returned)
    of `function`'s last statement; that name is still to be proven a tensor."""
    last = function.body[-1]
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Tuple)
            and any(isinstance(item, ast.Name) for item in last.value.elts)):
        return None  # the common case, seen without walking the function
    nodes = list(scope_nodes(function.body))
    if any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in nodes):
        return None
    if [node for node in nodes if isinstance(node, ast.Return)] != [last] or any(isinstance(item, ast.Starred) for item in last.value.elts):
        return None
    items = last.value.elts
    bindings = scope_bindings(nodes)
    for factory_item, item in enumerate(items):
        if not isinstance(item, ast.Name):
            continue
        binding = _last_top_level_binding(function, item.id)
        if binding is None or not _is_unplaced_factory(binding.value, imports):
            continue
        if _read_after(nodes, item.id, binding.lineno, last):
            continue
        for partner_item, other in enumerate(items):
            partner = _device_root(other) if partner_item != factory_item else None
            if partner is None or partner.id == item.id:
                continue
            partner_bindings = bindings.get(partner.id, [])
            if not any(line < binding.lineno for line, _ in partner_bindings) or not all(
                    _kept_from(value, partner.id) for line, value in partner_bindings if line >= binding.lineno):
                continue  # no value above the factory, or one below it elsewhere (`logits = logits / t` keeps it)
            if _from_parameters(partner.id, bindings, _tensor_parameters(function, is_method), imports, DEPTH, set()):
                return partner_item, factory_item, ReturnedPair(function.lineno, binding.lineno, item.id, partner.id), partner
    return None


def _tensor_parameters(function, is_method: bool) -> set[str]:
    """The parameters that may hold the tensors a partner is computed from: not a method's `self`."""
    names = named_parameters(function)
    static = any(isinstance(decorator, ast.Name) and decorator.id == "staticmethod" for decorator in function.decorator_list)
    return set(names[1:] if is_method and not static else names)


def _last_top_level_binding(function, name: str) -> ast.Assign | None:
    """The function body's last statement binding `name`, when it is `name = ...` at the body's
    top level and no other binding of `name` comes after it (in a branch or loop either)."""
    for statement in reversed(function.body[:-1]):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name) \
                and statement.targets[0].id == name:
            return statement
        if any(isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
               for node in scope_nodes([statement])):
            return None
    return None


def _is_unplaced_factory(value: ast.expr, imports: ImportTable) -> bool:
    """`torch.zeros(n, dtype=torch.long)`, or tensor methods of one (`torch.full(...).long()`)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in DEVICE_KEEPING_METHODS \
            and imports.qualify(value.func) is None:
        value = value.func.value
    return (isinstance(value, ast.Call) and imports.qualify(value.func) in FACTORY_FUNCTIONS
            and not any(keyword.arg in PLACING_KEYWORDS or keyword.arg is None for keyword in value.keywords))


def _read_after(nodes: list[ast.AST], name: str, line: int, last: ast.Return) -> bool:
    """Is `name` read after its binding on `line`, other than by the `return`?"""
    returned = {id(node) for node in ast.walk(last)}
    return any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) and node.lineno > line
               and id(node) not in returned for node in nodes)


def _kept_from(value: ast.expr | None, name: str) -> bool:
    """`logits = logits / temperature`: a rebinding on the device the name was on."""
    root = _device_root(value) if value is not None else None
    return root is not None and root.id == name


def _device_root(item: ast.expr) -> ast.Name | None:
    """The name whose device an expression keeps (`logits / temperature`, `scores[:, 0]`, `out.float()`)."""
    while True:
        if isinstance(item, ast.Name):
            return item
        if isinstance(item, ast.BinOp):
            item = item.left if not is_number_literal(item.left) else item.right
        elif isinstance(item, ast.UnaryOp) and not isinstance(item.op, ast.Not):
            item = item.operand
        elif isinstance(item, ast.Subscript):
            item = item.value
        elif isinstance(item, ast.Attribute) and item.attr in DEVICE_KEEPING_ATTRIBUTES:
            item = item.value
        elif isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute) and item.func.attr in DEVICE_KEEPING_METHODS:
            item = item.func.value
        else:
            return None


def _from_parameters(name: str, bindings, parameters: set[str], imports: ImportTable, depth: int, visiting: set[str]) -> bool:
    """Is every binding of `name` computed from the parameters through torch's tensor operations
    (a name rebound from itself, `features = F.normalize(features)`, `sim = sim[~mask]`, is what
    its other bindings, or the parameter, made it)?"""
    if name in visiting:
        return True
    if name not in bindings:
        return name in parameters
    if depth <= 0:
        return False
    visiting = visiting | {name}
    return all(value is not None and _computed(value, bindings, parameters, imports, depth - 1, visiting)
               for _, value in bindings[name])


def _computed(value: ast.expr, bindings, parameters: set[str], imports: ImportTable, depth: int, visiting: set[str]) -> bool:
    again = lambda inner: _computed(inner, bindings, parameters, imports, depth, visiting)  # noqa: E731
    if isinstance(value, ast.Name):
        return _from_parameters(value.id, bindings, parameters, imports, depth, visiting)
    if isinstance(value, ast.Subscript):
        return again(value.value)
    if isinstance(value, ast.Attribute):
        return value.attr in DEVICE_KEEPING_ATTRIBUTES and again(value.value)
    if isinstance(value, ast.UnaryOp):
        return not isinstance(value.op, ast.Not) and again(value.operand)
    if isinstance(value, ast.BinOp):
        return again(value.left) or again(value.right)
    if isinstance(value, (ast.List, ast.Tuple)):
        return any(again(element) for element in value.elts)
    if isinstance(value, ast.Call):
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in DEVICE_KEEPING_METHODS and imports.qualify(func) is None:
            return again(func.value)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            return any(again(arg) for arg in value.args)  # a layer's output, `self.encoder_q(im_q)`: where the module is
        qualified = imports.qualify(func)
        if qualified is not None and qualified not in FACTORY_FUNCTIONS and is_torch_tensor_function({qualified}):
            return any(again(arg) for arg in value.args)
    return False


def _every_caller_joins(tree: ast.Module, uses: list[ast.expr], partner_item: int, factory_item: int) -> bool:
    """Every use of the function is the callee of a call unpacked into names, whose partner and
    factory names the caller's scope then gives together to one call or one operator."""
    joined = 0
    for scope in _scopes(tree):
        nodes = list(scope_nodes(scope))
        bindings = scope_bindings(nodes)
        for node in nodes:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)
                    and any(node.value.func is use for use in uses)):
                continue
            target = node.targets[0]
            if not (isinstance(target, ast.Tuple) and all(isinstance(element, ast.Name) for element in target.elts)
                    and len(target.elts) > max(partner_item, factory_item)):
                return False
            partner, factory = target.elts[partner_item].id, target.elts[factory_item].id
            if len(bindings.get(partner, [])) != 1 or len(bindings.get(factory, [])) != 1 or not _given_together(nodes, partner, factory):
                return False
            joined += 1
    return joined > 0 and joined == len(uses)


def _scopes(tree: ast.Module):
    """The statements of the top level and of every function, each scope once."""
    yield tree.body
    for node in ast.walk(tree):
        if isinstance(node, FUNCTIONS):
            yield node.body


def _given_together(nodes: list[ast.AST], first: str, second: str) -> bool:
    """`criterion(logits, labels)`, `logits - labels`, `preds == labels`."""
    def named(value: ast.AST) -> str | None:
        return value.id if isinstance(value, ast.Name) else None

    for node in nodes:
        if isinstance(node, ast.Call):
            given = {named(arg) for arg in node.args} | {named(keyword.value) for keyword in node.keywords}
        elif isinstance(node, ast.BinOp):
            given = {named(node.left), named(node.right)}
        elif isinstance(node, ast.Compare):
            given = {named(node.left), *(named(comparator) for comparator in node.comparators)}
        else:
            continue
        if {first, second} <= given:
            return True
    return False
