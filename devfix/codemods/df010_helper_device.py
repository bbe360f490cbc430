"""DF010 helper-device: an evaluation/helper function feeds DataLoader batches to a model it receives,
with no device in sight.

    Before:  def evaluate(model, loader):
                 for x, y in loader:
                     correct += (model(x).argmax(1) == y).sum().item()
    After:   def evaluate(model, loader):
                 device = next(model.parameters()).device
                 for x, y in loader:
                     x, y = x.to(device), y.to(device)
                     ...

A batch unpacked first thing in the loop (`for batch in loader: x, y = batch`) moves after that
statement, as in DF002. A batch taken by hand (`images, labels = next(iter(loader))`, or `next(it)` in a `while` loop that
stops at `StopIteration`) moves right after it is taken, as DF002 does at the top level.

The batches go to wherever the caller put the model: correct on a GPU, a no-op on the CPU, and
never tied to a global device variable the helper cannot see. Only loops over something proven a
DataLoader (as in DF002: for a helper module, by every call of the function in the files beside
it, `evaluate(model, DataLoader(data))` in the script that imports it) and batch variables that
meet the model or its outputs are moved; the model is the callable given a value computed from
the batch (`model(x)`, `model(add_bias(x))`, `model(x.float())`).

Refuses: programs that place nothing on a device, nor do the project modules they import (their
helpers' models run on the CPU wherever they run: the registry's `aligns_values`), the positions of
the batches that some loader given holds as strings or lists (captions of a Dataset class of the
file, `analysis.dataset_items`), functions with
a device parameter or local (DF002 uses it), models that are not
parameters of the function or that it rebinds (`model, optimizer = engine.make_private(model, ...)`:
`next(model.parameters())` at the top would read the model before it moved), several such models given the batch that none of the others feeds
(which one holds the device is not known), batches already moved, dict or positional batches it
cannot type.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.call_sites import file_functions
from devfix.analysis.cst_bindings import variables_in
from devfix.analysis.dataset_items import non_tensor_names
from devfix.analysis.loaders import (
    batches_to_move,
    collate_places_batches,
    is_dataloader,
    loops_of,
    move_statements,
    non_tensor_positions_of,
    taken_batches,
    taken_loader,
    target_names,
    unpacked_batch,
    unwrap_loader,
)
from devfix.analysis.placement import collect
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_api import DEVICE_NAMES
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import insert_in_body, prepend_to_function
from devfix.findings import Safety


class HelperDevice(ScopeTracker, DevfixRule):
    CODE = "DF010"
    NAME = "helper-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Helper function feeds DataLoader batches to its model argument without moving them"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._loops: dict[cst.For, tuple[str, list, int]] = {}  # → model, moves, where they go in the body
        self._taken: dict[cst.SimpleStatementLine, tuple[str, list]] = {}  # `x, y = next(iter(loader))` → its moves
        self._functions: dict[cst.FunctionDef, str] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._has_local_device(node):
            return
        parameters = self.scope_parameters(node.body)
        for loop in loops_of(node):
            loader, target = unwrap_loader(loop, self.qualified)
            if not isinstance(loop.body, cst.IndentedBlock):
                continue
            non_tensors = non_tensor_names(loop, target, non_tensor_positions_of(self, loader)) if loader is not None else set()
            names, start = unpacked_batch(loop, target_names(target), self.qualified)  # `x, y = batch` first
            names = [name for name in names if name not in non_tensors]  # captions of the dataset: a tuple of strings
            body = loop.body.with_changes(body=loop.body.body[start:])
            if plan := self._plan(loop, loader, names, body, parameters):
                self._loops[loop] = (*plan, start)
                self._functions.setdefault(node, plan[0])
        for statement, following in taken_batches(node):
            assign = statement.body[0]
            loader = taken_loader(self, assign.value, statement)
            positions = non_tensor_positions_of(self, loader) if loader is not None else frozenset()
            names = [name for position, name in enumerate(target_names(assign.targets[0].target)) if position not in positions]
            if following and (plan := self._plan(statement, loader, names, cst.IndentedBlock(body=following), parameters)):
                self._taken[statement] = plan
                self._functions.setdefault(node, plan[0])

    def _plan(self, node: cst.CSTNode, loader, names: list[str], body: cst.IndentedBlock, parameters: set[str]):
        """The model whose device the batch variables `names` of `loader` go to, and the moves,
        where `body` (what runs with the batch) feeds them to a model the function is given."""
        if loader is None or not names or not is_dataloader(self, loader) or collate_places_batches(self, loader):
            return None
        facts = self.scope_facts(node)
        # a model the function rebinds (`model, opt = wrap(model, opt)`) is not where the parameter was
        models = sorted(name for name in parameters & facts.called if name not in names and name not in facts.bindings)
        if not models:
            return None
        body_facts = collect([body], self.qualified, self.line_of, models)
        moves = batches_to_move(body, names, self.batch_callables(node, models), set(models), body_facts, self.qualified, file_functions(self.module))
        uses, ambiguous = moves.uses, moves.ambiguous
        model = _pick_model(body, [model for model in models if _calls_with(body, model, names)])
        if ambiguous or not uses or model is None:
            return None
        return model, uses

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        plan = self._loops.get(original_node)
        statements = self._moves(original_node.target, plan[:2]) if plan is not None else None
        return insert_in_body(updated_node, plan[2], statements) if statements else updated_node

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine):
        plan = self._taken.get(original_node)
        statements = self._moves(original_node.body[0].targets[0].target, plan) if plan is not None else None
        return cst.FlattenSentinel([updated_node, *statements]) if statements else updated_node

    def _moves(self, target: cst.BaseExpression, plan: tuple[str, list]) -> list[cst.SimpleStatementLine] | None:
        """The statements that move the batch, once its finding is reported as fixed."""
        model, uses = plan
        listed = ", ".join(f"`{use.name}`" for use in uses)
        if not self.report(target, f"batch {listed} is fed to `{model}` without being moved to the model's device",
                           fix_title=f"move it to `{model}`'s device"):
            return None
        return move_statements(uses, "device", self.torch_name() if any(use.is_dict for use in uses) else "torch")

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        model = self._functions.get(original_node)
        if model is None or updated_node.body.deep_equals(original_node.body):
            return updated_node
        return prepend_to_function(updated_node, [cst.parse_statement(f"device = next({model}.parameters()).device\n")])

    def _has_local_device(self, function: cst.FunctionDef) -> bool:
        facts = self.scope_facts(function.body)
        return bool((self.scope_parameters(function.body) | set(facts.bindings)) & set(DEVICE_NAMES))


def _pick_model(body: cst.CSTNode, candidates: list[str]) -> str | None:
    """The callable whose parameters hold the device: the one not fed another's output (a
    criterion). Where several remain none is picked: a pick by name would be a guess, and a wrong
    one could be parameter-free."""
    finder = _FedOutputs(set(candidates))
    body.visit(finder)
    remaining = [name for name in candidates if name not in finder.fed]
    return remaining[0] if len(remaining) == 1 else None


class _FedOutputs(cst.CSTVisitor):
    """Candidates called with another candidate's output, directly or through a local name."""

    def __init__(self, candidates: set[str]) -> None:
        self.candidates = candidates
        self.fed: set[str] = set()
        self.outputs: set[str] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._is_candidate_call(node.value):
            self.outputs.update(target.target.value for target in node.targets if isinstance(target.target, cst.Name))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in self.candidates:
            for arg in node.args:
                if self._is_candidate_call(arg.value) or (isinstance(arg.value, cst.Name) and arg.value.value in self.outputs):
                    self.fed.add(node.func.value)

    def _is_candidate_call(self, node: cst.BaseExpression) -> bool:
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in self.candidates


def _calls_with(body: cst.CSTNode, callee: str, names: list[str]) -> bool:
    """`callee` is called with a value computed from a batch variable (`model(x)`, `model(batch[0])`,
    `model(add_bias(x))`, `model(x.float())`)."""
    finder = _CallFinder(callee, set(names))
    body.visit(finder)
    return finder.found


class _CallFinder(cst.CSTVisitor):
    def __init__(self, callee: str, names: set[str]) -> None:
        self.callee, self.names, self.found = callee, names, False

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == self.callee:
            self.found |= any(variables_in(arg.value) & self.names for arg in node.args)
