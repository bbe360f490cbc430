"""DF030 model-moved-to-host-by-helper: a helper brings the caller's model to the CPU in place and
leaves it there, and the caller goes on with device inputs.

    Before:  model_0 = CircleModelV0().to(device)
             ...
             plot_decision_boundary(model_0, X_train, y_train)   # runs `model.to("cpu")`
             y_logits = model_0(X_train)                         # X_train on the GPU
    After:   plot_decision_boundary(model_0, X_train, y_train)
             model_0.to(device)
             y_logits = model_0(X_train)

`Module.to()` moves the Module itself, so a function that runs `model.to("cpu")` on its parameter
(learnpytorch.io's `plot_decision_boundary`, "works better with NumPy + Matplotlib") hands the
caller back a model on the CPU; the next training step raises "Expected all tensors to be on the
same device, but found at least two devices, cpu and cuda:0". The model goes back where the caller
had moved it, right after the call: the device its move names (`.to(device)`), or `.cuda()`.

Proven when: the function, of the file or of a project file it imports, brings that parameter to
the host in place and never moves it again nor hands it back (`analysis.host_moving_helpers`); the
caller gives it a name the value analysis proves a Module, moved to a device earlier in the same
scope; and a later statement of that scope calls the model with a value the placement facts put on
a device (`model_0(X_train)`), or calls a function of the file that does so with the module's model
and device values (`train(10)` reading the globals `model_0` and `X_train`) or with the model it is
handed (`evaluate(model, test_loader, device)` running `model(x.to(device))`), before anything
moves, rebinds or hands the model to other code.

Refuses: a device expression that is no name or attribute, or that was rebound between the move and
the call (reported without a fix); a model the scope moves back itself before using it; helpers
that move the parameter in a branch or loop, move it again, or return it (the caller may rebind).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.kinds import Kind
from devfix.analysis.placement import PlacementFacts, device_code
from devfix.analysis.scopes import ScopeTracker
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety


class ModelMovedToHostByHelper(ScopeTracker, DevfixRule):
    CODE = "DF030"
    NAME = "model-moved-to-host-by-helper"
    SAFETY = Safety.SAFE
    DESCRIPTION = "A helper moved the caller's model to the CPU in place; the caller then feeds it device values"

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._with_moves_back(original_node.body, updated_node.body, top_level=True))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._with_moves_back(original_node.body, updated_node.body, top_level=False))

    def _with_moves_back(self, original: tuple, updated: tuple, top_level: bool) -> tuple:
        if len(original) != len(updated):
            return updated
        body: list[cst.BaseStatement] = []
        for index, statement in enumerate(original):
            body.append(updated[index])
            for model, device in self._models_to_move_back(original, index, top_level):
                body.append(cst.parse_statement(f"{model}.{'cuda()' if device is None else f'to({device})'}\n"))
        return tuple(body)

    def _models_to_move_back(self, body: tuple, index: int, top_level: bool) -> list[tuple[str, str | None]]:
        """(model, device code or None for `.cuda()`) for each model the statement's call hands to a
        helper that leaves it on the host, where the fix is proven; findings are reported here."""
        statement = body[index]
        call = _statement_call(statement)
        if call is None or not isinstance(call.func, cst.Name) or self.facts is None:
            return []
        moved = self.facts.parameters_moved_to_host(call.func.value)
        found = []
        for position, parameter in sorted(moved.items()):
            given = _argument(call, position, parameter)
            if not isinstance(given, cst.Name) or self.kind_of(given) is not Kind.MODULE:
                continue
            model = given.value
            facts = self.scope_facts(statement)
            line = self.line_of(statement)
            move = facts.moved_at(model, line)
            if move is None or not self._used_on_a_device_later(body, index, model, facts, top_level):
                continue
            device = device_code(move.device)
            fixable = move.device is None and _method(move.call) == "cuda" or device is not None and self._same_value_at(facts, move, line)
            message = (f"`{call.func.value}` brings `{model}` to the CPU in place (`{parameter}.to(\"cpu\")`), "
                       f"and `{model}` is then used with inputs on a device")
            shown = f"{model}.cuda()" if device is None else f"{model}.to({device})"
            if self.report(given, message, fix_title=f"move it back after the call: `{shown}`", fixable=fixable) and fixable:
                found.append((model, device))
        return found

    def _same_value_at(self, facts: PlacementFacts, move, line: int) -> bool:
        """The move's device names, at the call, what it named at the move (no name of it rebound)."""
        names = [node.value for node in _names(move.device)]
        move_line = self.line_of(move.call)
        return all(facts._binding_before(name, move_line + 1) is facts._binding_before(name, line) for name in names)

    def _used_on_a_device_later(self, body: tuple, index: int, model: str, facts: PlacementFacts, top_level: bool) -> bool:
        """A later statement calls the model with a device value, or (at the top level) calls a
        function of the file that does so with the global model, before anything moves, rebinds or
        hands over the model again."""
        for statement in body[index + 1:]:
            reads = _Reads(model)
            statement.visit(reads)
            if any(self._device_argument(call, facts) for call in reads.model_calls):
                return True
            if top_level and any(self._function_feeds_device_values(name, model) for name in reads.functions_called):
                return True
            if any(self._function_feeds_device_values(name, parameter, handed=True) for name, parameter in reads.handed):
                return True  # `evaluate(model, test_loader, device)` of a function that calls it on device values
            if reads.changed or reads.handed:
                return False
        return False

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


def _statement_call(statement: cst.CSTNode) -> cst.Call | None:
    """The call a simple statement makes whole: `f(...)` or `x = f(...)`."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    return value if isinstance(value, cst.Call) else None


def _argument(call: cst.Call, position: int, parameter: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
    positional = [arg for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in positional[:position + 1]):
        return None
    return positional[position].value if position < len(positional) else None


def _method(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def _names(node: cst.CSTNode | None) -> list[cst.Name]:
    found: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.append(name)

    if node is not None:
        node.visit(Names())
    return found

