"""DF003 module-not-moved: a Module is called with device tensors but was never moved.

    Before:  model = Net()
             out = model(x.to(device))
    After:   model = Net().to(device)
             out = model(x.to(device))

The move is added right after construction (before any optimizer is built from its parameters),
to the device the data was moved to. A model a function of the file builds and hands back without
placing it (`model = get_model(4)`, `analysis.returned_modules`; also one built by another such
function, `load_teacher()` returning `make_net(64)`) is built at that call: `get_model(4).to(device)`. A model built at the top level counts as called with device
data also where a function of the file calls it so (`def predict(img): return net(img.to(device))`),
when no function moves it, rebinds it globally or hands it to other code; so does a model handed to a
function of the file that calls it with device data (`perturbation(images, net)`, where
`perturbation` runs `net(image.to(device))`), directly or through other such functions, none of
which moves or wraps it. Inside such a function, what a model the scope moved before the call
returns is device data (`run_epoch(model, loader, criterion)` calling `criterion(model(x), y)`
moves `criterion` where `model` went; also for a function of another file of the project that
only calls that parameter, `from engine import train_one_epoch`), and so is what it moves to that model's device
(`device = next(model.parameters()).device`). A function that moves data to one of its own parameters or locals
(`batch.to(on)`) names no device the caller can use: it does not count, unless that parameter is
one the call gives a name or an attribute (`train(args, model, device, loader)` running
`data.to(device)` names the caller's `device`). `torch.save(model, path)` and `print(model)` leave
a model where it is. A torchmetrics Metric counts as called where its `update(...)` is given device
values (`metric.update(model(x), y)`: its states stay on the CPU until it is moved; torchmetrics
leaves placing it to the user). Data built by PyTorch-GAN's `Tensor = torch.cuda.FloatTensor if cuda else
torch.FloatTensor` (with `cuda` CUDA's availability itself, not a user's flag) is on the GPU
wherever there is one: a generator fed `Variable(Tensor(...))` and left out of the `if cuda:` block
is moved to a device chosen the same way. Loss modules count when
they hold tensors (`weight=`, `pos_weight=`); parameter-free modules (`nn.ReLU()`, a plain
`nn.CrossEntropyLoss()`, a class of the file that stores only numbers, strings, tuples and lists of
them (a multi-task loss's `weights=(1.0, 0.5)`), arithmetic of them and such modules, such as a custom loss with a temperature and an `nn.MSELoss()`, or a label-smoothing
loss storing `1.0 - smoothing`) do not need moving and are left alone.

A plain class (a trainer) that keeps a Module (`self.model = model`, or one `__init__` builds) and
moves what its methods feed it to a device attribute `__init__` stores before (`x, y =
x.to(self.device), y.to(self.device)`, then `self.model(x)`), or to a device the module binds once
before the class (`x.to(device)`), gets the model moved where it keeps it: `self.model =
model.to(self.device)`, when nothing moves, wraps or hands over the model, and
the constructions of the class, in its file or in the files beside it (`Trainer(model, loader)` in
`main.py` for a class of `trainer.py`), give it a Module built there, never moved
(`analysis.unmoved_object_models`).

Refuses: instances built with a `device=` argument (they place their own state, as torch layers
do), instances moved anywhere in the scope, reassigned, or handed to other code
(`nn.DataParallel(model)`, `setup(model)`), losses given only tensors already on the device
(`nn.CrossEntropyLoss(weight=class_weights)` with `class_weights` moved; not a moved model's plain tensor
attribute, `weight=model.class_weights` after `model = Net().to(device)`, which `.to()` left on the CPU:
`analysis.plain_tensor_attributes`), models loaded with `from_pretrained(...,
device_map=...)` and classes devfix cannot prove to be `nn.Module`s. Files where a framework
places models (accelerate, Lightning, XLA, RPC, DeepSpeed) are left alone.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.call_sites import argument_for, calls_of, file_functions
from devfix.analysis.cst_bindings import parameter_names
from devfix.analysis.device_scope import DeviceChoice, device_for, device_variable_in_scope
from devfix.analysis.kinds import Kind
from devfix.analysis.module_classes import (
    builds_stateless_instance,
    is_literal,
    is_self_attribute,
    parameters_device_owner,
    top_level_class,
)
from devfix.analysis.parameter_meetings import FunctionMeetings
from devfix.analysis.placement import Move, PlacementFacts, collect
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_api import LOSS_TENSOR_KEYWORDS, PLACEMENT_KEEPING_CALLS
from devfix.analysis.torch_names import builds_a_metric, holds_state, keyword
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import moved_to
from devfix.findings import Safety

PLAIN_VALUES = frozenset({Kind.SCALAR, Kind.STR, Kind.NONE})  # what a stateless Module may be given to store


class ModuleNotMoved(ScopeTracker, DevfixRule):
    CODE = "DF003"
    NAME = "module-not-moved"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Module called with device tensors but never moved to the device"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._device_aliases: dict[int, dict[str, str]] = {}  # a helper's facts → its device parameters, as the caller passes them

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        if len(original_node.targets) == 1 and is_self_attribute(original_node.targets[0].target):
            return self._kept_by_a_plain_object(original_node, updated_node)
        if len(original_node.targets) != 1 or not isinstance(original_node.targets[0].target, cst.Name):
            return updated_node
        name = original_node.targets[0].target.value
        if self.scope_modules(original_node).get(name) is not original_node.value:
            return updated_node
        facts = self.scope_facts(original_node)
        feeding = self._feeding_functions(name, original_node)
        if feeding is None or not self._needs_move(name, original_node.value, facts, feeding):
            return updated_node
        message = f"`{name}` is called with tensors on a device but its parameters stay on the CPU"
        choice = self._device_choice(original_node, facts, feeding)
        if choice is None:
            self.report(original_node.value, message + "; move it with `.to(device)`", fixable=False)
            return updated_node
        if not self.report(original_node.value, message, fix_title=f"move `{name}` to `{choice.name}` after construction"):
            return updated_node
        device = self.use_device(choice)
        moved = moved_to(updated_node.value, device)
        return updated_node.with_changes(value=moved)

    def _kept_by_a_plain_object(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        """`self.model = model` in the `__init__` of a plain class whose methods move the model's
        inputs to `self.device`, or to the module's `device` (`analysis.unmoved_object_models`):
        moved there as it is kept."""
        function = self.enclosing_scope(original_node)
        owner = self.class_of_method(function) if isinstance(function, cst.FunctionDef) and function.name.value == "__init__" else None
        if owner is None or self.facts is None:
            return updated_node
        attribute = original_node.targets[0].target.attr.value
        device = self.facts.unmoved_object_models.get(owner.name.value, {}).get(attribute)
        if device is None or self.is_module_classdef(owner):
            return updated_node
        if not self.report(original_node.value, f"`self.{attribute}` is called with tensors moved to `{device}` but its parameters stay on the CPU",
                           fix_title=f"move it to `{device}` where `__init__` keeps it"):
            return updated_node
        return updated_node.with_changes(value=moved_to(updated_node.value, device))

    def _holds_no_state(self, constructor: cst.Call) -> bool:
        """A class of the file that stores only literals and `__init__` parameters in `self` (or
        arithmetic of them), whose defaults for those are literals, and every construction of it in
        the file gives those parameters numbers, strings or None."""
        if not isinstance(constructor.func, cst.Name):
            return False
        class_def = top_level_class(self.module, constructor.func.value)
        if class_def is None:
            return False

        def plain(value: cst.BaseExpression) -> bool:
            return is_literal(value) or self.kind_of(value) in PLAIN_VALUES

        return all(builds_stateless_instance(call, class_def, self.qualified, plain) for call in calls_of(self.module, constructor.func.value))

    def _given_placed_state(self, constructor: cst.Call, facts: PlacementFacts) -> bool:
        """A torch.nn loss whose only state is the tensors it is given (`weight=`, `pos_weight=`, or
        positional), each one already on the device (`class_weights = torch.tensor(w).to(device)`)."""
        if not any(name.startswith("torch.nn.") and name.endswith("Loss") for name in self.qualified(constructor.func)):
            return False
        given = [arg.value for arg in constructor.args if arg.keyword is None or arg.keyword.value in LOSS_TENSOR_KEYWORDS]
        return bool(given) and all(facts.is_device_value(value) for value in given)

    def _needs_move(self, name: str, constructor: cst.Call, facts: PlacementFacts, feeding: list[PlacementFacts]) -> bool:
        if name in facts.moved or not holds_state(constructor, self.qualified) or _places_itself(constructor, self.module):
            return False
        if self._holds_no_state(constructor):
            return False  # `criterion = NTXentLoss(0.5)` of a class that stores only numbers: `.to()` moves nothing
        if self._given_placed_state(constructor, facts):
            return False  # `nn.CrossEntropyLoss(weight=weights)` with `weights` moved: its only state is on the device
        if keyword(constructor, "device") is not None:
            return False  # `DetectMultiBackend(w, device=device)`, `nn.Linear(4, 2, device=d)`: built where it runs
        if any(not self._keeps_in_place(call, name) for call in facts.escaped.get(name, [])):
            return False
        scope = self.enclosing_scope(constructor)
        finder = _CallsWithDeviceData(name, facts, inside_function=isinstance(scope, cst.FunctionDef), updates=builds_a_metric(constructor, self.qualified))
        scope.visit(finder)
        feeding.extend(self._feeding_helpers(name, facts))
        return finder.found or bool(feeding) or any(self._called_on_a_moved_models_output(call, name, facts) for call in facts.escaped.get(name, []))

    def _feeding_helpers(self, name: str, facts: PlacementFacts, depth: int = 0) -> list[PlacementFacts]:
        """The facts of the file's functions that receive the model from this scope
        (`generate(images, net)`) and call it with device data (`net(img.to(device))`), directly
        or by handing it on to another such function. A move to one of the function's own
        parameters or locals (`x.to(dev)` for `def run(model, x, dev)`) names no device here: the
        function's facts are then left out, and the rule does not guess where to move the model;
        but for a parameter that the call in the model's own scope gives a name or attribute
        (`train(args, model, device, loader)` running `data.to(device)`): that argument names the
        device there (`_device_aliases`)."""
        found: list[PlacementFacts] = []
        for call in facts.escaped.get(name, []):
            received = self._received_parameters(call, name)
            if received is None or depth > 2:
                continue
            function, parameters = received
            placed = self._placed_models(call, function, facts) if depth == 0 else {}
            inner = collect([function.body], self.qualified, self.line_of, modules_on_device=placed)
            aliases = {**self._parameter_devices(call, function, inner), **_devices_of_models(inner, placed)} if depth == 0 else {}
            local = set(parameter_names(function, stars=True)) | set(inner.bindings)
            if any(move.device is not None and _root(move.device) in local - aliases.keys() for move in inner.moved.values()):
                continue
            if aliases:
                self._device_aliases[id(inner)] = aliases
            for parameter in parameters:
                finder = _CallsWithDeviceData(parameter, inner, inside_function=True)
                function.visit(finder)
                nested = self._feeding_helpers(parameter, inner, depth + 1)
                if finder.found or nested:
                    found.extend([inner, *nested])
        return found

    def _placed_models(self, call: cst.Call, function: cst.FunctionDef, facts: PlacementFacts) -> dict[str, str | None]:
        """The function's parameters that `call` gives a name of its scope moved before it
        (`run_epoch(model, loader, criterion)` after `model = Net().to(device)`), each with the code
        of that move's device (None for `.cuda()`): inside, what they return is on that device."""
        positional = [param.name.value for param in function.params.params]
        found: dict[str, str | None] = {}
        for parameter in positional:
            move = self._moved_before(argument_for(call, parameter, positional), call, facts)
            if move is not None:
                found[parameter] = cst.Module([]).code_for_node(move.device) if move.device is not None else None
        return found

    def _moved_before(self, given: cst.BaseExpression | None, call: cst.Call, facts: PlacementFacts) -> Move | None:
        """The last move of the name `given` before `call`, unless it is bound again since."""
        if not isinstance(given, cst.Name):
            return None
        line = self.line_of(call)
        moves = [move for move in facts.moves.get(given.value, ()) if self.line_of(move.call) < line]
        if not moves or any(self.line_of(moves[-1].call) < binding.line < line for binding in facts.bindings.get(given.value, ())):
            return None  # never moved before the call, or bound again since
        return moves[-1]

    def _parameter_devices(self, call: cst.Call, function: cst.FunctionDef, inner: PlacementFacts) -> dict[str, str]:
        """The function's parameters that it moves data to and never rebinds, each with the code of
        what `call` passes for it, when that is a name or a dotted attribute of one."""
        positional = [param.name.value for param in function.params.params]
        found = {}
        for move in inner.moved.values():
            root = _root(move.device) if move.device is not None else None
            if root is None or root not in positional or root in inner.bindings:
                continue
            given = argument_for(call, root, positional)
            code = cst.Module([]).code_for_node(given) if isinstance(given, (cst.Name, cst.Attribute)) else None
            if code is not None and code.replace(".", "").replace("_", "").isalnum():
                found[root] = code
        return found

    def _feeding_functions(self, name: str, node: cst.Assign) -> list[PlacementFacts] | None:
        """For a model built at the top level: the facts of the file's functions that call the
        global `name` with device data. None when a function may change what the global is or
        where it lives (moves it, rebinds it with `global`, hands it to other code): then the top
        level alone cannot say the model stays on the CPU."""
        if not isinstance(self.enclosing_scope(node), cst.Module):
            return []
        feeding = []
        for function in (statement for statement in self.module.body if isinstance(statement, cst.FunctionDef)):
            facts = collect([function.body], self.qualified, self.line_of)
            if name in facts.bindings or name in parameter_names(function, stars=True):
                if name in _global_names(function):
                    return None
                continue  # a local of the same name
            if name in facts.moved or any(not self._keeps_in_place(call, name) for call in facts.escaped.get(name, [])):
                return None
            finder = _CallsWithDeviceData(name, facts, inside_function=True)
            function.visit(finder)
            if finder.found:
                feeding.append(facts)
        return feeding

    def _keeps_in_place(self, call: cst.Call, name: str, depth: int = 0) -> bool:
        """`helper(model, ...)` where `helper` is a function of this file that never moves or
        wraps that parameter, nor hands it to anything but such functions: the model comes back
        where it was; so do `torch.save(model, path)`, `print(model)` and their kin. Anything else
        may move it."""
        if self.qualified(call.func) & PLACEMENT_KEEPING_CALLS:
            return True
        imported = self._imported_receiver(call, name)
        if imported is not None:
            meetings, parameters = imported
            return all(parameter in meetings.called_on_outputs for parameter in parameters)  # only called there
        received = self._received_parameters(call, name)
        if received is None or depth > 2:
            return False
        function, parameters = received
        facts = collect([function.body], self.qualified, self.line_of)
        return not any(
            parameter in facts.moved or not all(self._keeps_in_place(inner, parameter, depth + 1) for inner in facts.escaped.get(parameter, []))
            for parameter in parameters
        )

    def _called_on_a_moved_models_output(self, call: cst.Call, name: str, facts: PlacementFacts) -> bool:
        """`train_one_epoch(model, loader, optimizer, criterion, device)` of another file of the
        project, which calls `criterion(model(x), y)` (`FunctionMeetings.called_on_outputs`), given
        a model this scope moved before the call: the loss meets device values there."""
        imported = self._imported_receiver(call, name)
        if imported is None:
            return False
        meetings, parameters = imported
        return any(
            self._moved_before(argument_for(call, model, meetings.parameters), call, facts) is not None
            for parameter in parameters for model in meetings.called_on_outputs.get(parameter, ())
        )

    def _imported_receiver(self, call: cst.Call, name: str) -> tuple[FunctionMeetings, list[str]] | None:
        """`helper(x, model)` of a function a file of the project defines (`from engine import
        train_one_epoch`): what it does with its parameters, and those that receive `name`."""
        if not isinstance(call.func, cst.Name) or self.facts is None or call.func.value not in self.facts.imports.names:
            return None
        meetings = self.project.imported_meetings(self.context.filename or "<memory>", self.facts.imports.names[call.func.value])
        received = _receiving(call, name, meetings.parameters) if meetings is not None else None
        return (meetings, received) if received else None

    def _received_parameters(self, call: cst.Call, name: str) -> tuple[cst.FunctionDef, list[str]] | None:
        """`helper(x, model)` of a top-level function of this file: the function and the names of
        the parameters that receive `name` (None for any other call, or an argument it cannot map)."""
        if not isinstance(call.func, cst.Name):
            return None
        function = file_functions(self.module).get(call.func.value)
        if function is None:
            return None
        received = _receiving(call, name, [param.name.value for param in function.params.params])
        return (function, received) if received is not None else None

    def _device_choice(self, node: cst.Assign, facts: PlacementFacts, feeding: list[PlacementFacts]) -> DeviceChoice | None:
        """Where the data went: one device expression, a device variable, or the preamble for `.cuda()`."""
        devices = {
            self._device_code(move.device, scope) for scope in (facts, *feeding) for move in scope.moved.values() if move.device is not None
        }
        simple = {device for device in devices if device.replace(".", "").replace("_", "").isalnum()}
        if len(devices) == 1 and simple:
            device = simple.pop()
            return DeviceChoice(device) if self._bound_before(device.split(".")[0], node, facts) else None
        existing = device_variable_in_scope(self, node)
        if existing is not None:
            return DeviceChoice(existing) if self._bound_before(existing, node, facts) else None
        return device_for(self, node) if not devices else None

    def _bound_before(self, name: str, node: cst.Assign, facts: PlacementFacts) -> bool:
        """`name` can be read where the model is built: the scope binds it before that line, or
        not at all (a parameter, an import, a global): `model = Net()` then `device = ...` would
        make `Net().to(device)` read it unbound."""
        lines = [binding.line for binding in facts.bindings.get(name, ())]
        return not lines or min(lines) < self.line_of(node)

    def _device_code(self, device: cst.BaseExpression, scope: PlacementFacts) -> str:
        """The device expression as the model's scope spells it: a helper's parameter becomes what
        the call there passes for it."""
        code = cst.Module([]).code_for_node(device)
        root = _root(device)
        aliases = self._device_aliases.get(id(scope), {})
        return aliases[root] + code[len(root):] if root in aliases and code.startswith(root) else code


def _receiving(call: cst.Call, name: str, parameters: list[str]) -> list[str] | None:
    """The parameters (of `parameters`, positional first) that `call` gives the name `name`; None
    when an argument cannot be mapped to one."""
    positions = [index for index, arg in enumerate(call.args) if arg.keyword is None and isinstance(arg.value, cst.Name) and arg.value.value == name]
    keywords = [arg.keyword.value for arg in call.args if arg.keyword is not None and isinstance(arg.value, cst.Name) and arg.value.value == name]
    received = [parameters[index] for index in positions if index < len(parameters)] + keywords
    return received if len(received) == len(positions) + len(keywords) else None


def _places_itself(constructor: cst.Call, module: cst.Module) -> bool:
    """`Layer(device)` of a class in this file whose __init__ takes a device: it places its own
    state (DF019 makes that placement consistent), so the caller needs no `.to()`."""
    if not isinstance(constructor.func, cst.Name):
        return False
    for statement in module.body:
        if isinstance(statement, cst.ClassDef) and statement.name.value == constructor.func.value:
            for item in statement.body.body:
                if isinstance(item, cst.FunctionDef) and item.name.value == "__init__":
                    return any(param.name.value in ("device", "dev", "torch_device") for param in item.params.params)
    return False


def _root(expression: cst.BaseExpression) -> str | None:
    """The name an expression starts from: `args` for `args.device`."""
    while isinstance(expression, (cst.Attribute, cst.Subscript, cst.Call)):
        expression = expression.value if not isinstance(expression, cst.Call) else expression.func
    return expression.value if isinstance(expression, cst.Name) else None


def _devices_of_models(inner: PlacementFacts, placed: dict[str, str | None]) -> dict[str, str]:
    """Locals of a helper bound once to the device of a model its caller moved
    (`device = next(model.parameters()).device`), each with the code of that move's device."""
    found = {}
    for name, bindings in inner.bindings.items():
        if len(bindings) != 1 or name in placed:
            continue
        owner = parameters_device_owner(bindings[0].value)
        if owner is not None and placed.get(owner) is not None:
            found[name] = placed[owner]
    return found


def _global_names(function: cst.FunctionDef) -> set[str]:
    """Names a function declares `global` anywhere in its body."""
    names: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_Global(self, node: cst.Global) -> None:
            names.update(item.name.value for item in node.names)

    function.visit(Finder())
    return names


class _CallsWithDeviceData(cst.CSTVisitor):
    """Calls of `name` given a device value; with `updates`, also `name.update(...)` (a
    torchmetrics Metric, whose states live where the Metric was moved)."""

    def __init__(self, name: str, facts: PlacementFacts, inside_function: bool, updates: bool = False) -> None:
        self.name, self.facts, self.updates = name, facts, updates
        self.found = False
        self._depth = 0 if inside_function else 1  # the scope's own def is depth 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._depth += 1
        return self._depth == 1  # the scope itself, not functions nested in it

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        called = node.func.value if isinstance(node.func, cst.Name) else None
        if self.updates and isinstance(node.func, cst.Attribute) and node.func.attr.value == "update" and isinstance(node.func.value, cst.Name):
            called = node.func.value.value
        if called == self.name and any(self.facts.is_device_value(arg.value) for arg in node.args):
            self.found = True
