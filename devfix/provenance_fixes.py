"""Edits made from what a run proved, for `devfix run --fix` when no static rule has a finding at
the place: the line where a tensor was created on the CPU, the loop that received a batch, the line
that converted a CUDA tensor to numpy or hard-coded `.cuda()`.

Each edit is a single change at a single line the run named, and only when that line holds exactly
one place it can be: otherwise the function returns None and the loop reports the error instead.
The device is the one a tensor parameter of the function held when the error happened
(`device=logits.device`), or in a program a module-level `device = torch.device(...)`, added when
the module does not use the name at all; a library module or a test never gets that preamble.
"""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from devfix.analysis.device_scope import PREAMBLE_NAME, insert_preamble
from devfix.analysis.facts import FileFacts, FileRole
from devfix.codemods.edits import add_keyword, call_methods


TAKE_NO_DEVICE = frozenset({"cat", "concat", "stack", "from_numpy", "load"})  # torch functions without a `device=`


def numpy_on_host(text: str, path: str, line: int) -> str | None:
    """`x.numpy()` at `line` → `x.cpu().numpy()` (a `.cpu()` already in the chain: nothing to do)."""
    return _edit_at(
        text, path, line,
        lambda node: isinstance(node, cst.Call) and _method(node) == "numpy" and not node.args and "cpu" not in _chain(node.func.value),
        lambda node, _device: node.with_changes(func=node.func.with_changes(value=call_methods(node.func.value, "cpu"))),
        needs_device=False,
    )


def factory_on_device(text: str, path: str, line: int, function: str, device: str | None = None) -> str | None:
    """`torch.ones(3)` at `line` (what created the CPU operand) → `torch.ones(3, device=device)`,
    or `device=logits.device` when `device` names a parameter's device. A call that draws from a
    `generator=` is moved after it instead (`torch.randn(n, generator=g).to(device)`): the
    generator is a CPU one, and `device=` would not match it. So is a call that takes no `device=`
    (`torch.cat(parts)`, `torch.from_numpy(array)`)."""
    return _edit_at(
        text, path, line,
        lambda node: isinstance(node, cst.Call) and _callee_name(node) == function and not any(_keyword(arg) == "device" for arg in node.args),
        lambda node, device: _moved(node, device) if function in TAKE_NO_DEVICE or _draws_from_generator(node) else add_keyword(node, "device", device),
        device=device,
    )


def _draws_from_generator(call: cst.Call) -> bool:
    return any(_keyword(arg) == "generator" for arg in call.args)


def _moved(node: cst.BaseExpression, device: str) -> cst.Call:
    return cst.Call(cst.Attribute(node, cst.Name("to")), [cst.Arg(cst.parse_expression(device))])


def loop_variable_on_device(text: str, path: str, line: int, name: str, device: str | None = None) -> str | None:
    """`for x, y in loader:` at `line`, where `x` met a CUDA tensor → `x = x.to(device)` first in the
    body (or `.to(<device>)` when `device` names a parameter's device)."""
    return _edit_at(
        text, path, line,
        lambda node: isinstance(node, cst.For) and isinstance(node.body, cst.IndentedBlock) and name in _bound(node.target),
        lambda node, device: node.with_changes(body=node.body.with_changes(
            body=[cst.parse_statement(f"{name} = {name}.to({device})\n"), *node.body.body])),
        device=device,
    )


def module_on_device(text: str, path: str, name: str) -> str | None:
    """`model = Net(...)`, the one binding of `name` in the file, whose parameters met a CUDA
    tensor → `model = Net(...).to(device)`."""
    bindings = _Bindings(name)
    cst.parse_module(text).visit(bindings)
    if len(bindings.values) != 1 or not isinstance(bindings.values[0], cst.Call):
        return None
    value = bindings.values[0]
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    line = next((positions[node].start.line for node in positions if isinstance(node, cst.Call) and node.deep_equals(value)), None)
    if line is None:
        return None
    return _edit_at(
        text, path, line,
        lambda node: isinstance(node, cst.Call) and node.deep_equals(value),
        _moved,
    )


def cuda_call_portable(text: str, path: str, line: int) -> str | None:
    """`.cuda()` at `line`, on a machine without CUDA → `.to(device)` (every one on the line)."""
    return _edit_at(
        text, path, line,
        lambda node: isinstance(node, cst.Call) and _method(node) == "cuda" and not node.args,
        lambda node, device: node.with_changes(func=node.func.with_changes(attr=cst.Name("to")), args=[cst.Arg(cst.Name(device))]),
        only_one=False,
    )


# -- helpers ---------------------------------------------------------------------------------------


def _edit_at(
    text: str, path: str, line: int, select, change, needs_device: bool = True, only_one: bool = True, device: str | None = None,
) -> str | None:
    """`change(node, device)` for the nodes that start at `line` and `select` accepts: exactly one
    of them (unless `only_one` is False), else None. Without a `device` expression given, the
    device is the program's preamble name (added when it is missing)."""
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    chosen = {id(node) for node, position in positions.items() if position.start.line == line and select(node)}
    if not chosen or (only_one and len(chosen) != 1):
        return None
    given = device is not None
    if needs_device and not given:
        device = _device_name(wrapper.module, text, path)
        if device is None:
            return None

    class Edit(cst.CSTTransformer):
        def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
            return change(updated, device) if id(original) in chosen else updated

    module = wrapper.module.visit(Edit())
    if needs_device and not given and not _top_level_torch_device(module):
        module = insert_preamble(module, "torch", device)
    return module.code if module.code != text else None


def _device_name(module: cst.Module, text: str, path: str) -> str | None:
    """`device` when the module binds it at the top level to `torch.device(...)`, or is a program
    that does not use the name anywhere (the preamble will add it); None otherwise."""
    if _top_level_torch_device(module):
        return PREAMBLE_NAME
    if FileFacts(ast.parse(text), text, path, None).role is not FileRole.PROGRAM:
        return None
    uses = _Names(PREAMBLE_NAME)
    module.visit(uses)
    if uses.found or not _imports_torch(module):
        return None
    return PREAMBLE_NAME


def _top_level_torch_device(module: cst.Module) -> bool:
    return any(
        isinstance(small, cst.Assign) and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == PREAMBLE_NAME
        and isinstance(small.value, cst.Call) and _callee_name(small.value) == "device"
        for small in _top_level_small_statements(module)
    )


def _imports_torch(module: cst.Module) -> bool:
    return any(
        isinstance(small, cst.Import)
        and any(isinstance(alias.name, cst.Name) and alias.name.value == "torch" and alias.asname is None for alias in small.names)
        for small in _top_level_small_statements(module)
    )


def _top_level_small_statements(module: cst.Module) -> list[cst.BaseSmallStatement]:
    return [small for statement in module.body if isinstance(statement, cst.SimpleStatementLine) for small in statement.body]


class _Bindings(cst.CSTVisitor):
    """Every value assigned to `name` (`name = value`, `name: T = value`), anywhere in the file."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: list[cst.BaseExpression | None] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if name_bound(target.target, self.name):
                self.values.append(node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if name_bound(node.target, self.name):
            self.values.append(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if name_bound(node.target, self.name):
            self.values.append(None)

    def visit_For(self, node: cst.For) -> None:
        if name_bound(node.target, self.name):
            self.values.append(None)


def name_bound(target: cst.BaseExpression, name: str) -> bool:
    return name in _bound(target)


class _Names(cst.CSTVisitor):
    """Whether the name is read or bound anywhere (an attribute `x.device` is another thing)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.found = self.found or node.value == self.name


def _method(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def _callee_name(call: cst.Call) -> str | None:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None


def _keyword(arg: cst.Arg) -> str | None:
    return arg.keyword.value if arg.keyword is not None else None


def _chain(node: cst.BaseExpression) -> list[str]:
    methods = []
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        methods.append(node.func.attr.value)
        node = node.func.value
    return methods


def _bound(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_bound(element.value) for element in target.elements))
    return set()
