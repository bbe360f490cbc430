"""Which parameters of a method of a Module class of the file reach one of its layers.

`m.generate(context)` where `m` was moved to a device: `generate` hands `idx` to `self(idx)`,
and `forward` hands it to `self.table`, an `nn.Embedding` built in `__init__`. A tensor made on
the CPU and passed as `context` meets the layer's weights on the model's device. DF004 reads this
summary where a factory's value is passed to a method of a moved model whose class the file
defines.

A parameter reaches a layer when a value computed from it (`parameter_meetings.derived_names`:
tensor methods, operators, indexing, torch functions; a move such as `idx.to(self.device)` ends
the chain) is an argument of a call of a layer with parameters that `__init__` assigns to `self`
(`self.table = nn.Embedding(...)`), or of `self(...)`/`self.forward(...)`/`self.<method>(...)`
for a parameter of that method which reaches one.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.cst_bindings import assigned_pairs, body_calls, is_static_method, parameter_names
from devfix.analysis.module_classes import PARAMETERIZED_LAYERS, builds_torch_layer, is_self_attribute
from devfix.analysis.parameter_meetings import (
    OutputRoots,
    Roots,
    assignments_of,
    computed_from,
    derived_names,
    parameters_meet,
    parsed_class_in_text,
)
from devfix.analysis.placement import as_move
from devfix.analysis.torch_names import QualifiedNames

MAX_DEPTH = 3  # method → forward → a helper method: deeper chains are not followed


def method_inputs_in_text(text: str, class_name: str) -> MethodInputs | None:
    """The summary of the top-level class `class_name` of another file of the project (`from model
    import VAE`, then `model.decode(z)`), from its source and the file's imports; None when the
    file does not define it once or it does not parse."""
    parsed = parsed_class_in_text(text, class_name)
    return MethodInputs(*parsed) if parsed is not None else None


class MethodInputs:
    """The summary for one class: `reaching(method)` is the set of its parameters that reach a layer."""

    def __init__(self, class_def: cst.ClassDef, qualified: QualifiedNames) -> None:
        body = class_def.body.body if isinstance(class_def.body, cst.IndentedBlock) else []
        self.methods = {statement.name.value: statement for statement in body if isinstance(statement, cst.FunctionDef)}
        self.reader = Roots(qualified)
        self.layers = _layers(self.methods.get("__init__"), qualified, self.methods)
        self._verdicts: dict[str, frozenset[str]] = {}
        self._lengths: dict[str, frozenset[str]] = {}

    def positional(self, method: str) -> list[str]:
        """The method's positional parameters after `self`."""
        definition = self.methods.get(method)
        if definition is None:
            return []
        names = [param.name.value for param in (*definition.params.posonly_params, *definition.params.params)]
        return names[1:]

    def reaching(self, method: str, depth: int = 0) -> frozenset[str]:
        if method in self._verdicts:
            return self._verdicts[method]
        definition = self.methods.get(method)
        if definition is None or not self.layers or depth > MAX_DEPTH or is_static_method(definition):
            return frozenset()
        self._verdicts[method] = frozenset()  # while it is judged: methods that call each other
        assignments = assignments_of(definition)
        calls = body_calls(definition)
        found = set()
        for parameter in self.positional(method) + [param.name.value for param in definition.params.kwonly_params]:
            derived = derived_names(parameter, assignments, self.reader)
            if any(self._feeds(call, derived, depth) for call in calls):
                found.add(parameter)
        self._verdicts[method] = frozenset(found)
        return self._verdicts[method]

    def kept_on_the_host(self, method: str) -> frozenset[str]:
        """Parameters of `method` handed, as they are, to a `torch.nn.utils.rnn` function after
        its first argument (`pack_padded_sequence(self.emb(ids), lengths)`): lengths must stay on
        the CPU, so a caller's factory for them is no input to place."""
        if method not in self._lengths:
            self._lengths[method] = self._judge_lengths(method)
        return self._lengths[method]

    def _judge_lengths(self, method: str) -> frozenset[str]:
        definition = self.methods.get(method)
        if definition is None:
            return frozenset()
        assignments = assignments_of(definition)
        calls = body_calls(definition)
        lengths = [arg.value for call in calls if self.reader.is_host_side(call.func) for arg in call.args[1:]]
        return frozenset(
            parameter for parameter in self.positional(method) + [param.name.value for param in definition.params.kwonly_params]
            if any(self.reader.roots(value) & derived_names(parameter, assignments, self.reader) for value in lengths)
        )

    def _feeds(self, call: cst.Call, derived: set[str], depth: int) -> bool:
        """Does `call` hand a value computed from `derived` to a layer, directly or through a method?"""
        func = call.func
        if is_self_attribute(func) and func.attr.value in self.layers:
            return any(self.reader.roots(arg.value) & derived for arg in call.args)
        callee = "forward" if isinstance(func, cst.Name) and func.value == "self" else \
            func.attr.value if is_self_attribute(func) and func.attr.value in self.methods else None
        if callee is None:
            return False
        reaching = self.reaching(callee, depth + 1)
        positional = self.positional(callee)
        for index, arg in enumerate(call.args):
            if arg.star or not self.reader.roots(arg.value) & derived:
                continue
            name = arg.keyword.value if arg.keyword is not None else positional[index] if index < len(positional) else None
            if name in reaching:
                return True
        return False


def _layers(init: cst.FunctionDef | None, qualified: QualifiedNames, methods: dict[str, cst.FunctionDef] | None = None) -> frozenset[str]:
    """`self.<name>` attributes that `__init__`, or a method it calls on `self` (`self.create_ffn(args)`),
    assigns a torch.nn layer with parameters, or an `nn.Sequential` of such layers (given, or
    unpacked from a list display of the method: `nn.Sequential(*[nn.Linear(4, 8), activation])`)."""
    if init is None:
        return frozenset()
    assignments = _SelfLayers(qualified)
    init.body.visit(assignments)
    for name in sorted(assignments.self_calls):
        called = (methods or {}).get(name)
        if called is not None and called is not init:
            called.body.visit(assignments)
    return frozenset(assignments.found)


class _SelfLayers(cst.CSTVisitor):
    def __init__(self, qualified: QualifiedNames) -> None:
        self.qualified = qualified
        self.found: set[str] = set()
        self.self_calls: set[str] = set()
        self.lists: dict[str, list[cst.BaseExpression]] = {}  # local list displays: `layers = [nn.Linear(...), ...]`

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if is_self_attribute(node.func):
            self.self_calls.add(node.func.attr.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        targets = [target.target for target in node.targets]
        if isinstance(node.value, cst.List) and len(targets) == 1 and isinstance(targets[0], cst.Name):
            self.lists[targets[0].value] = [element.value for element in node.value.elements]
        if builds_torch_layer(node.value, self.qualified, PARAMETERIZED_LAYERS) or self._sequential_of_layers(node.value):
            self.found.update(target.attr.value for target in targets if is_self_attribute(target))

    def _sequential_of_layers(self, value: cst.BaseExpression) -> bool:
        if not builds_torch_layer(value, self.qualified, frozenset({"Sequential"})):
            return False
        items: list[cst.BaseExpression] = []
        for arg in value.args:
            if arg.star == "*" and isinstance(arg.value, cst.Name):
                items += self.lists.get(arg.value.value, [])
            elif not arg.star:
                items.append(arg.value)
        return any(builds_torch_layer(item, self.qualified, PARAMETERIZED_LAYERS) for item in items)


def parameters_fed_to_models(function: cst.FunctionDef, models: set[str], qualified: QualifiedNames) -> dict[str, set[str]]:
    """For a function of the file: each parameter whose value reaches a call of one of `models`
    (module-level models the top level moved, that the function reads as globals), with the models
    it reaches: `def select_action(state): return policy_net(state).argmax(1)` → `{state:
    {policy_net}}`. The same derived values as for methods."""
    reader = Roots(qualified)
    assignments = assignments_of(function)
    calls = body_calls(function)
    fed_models = [call for call in calls if isinstance(call.func, cst.Name) and call.func.value in models]
    if not fed_models:
        return {}
    params = function.params
    found: dict[str, set[str]] = {}
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        derived = derived_names(param.name.value, assignments, reader)
        reached = {call.func.value for call in fed_models if any(reader.roots(arg.value) & derived for arg in call.args)}
        if reached:
            found[param.name.value] = reached
    return found


def parameters_given_with_models(function: cst.FunctionDef, qualified: QualifiedNames,
                                 losses: frozenset[str] = frozenset()) -> dict[str, set[str]]:
    """For a function of the file (or of another file): each parameter it hands to a model it is
    given as another parameter, or puts into a tensor operation with that model's output, with
    those models: `def evaluate(model, xs, ys)` running `(model(xs).argmax(1) == ys)` → `{xs:
    {model}, ys: {model}}`. Given a moved model, both must be on its device. `losses`: parameters
    every caller gives a torch.nn Module (`criterion(decoder(x), target)` puts `target` with the
    decoder's output)."""
    names = parameter_names(function)
    found = {name: models - {name} for name, models in parameters_fed_to_models(function, set(names), qualified).items() if models - {name}}
    calls = body_calls(function)
    # a parameter called like a model, also on inputs placed first (`preds = model(xs.to(device))`)
    called = {call.func.value for call in calls if isinstance(call.func, cst.Name) and call.func.value in names}
    placed, assignments, plain = _moved_onto_themselves(function, qualified), assignments_of(function), Roots(qualified)
    for model in sorted(called):
        reader = OutputRoots(qualified, {model}, losses)
        for name in names:
            if name != model and not computed_from(name, assignments, plain) & placed and parameters_meet(function, model, name, qualified, reader):
                found.setdefault(name, set()).add(model)
    return found


def _moved_onto_themselves(function: cst.FunctionDef, qualified: QualifiedNames) -> set[str]:
    """Names the function rebinds to a move of themselves (`labels = labels.to(device)`, also in
    `images, labels = images.to(device), labels.to(device)`): it places them itself, and what the
    meeting reads may be the moved value (`derived_names` does not follow the order)."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                for bound, value in assigned_pairs(target.target, node.value):
                    move = as_move(value, qualified) if isinstance(value, cst.Call) else None
                    if move is not None and isinstance(move.receiver, cst.Name) and move.receiver.value == bound.value:
                        found.add(bound.value)

    function.visit(Finder())
    return found
