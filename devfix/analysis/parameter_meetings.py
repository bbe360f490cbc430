"""Whether a function of the file combines two of its parameters in one tensor operation.

`def accuracy(output, target): return (output.argmax(1) == target).float().mean()` compares what
it is given as `output` with `target`. Called as `accuracy(model(x), y)` with the model on a
device, `y` must be on that device too, although the loop itself never puts `y` next to a device
value. The batch-moving rules read this summary of the helper at its call site.

What counts as derived from a parameter is deliberately narrow: assignments whose value computes
with it through tensor methods, operators, indexing and torch functions. Anything that leaves the
device (`.cpu()`, `.item()`, `.tolist()`, `.numpy()`), reads metadata (`.shape`, `.device`) or goes
through a call devfix does not know (`len(x)`, `helper(x)`) ends the chain: fewer meetings, fewer
moves. So does a move (`target = target.to(output.device)`): the helper places the value itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from devfix import python_parser
from devfix.analysis.cst_bindings import body_calls, bound_names, parameter_names, variable_counts
from devfix.analysis.host_helpers import class_source_in_text, function_source_in_text
from devfix.analysis.imports import ImportTable
from devfix.analysis.placement import as_move, loop_elements
from devfix.analysis.torch_api import HOST_SIDE_PREFIXES, LEAVING_PLACEMENT_METHODS, METADATA_ATTRIBUTES
from devfix.analysis.torch_names import QualifiedNames


@dataclass(frozen=True)
class FunctionMeetings:
    """What a function of another file does with its parameters: `pairs` it puts into one tensor
    operation, and `fed`, each parameter it hands to a model it is given as another parameter or
    puts with that model's output (`def evaluate(model, xs, ys)` → `{xs: {model}, ys: {model}}`,
    `method_inputs.parameters_given_with_models`)."""

    parameters: list[str]
    pairs: list[tuple[str, str]]
    fed: dict[str, set[str]] = field(default_factory=dict)
    # each parameter the function only calls, with the parameters on whose outputs it calls it
    # (`criterion(model(x), y)` → `{criterion: {model}}`): given a moved model, it must be there too
    called_on_outputs: dict[str, set[str]] = field(default_factory=dict)


def meetings_in_text(text: str, function: str, most: int = 12) -> FunctionMeetings | None:
    """For the top-level function `function` of another file (`from metrics import accuracy`): its
    parameters, the pairs of them it puts into one tensor operation, and those it feeds to one
    another; None when the file does not define that function once, it does not parse (or has more
    than `most` parameters)."""
    from devfix.analysis.method_inputs import parameters_given_with_models  # it reads this module's derivations

    parsed = parsed_source(function_source_in_text(text, function))  # only the function is parsed, not the whole file
    if parsed is None:
        return None
    module, qualified = parsed
    definitions = [statement for statement in module.body if isinstance(statement, cst.FunctionDef) and statement.name.value == function]
    if len(definitions) != 1 or len(parameter_names(definitions[0])) > most:
        return None
    definition = definitions[0]
    names = parameter_names(definition)
    return FunctionMeetings(
        names, meeting_pairs(definition, names, qualified), parameters_given_with_models(definition, qualified),
        parameters_called_on_outputs(definition, names, qualified),
    )


def parameters_called_on_outputs(function: cst.FunctionDef, names: list[str], qualified: QualifiedNames) -> dict[str, set[str]]:
    """Each parameter `function` uses only as a callee (never moves, stores or hands on), with the
    other called parameters whose output it is given (`loss = criterion(model(x), y)`, also through
    a name: `out = model(x)`, `criterion(out, y)`)."""
    called = [call for call in body_calls(function) if isinstance(call.func, cst.Name) and call.func.value in names]
    callees, reads = {call.func.value for call in called}, variable_counts(function)
    only_called = {name for name in callees if reads.get(name, 0) == sum(call.func.value == name for call in called)}
    assignments = assignments_of(function)
    found: dict[str, set[str]] = {}
    for model in sorted(callees):
        reader = OutputRoots(qualified, {model})
        outputs = derived_names(model, assignments, reader)
        for call in called:
            callee = call.func.value
            if callee != model and callee in only_called and any(reader.roots(arg.value) & outputs for arg in call.args):
                found.setdefault(callee, set()).add(model)
    return found


def parsed_class_in_text(text: str, class_name: str) -> tuple[cst.ClassDef, QualifiedNames] | None:
    """The top-level class `class_name` of another file's `text`, parsed alone by libcst, with the
    qualified names that file's imports give; None when it is not defined once or does not parse."""
    parsed = parsed_source(class_source_in_text(text, class_name))
    if parsed is None:
        return None
    classes = [statement for statement in parsed[0].body if isinstance(statement, cst.ClassDef)]
    return (classes[0], parsed[1]) if len(classes) == 1 else None


def parsed_source(found: tuple[str, str] | None) -> tuple[cst.Module, QualifiedNames] | None:
    """A definition's source cut from another file, with that file's imports
    (`host_helpers.function_source_in_text`), parsed by libcst, and the qualified names the imports
    give; None when there is none or it does not parse on its own."""
    if found is None:
        return None
    try:
        module = cst.parse_module(found[0])
        imports = python_parser.parse(found[1])
    except (SyntaxError, ValueError, RecursionError, MemoryError, cst.ParserSyntaxError):
        return None
    return module, qualifier(ImportTable.of(imports))


def qualifier(imports: ImportTable) -> QualifiedNames:
    """Qualified names of another file's dotted names, from its imports (no libcst metadata: the
    nodes are not the checked file's)."""
    def qualified(node: cst.CSTNode) -> set[str]:
        dotted = cst.helpers.get_full_name_for_node(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if dotted is None:
            return set()
        try:
            found = imports.qualify(python_parser.parse(dotted).body[0].value)
        except (SyntaxError, IndexError, AttributeError):
            return set()
        return {found} if found is not None else set()

    return qualified


def parameters_meet(function: cst.FunctionDef, first: str, second: str, qualified: QualifiedNames, reader: Roots | None = None) -> bool:
    """Does `function` put a value computed from parameter `first` and one computed from
    `second` into the same operator, comparison, tensor method or torch function? (`reader`:
    what counts as computed from what, `Roots` by default.)"""
    return first != second and bool(meeting_pairs(function, [first, second], qualified, reader))


def meeting_pairs(function: cst.FunctionDef, parameters: list[str], qualified: QualifiedNames,
                  reader: Roots | None = None) -> list[tuple[str, str]]:
    """The pairs `(first, second)` of `parameters` (in their order) that `parameters_meet`: one
    read of the function for all pairs, not one per pair."""
    reader = reader or Roots(qualified)
    assignments = assignments_of(function)
    derived = {parameter: derived_names(parameter, assignments, reader) for parameter in parameters}
    finder = _Operations(reader)
    function.body.visit(finder)
    met: set[tuple[str, str]] = set()
    for operands in finder.operands:
        sides = [{parameter for parameter in parameters if roots & derived[parameter]} for roots in operands]
        for index, left in enumerate(sides):
            for other, right in enumerate(sides):
                if index != other:
                    met.update((first, second) for first in left for second in right)
    return [
        (first, second) for index, first in enumerate(parameters) for second in parameters[index + 1:]
        if first != second and ((first, second) in met or (second, first) in met or derived[first] & derived[second])
    ]


def derived_names(parameter: str, assignments: list[tuple[set[str], cst.BaseExpression]], reader: Roots) -> set[str]:
    """`parameter` and the names the function computes from it (`assignments_of`), less those it
    also rebinds from something else (`target = target.to(d)`)."""
    names = computed_from(parameter, assignments, reader)
    return names - {target for targets, value in assignments if not reader.roots(value) & names for target in targets}


def computed_from(parameter: str, assignments: list[tuple[set[str], cst.BaseExpression]], reader: Roots) -> set[str]:
    """`parameter` and every name some assignment computes from it, rebound elsewhere or not
    (`inputs, labels = batch` of a parameter `batch`)."""
    names = {parameter}
    for _ in range(2):  # twice: a loop may feed a name back to an earlier line
        for targets, value in assignments:
            if reader.roots(value) & names:
                names.update(targets)
    return names


class Roots:
    """The names an expression's value is computed from, as far as the device goes."""

    in_place_meets = False  # does `a += b` put `a` and `b` together (`met_parameters`)?
    meeting_callables: frozenset[str] = frozenset()  # names whose calls put their inputs together (a loss given in)

    def __init__(self, qualified: QualifiedNames) -> None:
        self.qualified = qualified

    def roots(self, expression: cst.BaseExpression) -> set[str]:
        if isinstance(expression, cst.Name):
            return {expression.value}
        if isinstance(expression, cst.Attribute):
            return set() if expression.attr.value in METADATA_ATTRIBUTES else self.roots(expression.value)
        if isinstance(expression, cst.Subscript):
            return self.roots(expression.value)
        if isinstance(expression, cst.UnaryOperation):
            return self.roots(expression.expression)
        if isinstance(expression, cst.BinaryOperation):
            return self.roots(expression.left) | self.roots(expression.right)
        if isinstance(expression, cst.Comparison):
            return self.roots(expression.left).union(*(self.roots(item.comparator) for item in expression.comparisons))
        if isinstance(expression, cst.Call):
            return self._call_roots(expression)
        return set()

    def _call_roots(self, call: cst.Call) -> set[str]:
        callee = call.func
        if as_move(call, self.qualified) is not None:
            return set()  # placed on purpose (`target.to(output.device)`): no longer the raw value
        if self.is_host_side(callee):  # `pack_padded_sequence(x, lengths)`: the data's place; lengths stay on the CPU
            return self.roots(call.args[0].value) if call.args else set()
        if self.is_torch_function(callee):  # `torch.cat((idx, nxt), dim=1)`: the sequence's tensors too
            return set().union(*(self.roots(element) for arg in call.args for element in _elements(arg.value)))
        if isinstance(callee, cst.Attribute) and callee.attr.value not in LEAVING_PLACEMENT_METHODS:
            return self.roots(callee.value)  # a tensor method: where its receiver is
        return set()

    def is_torch_function(self, callee: cst.BaseExpression) -> bool:
        return any(name.startswith("torch.") for name in self.qualified(callee))

    def is_host_side(self, callee: cst.BaseExpression) -> bool:
        """`torch.nn.utils.rnn` functions, whose lengths argument must be on the CPU."""
        return any(name.startswith(HOST_SIDE_PREFIXES) for name in self.qualified(callee))


class OutputRoots(Roots):
    """`Roots`, where the output of a call of one of `models` (parameters holding models) is
    computed from the model: `preds = model(x).argmax(1)` is where `model` is."""

    def __init__(self, qualified: QualifiedNames, models: set[str], meeting_callables: frozenset[str] = frozenset()) -> None:
        super().__init__(qualified)
        self.models = models
        self.meeting_callables = meeting_callables

    def _call_roots(self, call: cst.Call) -> set[str]:
        if isinstance(call.func, cst.Name) and call.func.value in self.models:
            return {call.func.value}
        return super()._call_roots(call)


def _elements(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """A tuple's or list's elements, or the value itself."""
    if isinstance(value, (cst.Tuple, cst.List)):
        return [element.value for element in value.elements]
    return [value]


def assignments_of(function: cst.FunctionDef) -> list[tuple[set[str], cst.BaseExpression]]:
    """`(names bound, value)` of the function's own plain and augmented assignments, in order, and
    of its loops over a value's elements (`for x, y in zip(xs, ys)`: `x` from `xs`, `y` from `ys`),
    which live where the value's tensors do."""
    found: list[tuple[set[str], cst.BaseExpression]] = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            found.append(({name for target in node.targets for name in bound_names(target.target)}, node.value))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            # `total += x`: the new value is computed from the old one too (it keeps its device)
            found.append((bound_names(node.target), cst.BinaryOperation(node.target, cst.Add(), node.value)))

        def visit_For(self, node: cst.For) -> None:
            found.extend(({name}, value) for name, value in loop_elements(node))

    function.visit(Finder())
    return found


class _Operations(cst.CSTVisitor):
    """The roots of each operand of every operation of a function that puts values together
    (operators, comparisons, tensor methods with their receiver, torch functions)."""

    def __init__(self, reader: Roots) -> None:
        self.reader = reader
        self.operands: list[list[set[str]]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function is called who knows when

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._add([node.left, node.right])

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._add([node.left, *(item.comparator for item in node.comparisons)])

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.reader.in_place_meets:
            self._add([node.target, node.value])

    def visit_Call(self, node: cst.Call) -> None:
        callee = node.func
        operands = [arg.value for arg in node.args]
        if self.reader.is_host_side(callee):
            return  # CPU lengths next to device data are what these functions ask for
        if isinstance(callee, cst.Attribute) and callee.attr.value not in LEAVING_PLACEMENT_METHODS and not self.reader.is_torch_function(callee):
            self._add([callee.value, *operands])  # `pred.eq(target)`
        elif self.reader.is_torch_function(callee) or (isinstance(callee, cst.Name) and callee.value in self.reader.meeting_callables):
            self._add(operands)

    def _add(self, operands: list[cst.BaseExpression]) -> None:
        roots = [self.reader.roots(operand) for operand in operands]
        if sum(1 for found in roots if found) > 1:
            self.operands.append(roots)
