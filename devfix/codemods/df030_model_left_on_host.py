"""DF030 model-left-on-host: a statement brings the model to the CPU in place as a side effect (a
helper's `model.to("cpu")`, `torch.save(model.cpu().state_dict(), path)`), and the program goes on
feeding it device values.

    Before:  plot_decision_boundary(model_0, X_train, y_train)   # runs `model.to("cpu")`
             y_logits = model_0(X_train)                         # X_train on the GPU
    After:   plot_decision_boundary(model_0, X_train, y_train)
             model_0.to(device)
             y_logits = model_0(X_train)

    Before:  for epoch in range(epochs):
                 train_epoch(model, loader, device)
                 if acc > best:
                     torch.save(model.cpu().state_dict(), "best.pt")
    After:           torch.save(model.cpu().state_dict(), "best.pt")
                     model.to(device)

`Module.to()` and `Module.cpu()` move the Module itself, so a function that runs `model.to("cpu")`
on its parameter (learnpytorch.io's `plot_decision_boundary`, "works better with NumPy +
Matplotlib") hands the caller back a model on the CPU, and `model.cpu().state_dict()` leaves the
model there after the save; the next step raises "Expected all tensors to be on the same device, but
found at least two devices, cpu and cuda:0". The model goes back where the program had moved it,
right after the statement.

Proven when: the statement hands the name to a function, of the file or of a project file it
imports, that brings that parameter to the host in place and never moves it again nor hands it back
(`analysis.host_moving_helpers`), or moves the name to the host inside a larger statement (a
statement that is only `model.cpu()` means it); the value analysis proves the name a Module, moved
to a device earlier in the same scope; and a statement that may run next (the rest of the block and
of the blocks around it, and, in a loop, its body from the start) calls the model with a value the
placement facts put on a device (`model_0(X_train)`), or calls a function of the file that does so
with the module's model and device values (`train(10)` reading the globals `model_0` and `X_train`)
or with the model it is handed (`evaluate(model, test_loader, device)` running
`model(x.to(device))`), before anything moves, rebinds or hands the model to other code.

The model goes back with its move's own device (`model.to(device)`), or with the move itself again
where it names the GPU (`model.cuda()`, `model.to("cuda")`). What runs next stops at a `return` or
`raise`, and an unconditional `break` ends the loop around it (an early stop does not run the loop
again).

Refuses: a device expression that is no name, attribute or string, or whose names were rebound
between the move and the statement (reported without a fix); a model the program moves back itself
before using it (the usual `torch.save(model.cpu().state_dict(), path)` then `model.to(device)`);
helpers that move the parameter in a branch or loop, move it again, or return it (the caller may
rebind).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.call_sites import argument_at
from devfix.analysis.cst_metadata import ParentProvider
from devfix.analysis.kinds import Kind
from devfix.analysis.placement import PlacementFacts, copies_to_the_host, device_code
from devfix.analysis.scopes import ScopeTracker
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety


class ModelLeftOnHost(ScopeTracker, DevfixRule):
    CODE = "DF030"
    NAME = "model-left-on-host"
    SAFETY = Safety.SAFE
    DESCRIPTION = "A statement left the model on the CPU in place; the program then feeds it device values"

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._with_moves_back(original_node.body, updated_node.body))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._with_moves_back(original_node.body, updated_node.body))

    def _with_moves_back(self, original: tuple, updated: tuple) -> tuple:
        if len(original) != len(updated) or self.facts is None:
            return updated
        body: list[cst.BaseStatement] = []
        for index, statement in enumerate(original):
            body.append(updated[index])
            for restore in self._models_to_move_back(statement):
                body.append(cst.parse_statement(restore + "\n"))
        return tuple(body)

    def _models_to_move_back(self, statement: cst.CSTNode) -> list[str]:
        """The statements that put back each model the statement leaves on the host, where the fix
        is proven; findings are reported here."""
        found = []
        for given, how in self._left_on_host(statement):
            if self.kind_of(given) is not Kind.MODULE:
                continue
            model = given.value
            facts = self.scope_facts(statement)
            line = self.line_of(statement)
            move = facts.moved_at(model, line)
            if move is None or not self._used_on_a_device_later(statement, model, facts):
                continue
            restore = self._restoring_move(model, move)
            fixable = restore is not None and self._same_value_at(facts, move, line)
            message = f"{how} `{model}` to the CPU in place, and `{model}` is then fed values on a device"
            fix_title = f"move it back after this statement: `{restore}`" if restore is not None else ""
            if self.report(given, message, fix_title=fix_title, fixable=fixable) and fixable:
                found.append(restore)
        return found

    def _left_on_host(self, statement: cst.CSTNode) -> list[tuple[cst.Name, str]]:
        """The names the statement brings to the host in place, with how: handed to a helper that
        leaves that parameter there (`plot_decision_boundary(model_0, X, y)`), or moved inside a
        larger expression (`torch.save(model.cpu().state_dict(), path)`; a statement that is only
        `model.cpu()` means it)."""
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            return []
        small = statement.body[0]
        found: list[tuple[cst.Name, str]] = []
        call = _statement_call(statement)
        if call is not None and isinstance(call.func, cst.Name):
            for position, parameter in sorted(self.facts.parameters_moved_to_host(call.func.value).items()):
                given = None if any(arg.star for arg in call.args) else argument_at(call, position, parameter)
                if isinstance(given, cst.Name):
                    found.append((given, f"`{call.func.value}` brings"))
        whole = small.value if isinstance(small, cst.Expr) else None
        moves = _HostMoves(self.qualified)
        statement.visit(moves)
        found += [(call.func.value, f"`{_code(call)}` brings") for call in moves.found if call is not whole]
        return found

    @staticmethod
    def _restoring_move(model: str, move) -> str | None:
        """The statement that puts the model back: the move's own device (`model.to(device)`), or
        the move itself again where it names the GPU (`model.cuda()`, `model.to("cuda")`); None for
        a device that is no name, attribute or string (`model.to(pick_device())` may differ now)."""
        if move.device is None:
            arguments = ", ".join(_code(arg) for arg in move.call.args)
            return f"{model}.{_method(move.call)}({arguments})"
        device = device_code(move.device, literals=True)
        return f"{model}.to({device})" if device is not None else None

    def _same_value_at(self, facts: PlacementFacts, move, line: int) -> bool:
        """The move's device names, at the call, what it named at the move (no name of it rebound)."""
        names = [node.value for node in _names(move.device if move.device is not None else move.call.args)]
        move_line = self.line_of(move.call)
        return all(facts._binding_before(name, move_line + 1) is facts._binding_before(name, line) for name in names)

    def _used_on_a_device_later(self, statement: cst.CSTNode, model: str, facts: PlacementFacts) -> bool:
        """A statement that may run next calls the model with a device value, or (at the top level)
        calls a function of the file that does so with the global model, or calls one it hands the
        model to that does so, before anything moves, rebinds or hands over the model otherwise."""
        top_level = isinstance(self.enclosing_scope(statement), cst.Module)
        for later in self._following(statement):
            reads = _Reads(model)
            later.visit(reads)
            if any(self._device_argument(call, facts) for call in reads.model_calls):
                return True
            if top_level and any(self._function_feeds_device_values(name, model) for name in reads.functions_called):
                return True
            if any(self._function_feeds_device_values(name, parameter, handed=True) for name, parameter in reads.handed):
                return True  # `evaluate(model, test_loader, device)` of a function that calls it on device values
            if reads.changed or reads.handed:
                return False
        return False

    def _following(self, statement: cst.CSTNode):
        """The statements that may run after `statement` in its scope, in order: the rest of its
        block, then of each block around it; a loop around it runs its body again from the start
        (`torch.save(model.cpu().state_dict(), path)` at the end of an epoch, the next epoch's steps)."""
        node, broke = statement, False  # `break` after it: the loop around it does not run again
        while True:
            block = self.get_metadata(ParentProvider, node, None)
            if not isinstance(block, (cst.IndentedBlock, cst.Module)):
                return
            siblings = list(block.body)
            index = next(position for position, sibling in enumerate(siblings) if sibling is node)
            for sibling in siblings[index + 1:]:
                yield sibling
                leaves = _leaves(sibling)
                if leaves in (cst.Return, cst.Raise):
                    return
                if leaves is cst.Break:
                    broke = True
                    break
            owner = self.get_metadata(ParentProvider, block, None) if isinstance(block, cst.IndentedBlock) else None
            while owner is not None and not isinstance(owner, cst.BaseCompoundStatement):
                owner = self.get_metadata(ParentProvider, owner, None)
            if owner is None or isinstance(owner, (cst.FunctionDef, cst.ClassDef)):
                return
            if isinstance(owner, (cst.For, cst.While)) and owner.body is block:
                if not broke:
                    yield from siblings[:index]
                broke = False
            node = owner

    def _device_argument(self, call: cst.Call, facts: PlacementFacts) -> bool:
        return any(facts.is_device_value(arg.value) for arg in call.args if not arg.star)

    def _function_feeds_device_values(self, name: str, model: str | int, handed: bool = False) -> bool:
        """A top-level function of the file that reads the global `model` (or, `handed`, its
        parameter of that name or position), never binds, moves or hands it over, and calls it with
        a device value."""
        function = next((item for item in self.module.body if isinstance(item, cst.FunctionDef) and item.name.value == name), None)
        if function is None:
            return False
        parameters = [param.name.value for param in (*function.params.posonly_params, *function.params.params)]
        if handed:
            model = parameters[model] if isinstance(model, int) and model < len(parameters) else model
            if model not in parameters:
                return False
        elif model in parameters or model in {param.name.value for param in function.params.kwonly_params}:
            return False
        reads = _Reads(model)
        function.body.visit(reads)
        if reads.changed or reads.bound or reads.handed:
            return False
        facts = self.scope_facts(function.body)
        return any(self._device_argument(call, facts) for call in reads.model_calls)


class _Reads(cst.CSTVisitor):
    """In a statement (not in nested functions or classes): the calls of the model, the names
    called, and whether the model is moved, rebound or handed to another call."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.model_calls: list[cst.Call] = []
        self.functions_called: list[str] = []
        self.handed: list[tuple[str, str | int]] = []  # `evaluate(model, ...)`: (function, the parameter's keyword or position)
        self.changed = False
        self.bound = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value == self.model:
            self.model_calls.append(node)
            return
        if isinstance(func, cst.Name):
            self.functions_called.append(func.value)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self.model \
                and func.attr.value in ("to", "cuda", "cpu", "type", "half", "float", "double", "bfloat16"):
            self.changed = True  # moved (or cast) by the scope itself
        for position, arg in enumerate(node.args):
            if isinstance(arg.value, cst.Name) and arg.value.value == self.model:  # handed to other code, which may move it
                if isinstance(func, cst.Name) and not any(other.star for other in node.args[:position + 1]):
                    self.handed.append((func.value, arg.keyword.value if arg.keyword is not None else position))
                else:
                    self.changed = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if any(isinstance(name, cst.Name) and name.value == self.model for name in _names(node.target)):
            self.changed = self.bound = True

    def visit_Global(self, node: cst.Global) -> None:
        if any(item.name.value == self.model for item in node.names):
            self.bound = True


class _HostMoves(cst.CSTVisitor):
    """`name.cpu()`, `name.to("cpu")` that the statement surely runs: not in a conditional
    expression's branch, after `and`/`or`, in a comprehension or a lambda
    (`net.cuda() if torch.cuda.is_available() else net.cpu()` runs `.cpu()` only without a GPU)."""

    def __init__(self, qualified) -> None:
        self.qualified = qualified
        self.found: list[cst.Call] = []

    def visit_IfExp(self, node: cst.IfExp) -> bool:
        node.test.visit(self)
        return False

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> bool:
        node.left.visit(self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return False

    visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_ListComp

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) and copies_to_the_host(node, self.qualified) \
                and node.func.attr.value in ("cpu", "to"):
            self.found.append(node)


def _leaves(statement: cst.CSTNode) -> type | None:
    """`cst.Return`, `cst.Raise` or `cst.Break` when the statement is one (it leaves its block)."""
    if isinstance(statement, cst.SimpleStatementLine):
        return next((type(small) for small in statement.body if isinstance(small, (cst.Return, cst.Raise, cst.Break))), None)
    return None


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _statement_call(statement: cst.CSTNode) -> cst.Call | None:
    """The call a simple statement makes whole: `f(...)` or `x = f(...)`."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    return value if isinstance(value, cst.Call) else None


def _method(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def _names(nodes) -> list[cst.Name]:
    """The names under a node, or under each node of a sequence (a call's arguments)."""
    found: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.append(name)

    for node in nodes if isinstance(nodes, (list, tuple)) else [nodes]:
        node.visit(Names())
    return found

