"""DF002 loader-to-device: DataLoader batches stay on the CPU while the model runs on a device.

    Before:  for x, y in loader:
                 loss = criterion(model(x), y)
    After:   for x, y in loader:
                 x, y = x.to(device), y.to(device)
                 loss = criterion(model(x), y)

Applies to `for ... in loader`, `enumerate(loader)` and `tqdm(loader)` when `loader` is tied to a
DataLoader (built with `DataLoader(...)`, a parameter annotated as one, or named like one) and the
body feeds the batch to a model that was moved to a device, or to a Module while a device variable
is in scope. Only the variables that meet the model or its outputs are moved; the device is the one
the model was moved to. Dict batches move their tensor values only, so string fields survive.

Refuses: batches already moved in the body, batches that are only printed, stored or handed to
unknown functions (lists of paths or strings), batches indexed by position (`batch[0]`: the tool
cannot tell which elements are tensors), one-line loop bodies.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import Assignment, ScopeProvider

from devfix.analysis.device_scope import DeviceChoice, assigning_statement, device_for, device_variable_in_scope
from devfix.analysis.placement import PlacementFacts, collect
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_names import DATALOADER_NAMES, ENUMERATE_NAMES, PROGRESS_WRAPPERS, qualified_names, torch_alias
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety


@dataclass(frozen=True)
class BatchUse:
    """A loop variable that must move, and whether it is a dict of fields."""

    name: str
    is_dict: bool


class LoaderToDevice(ScopeTracker, DevfixRule):
    CODE = "DF002"
    NAME = "loader-to-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "DataLoader batch used with a model on a device but never moved"

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        loader, target = _unwrap_loader(original_node, self.qualified)
        if loader is None or not self._is_dataloader(loader):
            return updated_node
        names = _target_names(target)
        if not names:
            return updated_node
        models = self._models_in(original_node)
        if not models:
            return updated_node
        body_facts = collect([original_node.body], self.qualified, self.line_of, models)
        callables = set(models) | set(self.scope_modules(original_node)) | self.scope_parameters(original_node)
        uses, ambiguous = _batches_to_move(original_node.body, names, callables, models, body_facts, self.qualified)
        if ambiguous:
            self.report(target, f"batch `{ambiguous}` meets a model on a device but is indexed by position: "
                        "move its tensor elements with `.to(device)`", fixable=False)
        if not uses:
            return updated_node
        return self._fix(original_node, updated_node, target, uses, models)

    def _fix(self, original: cst.For, updated: cst.For, target: cst.BaseExpression,
             uses: list[BatchUse], models: dict[str, str | None]) -> cst.For:
        listed = ", ".join(f"`{use.name}`" for use in uses)
        message = f"DataLoader batch {listed} stays on the CPU while the model runs on a device"
        choice = self._device_choice(original, models)
        if choice is None or not isinstance(original.body, cst.IndentedBlock):
            self.report(target, message + "; move it with `.to(device)`", fixable=False)
            return updated
        if not self.report(target, message, fix_title=f"move the batch to `{choice.name}` at the top of the loop"):
            return updated
        device = self.use_device(choice)
        torch_name = torch_alias(self.module) or "torch"
        statements = _move_statements(uses, device, torch_name)
        return updated.with_changes(body=updated.body.with_changes(body=[*statements, *updated.body.body]))

    def _device_choice(self, node: cst.For, models: dict[str, str | None]) -> DeviceChoice | None:
        """The device the model went to; else a device variable; else the preamble (for `.cuda()`)."""
        expressions = {expression for expression in models.values() if expression is not None}
        if len(expressions) == 1:
            return DeviceChoice(expressions.pop())
        existing = device_variable_in_scope(self, node)
        if existing is not None:
            return DeviceChoice(existing)
        return device_for(self, node) if not expressions else None

    def _models_in(self, node: cst.For) -> dict[str, str | None]:
        """Callables in this scope that run on a device → the device expression they were moved to
        (None for `.cuda()`/CUDA literals). With a device variable in scope, called parameters
        (`def evaluate(model, loader, device)`) count too: the caller placed them. A Module built
        here and never moved is on the CPU, like its data: consistent, so left alone."""
        facts = self.scope_facts(node)
        models = {name: _device_code(move.device) for name, move in facts.moved.items() if name in facts.called}
        if device_variable_in_scope(self, node) is not None:
            for name in sorted(self.scope_parameters(node) & facts.called):
                models.setdefault(name, None)
        return models

    def _is_dataloader(self, loader: cst.Name) -> bool:
        scope = self.get_metadata(ScopeProvider, loader, None)
        if scope is None:
            return False
        for assignment in scope[loader.value]:
            if not isinstance(assignment, Assignment):
                continue
            node = assignment.node
            if isinstance(node, cst.Param):
                annotated = node.annotation is not None and qualified_names(self, node.annotation.annotation) & DATALOADER_NAMES
                if annotated or "loader" in loader.value.lower():
                    return True
            elif isinstance(node, cst.Name):
                statement = assigning_statement(self, node)
                if statement is not None and isinstance(statement.value, cst.Call):
                    if qualified_names(self, statement.value.func) & DATALOADER_NAMES:
                        return True
        return False


def _unwrap_loader(node: cst.For, qualified) -> tuple[cst.Name | None, cst.BaseExpression]:
    iterable, target = node.iter, node.target
    while isinstance(iterable, cst.Call) and iterable.args and qualified(iterable.func) & PROGRESS_WRAPPERS:
        if qualified(iterable.func) & ENUMERATE_NAMES:
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                return None, target
            target = target.elements[1].value
        iterable = iterable.args[0].value
    return (iterable if isinstance(iterable, cst.Name) else None), target


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
        return [element.value.value for element in target.elements]
    return []


def _device_code(device: cst.BaseExpression | None) -> str | None:
    if device is None:
        return None
    if isinstance(device, (cst.Name, cst.Attribute, cst.SimpleString)):
        return cst.Module([]).code_for_node(device)
    return None


def _move_statements(uses: list[BatchUse], device: str, torch_name: str) -> list[cst.SimpleStatementLine]:
    statements = []
    tensors = [use.name for use in uses if not use.is_dict]
    if tensors:
        targets = ", ".join(tensors)
        values = ", ".join(f"{name}.to({device})" for name in tensors)
        statements.append(cst.parse_statement(f"{targets} = {values}\n"))
    for use in uses:
        if use.is_dict:
            statements.append(cst.parse_statement(
                f"{use.name} = {{key: value.to({device}) if {torch_name}.is_tensor(value) else value "
                f"for key, value in {use.name}.items()}}\n"
            ))
    return statements


def _batches_to_move(body, names, callables, models, facts: PlacementFacts, qualified) -> tuple[list[BatchUse], str | None]:
    finder = _BatchUseFinder(set(names), set(callables), set(models), facts, qualified)
    body.visit(finder)
    untouched = [name for name in names if name not in facts.moved and name not in facts.assignments and not name.startswith("_")]
    uses = []
    for name in untouched:
        if name in finder.positional:
            return [], name
        if name in finder.needed:
            uses.append(BatchUse(name, is_dict=name in finder.as_dict))
    return uses, None


class _BatchUseFinder(cst.CSTVisitor):
    """Which loop variables meet a model or a device value, and how they are indexed there."""

    def __init__(self, names: set[str], callables: set[str], models: set[str], facts: PlacementFacts, qualified) -> None:
        self.names, self.callables, self.models, self.facts, self.qualified = names, callables, models, facts, qualified
        self.needed: set[str] = set()
        self.as_dict: set[str] = set()
        self.positional: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        callee = node.func
        is_model = isinstance(callee, cst.Name) and callee.value in self.models
        is_torch = any(name.startswith("torch.") for name in self.qualified(callee))
        values = [arg.value for arg in node.args]
        meets_device = any(self.facts.is_device_value(value) for value in values)
        is_known_callable = isinstance(callee, cst.Name) and callee.value in self.callables
        if is_model or (meets_device and (is_torch or is_known_callable)):
            for value in values:
                self._mark(value)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self.facts.is_device_value(node.left) or self.facts.is_device_value(node.right):
            self._mark(node.left)
            self._mark(node.right)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(target.comparator for target in node.comparisons)]
        if any(self.facts.is_device_value(operand) for operand in operands):
            for operand in operands:
                self._mark(operand)

    def _mark(self, value: cst.BaseExpression) -> None:
        if isinstance(value, cst.Name) and value.value in self.names:
            self.needed.add(value.value)
        elif isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and value.value.value in self.names:
            name = value.value.value
            key = value.slice[0].slice if len(value.slice) == 1 else None
            if isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString):
                self.needed.add(name)
                self.as_dict.add(name)
            else:
                self.positional.add(name)
