"""Can a value that may be on a device reach numpy or another host library? DF008's screen.

DF008 (`codemods.df008_tensor_to_numpy`) adds `.detach().cpu()` where a value that
`analysis.placement` proves to be on a device meets `.numpy()` or a numpy, matplotlib, sklearn,
scipy or pandas call. Most files that use numpy never hand it such a value. This walk answers the
same question with Python's `ast` and over-approximates each condition of the rule, so that where
it says no the rule cannot find anything (`tests/analysis/test_screen.py` holds it to that):

- a name holds what its latest assignment before the line of the use gives it, as the rule reads
  names (names inside an assigned value: before that assignment's line; unpacking a value that is
  not a call binds nothing devfix can follow), and anything `name.append(value)` or
  `name["key"].append(value)` adds to it; an attribute some method fills (`self.losses.append(v)`)
  may hold device tensors wherever it is handed over, in a file that places devices;
- for `.numpy()` (the rule's loose mode), every call of a plain name passes its arguments'
  placement on; for a host library's arguments (its strict mode), only a call of a parameter, of
  a name the scope moves, or of a local bound to a call (a Module, maybe): `len(x)` is a number;
- the roots are the rule's own: a move (`.cuda()`, `.to(<not a dtype nor "cpu">)`), a torch call
  with `device=` other than "cpu", a call of a name the scope moves, and, in a file that places
  devices, a call of a parameter of the function (a model every caller moved) and, for `.numpy()`,
  a parameter itself; a loop variable is where the value it iterates is;
- a method of a class of the file that returns a value and calls a model `self` holds moved (or
  such a method) may give a device value, on `self` or on an object (`trainer.step(batch)`), and
  so may `self.<attr>` where a statement binds it to a move (`self.weights = counts.to(device)`);
- a call of a top-level function of the file may be on a device when one of its returns may be,
  or it reads a name the top level places (the rule counts one whose every return is, in a file
  that places devices);
- a name given to a function of the file that hands that parameter whole to a host library
  (`f1_score(labels, preds)`) reaches it as if handed there (`parameters_given_to_host`, which the
  rule reads too).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from devfix.analysis.ast_nodes import (
    COMPREHENSIONS,
    FUNCTIONS,
    NESTED_SCOPES,
    Binding,
    dict_values_bound,
    every_node,
    exclusive_branches,
    is_self_attribute,
    latest_binding,
    loop_elements,
    method_chain,
    scope_bindings,
    scope_nodes,
)
from devfix.analysis.following_returns import Followed, followed_arguments
from devfix.analysis.imports import ImportTable
from devfix.analysis.moves import is_move
from devfix.analysis.torch_api import (
    AXES_DATA_METHODS,
    CPU_LITERALS,
    DATA_FRAME_MAKERS,
    FACTORY_FUNCTIONS,
    HOOK_REGISTRARS,
    HOST_LIBRARIES,
    LEAVING_PLACEMENT_METHODS,
    LIST_FILLERS,
    METADATA_ATTRIBUTES,
    NUMPY_ARRAYS_BY_SHAPE,
    TORCH_DTYPES,
)


@dataclass(frozen=True)
class HostParameters:
    """A top-level function's positional parameters, in order, and those it hands whole to a host
    library before it rebinds them (`def f1(y_true, y_pred): y_true = np.asarray(y_true)`)."""

    positional: list[str]
    fed: frozenset[str]

    def arguments_fed(self, positions: int, keywords: tuple[str, ...]) -> list[int | str]:
        """The positions (of the first `positions` positional arguments) and keywords of a call
        that reach a fed parameter."""
        fed = [index for index in range(min(positions, len(self.positional))) if self.positional[index] in self.fed]
        return [*fed, *(keyword for keyword in keywords if keyword in self.fed)]


def parameters_given_to_host(tree: ast.Module, imports: ImportTable) -> dict[str, HostParameters]:
    """The file's top-level functions (each defined once, not rebound at the top level) that hand
    one of their parameters whole to a numpy/matplotlib/sklearn/scipy/pandas call: a list of tensors
    given to such a function reaches the host library (DF008)."""
    top_level = scope_bindings(scope_nodes(tree.body, NESTED_SCOPES))
    found: dict[str, HostParameters] = {}
    for function in tree.body:
        if not isinstance(function, FUNCTIONS) or len(top_level.get(function.name, ())) > 0:
            continue
        if sum(1 for other in tree.body if isinstance(other, (*FUNCTIONS, ast.ClassDef)) and other.name == function.name) != 1:
            continue
        arguments = function.args
        positional = [argument.arg for argument in [*arguments.posonlyargs, *arguments.args]]
        names = set(positional) | {argument.arg for argument in arguments.kwonlyargs}
        nodes = list(scope_nodes(function.body, NESTED_SCOPES))
        bindings = scope_bindings(nodes, augmented=True)
        fed = set()
        for node in nodes:
            values = _host_call_values(node, imports) if isinstance(node, ast.Call) else None
            fed.update(
                value.id for value in values or () if isinstance(value, ast.Name) and value.id in names
                and all(line >= node.lineno for line, _ in bindings.get(value.id, ()))  # read before any rebinding
            )
        if fed:
            found[function.name] = HostParameters(positional, frozenset(fed))
    return found


def parameters_only_given_to_host(function: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportTable) -> dict[str, bool]:
    """The parameters of `function` whose every read, before the function binds the name again, is
    a value a host library converts: an argument of its function (`np.asarray(preds)`, also in
    `preds = np.asarray(preds)`) or the receiver of `.numpy()`; each with whether all those reads
    are `.numpy()`. A caller holding a tensor on a device brings it to the host for such a
    parameter, and the function never needs it where it was (`metrics.accuracy(preds, labels)`)."""
    arguments = function.args
    names = {argument.arg for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    nodes = list(scope_nodes(function.body, NESTED_SCOPES))
    bindings = scope_bindings(nodes, augmented=True)
    how: dict[int, str] = {}  # id of a read → "call" or "numpy"
    for node in nodes:
        if isinstance(node, ast.Call) and (values := _host_call_values(node, imports)) is not None:
            how.update((id(value), "call") for value in values if isinstance(value, ast.Name))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy" and not node.args:
            how[id(node.func.value)] = "numpy"
    reads: dict[str, list[str | None]] = {}
    nested = [inner for node in nodes if isinstance(node, NESTED_SCOPES) for inner in ast.walk(node)]
    for node in [*nodes, *nested]:
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
            first = min((line for line, _ in bindings.get(node.id, ())), default=None)
            if first is None or node.lineno <= first:
                reads.setdefault(node.id, []).append(how.get(id(node)))
    return {
        name: all(way == "numpy" for way in found) for name, found in reads.items()
        if all(found) and not any(line for line, _ in bindings.get(name, ()) if _bound_in_a_block(function, line))
    }


def _bound_in_a_block(function: ast.FunctionDef | ast.AsyncFunctionDef, line: int) -> bool:
    """The binding at `line` is not a statement of the function's own body (a loop's, a branch's)."""
    return not any(statement.lineno <= line <= (statement.end_lineno or statement.lineno)
                   and isinstance(statement, (ast.Assign, ast.AnnAssign)) for statement in function.body)


def device_value_may_reach_host(
    tree: ast.Module, imports: ImportTable, file_places_devices: bool, host_functions: dict[str, HostParameters] | None = None,
    arrays: frozenset[str] | None = None, given_device_values_beside: Callable[[str], bool] | None = None,
    following: Callable[[str], Followed] | None = None,
) -> bool:
    """False only when DF008 cannot find anything in the file. `host_functions` and `arrays`: the
    file's `parameters_given_to_host` and `array_names`, when the caller has them;
    `given_device_values_beside`: does a call in another file give the file's top-level function
    of that name a value that may be on a device (`FileFacts.device_values_beside`); `following`: the
    parameters whose tensors a function of the file or project returns (`analysis.following_returns`)."""
    host_functions = host_functions if host_functions is not None else parameters_given_to_host(tree, imports)
    arrays = arrays if arrays is not None else array_names(tree, imports)
    kept = _instance_collectors(tree) if file_places_devices else frozenset()
    kept |= _hook_attribute_names(tree) if file_places_devices else frozenset()  # `self.gradients` a hook keeps
    moved = _methods_calling(tree, _moved_attributes(tree, imports)) if file_places_devices else frozenset()
    returning = _DeviceReturns(tree, imports, host_functions, arrays, kept, moved, following) if file_places_devices else None
    scopes: list[tuple[ast.AST, _Scope]] = []
    for owner, body, arguments, nodes_under in _scopes(tree):
        scope = _Scope(body, arguments, nodes_under, imports, file_places_devices, host_functions, arrays, kept, returning, moved, following)
        if scope.has_sink() and scope.sink_may_be_on_device() and file_places_devices:
            return True
        scopes.append((owner, scope))
    fed = {owner.name for owner, scope in scopes if scope.parameter_sinks and isinstance(owner, FUNCTIONS)}
    if file_places_devices:
        return bool(fed) and any(_calls_with_device_values(scope, fed) for _, scope in scopes)
    # a file that places nothing gets device values only from its callers in other files
    top_level = {node.name for node in tree.body if isinstance(node, FUNCTIONS)} & fed
    return given_device_values_beside is not None and any(given_device_values_beside(name) for name in sorted(top_level))


def _calls_with_device_values(scope: _Scope, functions: set[str]) -> bool:
    """Does a call in the scope of a function (or method) named in `functions` give some argument a
    value the strict reading may place on a device? The rule's `_given_device_values`: such a
    function's parameter reaching a host library is on a device when every call gives one."""
    calls = [
        node for node in scope.sink_nodes if isinstance(node, ast.Call)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else None) in functions
    ]
    if not calls:
        return False
    scope._bind()
    return any(scope._may_be_on_device(value, False) for call in calls for value in [*call.args, *(keyword.value for keyword in call.keywords)])


def array_names(tree: ast.Module, imports: ImportTable) -> frozenset[str]:
    """Names bound anywhere in the file to a numpy array made by shape (`g_loss = np.zeros((n, 1))`)
    or to a pandas DataFrame (`submission = pd.DataFrame(...)`, `df = pd.read_csv(path)`): a tensor
    stored into one of its items or columns is converted by numpy."""
    return frozenset(
        target.id for node in every_node(tree) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
        and imports.qualify(node.value.func) in NUMPY_ARRAYS_BY_SHAPE | DATA_FRAME_MAKERS
        for target in node.targets if isinstance(target, ast.Name)
    )


def _moved_attributes(tree: ast.Module, imports: ImportTable) -> frozenset[str]:
    """Attributes some statement binds to a move or moves (`self.model = model.to(device)`,
    `self.model.to(device)`), or an `__init__` binds to one of its parameters (`self.model = model`,
    which the constructions may give a moved model: `ScopeTracker.object_modules`): calling one
    (`self.model(x)`) may give a device value, whatever it is given."""
    found = set()
    for node in every_node(tree):
        if isinstance(node, ast.Assign) and is_move(node.value, imports):
            found |= {target.attr for target in node.targets if is_self_attribute(target)}
        elif isinstance(node, ast.Call) and is_move(node, imports) and is_self_attribute(node.func.value):
            found.add(node.func.value.attr)
        elif isinstance(node, FUNCTIONS) and node.name == "__init__":
            given = {argument.arg for argument in node.args.args}
            found |= {
                target.attr for statement in node.body if isinstance(statement, ast.Assign)
                and isinstance(statement.value, ast.Name) and statement.value.id in given
                for target in statement.targets if is_self_attribute(target)
            }
    return frozenset(found)


def _methods_calling(tree: ast.Module, attributes: frozenset[str]) -> frozenset[str]:
    """`attributes` and the methods that return a value and call one of them on `self`
    (`return self.model(images).argmax(1)`, `loss = self.criterion(self.model(x), y)` ...
    `return loss.detach()`), and so on: calling one may give a device value
    (`ScopeTracker.methods_returning_device_values`)."""
    returning = [
        (function.name, function) for cls in every_node(tree) if isinstance(cls, ast.ClassDef)
        for function in cls.body if isinstance(function, FUNCTIONS)
        if any(isinstance(node, ast.Return) and node.value is not None for node in every_node(function))
    ]
    found = set(attributes)
    while True:
        more = {
            name for name, function in returning if name not in found and any(
                isinstance(call, ast.Call) and is_self_attribute(call.func) and call.func.attr in found for call in every_node(function)
            )
        }
        if not more:
            return frozenset(found)
        found |= more


def _instance_collectors(tree: ast.Module) -> frozenset[str]:
    """Attributes some method fills (`self.losses.append(v)`, `self.history["loss"].append(v)`):
    the rule follows what each method appends to the one another method hands to the host; the
    screen takes any such attribute as maybe holding device tensors."""
    found = set()
    for node in every_node(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LIST_FILLERS and node.args:
            receiver = node.func.value.value if isinstance(node.func.value, ast.Subscript) else node.func.value
            if is_self_attribute(receiver):
                found.add(receiver.attr)
    return frozenset(found)


class _DeviceReturns:
    """Which top-level functions of the file may return only device values: every return the
    screen's own strict reading may place on a device (`return model(images.to(device)).softmax(1)`),
    or a function that reads a name the top level moves or binds to a move or a `device=` call (the
    rule's `device_globals`). The rule counts a call of a function whose every return is on a
    device (`ScopeTracker.returns_device_value`)."""

    def __init__(
        self, tree: ast.Module, imports: ImportTable, host_functions: dict[str, HostParameters], arrays: frozenset[str],
        kept: frozenset[str], moved: frozenset[str], following: Callable[[str], Followed] | None = None,
    ) -> None:
        self.imports, self.host_functions, self.arrays, self.kept, self.moved = imports, host_functions, arrays, kept, moved
        self.following = following
        defined = [node for node in tree.body if isinstance(node, FUNCTIONS)]
        self.functions = {node.name: node for node in defined if sum(other.name == node.name for other in defined) == 1}
        self.device_globals = _top_level_device_names(tree, imports)
        self.verdicts: dict[str, bool] = {}

    def __call__(self, name: str) -> bool:
        if name not in self.functions:
            return False
        if name not in self.verdicts:
            self.verdicts[name] = False  # a recursive function ends here
            self.verdicts[name] = self._may_return_device_value(self.functions[name])
        return self.verdicts[name]

    def _may_return_device_value(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        nodes = [inner for statement in function.body for inner in every_node(statement)]
        returns = [node.value for node in scope_nodes(function.body, NESTED_SCOPES) if isinstance(node, ast.Return) and node.value is not None]
        if not returns:
            return False
        if any(isinstance(node, ast.Name) and node.id in self.device_globals for node in nodes):
            return True
        scope = _Scope(function.body, function.args, nodes, self.imports, True, self.host_functions, self.arrays, self.kept, self, self.moved,
                       self.following)
        scope._bind()
        return all(scope._may_be_on_device(value, False) for value in returns)


def _top_level_device_names(tree: ast.Module, imports: ImportTable) -> frozenset[str]:
    """Names the top level moves (`model.to(device)`) or binds to a value holding a move or a
    torch call with `device=` (`weights = torch.ones(3, device=device)`)."""
    found = set()
    for node in scope_nodes(tree.body, NESTED_SCOPES):
        if isinstance(node, ast.Call) and is_move(node, imports) and isinstance(node.func.value, ast.Name):
            found.add(node.func.value.id)
        elif isinstance(node, ast.Assign) and any(
            isinstance(inner, ast.Call) and (is_move(inner, imports) or _placed_by_keyword(inner, imports)) for inner in ast.walk(node.value)
        ):
            found |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return frozenset(found)


def _scopes(tree: ast.Module) -> Iterator[tuple[ast.AST, list[ast.stmt], ast.arguments | None, list[ast.AST]]]:
    """Each scope as the rule's placement facts see it (the module's top level and every function),
    the node that holds it, with every node under it, nested functions included (where sinks and
    appends may also be)."""
    yield tree, tree.body, None, every_node(tree)
    for node in every_node(tree):
        if isinstance(node, FUNCTIONS):
            yield node, node.body, node.args, [inner for statement in node.body for inner in every_node(statement)]




class _Scope:
    def __init__(
        self, body: list[ast.stmt], arguments: ast.arguments | None, nodes_under: list[ast.AST], imports: ImportTable,
        file_places_devices: bool, host_functions: dict[str, HostParameters] | None = None, arrays: frozenset[str] = frozenset(),
        instance_collectors: frozenset[str] = frozenset(), device_returns: Callable[[str], bool] | None = None,
        moved_attributes: frozenset[str] = frozenset(), following: Callable[[str], Followed] | None = None,
    ) -> None:
        self.following = following  # the parameters whose tensors a function of the file or project returns
        self.moved_attributes = moved_attributes  # `self.<attr>` some statement moves: what calling it gives may be on a device
        self.imports, self.nodes_under, self.arrays = imports, nodes_under, arrays
        self.instance_collectors = instance_collectors  # `self.<attr>` lists some method fills
        self.device_returns = device_returns  # may a top-level function of the file return a device value
        self.host_functions = host_functions or {}  # the file's functions that hand a parameter to a host library
        self.nodes = list(scope_nodes(body, NESTED_SCOPES))  # where the scope's bindings are
        self.sink_nodes = list(scope_nodes(body, FUNCTIONS))  # sinks in lambdas and class bodies are the scope's
        self.all_parameters = set() if arguments is None else {
            argument.arg for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        } - {"self", "cls"}
        self.parameters = self.all_parameters if file_places_devices else set()
        self.bindings: dict[str, list[Binding]] = {}  # name → (line, value) of its assignments
        self.appended: dict[str, list[ast.expr]] = {}  # name → what `name.append(...)` adds, anywhere under the scope
        # `[... for p in preds]`: p → [(the comprehension, preds)], anywhere under the scope
        self.comprehended: dict[str, list[tuple[ast.expr, ast.expr]]] = {}
        self.moved: set[str] = set()
        self.dict_values: dict[tuple[str, int], ast.expr] = {}  # `for k, v in d.items()`: (v, line) → d
        self.elements: dict[str, list[tuple[int, ast.expr]]] = {}  # `for s in scores`: s → [(line, scores)]
        self._verdicts: dict[tuple[int, bool, int | None], bool] = {}
        self.parameter_sinks: set[str] = set()  # parameters the strict reading met, unbound, on the way to a host library
        self._bound = False

    def has_sink(self) -> bool:
        return any(self._sink_values(node) for node in self.sink_nodes if isinstance(node, (ast.Call, ast.Assign)))

    def sink_may_be_on_device(self) -> bool:
        self._bind()
        for node in self.sink_nodes:
            if isinstance(node, (ast.Call, ast.Assign)):
                for value, numpy_receiver in self._sink_values(node):
                    if self._may_be_on_device(value, numpy_receiver):
                        return True
        return False

    def _sink_values(self, call: ast.Call | ast.Assign) -> list[tuple[ast.expr, bool]]:
        """What the call hands to the host: `.numpy()`'s receiver (True), a host library's
        arguments and the items of those that are lists or tuples, or the names given to a
        parameter a function of the file hands to a host library (`f1(labels, preds)`); or the
        value stored into an item of a numpy array (`g_loss[i] = loss`)."""
        if isinstance(call, ast.Assign):
            target = call.targets[0]
            stored = len(call.targets) == 1 and isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            return [(call.value, False)] if stored and target.value.id in self.arrays and "cpu" not in method_chain(call.value) else []
        if isinstance(call.func, ast.Attribute) and call.func.attr == "numpy" and not call.args and not call.keywords:
            receiver = call.func.value
            return [] if "cpu" in method_chain(receiver) else [(receiver, True)]
        if isinstance(call.func, ast.Name) and call.func.id in self.host_functions:
            return [(value, False) for value in fed_values(call, self.host_functions[call.func.id]) if isinstance(value, ast.Name)]
        values = _host_call_values(call, self.imports)
        return [(value, False) for value in values or () if "cpu" not in method_chain(value)]

    def _bind(self) -> None:
        """The scope's bindings (`ast_nodes.scope_bindings`), its moves, and what its lists collect."""
        if self._bound:
            return
        self._bound = True
        self.bindings = scope_bindings(self.nodes, augmented=True)
        self.exclusive = exclusive_branches(self.nodes)  # an `if` body's bindings do not reach its `else`
        for node in self.nodes:
            if isinstance(node, ast.Call) and is_move(node, self.imports) and isinstance(node.func.value, ast.Name):
                self.moved.add(node.func.value.id)
        self.moved |= {name for name, bindings in self.bindings.items() if any(is_move(value, self.imports) for _, value in bindings)}
        for node in self.nodes:
            values = dict_values_bound(node) if isinstance(node, (ast.For, ast.AsyncFor)) else None
            if values is not None:
                self.dict_values[(values[0], node.lineno)] = values[1]
        self.elements = loop_elements(self.nodes)
        for node in self.nodes_under:  # `losses.append(loss)` / `.extend(...)` anywhere under the scope
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LIST_FILLERS and node.args:
                receiver = node.func.value.value if isinstance(node.func.value, ast.Subscript) else node.func.value  # `history["loss"]`
                if isinstance(receiver, ast.Name):
                    self.appended.setdefault(receiver.id, []).append(node.args[0])
            elif isinstance(node, COMPREHENSIONS):
                for generator in node.generators:
                    if isinstance(generator.target, ast.Name):
                        self.comprehended.setdefault(generator.target.id, []).append((node, generator.iter))

    def _may_be_on_device(self, value: ast.expr, with_parameters: bool, before_line: int | None = None) -> bool:
        """`with_parameters`: the rule's loose mode for `.numpy()` (parameters may be on a device,
        any function's result follows its arguments); else its strict mode for host libraries.
        Names in `value` are read as on `before_line` (the line of the assignment that holds it)."""
        key = (id(value), with_parameters, before_line)
        if key not in self._verdicts:
            self._verdicts[key] = False  # a cycle through names ends here
            self._verdicts[key] = self._decide(value, with_parameters, before_line)
        return self._verdicts[key]

    def _iterated_by(self, name: ast.Name) -> list[ast.expr]:
        """What the comprehensions around `name` that bind it iterate: only those (a scheduler's
        `[self._sigma_to_t(sigma, ...) for sigma in sigmas]` over numpy sigmas is not the later
        `[sigma.log() for sigma in sigmas[:-1]]` over device ones)."""
        return [iterated for comprehension, iterated in self.comprehended.get(name.id, ()) if _encloses(comprehension, name)]

    def _decide(self, value: ast.expr, with_parameters: bool, before_line: int | None) -> bool:
        again = lambda inner: self._may_be_on_device(inner, with_parameters, before_line)
        if is_move(value, self.imports):
            return True
        if isinstance(value, ast.Name):
            if with_parameters and value.id in self.parameters:
                return True
            if any(self._may_be_on_device(item, with_parameters) for item in self.appended.get(value.id, ())):
                return True
            binding = latest_binding(self.bindings, value.id, before_line if before_line is not None else value.lineno, self.exclusive)
            if binding is None and value.id in self.all_parameters:
                self.parameter_sinks.add(value.id)  # on a device where every call gives it one (`_calls_with_device_values`)
            if binding is None and any(again(iterated) for iterated in self._iterated_by(value)):
                return True  # `[p.numpy() for p in preds]`, `np.mean([l.detach() for l in losses])`
            if binding is not None and binding[1] is None and (value.id, binding[0]) in self.dict_values:
                return self._may_be_on_device(self.dict_values[(value.id, binding[0])], with_parameters, binding[0])
            if binding is not None and binding[1] is None and any(
                line == binding[0] and self._may_be_on_device(iterated, with_parameters, line) for line, iterated in self.elements.get(value.id, ())
            ):
                # `for s in scores: s.numpy()`, `scores` filled with device values; `for img in samples:
                # ax.imshow(img)` (the rule asks, for a host library, that `samples` be proven a tensor)
                return True
            return binding is not None and binding[1] is not None and self._may_be_on_device(binding[1], with_parameters, binding[0])
        if is_self_attribute(value) and value.attr in self.instance_collectors:
            return True  # `np.mean(self.losses)`: what the methods append is the rule's to follow; `self.gradients` of a hook
        if is_self_attribute(value) and value.attr in self.moved_attributes:
            return True  # `self.weights.numpy()` of `self.weights = counts.to(device)` (`PlacementFacts.object_modules_on_device`)
        if isinstance(value, ast.Attribute) and value.attr in METADATA_ATTRIBUTES:
            return False  # `np.zeros(image[idx].shape)`: a tuple of ints (the rule's `_metadata`)
        if isinstance(value, (ast.Attribute, ast.Subscript, ast.Starred)):
            return again(value.value)
        if isinstance(value, ast.BinOp):
            return again(value.left) or again(value.right)
        if isinstance(value, ast.UnaryOp):
            return again(value.operand)
        if isinstance(value, ast.Compare):
            return any(again(operand) for operand in [value.left, *value.comparators])
        if isinstance(value, (ast.List, ast.Tuple)):  # `torch.cat([a, b])`
            return any(again(element) for element in value.elts)
        if isinstance(value, ast.Dict):  # `model({"images": x.to(device)})`
            return any(again(element) for element in value.values)
        if isinstance(value, (ast.ListComp, ast.DictComp)):  # `model(**{k: v.to(device) for k, v in batch.items()})`
            return again(value.elt if isinstance(value, ast.ListComp) else value.value)
        if not isinstance(value, ast.Call):
            return False
        if isinstance(value.func, ast.Attribute) and value.func.attr == "forward" and isinstance(value.func.value, ast.Name) \
                and value.func.value.id != "self":
            # `model.forward(x)` is `model(x)` without its hooks (NetDissect-Lite)
            value = ast.copy_location(ast.Call(func=value.func.value, args=value.args, keywords=value.keywords), value)
        qualified = self.imports.qualify(value.func) or ""
        if qualified.startswith("torch.") and _placed_by_keyword(value, self.imports):
            return True
        arguments = [*value.args, *(keyword.value for keyword in value.keywords)]
        if isinstance(value.func, ast.Name):
            callee = value.func.id
            if callee in self.moved:
                return True
            if callee in self.parameters and callee not in self.bindings:
                return True  # `out = model(x)` of a model every caller moved (`TensorToNumpy._moved_model_parameters`)
            if self.device_returns is not None and callee not in self.bindings and callee not in self.all_parameters and self.device_returns(callee):
                return True  # `probs = predict(model, x)`: the rule reads what the function returns
            if self.following is not None and callee not in self.bindings and callee not in self.all_parameters \
                    and any(again(given) for given in followed_arguments(value, self.following(callee))):
                return True  # `accuracy(logits, y)` whose every return is computed from `logits` by tensor operations
            passes_on = with_parameters or callee in self.all_parameters or any(
                isinstance(bound, ast.Call) for _, bound in self.bindings.get(callee, ())
            )
            return passes_on and any(again(argument) for argument in arguments)
        if isinstance(value.func, ast.Subscript) and isinstance(value.func.value, ast.Name):
            layers = value.func.value.id  # `model[0](x)`: a layer of a Sequential is where the Sequential is
            if layers in self.moved:
                return True
            return (with_parameters or layers in self.all_parameters) and any(again(argument) for argument in arguments)
        if qualified.startswith("torch.") and qualified not in FACTORY_FUNCTIONS and any(again(argument) for argument in arguments):
            return True  # (a factory is made where `device=` says, whatever sizes or bounds it is given)
        if not isinstance(value.func, ast.Attribute) or value.func.attr in LEAVING_PLACEMENT_METHODS:
            return False
        if with_parameters and not qualified and any(again(argument) for argument in arguments):
            return True  # `self.model(x.to(device))`, as the rule's loose mode reads it
        if is_self_attribute(value.func) and (value.func.attr in self.moved_attributes or any(again(argument) for argument in arguments)):
            return True  # `self.model(x)` of a moved model, `self.criterion(out, y)` (`PlacementFacts.object_modules`)
        if isinstance(value.func.value, ast.Name) and value.func.attr in self.moved_attributes:
            return True  # `trainer.step(batch)`, whose return calls a moved model (`PlacementFacts.instance_device_methods`)
        return again(value.func.value)


def _encloses(outer: ast.expr, inner: ast.expr) -> bool:
    """`inner` lies within the source span of `outer`."""
    return (outer.lineno, outer.col_offset) <= (inner.lineno, inner.col_offset) \
        and (inner.end_lineno, inner.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)


def _host_call_values(call: ast.Call, imports: ImportTable) -> list[ast.expr] | None:
    """A host library call's arguments and the items of those that are lists or tuples; None for
    any other call. Any call of an Axes data method's name counts in a file that imports
    matplotlib (the rule asks that the receiver be an Axes, `analysis.axes`)."""
    if not (may_be_axes_call(call, imports) or (imports.qualify(call.func) or "").startswith(HOST_LIBRARIES)):
        return None
    values = [*call.args, *(keyword.value for keyword in call.keywords)]
    return values + [element for value in values if isinstance(value, (ast.List, ast.Tuple)) for element in value.elts]


def may_be_axes_call(call: ast.Call, imports: ImportTable) -> bool:
    """`ax.imshow(t)` in a file that imports matplotlib: a call of an Axes data method's name, which
    the screens take for one (DF008 asks that the receiver be an Axes, `analysis.axes`)."""
    return isinstance(call.func, ast.Attribute) and call.func.attr in AXES_DATA_METHODS and imports.imports_any(("matplotlib",))


def fed_values(call: ast.Call, host: HostParameters) -> list[ast.expr]:
    """The arguments of a call of a function of the file that reach a parameter it hands to a host
    library; none past a `*args` or `**kwargs` (where they go is not known)."""
    if any(isinstance(argument, ast.Starred) for argument in call.args) or any(keyword.arg is None for keyword in call.keywords):
        return []
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    fed = host.arguments_fed(positions=len(call.args), keywords=tuple(keywords))
    return [call.args[place] if isinstance(place, int) else keywords[place] for place in fed]


def _placed_by_keyword(call: ast.Call, imports: ImportTable) -> bool:
    device = next((keyword.value for keyword in call.keywords if keyword.arg == "device"), None)
    default = isinstance(device, ast.Constant) and device.value is None  # `device=None`: the default device
    return device is not None and not default and not _is_cpu_literal(device) and not _is_dtype(device, imports)


def _is_dtype(node: ast.expr, imports: ImportTable) -> bool:
    qualified = imports.qualify(node) or ""
    return qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in TORCH_DTYPES


def _is_cpu_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in CPU_LITERALS


def _hook_attribute_names(tree: ast.Module) -> frozenset[str]:
    """DF008's hook-kept attributes (`analysis.hook_attributes`), as the screen's superset: every
    `self.<attribute>` a method of a class binds, where the class hands that method as
    `self.<method>` to a hook registrar."""
    found: set[str] = set()
    for class_def in (node for node in every_node(tree) if isinstance(node, ast.ClassDef)):
        hooks = {
            node.args[0].attr for node in every_node(class_def)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in HOOK_REGISTRARS and node.args
            and isinstance(node.args[0], ast.Attribute) and isinstance(node.args[0].value, ast.Name) and node.args[0].value.id == "self"
        }
        for method in class_def.body:
            if isinstance(method, ast.FunctionDef) and method.name in hooks:
                found |= {target.attr for node in every_node(method) if isinstance(node, ast.Assign) for target in node.targets
                          if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"}
    return frozenset(found)
