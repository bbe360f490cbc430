"""DF022 optimizer-state-order: optimizer state loaded before the model moved stays behind.

    Before:  model = Net()
             optimizer = torch.optim.Adam(model.parameters())
             optimizer.load_state_dict(checkpoint["optimizer"])
             model.to(device)
    After:   model = Net().to(device)
             optimizer = torch.optim.Adam(model.parameters())
             optimizer.load_state_dict(checkpoint["optimizer"])

`optimizer.load_state_dict` casts the loaded state (Adam's `exp_avg`, ...) to the device each
parameter is on *at that moment*; `torch.optim.Adagrad` creates its state (`sum`) when it is
built, so building it is enough. Moved afterwards, the parameters go to the GPU and the state
stays on the CPU: the first `optimizer.step()` raises "Expected all tensors to be on the same
device". Moving the model right after it is built (before the optimizer exists) is the order
PyTorch documents; the later move is then removed (kept where it starts a notebook cell: its
marker goes with it, and moving again is a no-op).

Applies when, in one block of one function (or of the top level), a model bound by a
construction (or by a call of a function of the file that returns a Module it built and left on
the host, `model = make_model()`) is given to a `torch.optim` optimizer, that optimizer loads a state dict, and only
then a statement moves the model (`model.to(device)`, `model.cuda()`, `model = model.to(device)`).

The same goes for an object of a class of the file that copies the model's parameters when it is
built and later blends the copies with the parameters (an EMA: `ema = EMA(model)` keeping
`p.detach().clone()` of each, `analysis.parameter_copies`), or copies them when a method of no
argument is called (`ema.register()`): made before the move, its copies stay on the CPU and its
first update mixes devices; the model moves right after it is built, before the class copies it.
A class that names a device or moves anything itself is left alone.

Leaves alone a model already moved before the state was loaded (the later move only repeats it).
Only the model's latest binding before the move counts: a `model` trained, saved or resumed
earlier under the same name is another object, and its optimizer another optimizer.
Where the move cannot go to the construction (a CPU forward pass in between, or a model and its
optimizer that a function of the file builds and returns, `model, optimizer = build()`), it goes
right before the optimizer's `load_state_dict` instead: a Module moves in place, so the optimizer
keeps the same parameters, and loads its state onto their device.
Refuses (reports without a fix) when neither place works: the model's latest binding is no
construction nor such a helper's result (`wrap(model)` may return an object whose `.to()` copies),
the device is chosen after the load, or the model is called or handed to other code between the
load and the move: moving it earlier would change what that code sees. Optimizers devfix cannot
see built with `torch.optim` (a `build_optimizer(model)` helper) are not judged by their names.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.cst_bindings import names_in, return_values
from devfix.analysis.placement import Move, as_move
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_api import EAGER_STATE_OPTIMIZERS
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import starts_a_cell
from devfix.findings import Safety

OPTIMIZERS = "torch.optim."


class OptimizerStateOrder(ScopeTracker, DevfixRule):
    CODE = "DF022"
    NAME = "optimizer-state-order"
    SAFETY = Safety.UNSAFE
    DESCRIPTION = "Optimizer state (or an EMA's copy) made before the model moved: move the model first"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._moved_at_construction: dict[cst.Assign, cst.Call] = {}  # construction → the move to append
        self._moved_before_load: dict[cst.SimpleStatementLine, cst.SimpleStatementLine] = {}  # load → the move to put first
        self._removed: set[cst.SimpleStatementLine] = set()
        finder = _Blocks()
        node.visit(finder)
        for block in finder.blocks:
            self._plan(block)

    def _plan(self, block: list[cst.BaseStatement]) -> None:
        """Each late move in one block: where the model was built, which optimizer loaded first."""
        lines = [statement for statement in block if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1]
        for index, statement in enumerate(lines):
            moved = _moved_model(statement.body[0], self.qualified)
            if moved is None:
                continue
            name, move = moved
            since = self._since_bound(name, statement, lines[:index])  # an earlier `model` is another object
            optimizers = self._optimizers_of(name, since)
            copiers = {line: self._copies_parameters(line.body[0], name) for line in since}
            handed = [line for line, method in copiers.items() if method]  # `ema = EMA(model)` whose copies `ema.register()` makes
            registered = [line for line in since if _calls_a_copier(line.body[0], handed, copiers)]
            copies = [line for line, method in copiers.items() if method is True] + registered
            loaded = [line for line in since if _loads_state(line.body[0], optimizers) or self._builds_eager_state(line.body[0], name)
                      or line in copies]
            copies += handed  # what hands the model to such a class is no use of it either
            holders: dict[cst.SimpleStatementLine, cst.BaseStatement] = {}  # a nested load → the statement of the block holding it
            if not loaded and since:  # `if args.resume:` around the loads: they run before the move or not at all
                holders = dict(_nested_lines(block[_index_of(block, since[0]):_index_of(block, statement)]))
                optimizers |= self._optimizers_of(name, list(holders))
                loaded = [line for line in holders if _loads_state(line.body[0], optimizers)]
            if not loaded or self._placed_before(name, block, since[0], holders.get(loaded[0], loaded[0])):
                continue
            if loaded[0] in copies:
                message = (f"`{_called(loaded[0])}` copies the parameters of `{name}` before `{name}` moved, so the copies stay on "
                           "the old device and blending them with the parameters fails")
            else:
                what = "optimizer state was loaded" if _loads_state(loaded[0].body[0], optimizers) else \
                    "the optimizer made its state (Adagrad makes it when it is built)"
                message = f"{what} before `{name}` moved, so it stays on the old device and the first `step()` fails"
            construction = self._construction(name, block, lines[:index], statement, copies)
            if construction is None and loaded[0] not in copies and self._may_move_before(name, block, loaded[0], statement):
                # built by a helper (`model, optimizer = build()`): the move goes before the load instead
                if self.report(statement, message, fix_title=f"move `{name}` before the optimizer loads its state"):
                    self._moved_before_load[loaded[0]] = statement
                    if not starts_a_cell(statement):
                        self._removed.add(statement)
                continue
            if construction is None:
                self.report(statement, message + "; move the model right after it is built", fixable=False)
                continue
            if self.report(statement, message, fix_title=f"move `{name}` right after it is built"):
                self._moved_at_construction[construction] = move.call
                if not starts_a_cell(statement):  # a notebook cell's first statement stays: moving again there is a no-op
                    self._removed.add(statement)

    def _since_bound(self, name: str, move: cst.SimpleStatementLine, earlier: list[cst.SimpleStatementLine]) -> list[cst.SimpleStatementLine]:
        """The lines of `earlier` after the name's latest binding before the move."""
        bound = [binding.line for binding in self.scope_facts(move).bindings.get(name, []) if binding.line < self.line_of(move)]
        return [line for line in earlier if not bound or self.line_of(line) >= max(bound)]

    def _placed_before(self, name: str, block: list[cst.BaseStatement], start: cst.SimpleStatementLine, load: cst.SimpleStatementLine) -> bool:
        """The model was moved before the state was loaded (`model.to(device)`, `model = Net().cuda()`,
        also under an `if`): the state went to its device; a later move is only repeated."""
        qualified = self.qualified
        found = False

        class Finder(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                nonlocal found
                move = as_move(node, qualified)
                found = found or (move is not None and isinstance(move.receiver, cst.Name) and move.receiver.value == name)

            def visit_Assign(self, node: cst.Assign) -> None:
                nonlocal found
                targets = {target.target.value for target in node.targets if isinstance(target.target, cst.Name)}
                found = found or (name in targets and as_move(node.value, qualified) is not None)

        for statement in block[_index_of(block, start):_index_of(block, load)]:  # from the model's latest binding
            statement.visit(Finder())
        return found

    def _builds_eager_state(self, small: cst.BaseSmallStatement, model: str) -> bool:
        """`optimizer = torch.optim.Adagrad(model.parameters())`: an optimizer that creates its state
        tensors in `__init__`, on the device the parameters are on then."""
        value = small.value if isinstance(small, cst.Assign) else None
        return isinstance(value, cst.Call) and bool(self.qualified(value.func) & EAGER_STATE_OPTIMIZERS) and model in names_in(value)

    def _copies_parameters(self, small: cst.BaseSmallStatement, model: str) -> bool | str:
        """`ema = EMA(model)` of a class of the file that copies the parameters of the model it is
        given and later blends the copies with a model's (`analysis.parameter_copies`): True when
        building it copies them, the name of the method that does (`register`) when that method
        makes the copies later, False for anything else."""
        value = small.value if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
        if self.facts is None or not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
            return False
        copying = self.facts.parameter_copying_classes.get(value.func.value)
        if copying is None or any(arg.star for arg in value.args):
            return False
        position, parameter, method = copying
        if method is not None and not isinstance(small.targets[0].target, cst.Name):
            return False
        positional = [arg for arg in value.args if arg.keyword is None]
        given = next((arg.value for arg in value.args if arg.keyword is not None and arg.keyword.value == parameter), None)
        if given is None and position < len(positional):
            given = positional[position].value
        if not (isinstance(given, cst.Name) and given.value == model):
            return False
        return method if method is not None else True

    def _may_move_before(self, name: str, block: list[cst.BaseStatement], load: cst.SimpleStatementLine,
                         move: cst.SimpleStatementLine) -> bool:
        """A Module moves in place, so its move may go right before the optimizer's
        `load_state_dict` when the name holds one (a construction, or what a function of the file
        returns with the optimizer of its parameters), nothing between the load and the move runs
        the model or hands it over, and the device already exists at the load."""
        if load not in block or _index_of(block, load) > _index_of(block, move):
            return False
        bindings = [binding for binding in self.scope_facts(move).bindings.get(name, []) if binding.line < self.line_of(move)]
        latest = max(bindings, key=lambda binding: binding.line) if bindings else None
        built = latest is not None and isinstance(latest.value, cst.Call) and (
            self.makes_module(latest.value, move) or (latest.unpacked > 0 and isinstance(latest.value.func, cst.Name)))
        if not built:  # a Module, which `.to()` moves in place (another object's may return a copy)
            return False
        between = block[_index_of(block, load) + 1:_index_of(block, move)]
        if any(_uses_whole(statement, name) for statement in between):
            return False
        moved = _moved_model(move.body[0], self.qualified)
        return moved is not None and self._exists_at(moved[1].device, load)

    def _optimizers_of(self, model: str, earlier: list[cst.SimpleStatementLine]) -> set[str]:
        """Names bound to a `torch.optim` optimizer built from the model's parameters, also by a
        function of the file that builds both and returns them (`model, optimizer = build()`)."""
        found = set()
        for line in earlier:
            small = line.body[0]
            found |= self._returned_optimizers(small, model)
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
                continue
            value = small.value
            if isinstance(value, cst.Call) and any(name.startswith(OPTIMIZERS) for name in self.qualified(value.func)) \
                    and model in names_in(value):
                found.add(small.targets[0].target.value)
        return found

    def _returned_optimizers(self, small: cst.BaseSmallStatement, model: str) -> set[str]:
        """`model, optimizer = build()`: a function of the file whose every `return` is a tuple that
        holds, where the caller unpacks `optimizer`, a name bound there to a `torch.optim` optimizer
        built from the parameters of the name it returns where the caller unpacks `model`."""
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Tuple)
                and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Name)):
            return set()
        targets = [element.value.value if isinstance(element.value, cst.Name) else None for element in small.targets[0].target.elements]
        function = next((statement for statement in self.module.body
                         if isinstance(statement, cst.FunctionDef) and statement.name.value == small.value.func.value), None)
        if model not in targets or function is None:
            return set()
        returns = self._returned_tuples(function, len(targets))
        if not returns:
            return set()
        facts = self.scope_facts(function.body)
        found = set()
        for position, target in enumerate(targets):
            if target is None or target == model:
                continue
            if all(self._optimizer_of_returned(facts, items[position], items[targets.index(model)], line) for items, line in returns):
                found.add(target)
        return found

    def _returned_tuples(self, function: cst.FunctionDef, size: int) -> list[tuple[list[cst.BaseExpression], int]]:
        """The items of each `return a, b` of the function (not of functions inside it), with its
        line; empty unless every `return` gives a tuple display of `size` items."""
        found = []
        for value in return_values(function):
            if not (isinstance(value, cst.Tuple) and len(value.elements) == size):
                return []
            found.append(([element.value for element in value.elements], self.line_of(value)))
        return found

    def _optimizer_of_returned(self, facts, item: cst.BaseExpression, model: cst.BaseExpression, line: int) -> bool:
        if not (isinstance(item, cst.Name) and isinstance(model, cst.Name)):
            return False
        binding = facts._binding_before(item.value, line)
        value = binding.value if binding is not None else None
        return isinstance(value, cst.Call) and any(name.startswith(OPTIMIZERS) for name in self.qualified(value.func)) \
            and model.value in names_in(value)

    def _construction(self, name: str, block: list[cst.BaseStatement], earlier: list[cst.SimpleStatementLine],
                      move: cst.SimpleStatementLine, copies: list[cst.SimpleStatementLine]) -> cst.Assign | None:
        """The `name = Net(...)` line the move can join: the model's latest binding before the move, in
        this block, with nothing in between (nested code included) that calls the model or hands
        it over but to the classes that copy its parameters (`copies`: what must see it moved), and a
        device that already exists there."""
        bindings = [binding for binding in self.scope_facts(move).bindings.get(name, []) if binding.line < self.line_of(move)]
        latest = max(bindings, key=lambda binding: binding.line) if bindings else None
        if latest is None or not isinstance(latest.value, cst.Call) or not self.makes_module(latest.value, move):
            return None  # built before the move (the move may rebind it: `net = net.cuda()`); earlier bindings are other objects
        built = latest.value
        line = next((line for line in earlier if isinstance(line.body[0], cst.Assign) and line.body[0].value is built), None)
        if line is None:
            return None
        construction = line.body[0]
        between = block[_index_of(block, line) + 1:_index_of(block, move)]
        if any(_uses_whole(statement, name) for statement in between if statement not in copies):
            return None
        moved = _moved_model(move.body[0], self.qualified)
        device = moved[1].device if moved is not None else None
        return construction if self._exists_at(device, construction) else None

    def _exists_at(self, device: cst.BaseExpression | None, construction: cst.CSTNode) -> bool:
        """`.cuda()`, a literal, or a name (`device`, `args.device`) bound only before the construction."""
        if device is None or isinstance(device, cst.SimpleString):
            return True
        root = device
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return False
        bindings = self.scope_facts(construction).bindings.get(root.value, [])
        line = self.line_of(construction)
        return all(binding.line < line for binding in bindings)

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        move = self._moved_at_construction.get(original_node)
        if move is None:
            return updated_node
        return updated_node.with_changes(value=move.with_changes(func=move.func.with_changes(value=updated_node.value)))

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine):
        move = self._moved_before_load.get(original_node)
        if move is not None:  # the move, without the comments above it, right before the load
            return cst.FlattenSentinel([move.with_changes(leading_lines=()), updated_node])
        return cst.RemoveFromParent() if original_node in self._removed else updated_node


def _moved_model(small: cst.BaseSmallStatement, qualified) -> tuple[str, Move] | None:
    """`model.to(device)`, `model.cuda()` or `model = model.to(device)` as a whole statement."""
    single_name = isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
    if not (isinstance(small, cst.Expr) or single_name):
        return None
    move = as_move(small.value, qualified)
    if move is None or not isinstance(move.receiver, cst.Name):
        return None
    if isinstance(small, cst.Assign) and small.targets[0].target.value != move.receiver.value:
        return None
    return move.receiver.value, move


def _calls_a_copier(small: cst.BaseSmallStatement, handed: list[cst.SimpleStatementLine], copiers: dict) -> bool:
    """`ema.register()` as a statement, `ema` bound by one of the `handed` lines to a class whose
    method of that name copies the model's parameters."""
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Attribute)):
        return False
    receiver = small.value.func.value
    return isinstance(receiver, cst.Name) and any(
        line.body[0].targets[0].target.value == receiver.value and copiers[line] == small.value.func.attr.value for line in handed
    )


def _called(line: cst.SimpleStatementLine) -> str:
    """`EMA(model)` of `ema = EMA(model)`."""
    return cst.Module([]).code_for_node(line.body[0].value)


def _loads_state(small: cst.BaseSmallStatement, optimizers: set[str]) -> bool:
    """`optimizer.load_state_dict(...)` as a statement, for one of `optimizers`."""
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
        return False
    func = small.value.func
    return isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict" \
        and isinstance(func.value, cst.Name) and func.value.value in optimizers


def _nested_lines(statements: list[cst.BaseStatement]) -> list[tuple[cst.SimpleStatementLine, cst.BaseStatement]]:
    """The one-statement lines inside the `if`/`else`, `with` and `try` blocks among `statements`
    (not loops, functions or classes), each with the statement of `statements` that holds it."""
    found: list[tuple[cst.SimpleStatementLine, cst.BaseStatement]] = []

    def walk(statement: cst.BaseStatement, holder: cst.BaseStatement) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            if statement is not holder and len(statement.body) == 1:
                found.append((statement, holder))
            return
        if not isinstance(statement, (cst.If, cst.Else, cst.With, cst.Try, cst.ExceptHandler, cst.Finally)):
            return
        body = statement.body
        for inner in body.body if isinstance(body, cst.IndentedBlock) else ():
            walk(inner, holder)
        for part in (getattr(statement, "orelse", None), *getattr(statement, "handlers", ()), getattr(statement, "finalbody", None)):
            if part is not None:
                walk(part, holder)

    for statement in statements:
        walk(statement, statement)
    return found


def _index_of(block: list[cst.BaseStatement], statement: cst.BaseStatement) -> int:
    return next(index for index, item in enumerate(block) if item is statement)


def _uses_whole(line: cst.BaseStatement, name: str) -> bool:
    """The line calls the model, hands it to a call, or rebinds it (its methods, such as
    `model.load_state_dict(...)` or `model.parameters()`, are fine on any device)."""
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            if isinstance(node.func, cst.Name) and node.func.value == name:
                found = True
            if any(isinstance(arg.value, cst.Name) and arg.value.value == name for arg in node.args):
                found = True

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            nonlocal found
            found = found or name in names_in(node.target)

    line.visit(Finder())
    return found


class _Blocks(cst.CSTVisitor):
    """Every statement block: the module's, and each function's, `if`'s, `with`'s, ... body."""

    def __init__(self) -> None:
        self.blocks: list[list[cst.BaseStatement]] = []

    def visit_Module(self, node: cst.Module) -> None:
        self.blocks.append(list(node.body))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append(list(node.body))
