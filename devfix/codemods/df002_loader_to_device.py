"""DF002 loader-to-device: DataLoader batches stay on the CPU while the model runs on a device.

    Before:  for x, y in loader:
                 loss = criterion(model(x), y)
    After:   for x, y in loader:
                 x, y = x.to(device), y.to(device)
                 loss = criterion(model(x), y)

Applies to `for ... in loader`, `enumerate(loader)`, `tqdm(loader)` and `zip(loader_a, loader_b)`
when `loader` is proven a
DataLoader (built with `DataLoader(...)`, there in the `for` statement or where the name was bound; a
parameter annotated as one, or given one by every call of its function, in the file or, for a
function the file only defines, in the files beside it; returned by a function of the file or of
another file of the project, `train_loader, val_loader = make_loaders()`; never from its name) and the
body feeds the batch to a model that was moved to a device (also by a function of the file or of
the project that gives back what it moved, `model = build_model(device)`:
`analysis.returned_moves`), or to a Module while a device variable is in scope. Only the variables that meet the model or its outputs are moved (also inside a function
of the file: `accuracy(out, y)` where `accuracy` compares its two parameters, and also when the
variable was moved inline for another use: `criterion(out, y.to(device))`); the device is the one
the model was moved to. Dict batches move their tensor values only, so string fields survive.

A variable the loop only collects (`all_labels.append(labels)`) moves too when the collection,
joined after the loop (`labels = torch.cat(all_labels)`), meets a device value there (`(probs.argmax(1)
== labels)` with `probs` joined from the model's outputs).

An element taken by position (`model(batch[0])`) moves where it meets the model or its outputs:
there it is surely a tensor, while other elements may be anything (labels as strings, paths).
Elements the body takes first (`real = data[0]`, also after statements that do not read the batch,
such as `netD.zero_grad()`, or by key: `labels = batch.pop("labels")` before the rest is moved) are
moved right after they are taken. A batch the body only reshapes or
casts (`images = images.reshape(-1, 784)`) is moved at the top of the body, before that.

Refuses: batches already moved in the body, batches that are only printed, stored or handed to
unknown functions (lists of paths or strings), the positions a Dataset class of the file, a list of
rows (`list(zip(texts, labels))`) or a `collate_fn` of the file gives as strings or lists (`for images, captions in loader` over a
`__getitem__` returning `self.images[i], self.captions[i]`: `default_collate` makes the captions a
tuple of strings, `analysis.dataset_items`), batches indexed by a variable or unpacked into a
call (`batch[i]`, `model(*batch)`: which elements are tensors?), one-line loop bodies (for whole
batches), loaders whose `collate_fn` (a function of the file) already moves what it builds, and files
where a framework places batches (accelerate's `prepare`, Lightning, XLA, RPC).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from devfix.analysis.call_sites import argument_for, file_functions
from devfix.analysis.cst_metadata import ParentProvider
from devfix.analysis.dataset_items import index_of, non_tensor_names
from devfix.analysis.device_scope import DeviceChoice, device_for, device_variable_in_scope
from devfix.analysis.forward_lengths import Packing
from devfix.analysis.kinds import Kind
from devfix.analysis.loaders import (
    BatchMoves,
    BatchUse,
    batches_to_move,
    collate_places_batches,
    is_dataloader,
    move_statements,
    names_meeting_devices,
    non_tensor_positions_of,
    taken_loader,
    target_names,
    unpacked_batch,
    unwrap_loader,
)
from devfix.analysis.placement import Move, as_move, collect, device_code
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_api import DEVICE_NAMES, LIST_FILLERS, LIST_JOINS, PLACEMENT_KEEPING_METHODS
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import insert_in_body, moved_to
from devfix.findings import Safety


@dataclass(frozen=True)
class _LoopPlan:
    """What one DataLoader loop must move, decided before its body is rewritten."""

    target: cst.BaseExpression
    moves: BatchMoves
    models: dict[str, str | None]  # callables on a device → the device they were moved to
    start: int  # where the moves go: after `x, y = batch`, if the body starts with it


class LoaderToDevice(ScopeTracker, DevfixRule):
    CODE = "DF002"
    NAME = "loader-to-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "DataLoader batch used with a model on a device but never moved"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._plans: dict[cst.For, _LoopPlan] = {}
        self._move_here: dict[int, str] = {}  # id of a `batch[0]` → the device it moves to
        self._taken: dict[cst.SimpleStatementLine, _LoopPlan] = {}  # `x, y = next(iter(loader))` → its moves

    def visit_For(self, node: cst.For) -> None:
        """Plan the loop's moves before its body is rewritten: elements taken by position move
        where they are used (`leave_Subscript`), whole batches at the top (`leave_For`)."""
        plan = self._plan(node)
        if plan is None:
            return
        self._plans[node] = plan
        if plan.moves.ambiguous:
            self.report(plan.target, f"batch `{plan.moves.ambiguous}` meets a model on a device but is indexed by position: "
                        "move its tensor elements with `.to(device)`", fixable=False)
        if plan.moves.indexed:
            self._plan_indexed(node, plan.moves.indexed, plan.models)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        """`images, labels = next(iter(loader))` (or `next(it)` of `it = iter(loader)`): a batch
        taken by hand; what follows it in its block uses it as a loop body would."""
        plan = self._plan_taken_batch(node)
        if plan is not None and plan.moves.uses:
            self._taken[node] = plan

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine):
        plan = self._taken.get(original_node)
        if plan is None:
            return updated_node
        listed = ", ".join(f"`{use.name}`" for use in plan.moves.uses)
        message = f"DataLoader batch {listed} stays on the CPU while the model runs on a device"
        choice = self._device_choice(original_node, plan.models)
        if choice is None:
            self.report(plan.target, message + "; move it with `.to(device)`", fixable=False)
            return updated_node
        if not self.report(plan.target, message, fix_title=f"move the batch to `{choice.name}` where it is taken"):
            return updated_node
        device = self.use_device(choice)
        torch_name = self.torch_name() if any(use.is_dict for use in plan.moves.uses) else "torch"
        return cst.FlattenSentinel([updated_node, *move_statements(plan.moves.uses, device, torch_name)])

    def _plan_taken_batch(self, node: cst.SimpleStatementLine) -> _LoopPlan | None:
        if len(node.body) != 1 or not isinstance(node.body[0], cst.Assign) or len(node.body[0].targets) != 1:
            return None
        assign = node.body[0]
        loader = taken_loader(self, assign.value, node)
        names = target_names(assign.targets[0].target)
        if loader is None or not names or not is_dataloader(self, loader) or collate_places_batches(self, loader):
            return None
        positions = non_tensor_positions_of(self, loader)  # `images, captions = next(iter(loader))`: captions stay
        names = [name for position, name in enumerate(names) if position not in positions]
        following = self._following(node)
        if not names or not following:
            return None
        rest = cst.IndentedBlock(body=following)
        models = self._models_in(node, rest)
        if not models:
            return None
        body_facts = collect([rest], self.qualified, self.line_of, models)
        callables = self.batch_callables(node, models)
        moves = batches_to_move(rest, names, callables, models, body_facts, self.qualified, file_functions(self.module),
                                self._packed_by_models(node, rest, models))
        return _LoopPlan(assign.targets[0].target, moves, models, 0)

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        device = self._move_here.get(id(original_node))
        if device is None:
            return updated_node
        return moved_to(updated_node, device)

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        plan = self._plans.get(original_node)
        if plan is None or not plan.moves.uses:
            return updated_node
        return self._fix(original_node, updated_node, plan.target, plan.moves.uses, plan.models, plan.start)

    def _plan(self, node: cst.For) -> _LoopPlan | None:
        loader, target = unwrap_loader(node, self.qualified)
        names = self._zipped_batches(loader, target)
        if names is None:
            if loader is None or collate_places_batches(self, loader):
                return None
            if not (is_dataloader(self, loader) or self._batch_list_moved_in_part(node, loader, target)):
                return None
            names = target_names(target)
        if not names:
            return None
        models = self._models_in(node, node.body)
        if not models:
            return None
        positions = non_tensor_positions_of(self, loader) if loader is not None else frozenset()
        non_tensors = non_tensor_names(node, target, positions)
        names, start = unpacked_batch(node, names, self.qualified)
        names = [name for name in names if name not in non_tensors]  # `for images, captions in loader`: a tuple of strings
        body = node.body
        if start:  # `x, y = batch` first: analyse what follows the unpacking
            body = body.with_changes(body=body.body[start:])
        body_facts = collect([body], self.qualified, self.line_of, models)
        callables = self.batch_callables(node, models)
        moves = batches_to_move(body, names, callables, models, body_facts, self.qualified, file_functions(self.module),
                                self._packed_by_models(node, body, models))
        if positions:  # `model(batch[0], batch[1])` with captions at 1: only the tensors move
            moves = BatchMoves(moves.uses, [subscript for subscript in moves.indexed if index_of(subscript) not in positions], moves.ambiguous)
        if not moves.ambiguous:
            moved = {use.name for use in moves.uses} | set(body_facts.moved)
            collected = [BatchUse(name, False) for name in self._collected_then_met(node, body, names, moved, callables, models)]
            moves = BatchMoves([*moves.uses, *collected], moves.indexed) if collected else moves
        return _LoopPlan(target, moves, models, start)

    def _batch_list_moved_in_part(self, loop: cst.For, rows: cst.BaseExpression, target: cst.BaseExpression) -> bool:
        """`for images, labels in batches:` over a list of tensor batches a caller gives, whose body
        moves some of the batch itself (`images = images.to(device)`): the caller did not place
        them, so the rest of the batch is on the CPU too (and moving a placed one changes nothing)."""
        if self.kind_of(rows) is not Kind.BATCH_LIST:
            return False
        names = set(target_names(target))
        moved = collect([loop.body], self.qualified, self.line_of, {}).moved
        return bool(names & set(moved))

    def _collected_then_met(self, loop: cst.For, body: cst.BaseSuite, names: list[str], moved: set[str],
                            callables: set[str], models: dict[str, str | None]) -> list[str]:
        """Batch variables the loop only collects (`all_labels.append(labels)`), whose collection
        joined after the loop (`labels = torch.cat(all_labels)`) meets a device value there
        (`(probs.argmax(1) == labels)`, with `probs` joined from the model's outputs)."""
        lists = _appended(body, [name for name in names if name not in moved])
        following = self._following(loop) if lists else []
        if not following:
            return []
        joined = _joined(following, lists.keys(), self.qualified)  # `labels = torch.cat(all_labels)` → all_labels
        if not joined:
            return []
        rest = cst.IndentedBlock(body=following)
        met = names_meeting_devices(rest, list(joined), callables, models, self.scope_facts(loop), self.qualified, file_functions(self.module))
        return list(dict.fromkeys(lists[joined[name]] for name in joined if name in met))

    def _following(self, statement: cst.BaseStatement) -> list[cst.BaseStatement]:
        """The statements that run after `statement` in its function (or module): those after it in
        its block, then after the `with`, `if` or `try` around it, up to the function's body."""
        following: list[cst.BaseStatement] = []
        current: cst.CSTNode = statement
        while True:
            following += self._after_in_block(current)
            block = self.get_metadata(ParentProvider, current, None)
            owner = self.get_metadata(ParentProvider, block, None) if isinstance(block, cst.IndentedBlock) else None
            if not isinstance(owner, (cst.With, cst.If, cst.Try)):
                return following
            current = owner

    def _after_in_block(self, statement: cst.CSTNode) -> list[cst.BaseStatement]:
        """The statements after `statement` in its own block (none when it is in no block)."""
        block = self.get_metadata(ParentProvider, statement, None)
        statements = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        index = next((i for i, item in enumerate(statements) if item is statement), None)
        return statements[index + 1:] if index is not None else []

    def _zipped_batches(self, iterable: cst.BaseExpression | None, target: cst.BaseExpression) -> list[str] | None:
        """`for (xs,), (xt,) in zip(source_loader, target_loader)`: the names each DataLoader's
        batch is unpacked into (the elements of other iterables stay); None when the loop does not
        iterate over a `zip`."""
        if not (isinstance(iterable, cst.Call) and "builtins.zip" in self.qualified(iterable.func)):
            return None
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != len(iterable.args):
            return []
        names: list[str] = []
        for arg, element in zip(iterable.args, target.elements):
            loader = arg.value
            if arg.star or not isinstance(loader, (cst.Name, cst.Call)):
                continue
            if is_dataloader(self, loader) and not collate_places_batches(self, loader):
                names += target_names(element.value)
        return names

    def _plan_indexed(self, loop: cst.For, subscripts: list[cst.Subscript], models: dict[str, str | None]) -> None:
        """`model(batch[0])`: each element taken where it meets the model moves right there."""
        listed = ", ".join(dict.fromkeys(f"`{cst.Module([]).code_for_node(subscript)}`" for subscript in subscripts))
        message = f"DataLoader batch element {listed} stays on the CPU while the model runs on a device"
        choice = self._device_choice(loop, models)
        if choice is None:
            self.report(subscripts[0], message + "; move it with `.to(device)`", fixable=False)
        elif self.report(subscripts[0], message, fix_title=f"move it to `{choice.name}` where it is used"):
            device = self.use_device(choice)
            self._move_here.update({id(subscript): device for subscript in subscripts})

    def _fix(self, original: cst.For, updated: cst.For, target: cst.BaseExpression,
             uses: list[BatchUse], models: dict[str, str | None], start: int = 0) -> cst.For:
        listed = ", ".join(f"`{use.name}`" for use in uses)
        message = f"DataLoader batch {listed} stays on the CPU while the model runs on a device"
        choice = self._device_choice(original, models)
        if choice is None or not isinstance(original.body, cst.IndentedBlock):
            self.report(target, message + "; move it with `.to(device)`", fixable=False)
            return updated
        if not self.report(target, message, fix_title=f"move the batch to `{choice.name}` at the top of the loop"):
            return updated
        device = self.use_device(choice)
        torch_name = self.torch_name() if any(use.is_dict for use in uses) else "torch"  # only dict moves write it
        return insert_in_body(updated, start, move_statements(uses, device, torch_name))

    def _packed_by_models(self, node: cst.CSTNode, body: cst.CSTNode, models: dict[str, str | None]) -> frozenset[int]:
        """Arguments of the models' calls in `body` that the model's `forward` (a class of the file
        or of another file of the project, through its submodules) only packs as lengths
        (`model(x, lengths)`): they stay on the CPU."""
        kept: set[int] = set()
        for call in _calls_of_names(body):
            packing = self._packing_of(node, call.func.value) if call.func.value in models else None
            if packing is None:
                continue
            positional, packed = packing
            for parameter in packed:
                value = argument_for(call, parameter, list(positional))
                if value is not None:
                    kept.add(id(value))
        return frozenset(kept)

    def _packing_of(self, node: cst.CSTNode, name: str) -> Packing | None:
        """What the `forward` of the class that `name` is built from in this scope (`model =
        Net().to(device)`, every binding the same class) takes and only packs; for a parameter
        (`def train(model, ...)`), what every class of the file or imported from the project whose
        `forward` packs lengths takes and packs, when they all agree (a classifier and the encoder it
        hands its lengths to)."""
        if self.facts is None:
            return None
        bindings = self.scope_facts(node).bindings.get(name, [])
        if not bindings and name in self.scope_parameters(node):
            packings = {found for candidate in self.facts.packing_classes() if (found := self.facts.forward_packing(candidate)) is not None}
            return packings.pop() if len(packings) == 1 else None
        classes = {_built_class(binding.value) for binding in bindings}
        class_name = classes.pop() if len(classes) == 1 else None
        return self.facts.forward_packing(class_name) if class_name is not None else None

    def _device_choice(self, node: cst.CSTNode, models: dict[str, str | None]) -> DeviceChoice | None:
        """The device the model went to; else a device variable; else the preamble (for `.cuda()`)."""
        expressions = {expression for expression in models.values() if expression is not None}
        if len(expressions) == 1:
            return DeviceChoice(expressions.pop())
        existing = device_variable_in_scope(self, node)
        if existing is not None:
            return DeviceChoice(existing)
        return device_for(self, node) if not expressions else None

    def _models_in(self, node: cst.CSTNode, body: cst.BaseSuite) -> dict[str, str | None]:
        """Callables in this scope that run on a device → the device expression they were moved to
        (None for `.cuda()`/CUDA literals). With a device variable in scope, called parameters
        (`def evaluate(model, loader, device)`) count too: the caller placed them. A Module built
        here and never moved is on the CPU, like its data: consistent, so left alone; so is one whose
        move comes after the loop, or acts on another value of its name. A model the top level moved
        counts in a function that runs only after the move (`analysis.entry_lines`)."""
        facts = self.scope_facts(node)
        line = self.line_of(node)
        models = {}
        for name in sorted(facts.moved.keys() & facts.called):
            # the move must act on what the name holds at the loop, before it: a notebook's test cell
            # `model = MyModel()` feeding a batch above the cell that builds and moves the real model
            move = facts.moved_at(name, line)
            if move is not None and self.line_of(move.call) < line:
                models[name] = self._moved_to(name, move, node)
        top = self.scope_facts(self.module).moved
        local = set(facts.bindings) | self.scope_parameters(node)
        for name in sorted(self.top_level_models_moved_before(node)):  # `validate()` reading a model moved before it runs
            device = self._moved_to(name, top[name], node)
            if device is None or device.split(".")[0] not in local:
                models.setdefault(name, device)
        local_device = (self.scope_parameters(node) | set(facts.bindings)) & set(DEVICE_NAMES)
        if local_device and not isinstance(self.enclosing_scope(node), cst.Module):
            for name in sorted(self.scope_parameters(node) & facts.called):
                models.setdefault(name, None)
        for call in _calls_of_names(body):
            # `model(images.cuda())` in the loop: the code itself says the parameter runs on a device
            moves = [move for arg in call.args if (move := as_move(arg.value, self.qualified)) is not None]
            if moves and call.func.value in self.scope_parameters(node):
                models.setdefault(call.func.value, device_code(moves[0].device, literals=True))
        return models

    def _moved_to(self, name: str, move: Move, loop: cst.CSTNode) -> str | None:
        """The device `move` put model `name` on where `loop` runs (None for `.cuda()`: the
        preamble's device). Under `if args.cuda:` alone (`--no-cuda` keeps it on the CPU of a GPU
        machine), the batches follow the model's own parameters."""
        device = device_code(move.device, literals=True)
        if self.move_holds_where(move.call, device_code(move.device), loop):
            return device
        return f"next({name}.parameters()).device"


def _built_class(value: cst.BaseExpression | None) -> str | None:
    """`Net(...)`, `Net(...).to(device).eval()`: the name of the class built; else None."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in PLACEMENT_KEEPING_METHODS | {"to", "cuda"}:
        value = value.func.value
    return value.func.value if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) else None


def _calls_of_names(body: cst.CSTNode) -> list[cst.Call]:
    """`f(...)` calls of plain names under `body`, in source order."""
    calls: list[cst.Call] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name):
                calls.append(node)

    body.visit(Finder())
    return calls


def _appended(body: cst.BaseSuite, names: list[str]) -> dict[str, str]:
    """`xs.append(name)` / `xs.extend(name)` statements of the loop body for its batch variables: list → variable."""
    finder = _Appends(set(names))
    body.visit(finder)
    return {target: name for target, name in finder.found.items() if target not in finder.other}


class _Appends(cst.CSTVisitor):
    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.found: dict[str, str] = {}
        self.other: set[str] = set()  # lists given something else too

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in LIST_FILLERS):
            return
        target = func.value.value
        value = node.args[0].value if len(node.args) == 1 else None
        if isinstance(value, cst.Name) and value.value in self.names and self.found.get(target, value.value) == value.value:
            self.found[target] = value.value
        else:
            self.other.add(target)


def _joined(statements: list[cst.BaseStatement], lists, qualified) -> dict[str, str]:
    """`labels = torch.cat(all_labels)` (or `torch.stack`) among `statements`: the name → the list,
    for a name bound only there."""
    found: dict[str, str] = {}
    counts: dict[str, int] = {}
    for statement in statements:
        for assign in statement.body if isinstance(statement, cst.SimpleStatementLine) else []:
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
                continue
            name, value = assign.targets[0].target.value, assign.value
            counts[name] = counts.get(name, 0) + 1
            if isinstance(value, cst.Call) and qualified(value.func) & LIST_JOINS and len(value.args) >= 1 \
                    and isinstance(value.args[0].value, cst.Name) and value.args[0].value.value in lists:
                found[name] = value.args[0].value.value
    return {name: listed for name, listed in found.items() if counts[name] == 1}
