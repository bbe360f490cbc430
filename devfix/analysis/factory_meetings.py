"""Can a tensor factory without `device=` meet a value that may be a tensor? DF004's screen.

DF004 aligns a factory call (`torch.zeros(n)`) with a tensor it meets in the same function:
arithmetic, comparisons, indexing, torch functions, tensor methods and Module calls. Most model
code has factories (parameter initialisers, drop-path schedules `torch.linspace(...).split(...)`,
`init_values * torch.ones(dim)`) that never meet a tensor, and building a libcst tree only to
learn that is most of a check's cost. This walk follows the same structure as the rule, with
Python's `ast`, and over-approximates each of its conditions: where it says no, the rule cannot
find anything (`tests/analysis/test_screen.py` holds it to that over every fixture and program,
scope by scope: the rule collects only in the scopes said here, `meeting_scopes`).

Per function (and the module's top level), as the rule scopes it:
  - a name *may hold a factory* when one of its assignments in that scope is built from one
    (through names, arithmetic, indexing and tensor methods, to a fixed point);
  - an expression *may be a tensor reference* when it reaches a name that is not an import nor
    proven a non-tensor, and that the value analysis proves a tensor, or the rule's usage evidence
    may count as one (`x.device`, the first argument of a torch op, a parameter annotated as a
    tensor, a name assigned from a torch call or from such a name), or that holds a Module's output;
  - a meeting needs both among the values that meet, or a factory fed to a callable that may be
    a Module (a name assigned from a call, or moved with `.to()`/`.cuda()`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property

from devfix.analysis.ast_nodes import (
    FUNCTIONS,
    Binding,
    bound_names,
    every_node,
    is_number_literal,
    is_self_attribute,
    latest_binding,
    loop_elements,
    may_name_a_device,
    operand_names,
    parameters,
    scope_bindings,
    scope_nodes,
)
from devfix.analysis.imports import ImportTable
from devfix.analysis.kinds import NUMBER_BUILTINS, TENSOR_TO_TENSOR_METHODS, Kind
from devfix.analysis.moves import is_cast, is_move
from devfix.analysis.size_parameters import size_parameters
from devfix.analysis.torch_api import (
    CHAIN_STOPS,
    DEVICE_CHANGING_METHODS,
    ENCODING_TENSOR_FIELDS,
    FACTORY_FUNCTIONS,
    HOST_SIDE_PREFIXES,
    JOINS,
    LIST_FILLERS,
    MEETING_FUNCTIONS,
    MODULE_COMPILERS,
    MOVED_AFTER,
    NON_TENSOR_METHODS,
    NOT_COMBINING_METHODS,
    TENSOR_ANNOTATIONS,
    TENSOR_ENCODERS,
    TENSOR_ONLY_MEMBERS,
    TENSOR_OUTPUT_LAYERS,
    is_library_constant,
    is_source_wrapper,
    is_torch_tensor_function,
)

KindAt = Callable[[ast.Name], Kind]
MovedBeside = Callable[[str, int, str], bool]  # (function, position, parameter): every call beside the file passes a moved name
NonTensors = Callable[[int, int], set[str]]  # names read somewhere in these lines as a proven non-tensor
NOT_SOURCE_METHODS = frozenset({"to", "cuda", "cpu", "tolist", "item", "numpy"})
HOST_MADE_DEPTH = 12  # deeper than DF004's `analysis.host_made` (10), which counts fewer steps (a loop's row, a filled list): an over-approximation never stops sooner


def meeting_scopes(
    tree: ast.Module, imports: ImportTable, kind_at: KindAt, non_tensors: NonTensors,
    imported_helper: Callable[[str], bool] = lambda name: False, classes: dict[str, Kind] | None = None,
    imported_meets: Callable[[str], bool] = lambda name: False, gives_back_moves: Callable[[str], bool] = lambda name: False,
    moved_beside: MovedBeside = lambda function, position, parameter: False,
    imported_methods: Callable[[str], frozenset[str]] = lambda name: frozenset(),
    returns_tensors: Callable[[str], bool] = lambda name: True,
) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef | None]:
    """The scopes (a function, None for the top level) where a factory call may meet a tensor the
    way DF004 looks for; where there is none, the rule cannot find anything (`tests/analysis/
    test_screen.py` holds it to that over every fixture and program, scope by scope).
    `imported_helper`: does the imported function of that name (`from utils import causal_mask`)
    return CPU tensors (`ProjectIndex.imported_helper`)? `classes`: the kinds of the file's
    top-level classes, as the value analysis was given them. `imported_meets`: does the imported
    function of that name put two of its parameters into one tensor operation
    (`ProjectIndex.imported_meetings`)? `gives_back_moves`: does the function of that name, of the
    file or imported from the project, give back what it moved (`analysis.returned_moves`)?
    `moved_beside`: does every call of the file's function in the files beside it pass a moved
    name for that parameter (`FileFacts.models_moved_beside`)? `imported_methods`: the methods of
    the class of that name the file imports from the project (`ProjectIndex.imported_class_methods`).
    `returns_tensors`: may the file's function of that name give tensors (`HelperSummary.gives_tensors`:
    DF004 takes no list or number for a CPU tensor)?"""
    callables = _maybe_modules(tree, imports)
    callers = _Callers(tree, gives_back_moves, moved_beside)
    top_level_moves = _top_level_moves(tree)
    feeders = (_class_methods(tree), _functions_calling(tree, top_level_moves), top_level_moves)
    layers = _TensorLayerAttributes(tree, imports)
    receivers = _receiver_kinds(tree, classes or {})
    for body, function in _scopes(tree):
        if _Scope(body, function, imports, (kind_at, non_tensors), callables, callers.moved_models_for(function), callers.helpers,
                  feeders, layers, imported_helper, receivers.get(id(function)), imported_meets, gives_back_moves,
                  imported_methods, returns_tensors).has_meeting():
            yield function


def _receiver_kinds(tree: ast.Module, classes: dict[str, Kind]) -> dict[int, Kind]:
    """The kind the value analysis gives the first parameter (`self`, `cls`) of each method
    defined in a top-level class, not static: the class's own, known without analysing the file."""
    return {
        id(method): classes.get(node.name, Kind.UNKNOWN)
        for node in tree.body if isinstance(node, ast.ClassDef)
        for method in node.body if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and parameters(method)
        and not any(isinstance(decorator, ast.Name) and decorator.id == "staticmethod" for decorator in method.decorator_list)
    }


class _TensorLayerAttributes:
    """DF004's `layers_of_method`, over-approximated: attributes the `__init__` of some top-level
    class of the file assigns a single-tensor torch.nn layer (`self.proj = nn.Linear(...)`), found
    the first time a scope asks."""

    def __init__(self, tree: ast.Module, imports: ImportTable) -> None:
        self.tree, self.imports = tree, imports
        self._found: frozenset[str] | None = None

    def __contains__(self, attribute: str) -> bool:
        if self._found is None:
            inits = [item for node in self.tree.body if isinstance(node, ast.ClassDef)
                     for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"]
            self._found = frozenset(
                target.attr
                for init in inits for node in every_node(init) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and self._is_layer(node.value.func)
                for target in node.targets if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
            )
        return attribute in self._found

    def _is_layer(self, func: ast.expr) -> bool:
        qualified = self.imports.qualify(func) or ""
        return qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1] in TENSOR_OUTPUT_LAYERS


def _top_level_moves(tree: ast.Module) -> frozenset[str]:
    """Names the top level moves (`policy_net = DQN().to(device)`, `lm.to(device)`)."""
    nodes = list(scope_nodes(tree.body, (*FUNCTIONS, ast.ClassDef)))
    return frozenset(_moved_lines(nodes, scope_bindings(nodes)))


def _functions_calling(tree: ast.Module, moved: frozenset[str]) -> frozenset[str]:
    """Top-level functions that call a name the top level moves: what they are given may reach
    that model (DF004's `_feed_function`)."""
    if not moved:
        return frozenset()
    return frozenset(
        node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in moved for call in every_node(node))
    )


def _class_methods(tree: ast.Module) -> dict[str, frozenset[str]]:
    """The file's top-level classes, each with the names of the methods it defines (`generate`)
    and of the attributes its `__init__` assigns from a call (`self.embed = nn.Embedding(...)`: a
    layer called directly, `model.embed(idx)`)."""
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        methods = [statement for statement in node.body if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))]
        attributes = {
            target.attr
            for method in methods if method.name == "__init__"
            for statement in scope_nodes(method.body) if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)
            for target in statement.targets if is_self_attribute(target)
        }
        found[node.name] = frozenset(method.name for method in methods) | attributes
    return found


def encodings_meet_a_moved_model(tree: ast.Module) -> bool:
    """DF004's encodings fed to a model that moves in the same scope (or, in a function, at the top
    level, or a parameter where the top level moves something): `model(**inputs)` or `model.generate(**inputs)` where `inputs` holds a
    `return_tensors="pt"` encoding bound in that scope, or an argument that reads one of its fields
    (`enc["input_ids"]`, `tokenizer(text, return_tensors="pt").input_ids`, a name bound to such a
    read)."""
    top_level_moved: dict[str, list[int]] = {}
    for body, function in _scopes(tree):
        nodes = list(scope_nodes(body, (*FUNCTIONS, ast.ClassDef)))
        bindings = scope_bindings(nodes)
        moved = _moved_lines(nodes, bindings)
        if function is None:
            top_level_moved = moved
        given = {arg.arg for arg in parameters(function)} if function is not None else set()
        own = set(bindings) | given  # a function's own `model`
        for call in nodes:
            if not isinstance(call, ast.Call):
                continue
            callee = call.func.value if isinstance(call.func, ast.Attribute) else call.func
            if not isinstance(callee, ast.Name):
                continue
            handed_in = callee.id in given and bool(top_level_moved)  # maybe a model its callers moved (the rule asks them)
            if callee.id not in moved and not handed_in and not (function is not None and callee.id in top_level_moved and callee.id not in own):
                continue  # a function's own `model` is not the one the top level moved
            for keyword in call.keywords:
                if keyword.arg is None and isinstance(keyword.value, ast.Name) and any(
                        _is_encoding(value) for line, value in bindings.get(keyword.value.id, ()) if line < call.lineno):
                    return True
            if any(_reads_encoding_field(value, bindings) for value in [*call.args, *(k.value for k in call.keywords if k.arg)]):
                return True
    return False


def _reads_encoding_field(value: ast.expr, bindings: dict[str, list[Binding]], depth: int = 0) -> bool:
    """`enc["input_ids"]`, `enc.attention_mask` of a name bound to an encoding in the scope,
    `tokenizer(text, return_tensors="pt").input_ids`, `tokenizer.encode(text, return_tensors="pt")`, or a
    name bound to such a read (over-approximated: any of its bindings)."""
    if isinstance(value, ast.Name) and depth == 0:
        return any(bound is not None and _reads_encoding_field(bound, bindings, 1) for _, bound in bindings.get(value.id, ()))
    if _is_encoding(value) and isinstance(value.func, ast.Attribute) and value.func.attr in TENSOR_ENCODERS:
        return True  # `tokenizer.encode(text, return_tensors="pt")`: the ids themselves
    if isinstance(value, ast.Subscript):
        if not (isinstance(value.slice, ast.Constant) and isinstance(value.slice.value, str)):
            return False
    elif not (isinstance(value, ast.Attribute) and value.attr in ENCODING_TENSOR_FIELDS):
        return False
    encoding = value.value
    if isinstance(encoding, ast.Name):
        return any(_is_encoding(bound) for _, bound in bindings.get(encoding.id, ()))
    return _is_encoding(encoding)


def _moved_lines(nodes: list[ast.AST], bindings: dict[str, list[Binding]]) -> dict[str, list[int]]:
    """Names one scope moves (`x.to(device)`, `x = y.cuda()`) → the lines of those moves, as
    `analysis.placement.collect` records them for DF004."""
    moved: dict[str, list[int]] = {}
    for node in nodes:
        if _may_move(node) and isinstance(node.func.value, ast.Name):
            moved.setdefault(node.func.value.id, []).append(node.lineno)
    for name, bound in bindings.items():
        lines = [line for line, value in bound if _may_move(value)]
        if lines:
            moved.setdefault(name, []).extend(lines)
    return moved


def _is_encoding(value: ast.expr | None) -> bool:
    """`tokenizer(text, return_tensors="pt")`."""
    return isinstance(value, ast.Call) and any(
        keyword.arg == "return_tensors" and isinstance(keyword.value, ast.Constant) and keyword.value.value == "pt"
        for keyword in value.keywords
    )


def _scopes(tree: ast.Module) -> Iterator[tuple[list[ast.stmt], ast.FunctionDef | ast.AsyncFunctionDef | None]]:
    """The module's top level and every function body (class bodies are not DF004's), with the
    function itself (None for the top level)."""
    yield tree.body, None
    for node in every_node(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.body, node


class _ModelParameters:
    """The parameters of a function that hold a model its callers moved: those the file's own calls
    show, or, for a function only the files beside it call, each asked of them when a question
    needs it (reading those files is the dear part of a check)."""

    def __init__(self, known: set[str], beside: Callable[[str], bool] | None = None) -> None:
        self.known, self.beside = known, beside
        self._asked: dict[str, bool] = {}

    def __contains__(self, name: str) -> bool:
        if name in self.known:
            return True
        if self.beside is None:
            return False
        if name not in self._asked:
            self._asked[name] = self.beside(name)
        return self._asked[name]


class _Callers:
    """Which parameters of a top-level function may hold a model its callers moved, as DF004's
    `callers_pass_moved_models` asks: the function's name is only ever called, and every call
    passes, for the parameter, a name that the file moves somewhere (`model.to(device)`,
    `model = Net().cuda()`)."""

    def __init__(self, tree: ast.Module, gives_back_moves: Callable[[str], bool] = lambda name: False,
                 moved_beside: MovedBeside = lambda function, position, parameter: False) -> None:
        self.moved_beside = moved_beside
        self.top_level = {id(node) for node in tree.body}
        self.helpers = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.uses: dict[str, int] = {}
        self.calls: dict[str, list[ast.Call]] = {}
        self.moved: set[str] = set()
        for node in every_node(tree):
            if isinstance(node, ast.Name):
                self.uses[node.id] = self.uses.get(node.id, 0) + 1
            elif isinstance(node, ast.Call):
                if isinstance(node.func, ast.Name):
                    self.calls.setdefault(node.func.id, []).append(node)
                if _may_move(node) and isinstance(node.func.value, ast.Name):
                    self.moved.add(node.func.value.id)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and (_may_move(node.value) or _gives_back_a_move(node.value, gives_back_moves)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                self.moved.update(name for target in targets for name in bound_names(target))
            elif isinstance(node, ast.Assign) and _holds_a_call(node.value):  # `enc, dec = Encoder().to(device), Decoder().to(device)`
                self.moved.update(
                    name for name, bound in scope_bindings([node]).items()
                    if any(_may_move(value) or _gives_back_a_move(value, gives_back_moves) for _, value in bound)
                )

    def moved_models_for(self, function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> _ModelParameters:
        if function is None or id(function) not in self.top_level:
            return _ModelParameters(set())
        calls = self.calls.get(function.name, [])
        arguments = function.args
        positional = [argument.arg for argument in (*arguments.posonlyargs, *arguments.args)]
        if not calls and not self.uses.get(function.name, 0):  # called only from the files beside it: asked when needed
            return _ModelParameters(set(), lambda name: name in positional and self.moved_beside(function.name, positional.index(name), name))
        if not calls or self.uses.get(function.name, 0) != len(calls):  # a name passed around: callers unknown
            return _ModelParameters(set())
        return _ModelParameters({
            argument.arg
            for argument in parameters(function)
            if all(self._passes_a_moved_name(call, argument.arg, positional) for call in calls)
        })

    def _passes_a_moved_name(self, call: ast.Call, parameter: str, positional: list[str]) -> bool:
        if any(isinstance(arg, ast.Starred) for arg in call.args) or any(keyword.arg is None for keyword in call.keywords):
            return False
        passed = next((keyword.value for keyword in call.keywords if keyword.arg == parameter), None)
        if passed is None and parameter in positional and positional.index(parameter) < len(call.args):
            passed = call.args[positional.index(parameter)]
        return isinstance(passed, ast.Name) and passed.id in self.moved


def _maybe_modules(tree: ast.Module, imports: ImportTable) -> set[str]:
    """Names that may hold a Module: assigned from a call, or moved (`net.to(device)`), or a
    parameter of a top-level function that every call of it in the file gives a call
    (`train_step(..., nn.BCEWithLogitsLoss())`: DF004's `module_parameters`)."""
    names: set[str] = set()
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    given_calls: dict[tuple[str, str], bool] = {}  # (function, parameter) → has every call of it passed a call?
    for node in every_node(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and (isinstance(node.value, ast.Call) or _holds_a_call(node.value)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):  # most targets: no walk of their own
                    names.add(target.id)
                else:
                    names.update(name.id for name in every_node(target) if isinstance(name, ast.Name))
        elif isinstance(node, ast.Call) and _is_move_of_a_name(node, imports):
            names.add(node.func.value.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
            arguments = functions[node.func.id].args
            positional = [argument.arg for argument in (*arguments.posonlyargs, *arguments.args)]
            passed = {positional[index]: arg for index, arg in enumerate(node.args) if index < len(positional)}
            passed.update({keyword.arg: keyword.value for keyword in node.keywords if keyword.arg is not None})
            for parameter in (*positional, *(argument.arg for argument in arguments.kwonlyargs)):
                key = (node.func.id, parameter)
                given_calls[key] = given_calls.get(key, True) and isinstance(passed.get(parameter), ast.Call)
    names.update(parameter for (_, parameter), every in given_calls.items() if every)
    return names


def _elements_of_moved_lists(nodes: list[ast.AST], functions: Iterable[str] = ()) -> set[str]:
    """`m` of `for m in members` (a loop or a comprehension) where `members` is assigned a list
    whose every element may be a move (`[Net().to(device) for _ in range(3)]`, `[g.to(device),
    d.to(device)]`), or what a call of one of the file's `functions` gives back (an ensemble's
    builder): DF004's `PlacementFacts.element_moves`, over-approximated."""
    lists = {target.id for node in nodes if isinstance(node, ast.Assign) and (_lists_moves(node.value) or (
                 isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and node.value.func.id in functions))
             for target in node.targets if isinstance(target, ast.Name)}
    if not lists:
        return set()
    return {node.target.id for node in nodes if isinstance(node, (ast.For, ast.comprehension))
            and isinstance(node.iter, ast.Name) and node.iter.id in lists and isinstance(node.target, ast.Name)}


def _lists_moves(value: ast.expr) -> bool:
    if isinstance(value, ast.ListComp):
        return _may_move(value.elt)
    return isinstance(value, (ast.List, ast.Tuple)) and bool(value.elts) and all(_may_move(element) for element in value.elts)


def _holds_a_call(value: ast.expr | None) -> bool:
    """A tuple or list display with a call in it (`g, d = G().to(device), D().to(device)`)."""
    return isinstance(value, (ast.Tuple, ast.List)) and any(isinstance(element, ast.Call) for element in value.elts)


def _is_move_of_a_name(node: ast.AST, imports: ImportTable) -> bool:
    """`net.to(device)`, `net.cuda()`: a move (`analysis.moves`) of a plain name."""
    return is_move(node, imports) and isinstance(node.func.value, ast.Name)


def _method_receiver(value: ast.expr) -> ast.Name | None:
    """`sample` of `sample.unsqueeze(0).float()`: the name a chain of methods that keep the device
    starts from; None for anything else (a move, `.item()`, a call of a function)."""
    if not isinstance(value, ast.Call):
        return None
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr not in CHAIN_STOPS:
        value = value.func.value
    return value if isinstance(value, ast.Name) else None


def _called_object(func: ast.expr) -> ast.expr:
    """`model` of `model(x)` and of `model.step(x)`."""
    return func.value if isinstance(func, ast.Attribute) else func


def _call_of_chain(value: ast.expr) -> ast.expr:
    """`model(x)` of `model(x).argmax(1)`: what a chain of tensor methods starts from."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Call):
        value = value.func.value
    return value


def _gives_back_a_move(node: ast.AST | None, gives_back_moves: Callable[[str], bool]) -> bool:
    """`build_model(device)` of a function that gives back what it moved."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and gives_back_moves(node.func.id)


def _may_move(node: ast.AST | None) -> bool:
    """`.to(...)` or `.cuda(...)` of anything, casts included (a superset of the moves)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cuda")


class _Scope:
    """One scope as DF004 reads it (a function body, or the module's top level): its factories,
    the names that may hold them, and the values they may meet."""

    def __init__(
        self, body: list[ast.stmt], function: ast.FunctionDef | ast.AsyncFunctionDef | None, imports: ImportTable,
        values: tuple[KindAt, NonTensors], callables: set[str], models: _ModelParameters,
        helpers: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
        feeders: tuple[dict[str, frozenset[str]], frozenset[str], frozenset[str]] = ({}, frozenset(), frozenset()),
        layers: _TensorLayerAttributes | frozenset[str] = frozenset(),
        imported_helper: Callable[[str], bool] = lambda name: False,
        receiver_kind: Kind | None = None,
        imported_meets: Callable[[str], bool] = lambda name: False,
        gives_back_moves: Callable[[str], bool] = lambda name: False,
        imported_methods: Callable[[str], frozenset[str]] = lambda name: frozenset(),
        returns_tensors: Callable[[str], bool] = lambda name: True,
    ) -> None:
        """`values`: what the value analysis says of a name where read, and of the names of some
        lines; `models`: the parameters that may hold a model every caller moved (`_Callers`);
        `receiver_kind`: the kind of a method's first parameter (`_receiver_kinds`)."""
        self.imports, self.callables = imports, callables
        self.kind_at, self._non_tensors = values
        self.function = function
        self.parameters = [] if function is None else parameters(function)
        self.parameter_names = {argument.arg for argument in self.parameters}
        self._transforms_imported = imports.imports_any(("torchvision",))
        self.models = models
        self.helpers = helpers  # the file's top-level functions: a CPU-tensor helper is one of them
        # the methods of the file's classes (`model.generate(ids)` may feed a layer), its functions
        # that call a model the top level moved (`select_action(state)`), and the names it moves
        self.class_methods, self.model_feeders, self.top_level_moves = feeders
        self.layers = layers  # `self.<layer>` attributes of single-tensor torch.nn layers
        self.imported_helper = imported_helper  # an imported function of the project that returns CPU tensors
        self.imported_meets = imported_meets  # an imported function of the project whose parameters meet
        self.imported_methods = imported_methods  # the methods of a class imported from the project
        self.returns_tensors = returns_tensors  # a function of the file whose every return is a tensor
        self.gives_back_moves = gives_back_moves  # `model = build_model(device)` holds a moved model
        self.nodes = list(scope_nodes(body, (*FUNCTIONS, ast.ClassDef)))  # lambdas are in
        # `self` of a Module's method is no tensor: known without the value analysis, unless rebound here
        self.receiver = self.parameters[0].arg if receiver_kind is not None and receiver_kind.is_known_non_tensor else None
        self.plain_method = receiver_kind is not None and receiver_kind is not Kind.MODULE  # DF004's object modules are a plain class's
        self.evidenced: set[str] = set()
        self.module_outputs: set[str] = set()
        self.parameter_outputs: dict[str, str] = {}  # names bound to the output of a call of a parameter → the parameter
        self.moved: dict[str, list[int]] = {}  # names the scope moves (`x.to(device)`, `x = y.cuda()`) → lines
        self._moved_computed = False
        self._host_bound: dict[tuple[str, int, int], bool] = {}  # `_may_be_bound_on_the_host`'s answers
        self._name_sources: dict[tuple[str, int], list[int]] = {}
        self._host_helpers: dict[str, bool] = {}

    def has_meeting(self) -> bool:
        calls = [node for node in self.nodes if isinstance(node, ast.Call)]
        if self._feeds_a_moved_callable(calls) or self._gives_a_helper_placed_and_host_values(calls):
            return True
        if any(_copies_to_the_host(call) for call in calls) and (
                any(self._joins_a_host_copy(call) for call in calls) or any(_meets_a_host_copy(node) for node in self.nodes)):
            return True  # no factory needed: the copy, or what meets it, moves
        if not any(self._is_source_call(call) for call in calls) and not self._calls_a_helper(calls):
            return False
        self._list_moves()
        self._find_tensor_evidence()
        return any(self._meets(node) for node in self.nodes)

    def _list_moves(self) -> None:
        """`self.moved`, listed once a scope, when first asked for."""
        if not self._moved_computed:
            self.moved, self._moved_computed = _moved_lines(self.nodes, self.bindings), True

    def _calls_a_helper(self, calls: list[ast.Call]) -> bool:
        """A top-level function of the file is called here: its result may be a CPU tensor."""
        discarded = {id(node.value) for node in self.nodes if isinstance(node, ast.Expr)}  # `log(...)`: its result meets nothing
        return any(
            isinstance(call.func, ast.Name) and (call.func.id in self.helpers or (id(call) not in discarded and self._is_helper(call.func.id)))
            for call in calls
        )

    def _is_helper(self, name: str) -> bool:
        return name in self.helpers or (name in self.imports.names and self.imported_helper(name))

    def _feeds_a_moved_callable(self, calls: list[ast.Call]) -> bool:
        """`model(img)` where `model` moved in this scope, or is a parameter every caller passes a
        moved model for, and `img` is a local that may be made on the host (DF004's
        `_feed_host_tensors`: a CPU-tensor helper's result, or built from literals, numpy values
        and CPU factories), factory or not."""
        moved = {call.func.value.id for call in calls if _is_move_of_a_name(call, self.imports)}
        for node in self.nodes:  # `model = Net().to(device)`, `model = build_model(device)`
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and (
                    (isinstance(node.value.func, ast.Attribute) and node.value.func.attr in ("to", "cuda"))
                    or _gives_back_a_move(node.value, self.gives_back_moves)):
                moved.update(target.id for target in node.targets if isinstance(target, ast.Name))
        if self.function is not None:  # a model the top level moved, read here (DF004's `global_models`)
            moved.update(name for name in self.top_level_moves if not _binds(self.nodes, name))
        builders = set(self.helpers) | {  # `from models import build_ensemble`, a function of the project giving back moves
            node.value.func.id for node in self.nodes if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id not in self.helpers and self.gives_back_moves(node.value.func.id)}
        moved |= _elements_of_moved_lists(self.nodes, builders)  # `for m in members` of `members = [Net().to(device) ...]`
        fed = [call for call in calls if isinstance(call.func, ast.Name) and (
            call.func.id in moved or (self._given_host_values(call) and (
                call.func.id in self.models or self._compiled_from(call.func.id, call.lineno) in self.models)))]
        methods = [call for call in calls if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
                   and (call.func.value.id in moved or call.func.value.id in self.models.known)
                   and (call.func.attr in self._methods_of(call.func.value.id, call.lineno)
                        or call.func.attr == "generate" and self._holds_a_pretrained_model(call.func.value.id, call.lineno))]  # `_feed_method`
        methods += [call for call in calls if isinstance(call.func, ast.Name) and call.func.id in self.model_feeders]  # `_feed_function`
        if not fed and not methods:
            return False
        method_arguments = [(call, arg) for call in methods for arg in [*call.args, *(keyword.value for keyword in call.keywords)]]
        return any(self._given_host_values(call) for call in fed) or any(
            isinstance(arg, ast.Name) and self._may_be_bound_on_the_host(arg.id, call.lineno, 0) for call, arg in method_arguments
        ) or any(isinstance(arg, ast.Call) and self._is_source_call(arg) for _, arg in method_arguments)

    def _given_host_values(self, call: ast.Call) -> bool:
        """An argument is a local that may be made on the host, or a method of one (`model(sample.unsqueeze(0))`),
        one unpacked (`model(**batch)`), or an item of a tuple or list display (`lstm(x, (h, c))`)."""
        unpacked = [keyword.value for keyword in call.keywords if keyword.arg is None]
        items = [item for arg in call.args if isinstance(arg, (ast.Tuple, ast.List)) for item in arg.elts]  # `lstm(x, (h, c))`
        return any(
            (isinstance(arg, ast.Name) and self._may_be_bound_on_the_host(arg.id, call.lineno, 0))
            or ((root := _method_receiver(arg)) is not None and self._may_be_bound_on_the_host(root.id, call.lineno, 0))
            for arg in [*call.args, *unpacked, *items]
        )

    def _methods_of(self, name: str, line: int) -> frozenset[str]:
        """The methods of the file's class `name` holds at `line`; for a parameter of no known
        class, those of every class of the file (DF004's `_class_of` also takes the class its
        callers pass: `sample(model, 4)` with `model = VAE().to(device)`)."""
        owner = self._class_of(name, line)
        if owner is not None:
            return self.class_methods[owner]
        imported = self._class_of(name, line, known=self.imports.names)  # `model = VAE().to(device)`, `from model import VAE`
        if imported is not None:
            return self.imported_methods(imported)
        return frozenset().union(*self.class_methods.values()) if name in self.parameter_names else frozenset()

    def _compiled_from(self, name: str, line: int) -> str:
        """`mjit = torch.jit.script(model)` (or `torch.compile(model)`): the name of the model the
        latest binding of `name` before `line` compiles, else ""."""
        earlier = [(bound, value) for bound, value in self.bindings.get(name, ()) if bound < line]
        value = max(earlier, key=lambda pair: pair[0])[1] if earlier else None
        if isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Name) \
                and self.imports.qualify(value.func) in MODULE_COMPILERS:
            return value.args[0].id
        return ""

    def _values_held(self, name: str, line: int, depth: int = 0) -> Iterator[ast.expr]:
        """What the earlier bindings of `name` build, moves unwrapped and names followed (`m =
        model.to(device)` after `model = Bigram(vocab)` → `Bigram(vocab)`), as DF004 follows them."""
        for bound, value in self.bindings.get(name, ()):
            if bound >= line:
                continue
            while _may_move(value):
                value = value.func.value
            if isinstance(value, ast.Name):
                if depth < 4:
                    yield from self._values_held(value.id, bound, depth + 1)
            else:
                yield value

    def _holds_a_pretrained_model(self, name: str, line: int) -> bool:
        """`model = AutoModelForCausalLM.from_pretrained(...)`, a class of transformers, is what
        some earlier binding of `name` holds (DF004's `_holds_a_pretrained_model`)."""
        return any(
            isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "from_pretrained"
            and (self.imports.qualify(value.func.value) or "").startswith("transformers.")
            for value in self._values_held(name, line)
        )

    def _class_of(self, name: str, line: int, known=None) -> str | None:
        """A class of the file (of `known` names) some earlier binding of `name` builds (`m =
        model.to(device)` after `model = Bigram(vocab)`), as DF004's `_class_of` follows it."""
        known = self.class_methods if known is None else known
        for value in self._values_held(name, line):
            found = value.func.id if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else None
            if found in known:
                return found
        return None

    def _gives_a_helper_placed_and_host_values(self, calls: list[ast.Call]) -> bool:
        """`train_step(model, masks.to(device), weights)`: a function of the file, or of the project
        one that puts its parameters together, given a moved value beside one that may be built
        from factories or a CPU-tensor helper (DF004's `_meet_in_function` and
        `_feed_model_argument`; whether the function combines the two is for the rule)."""
        for call in calls:
            if not (isinstance(call.func, ast.Name) and (call.func.id in self.helpers or call.func.id in self.imports.names)):
                continue
            arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
            if not any(self._may_be_placed(argument, call.lineno) for argument in arguments):
                continue
            if any(isinstance(argument, (ast.Name, ast.Call, ast.Subscript)) and self._has_sources(argument, call.lineno) for argument in arguments):
                # what DF004 would place: factories, or a CPU-tensor helper's result (for a function of
                # another file, one that puts its parameters together: `evaluate(model, xs)`)
                if call.func.id in self.helpers or self.imported_meets(call.func.id):
                    return True
        return False

    def _may_be_placed(self, argument: ast.expr, line: int, depth: int = 0) -> bool:
        """A move (`x.to(device)`), or a name moved earlier, or one some earlier binding computes
        with a move, a `device=`, a call of a name the scope moves or of a function that gives back
        a move, or with a name bound to a move before it (`outputs = self.model(inputs)` after
        `inputs = x.to(device)`): DF004's `_placed_devices` and `_move_of` over-approximated."""
        if _may_move(argument):
            return True
        if not isinstance(argument, ast.Name):
            return False
        self._list_moves()
        moved = self.moved
        if any(at < line for at in moved.get(argument.id, ())):
            return True  # `model.to(device)` as a statement
        return any(
            value is not None and any(
                _may_move(node) or _gives_back_a_move(node, self.gives_back_moves) or (isinstance(node, ast.Call) and (
                    any(keyword.arg == "device" for keyword in node.keywords) or (isinstance(node.func, ast.Name) and node.func.id in moved)))
                or (depth == 0 and isinstance(node, ast.Name) and node.id != argument.id and self._may_be_placed(node, bound, 1))
                for node in every_node(value)
            )
            for bound, value in self.bindings.get(argument.id, ()) if bound < line
        )

    def _may_be_bound_on_the_host(self, name: str, line: int, depth: int) -> bool:
        """Some earlier binding may be made on the host; not a container literal, which the rule
        does not trust (it may be filled later). A loop target may, when what the loop runs over may
        be (DF004's `for sample in samples`, `samples` a comprehension of CPU tensors). Asked once
        per name, line and depth: a name rebound from itself many times (`latents = ...latents...`)
        would otherwise be explored along every path."""
        key = (name, line, depth)
        if key not in self._host_bound:
            self._host_bound[key] = False  # a cycle through names ends here
            self._host_bound[key] = any(
                (value is not None and not isinstance(value, (ast.List, ast.Tuple, ast.Dict)) and self._may_be_host_made(value, bound, depth))
                or (value is None and any(self._may_be_host_made(loop.iter, bound, depth) for loop in self._loops_binding(name, bound)))
                or (isinstance(value, ast.List) and not value.elts and self._may_be_filled_on_the_host(name, depth))
                for bound, value in self.bindings.get(name, ()) if bound < line
            )
        return self._host_bound[key]

    @cached_property
    def _number_parameters(self) -> frozenset[str]:
        """Parameters that may be Python numbers where the rule's value analysis proves them so,
        read without it (it costs the whole file): one given as one of several sizes (`k` of
        `torch.ones(c, 1, k, k) / k ** 2`), or one with a number default (`stride=8`, which the
        calls may leave as it is)."""
        if self.function is None:
            return frozenset()
        arguments = self.function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
                 *((argument, default) for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is not None)]
        defaults = {argument.arg for argument, default in pairs if is_number_literal(default)}
        return frozenset(defaults | size_parameters(self.nodes, self.imports, self.parameter_names))

    def _may_be_filled_on_the_host(self, name: str, depth: int) -> bool:
        """`anchors = []` filled by `anchors.append(...)` of values that may be made on the host (the
        rule's `host_made` proves an empty list filled only so a host list)."""
        filled = self.appended.get(name, ())
        return bool(filled) and all(self._may_be_host_made(value, at, depth + 1) for at, value in filled)

    def _in_a_loop(self, line: int) -> bool:
        """A `for` or `while` of the scope runs `line` again."""
        return any(isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and node.lineno <= line <= node.end_lineno for node in self.nodes)

    def _loops_binding(self, name: str, line: int) -> list[ast.For | ast.AsyncFor]:
        return [node for node in self.nodes if isinstance(node, (ast.For, ast.AsyncFor)) and node.lineno == line
                and isinstance(node.target, ast.Name) and node.target.id == name]

    def _may_be_host_made(self, value: ast.expr, line: int, depth: int, host_names: frozenset[str] = frozenset()) -> bool:
        """DF004's `_host_made`, over-approximated: each of its branches is taken when it may apply
        (any earlier binding of a name, not only the latest; any top-level function as a helper)."""
        if depth > HOST_MADE_DEPTH:
            return False
        again = lambda inner: self._may_be_host_made(inner, line, depth + 1, host_names)
        chained = lambda inner: self._may_be_host_made(inner, line, depth, host_names)  # a part of the same expression, as `host_made` reads it
        if isinstance(value, ast.Constant):
            return True
        if isinstance(value, (ast.List, ast.Tuple)):
            return all(chained(element.value if isinstance(element, ast.Starred) else element) for element in value.elts)
        if isinstance(value, (ast.Name, ast.Attribute)) and is_library_constant(self.imports.qualify(value) or ""):
            return True  # `np.float32`, `torch.long`
        if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
            for generator in value.generators:
                if not self._may_be_host_made(generator.iter, line, depth + 1, host_names):
                    return False
                host_names |= {node.id for node in every_node(generator.target) if isinstance(node, ast.Name)}
            return self._may_be_host_made(value.elt, line, depth + 1, host_names)
        if isinstance(value, ast.Name):
            return value.id in host_names or self._may_be_bound_on_the_host(value.id, line, depth + 1) \
                or (value.id in self._number_parameters and latest_binding(self.bindings, value.id, line) is None)
        if isinstance(value, (ast.Subscript, ast.Attribute)):
            return chained(value.value)
        if isinstance(value, ast.BinOp):
            return chained(value.left) and chained(value.right)
        if isinstance(value, ast.UnaryOp):
            return chained(value.operand)
        if isinstance(value, ast.Compare):
            return all(chained(operand) for operand in [value.left, *value.comparators])
        if not isinstance(value, ast.Call):
            return False
        qualified = self.imports.qualify(value.func) or ""
        if qualified in FACTORY_FUNCTIONS or qualified in MOVED_AFTER or qualified.startswith(("numpy.", "torchvision.datasets.", "PIL.")):
            return True
        if isinstance(value.func, ast.Name) and value.func.id in NUMBER_BUILTINS:
            return True  # `float(s)`: a Python number (a name rebinding it may shadow it: an over-approximation)
        if isinstance(value.func, ast.Name) and self._is_helper(value.func.id):
            return True  # a function of the file, or one of the project that returns CPU tensors (or a tuple of them)
        if isinstance(value.func, ast.Name) and (self._transforms_imported or value.func.id in self.parameter_names) \
                and self.kind_at(value.func) is Kind.IMAGE_TRANSFORM:
            # `transform(image)` of a `Compose([..., ToTensor()])`: built where torchvision is imported, or
            # given by callers (the value analysis, the dearest fact, only then)
            return True
        positional = [arg for arg in value.args if not isinstance(arg, ast.Starred)]
        if isinstance(value.func, ast.Attribute) and not qualified.startswith("torch."):  # a method of a value
            if is_cast(value, self.imports):
                return chained(value.func.value)
            return value.func.attr not in DEVICE_CHANGING_METHODS and chained(value.func.value) and all(again(arg) for arg in positional)
        return bool(positional) and all(again(arg) for arg in positional)

    @cached_property
    def bindings(self) -> dict[str, list[Binding]]:
        """The scope's bindings, as `analysis.placement` records them (`ast_nodes.scope_bindings`)."""
        return scope_bindings(self.nodes)

    @cached_property
    def appended(self) -> dict[str, list[tuple[int, ast.expr]]]:
        """`name.append(v)` and `name.extend(v)` of the scope: name → (line, v) (`PlacementFacts.appended`)."""
        found: dict[str, list[tuple[int, ast.expr]]] = {}
        for node in self.nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LIST_FILLERS \
                    and isinstance(node.func.value, ast.Name) and len(node.args) == 1 and not node.keywords:
                found.setdefault(node.func.value.id, []).append((node.lineno, node.args[0]))
        return found

    @cached_property
    def elements(self) -> dict[str, list[tuple[int, ast.expr]]]:
        """Loop targets bound to elements of a value (`ast_nodes.loop_elements`)."""
        return loop_elements(self.nodes)

    @cached_property
    def vetoed(self) -> set[str]:
        """DF004's `vetoed`: names the value analysis reads somewhere in the scope as a proven
        non-tensor (the rule's scope also holds a `def`'s decorators: it may veto more, never less)."""
        if self.function is None:
            return self._non_tensors(1, 1 << 30)
        return self._non_tensors(self.function.lineno, self.function.end_lineno or self.function.lineno)

    def _sources_of_name(self, name: str, line: int, through_helpers: bool = True) -> list[int]:
        """What `name` holds where read on `line`: its latest binding on an earlier line (moves in
        between are not looked at: that only adds sources)."""
        key = (name, line, through_helpers)
        if key not in self._name_sources:
            self._name_sources[key] = []
            latest = latest_binding(self.bindings, name, line)
            if latest is not None and latest[1] is not None and line <= (latest[1].end_lineno or 0):
                latest = latest_binding(self.bindings, name, latest[0])  # read inside the statement that rebinds it
            if latest is not None and latest[1] is None:
                self._name_sources[key] = self._row_source_lines(name, latest[0], through_helpers)
            elif latest is not None and isinstance(latest[1], ast.List) and not latest[1].elts:
                # DF004's `_appended_sources`: `layer_of = []`, then `layer_of.append(torch.ones(n) * i)`
                self._name_sources[key] = [source for appended_line, value in self.appended.get(name, ())
                                           if latest[0] < appended_line < line
                                           for source in self._source_lines(value, appended_line, through_helpers)]
            else:
                self._name_sources[key] = [] if latest is None else self._source_lines(latest[1], latest[0], through_helpers)
        return self._name_sources[key]

    def _row_source_lines(self, name: str, line: int, through_helpers: bool) -> list[int]:
        """DF004's `_row_sources`: `name` unpacked by the loop of `line` (`for tokens, score in
        beams:`) from the rows of a list display or comprehension of tuples (bound before it), or
        bound to each whole row (`for bias in [torch.zeros(n), torch.ones(n)]`)."""
        for loop in (node for node in self.nodes if isinstance(node, (ast.For, ast.AsyncFor)) and node.lineno == line):
            whole = isinstance(loop.target, ast.Name) and loop.target.id == name
            if not (whole or isinstance(loop.target, (ast.Tuple, ast.List))):
                continue
            rows, at = loop.iter, line
            if isinstance(rows, ast.Name):
                bound = latest_binding(self.bindings, rows.id, line)
                rows, at = (bound[1], bound[0]) if bound is not None else (None, line)
            items = [rows.elt] if isinstance(rows, ast.ListComp) else rows.elts if isinstance(rows, (ast.List, ast.Tuple) if whole else ast.List) else []
            if whole:
                return [found for item in items for found in self._source_lines(item, at, through_helpers)]
            positions = [index for index, element in enumerate(loop.target.elts) if isinstance(element, ast.Name) and element.id == name]
            if not positions or not items:
                continue
            items = [item.elts[positions[0]] for item in items if isinstance(item, ast.Tuple) and len(item.elts) > positions[0]]
            return [found for item in items for found in self._source_lines(item, at, through_helpers)]
        return []

    def _helper_binding(self, name: ast.Name, line: int) -> int | None:
        """DF004's `mask = subsequent_mask(n)`: the line of the binding, when `name` is proven a
        tensor where read and its latest binding before `line` calls a top-level function of the
        file whose returns may all be made on the host."""
        latest = latest_binding(self.bindings, name.id, line)
        value = None if latest is None else latest[1]
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id not in self.helpers \
                and self._is_helper(value.func.id) and len(self.bindings.get(name.id, ())) == 1:
            return latest[0]  # `mask = causal_mask(n)` of a helper of another file, proven to return a CPU tensor
        called = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and self._may_return_host_tensors(value.func.id)
        return latest[0] if called and self.kind_at(name) is Kind.TENSOR else None  # the value analysis last: it costs

    def _may_return_host_tensors(self, helper: str) -> bool:
        """DF004's `returns_cpu_tensors`, over-approximated: every `return` of the top-level
        function may be made on the host, read in the function's own scope."""
        if helper not in self._host_helpers:
            self._host_helpers[helper] = self._judge_helper(helper)
        return self._host_helpers[helper]

    def _judge_helper(self, helper: str) -> bool:
        function = self.helpers.get(helper)
        if function is None or not self.returns_tensors(helper):
            return False  # `_compute_padding(...)` giving back a list of ints is no CPU tensor
        returns = [node for node in scope_nodes(function.body, (*FUNCTIONS, ast.ClassDef)) if isinstance(node, ast.Return)]
        values = (self.kind_at, self._non_tensors)
        scope = _Scope(function.body, function, self.imports, values, self.callables, set(), self.helpers)
        return bool(returns) and all(node.value is not None and scope._may_be_host_made(node.value, node.lineno, 0) for node in returns)

    def _moved_since_bound(self, name: str, line: int) -> bool:
        """A move of `name` between its latest binding before `line` and `line` (DF004 then no
        longer takes it for a fresh tensor there)."""
        latest = latest_binding(self.bindings, name, line)
        return any((latest is None or latest[0] < moved) and moved < line for moved in self.moved.get(name, ()))

    def _find_tensor_evidence(self) -> None:
        """What DF004's usage evidence (`analysis.tensors.tensor_names`) may count as a tensor: a
        tensor-only member (`x.device`, `x.unsqueeze`), the first argument of a torch op, an
        annotated parameter, and names assigned from torch calls or from those (a superset)."""
        evidenced = self.evidenced
        evidenced.update(argument.arg for argument in self.parameters if self._annotated_as_tensor(argument.annotation))
        assignments = []
        for node in self.nodes:
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in TENSOR_ONLY_MEMBERS:
                evidenced.add(node.value.id)
            elif isinstance(node, ast.Call) and node.args:
                qualified = self.imports.qualify(node.func)
                if qualified is not None and is_torch_tensor_function({qualified}) and qualified not in FACTORY_FUNCTIONS:
                    evidenced.update(operand_names(node.args[0]))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [name for target in targets for name in bound_names(target)]
                assignments.append((names, node.value))
                if self._is_module_output(node.value):
                    self.module_outputs.update(names)  # `vectors = embedding(ids)`, `preds = model(x).argmax(1)`
                elif isinstance(called := _call_of_chain(node.value), ast.Call) and isinstance(model := _called_object(called.func), ast.Name) \
                        and model.id in self.parameter_names:
                    # `pred = model(x).argmax(1)`, `logp = decoder.step(h)`: `model`, `decoder` given
                    self.parameter_outputs.update(dict.fromkeys(names, model.id))
        changed = True
        while changed:  # `sim = z1 @ z2.T / tau`: what is computed from tensors is a tensor
            changed = False
            for names, value in assignments:
                if set(names) - evidenced and self._may_be_tensor_expression(value):
                    evidenced.update(names)
                    changed = True

    def _is_module_output(self, value: ast.expr) -> bool:
        """DF004's `_holds_module_output`: a call of a name that may be a Module, or a tensor method
        of one (`model(x).argmax(1)`)."""
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in TENSOR_TO_TENSOR_METHODS:
            value = value.func.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name) \
                and value.func.value.id == "self" and (value.func.attr in self.layers or self.plain_method):
            return True  # `logits = self.proj(x)`; `out = self.model(x)` of a plain class keeping a model
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in self.callables

    def _annotated_as_tensor(self, annotation: ast.expr | None) -> bool:
        """`x: torch.Tensor` (however imported), as `analysis.tensors.tensor_names` reads annotations."""
        if annotation is None:
            return False
        return self.imports.qualify(annotation) in TENSOR_ANNOTATIONS or ast.unparse(annotation) in TENSOR_ANNOTATIONS

    def _may_be_tensor_expression(self, value: ast.expr) -> bool:
        """`analysis.tensors.is_tensor_expression` over the names evidenced so far: a torch op,
        arithmetic or a tensor method on them (`n = x.shape[0]` is a number, not evidence)."""
        if isinstance(value, ast.Name):
            return value.id in self.evidenced
        if isinstance(value, ast.BinOp):
            return self._may_be_tensor_expression(value.left) or self._may_be_tensor_expression(value.right)
        if isinstance(value, ast.Compare):
            return any(self._may_be_tensor_expression(operand) for operand in [value.left, *value.comparators])
        if isinstance(value, ast.UnaryOp) and not isinstance(value.op, ast.Not):
            return self._may_be_tensor_expression(value.operand)
        if isinstance(value, ast.Attribute) and value.attr in ("T", "mT", "data", "grad"):
            return self._may_be_tensor_expression(value.value)
        if isinstance(value, ast.Subscript):
            return self._may_be_tensor_expression(value.value)
        if isinstance(value, ast.Call):
            qualified = self.imports.qualify(value.func)
            if qualified is not None and qualified.startswith("torch."):
                return is_torch_tensor_function({qualified})
            if isinstance(value.func, ast.Attribute) and value.func.attr not in NON_TENSOR_METHODS:
                return self._may_be_tensor_expression(value.func.value)
        return False

    def _is_source_call(self, call: ast.Call) -> bool:
        if may_name_a_device(call):
            return False
        qualified = self.imports.qualify(call.func) or ""
        return qualified in FACTORY_FUNCTIONS or qualified in MOVED_AFTER

    def _has_sources(self, node: ast.AST | None, before_line: int | None = None) -> bool:
        return bool(self._source_lines(node, before_line))

    def _source_lines(self, node: ast.AST | None, before_line: int | None = None, through_helpers: bool = True) -> list[int]:
        """The lines of the factory calls without a device that the value may be built from
        (DF004's `_sources`); names in it are read as on `before_line` (the line of the assignment
        that holds it). `through_helpers`: also the calls of helpers that may return CPU tensors."""
        if node is None:
            return []
        if isinstance(node, ast.Name):
            line = before_line if before_line is not None else node.lineno
            helper = self._helper_binding(node, line) if through_helpers else None
            return [helper] if helper is not None else self._sources_of_name(node.id, line, through_helpers)
        again = lambda inner: self._source_lines(inner, before_line, through_helpers)
        if isinstance(node, ast.Call):
            if self._is_source_call(node):
                return [node.lineno]
            elements = _elements_kept(node)
            if elements is not None:
                return again(elements)  # DF004's `_elements_kept`: `tuple(s.detach() for s in state)`
            if through_helpers and isinstance(node.func, ast.Name) and (
                    (node.func.id in self.helpers and self._may_return_host_tensors(node.func.id))  # `x + positional_encoding(n, d)`
                    or (node.func.id not in self.helpers and self._is_helper(node.func.id))):  # `causal_mask(n)` of the project
                return [node.lineno]
            qualified = self.imports.qualify(node.func) or ""
            if is_source_wrapper(qualified):
                return [line for arg in _values(node) for line in again(arg)]
            if qualified.startswith("torch."):
                return []
            if isinstance(node.func, ast.Attribute) and node.func.attr not in NOT_SOURCE_METHODS:
                return again(node.func.value)
            return []
        if isinstance(node, ast.BinOp):
            return again(node.left) + again(node.right)
        if isinstance(node, ast.UnaryOp):
            return again(node.operand)
        if isinstance(node, ast.Compare):
            return [line for operand in [node.left, *node.comparators] for line in again(operand)]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [line for element in node.elts for line in again(element)]
        if isinstance(node, ast.ListComp):  # `batches[0][0]` of a comprehension of tuples: DF004's rows
            return again(node.elt)
        if isinstance(node, (ast.Subscript, ast.Starred)):
            return again(node.value)
        return []

    def _may_reference(self, node: ast.AST | None) -> bool:
        return bool(self._reference_names(node))

    def _reference_names(self, node: ast.AST | None) -> list[str]:
        """The names in a value that may be a tensor the factory could be aligned with (DF004's
        `_reference`, every name it may return)."""
        if isinstance(node, ast.Name):
            return [node.id] if self._may_be_a_reference(node) else []
        if isinstance(node, ast.BinOp):
            return self._reference_names(node.left) + self._reference_names(node.right)
        if isinstance(node, ast.Compare):
            return [name for operand in [node.left, *node.comparators] for name in self._reference_names(operand)]
        if isinstance(node, (ast.Subscript, ast.Starred)):
            return self._reference_names(node.value)
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):  # `-dists`
            return self._reference_names(node.operand)
        if not isinstance(node, ast.Call) or (self.imports.qualify(node.func) or "") in FACTORY_FUNCTIONS:
            return []
        qualified = self.imports.qualify(node.func)
        if qualified is not None and is_torch_tensor_function({qualified}):
            first = node.args[0] if node.args else None
            if isinstance(first, (ast.List, ast.Tuple)):  # `torch.hstack([rs_pow * (rc - rs) ** -5, ...])`
                return [name for item in first.elts for name in self._reference_names(item)]
            return self._reference_names(first)
        if is_self_attribute(node.func) and node.func.attr in self.layers and node.args:
            first = node.args[0]  # `self.emb(ids)` lives with `ids`, a torch layer's input
            if isinstance(first, ast.Name) and first.id not in self.vetoed and not self._has_sources(first):
                return [first.id]
            return self._reference_names(first)
        if self.plain_method and is_self_attribute(node.func) and node.func.attr not in NON_TENSOR_METHODS | DEVICE_CHANGING_METHODS:
            # DF004's object modules: `self.q(states)` of an agent's Module lives with `states`
            return [*self._reference_names(node.func.value), *(name for value in _values(node) for name in self._reference_names(value))]
        if isinstance(node.func, ast.Attribute):
            if node.func.attr in NON_TENSOR_METHODS | DEVICE_CHANGING_METHODS and not is_cast(node, self.imports):
                return []
            return self._reference_names(node.func.value)
        if isinstance(node.func, ast.Name) and node.func.id in self.callables:
            return [name for value in _values(node) for name in self._reference_names(value)]
        return []

    def _may_be_a_reference(self, node: ast.Name) -> bool:
        if node.id in self.imports.names or (node.id == self.receiver and not self._receiver_rebound):
            return False
        if self._holds_a_factory_call(node):
            return False  # DF004 takes a name holding a fresh factory's tensor for no reference
        kind = self.kind_at(node)  # the value analysis: asked last, as it is the dearest fact
        if kind.is_known_non_tensor:
            return False
        if node.id in self.module_outputs:
            return True
        if node.id in self.parameter_outputs and self.parameter_outputs[node.id] in self.models:
            return True  # DF004's `_holds_module_output` of a model every caller moved (asked last: it may read other files)
        return (kind is Kind.TENSOR or node.id in self.evidenced) and node.id not in self.vetoed

    def _holds_a_factory_call(self, node: ast.Name) -> bool:
        """DF004 takes a name holding a fresh factory's tensor for no reference. Only the sources
        found without the file's helpers count here: `_may_return_host_tensors` over-approximates
        the rule's `returns_cpu_tensors`, and ruling a name out as a reference on it would hide a
        meeting the rule finds (`pos_embed = get_2d_sincos_pos_embed_from_grid(...)` then
        `torch.concat([torch.zeros(n, d), pos_embed])`, where the helper keeps its input's device)."""
        return bool(self._source_lines(node, through_helpers=False)) and not self._moved_since_bound(node.id, node.lineno)

    @cached_property
    def _comprehension_targets(self) -> frozenset[str]:
        return frozenset(name for node in self.nodes if isinstance(node, ast.comprehension) for name in bound_names(node.target))

    @cached_property
    def _receiver_rebound(self) -> bool:
        return self.receiver is not None and _binds(self.nodes, self.receiver)

    def _device_known(self, reference: str, line: int, depth: int = 0, meeting: int = 0) -> bool:
        """DF004's `_device_of`, over-approximated: can the rule name, for a factory call on `line`,
        the device of `reference`? Its own when it is bound on an earlier line, or is a parameter
        not rebound after `line`, or rebound only after the `meeting` line and outside any loop around
        it (a parameter rebound later is still the argument there); else that
        of a reference its first value is computed from (three hops at most), of a Module it is
        the output of, or the device its first value was moved to."""
        bound = self.bindings.get(reference, ())
        if any(binding_line < line for binding_line, _ in bound) or reference in self._comprehension_targets:
            return True  # a comprehension's variable: DF004's `_bound_by_a_comprehension_around`
        if reference in self.parameter_names and (not any(binding_line > line for binding_line, _ in bound) or (
                not self._in_a_loop(line) and not any(line < binding_line < meeting for binding_line, _ in bound))):
            return True  # rebound only after the meeting, and no loop brings that value back to it
        if any(isinstance(value, ast.Call) and is_move(value, self.imports) for _, value in bound):
            return True  # `images = images.to(device)` before it meets the factory: DF004's `_moved_where_met`
        if depth >= 3 or not bound:
            return False
        value = bound[0][1]
        if value is None:  # a loop's element: where the value it iterates is (DF004's `facts.elements`)
            value = next((element for loop_line, element in self.elements.get(reference, ()) if loop_line == bound[0][0]), None)
        if value is None:
            return False
        root = self._output_root(value)
        if isinstance(root, ast.Call) and isinstance(root.func, ast.Name):
            return True  # `out = model(x)`, `preds = model(x).argmax(1)`, `torch.tanh(model(x))`: where `model` was moved
        if isinstance(value, ast.Call) and is_move(value, self.imports):
            return True  # `y = labels.to(device)`: the device it names
        return any(source != reference and self._device_known(source, line, depth + 1, meeting) for source in self._reference_names(value))

    def _output_root(self, value: ast.expr) -> ast.expr:
        """DF004's `_model_output_within`, over-approximated: what a chain of tensor methods and
        torch functions of a first operand starts from (`model(x)` of `torch.tanh(model(x)).sum()`)."""
        root = _call_of_chain(value)
        while isinstance(root, ast.Call) and root.args and not isinstance(root.args[0], ast.Starred) \
                and (self.imports.qualify(root.func) or "").startswith("torch."):
            root = _call_of_chain(root.args[0])
        return root

    def _alignable(self, fresh: ast.AST, reference: ast.AST) -> bool:
        """DF004 aligns a factory `fresh` is built from with a reference name in `reference`."""
        names = self._reference_names(reference)
        if any(name in self.parameter_outputs and self.parameter_outputs[name] in self.models for name in names):
            return True  # what a model every caller moved returns: on its device, named from the function's start
        meeting = getattr(reference, "lineno", 0)
        return bool(names) and any(self._device_known(name, line, meeting=meeting) for line in self._source_lines(fresh) for name in names)

    def _meets(self, node: ast.AST) -> bool:
        if isinstance(node, ast.BinOp):
            return self._both([node.left, node.right]) or self._meets_a_model_output([node.left, node.right])
        if isinstance(node, ast.Compare):
            return self._both([node.left, *node.comparators])
        if isinstance(node, ast.Subscript):
            index = node.slice
            indices = index.elts if isinstance(index, ast.Tuple) else [index]
            items = [item for item in indices if not isinstance(item, ast.Slice)]
            if not self._has_sources(node.value):
                return False
            # a table of fresh tensors a later index reads: DF004's `move_late_tables` moves it there
            return any(self._alignable(node.value, item) for item in items) or (
                isinstance(node.value, ast.Name) and any(self._may_reference(item) for item in items))
        if isinstance(node, ast.Call):
            return self._call_meets(node)
        if isinstance(node, ast.AugAssign):
            # `correct += (preds == y).sum()`, `correct[c] += ...`: DF004 names the device the value was last moved to
            updated = node.target.value if isinstance(node.target, ast.Subscript) else node.target
            if not isinstance(updated, ast.Name):
                return False
            target = ast.copy_location(ast.Name(updated.id, ast.Load()), updated)
            return (self._has_sources(target) and self._may_reference(node.value)) or (
                updated is node.target and self._has_sources(node.value) and self._may_reference(target))  # not into an item
        return False

    def _call_meets(self, call: ast.Call) -> bool:
        qualified = self.imports.qualify(call.func)
        if qualified is not None and qualified.startswith(HOST_SIDE_PREFIXES):
            return False
        values = _values(call)
        values += [element for value in values if isinstance(value, (ast.List, ast.Tuple)) for element in value.elts]
        if isinstance(call.func, ast.Name) and call.func.id in self.callables:
            # fed to a Module: it goes with the Module's other inputs or where the Module moved
            return any(self._has_sources(value) for value in values)
        if isinstance(call.func, ast.Name) and any(self._has_sources(value) for value in values) and call.func.id in self.models:
            return True  # a parameter: where the callers moved it
        if isinstance(call.func, ast.Call):  # `nn.CrossEntropyLoss()(out, targets)`: a Module built where it is called
            return any(self._has_sources(value) for value in values)
        if qualified is not None and qualified.startswith("torch."):
            tensor_function = (is_torch_tensor_function({qualified}) and qualified not in FACTORY_FUNCTIONS) or qualified in MEETING_FUNCTIONS
            # `F.cross_entropy(model(xb), yb)`: DF004's `placed_by_fed_models` needs no reference
            return tensor_function and (self._both(values) or self._meets_a_model_output(values))
        if isinstance(call.func, ast.Name) and call.func.id in self.imports.names and len(values) > 1:
            # `accuracy(model(x), labels)` of another file that compares them: DF004's `_meet_in_function`
            return self._both(values) and self.imported_meets(call.func.id)
        if isinstance(call.func, ast.Attribute) and call.func.attr not in NOT_COMBINING_METHODS:
            # a tensor's method given a fresh tensor, or a fresh tensor's method given a tensor
            receiver = call.func.value  # the cheap halves first: `_may_reference` may need the value analysis
            if any(self._has_sources(value) and self._alignable(value, receiver) for value in values):
                return True
            if _layer_weight_of(receiver, self.callables) and any(self._has_sources(value) for value in values):
                return True  # `encoder.token_embedding.weight.index_select(0, ids)`: where the model moved
            return self._has_sources(receiver) and any(self._alignable(receiver, value) for value in values)
        return False

    def _joins_a_host_copy(self, call: ast.Call) -> bool:
        """DF004's `_join_host_copies`: `torch.cat([idx, next_id])` where `next_id` is bound to a
        value that copies something to the host (`torch.multinomial(probs.cpu(), 1)`) and another
        element is a name."""
        if not (call.args and isinstance(call.args[0], (ast.List, ast.Tuple)) and self.imports.qualify(call.func) in JOINS):
            return False
        values = call.args[0].elts
        copies = [value for value in values if isinstance(value, ast.Name)
                  and (bound := latest_binding(self.bindings, value.id, call.lineno)) is not None and bound[1] is not None
                  and any(_copies_to_the_host(node) for node in every_node(bound[1]))]
        return any(other is not copy and isinstance(other, ast.Name) and other.id not in self.imports.names
                   for copy in copies for other in values)  # the rule asks whether it is proven on a device

    def _meets_a_model_output(self, operands: list[ast.expr]) -> bool:
        """DF004's `model(x) * class_weights`: a fresh tensor meets the output of a call of a name
        that may hold a Module (or a tensor method of it: `model(x).argmax(1)`)."""
        outputs = [operand for operand in operands if isinstance(root := _call_of_chain(operand), ast.Call)
                   and isinstance(root.func, ast.Name) and root.func.id in self.callables]
        return bool(outputs) and any(operand not in outputs and self._has_sources(operand) for operand in operands)

    def _both(self, values: list[ast.expr]) -> bool:
        """A factory in one value and a reference in one value; not one name as both: DF004 takes a
        name holding a fresh tensor where it is read for a source, and one that is not for a reference."""
        sources = [value for value in values if self._has_sources(value)]
        if not sources:
            return False
        references = [value for value in values if self._may_reference(value)]
        return any(
            not (source is reference and isinstance(source, ast.Name)) and self._alignable(source, reference)
            for source in sources for reference in references
        )


def _meets_a_host_copy(node: ast.AST) -> bool:
    """DF004's `_meet_host_copy`: `predicted.cpu() == labels`, an operand copied to the host where
    it is used (through tensor methods) beside a name."""
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
    elif isinstance(node, ast.BinOp):
        operands = [node.left, node.right]
    else:
        return False
    return any(isinstance(operand, ast.Name) or _read_by_string(operand) for operand in operands) and any(
        isinstance(operand, ast.Call) and any(_copies_to_the_host(inner) for inner in every_node(operand))
        for operand in operands)


def _read_by_string(node: ast.AST) -> bool:
    """`batch["labels"]`: a name read by a string key."""
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
        and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)


def _copies_to_the_host(node: ast.AST) -> bool:
    """`x.cpu()`, `x.to("cpu")`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    return node.func.attr == "cpu" or (node.func.attr == "to" and any(
        isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value.startswith("cpu")
        for value in [*node.args, *(keyword.value for keyword in node.keywords)]))


def _elements_kept(call: ast.Call) -> ast.expr | None:
    """DF004's `_elements_kept`: the iterated value of `tuple(s.detach() for s in state)`, a builtin
    `tuple`/`list` of one generator whose items are its loop variable through tensor methods that
    keep the device."""
    if not (isinstance(call.func, ast.Name) and call.func.id in ("tuple", "list") and len(call.args) == 1 and not call.keywords):
        return None
    generator = call.args[0]
    if not isinstance(generator, (ast.GeneratorExp, ast.ListComp)) or len(generator.generators) != 1:
        return None
    loop = generator.generators[0]
    if loop.ifs or loop.is_async or not isinstance(loop.target, ast.Name):
        return None
    item = generator.elt
    while isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute) and item.func.attr not in CHAIN_STOPS | NOT_SOURCE_METHODS:
        item = item.func.value
    return loop.iter if isinstance(item, ast.Name) and item.id == loop.target.id else None


def _binds(nodes: list[ast.AST], name: str) -> bool:
    """Does any of a scope's nodes bind `name` (assignment, walrus, loop, `with`, `except`, import,
    `del`, a lambda's or comprehension's own variable, `global`)?"""
    for node in nodes:
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.arg) and node.arg == name or isinstance(node, ast.ExceptHandler) and node.name == name:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name.partition(".")[0]) == name:
            return True
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
    return False


def _layer_weight_of(receiver: ast.expr, callables: set[str]) -> bool:
    """`model.layer.weight` or `.bias`, for a name that may hold a Module."""
    return isinstance(receiver, ast.Attribute) and receiver.attr in ("weight", "bias") and isinstance(receiver.value, ast.Attribute) \
        and isinstance(receiver.value.value, ast.Name) and receiver.value.value.id in callables


def _values(call: ast.Call) -> list[ast.expr]:
    """Every argument's value, positional and keyword, as libcst's `Arg.value` lists them."""
    return [*call.args, *(keyword.value for keyword in call.keywords)]
