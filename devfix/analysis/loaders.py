"""DataLoader loops: a function's loops, which iterables are loaders (and whether their collate_fn
places the batches), which batch variables must move, and the statements that move them. Shared by
the rules that move batches (DF002, DF010, DF020)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import libcst as cst
from libcst.metadata import Assignment, ScopeProvider

from devfix.analysis.call_sites import arguments_for, file_functions, is_only_defined
from devfix.analysis.cst_bindings import names_in, parameter_names, variables_in
from devfix.analysis.cst_metadata import ParentProvider
from devfix.analysis.dataset_items import (
    item_taken,
    non_tensor_positions,
    non_tensor_positions_of_collate,
    non_tensor_positions_of_rows,
)
from devfix.analysis.device_scope import assigning_statement
from devfix.analysis.kinds import KNOWN_LOADERS, Kind
from devfix.analysis.module_classes import class_facts, top_level_class
from devfix.analysis.packed_lengths import packed_lengths
from devfix.analysis.parameter_meetings import parameters_meet
from devfix.analysis.placement import PlacementFacts, as_move
from devfix.analysis.torch_api import DATALOADER_NAMES, ENUMERATE_NAMES, PROGRESS_WRAPPERS, RESHAPING_METHODS
from devfix.analysis.torch_names import keyword, qualified_names


@dataclass(frozen=True)
class BatchUse:
    """A loop variable that must move, and whether it is a dict of fields."""

    name: str
    is_dict: bool


def is_dataloader(rule: cst.CSTVisitor, loader: cst.Name | cst.Call | cst.Attribute) -> bool:
    """Built with `DataLoader(...)` (where it is iterated, or where the name was bound), a
    parameter annotated as one or given one by every call of its function in the file
    (`adapt(net, source, target)` with `source = DataLoader(...)`), or a name the value analysis
    proves a DataLoader of tensors (`trainer.evaluate(loader)` for a method's parameter; `self.loader`
    of a class its callers construct with one). Never from a name: `data_loader` may be an
    accelerate-prepared or framework loader."""
    if _built_as_a_loader(rule, loader):
        return True
    scope = rule.get_metadata(ScopeProvider, loader, None) if isinstance(loader, cst.Name) else None
    for assignment in scope[loader.value] if scope is not None else ():
        node = assignment.node if isinstance(assignment, Assignment) else None
        if isinstance(node, cst.Param):
            annotated = node.annotation is not None and qualified_names(rule, node.annotation.annotation) & DATALOADER_NAMES
            if annotated or _callers_pass_loaders(rule, node):
                return True
    kind = rule.kind_of(loader)
    if kind is Kind.BATCH_LIST:
        return _rows_left_on_host(rule, loader)
    return kind in KNOWN_LOADERS


def _rows_left_on_host(rule: cst.CSTVisitor, rows: cst.BaseExpression) -> bool:
    """A list of tensor batches built in this scope from nothing placed on a device: a call of a
    function of the file given no device value (`make_batches(inputs, targets, 16)`, not
    `make_batches(x.to(device), y.to(device), 16)`), or a list written here, bound to the name
    iterated. A list that came as a parameter may hold batches its caller already placed."""
    facts = rule.scope_facts(rows)
    value = rows
    if isinstance(rows, cst.Name):
        binding = facts._binding_before(rows.value, rule.line_of(rows))
        value = binding.value if binding is not None and not binding.unpacked else None
    if isinstance(value, cst.Call):
        return isinstance(value.func, cst.Name) and not any(facts.is_device_value(arg.value) for arg in value.args)
    written = [value.elt] if isinstance(value, cst.ListComp) else [row.value for row in value.elements] if isinstance(value, cst.List) else []
    rows = [row for row in written if isinstance(row, cst.Tuple)]
    return bool(rows) and len(rows) == len(written) and not any(facts.is_device_value(part.value) for row in rows for part in row.elements)


def _built_as_a_loader(rule: cst.CSTVisitor, value: cst.BaseExpression) -> bool:
    """`DataLoader(...)`, or a name bound to one in its scope."""
    return any(qualified_names(rule, built.func) & DATALOADER_NAMES for built in _calls_bound(rule, value))


def _calls_bound(rule: cst.CSTVisitor, value: cst.BaseExpression) -> list[cst.Call]:
    """`value` itself when it is a call, else the calls its scope binds the name `value` to."""
    if isinstance(value, cst.Call):
        return [value]
    scope = rule.get_metadata(ScopeProvider, value, None) if isinstance(value, cst.Name) else None
    found = []
    for assignment in scope[value.value] if scope is not None else ():
        node = assignment.node if isinstance(assignment, Assignment) else None
        statement = assigning_statement(rule, node) if isinstance(node, cst.Name) else None
        if statement is not None and isinstance(statement.value, cst.Call):
            found.append(statement.value)
    return found


def _loads_pil_images(rule: cst.CSTVisitor, value: cst.BaseExpression) -> bool:
    """A DataLoader over a torchvision dataset that the value analysis does not prove to make image
    tensors (`transform=Resize(28)` and no `ToTensor()`): its items are PIL images, no tensors."""
    for built in _calls_bound(rule, value):
        dataset = built.args[0].value if built.args and built.args[0].keyword is None else None
        made = _calls_bound(rule, dataset) if isinstance(dataset, (cst.Name, cst.Call)) else []
        torchvision = any(name.startswith("torchvision.datasets.") for call in made for name in qualified_names(rule, call.func))
        if torchvision and not (isinstance(dataset, cst.Name) and rule.kind_of(dataset) is Kind.IMAGE_DATASET):
            return True
    return False


def _callers_pass_loaders(rule: cst.CSTVisitor, param: cst.Param) -> bool:
    """Every call of the parameter's (top-level) function passes a DataLoader for it, not one of
    PIL images (`_loads_pil_images`): the calls of the file, or, for a function the file only defines, those of the files beside it
    (`evaluate(model, DataLoader(data))` in the script that imports `helpers.evaluate`)."""
    function = _function_of(rule, param)
    if function is None:
        return False
    passed = arguments_for(rule.module, function, param.name.value)
    if passed is not None:
        return all(_built_as_a_loader(rule, value) and not _loads_pil_images(rule, value) for _, value in passed)
    if function not in rule.module.body or not is_only_defined(rule.module, function.name.value):
        return False
    params = function.params
    if param not in (*params.posonly_params, *params.params):
        return False
    position = [*params.posonly_params, *params.params].index(param)
    return rule.facts is not None and rule.facts.given_loaders_beside(function.name.value, position, param.name.value)


def loops_of(function: cst.FunctionDef) -> list[cst.For]:
    """The `for` loops of `function`, not those of functions defined inside it."""
    finder = _Loops()
    function.body.visit(finder)
    return finder.loops


class _Loops(cst.CSTVisitor):
    def __init__(self) -> None:
        self.loops: list[cst.For] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_For(self, node: cst.For) -> None:
        self.loops.append(node)


def taken_loader(rule: cst.CSTVisitor, value: cst.BaseExpression, node: cst.CSTNode) -> cst.Name | cst.Call | None:
    """`L` of a batch taken by hand: `next(iter(L))`, or `next(it)` where the scope binds `it`
    once, to `iter(L)`."""
    if not (isinstance(value, cst.Call) and len(value.args) == 1 and "builtins.next" in rule.qualified(value.func)):
        return None
    inner = value.args[0].value
    if isinstance(inner, cst.Name):
        bindings = rule.scope_facts(node).bindings.get(inner.value, [])
        inner = bindings[0].value if len(bindings) == 1 else None
    if not (isinstance(inner, cst.Call) and len(inner.args) == 1 and "builtins.iter" in rule.qualified(inner.func)):
        return None
    loader = inner.args[0].value
    return loader if isinstance(loader, (cst.Name, cst.Call)) else None


def taken_batches(function: cst.FunctionDef) -> list[tuple[cst.SimpleStatementLine, list[cst.BaseStatement]]]:
    """Each `x, y = next(...)` of `function` (not of functions inside it), with the statements
    that run after it in the function: the rest of its block, then of the blocks around it while
    those belong to a `with`, `if` or `try` (a loop's body ends where it ends)."""
    found: list[tuple[cst.SimpleStatementLine, list[cst.BaseStatement]]] = []

    def walk(statements, after: list[cst.BaseStatement]) -> None:
        for index, statement in enumerate(statements):
            rest = [*statements[index + 1:], *after]
            if isinstance(statement, cst.SimpleStatementLine) and _takes_by_hand(statement):
                found.append((statement, rest))
            elif isinstance(statement, (cst.With, cst.If, cst.Try)):
                for block in _blocks_of(statement):
                    walk(block.body, rest)
            elif isinstance(statement, (cst.For, cst.While)) and isinstance(statement.body, cst.IndentedBlock):
                walk(statement.body.body, [])

    if isinstance(function.body, cst.IndentedBlock):
        walk(function.body.body, [])
    return found


def _takes_by_hand(line: cst.SimpleStatementLine) -> bool:
    assign = line.body[0] if len(line.body) == 1 else None
    return (
        isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.value, cst.Call)
        and isinstance(assign.value.func, cst.Name) and assign.value.func.value == "next"
    )


def _blocks_of(statement: cst.With | cst.If | cst.Try) -> list[cst.IndentedBlock]:
    """The blocks a statement runs its body in: an `if`'s branches, a `try`'s body only (what
    its handlers run after is not what follows the body)."""
    blocks = [statement.body]
    if isinstance(statement, cst.If) and statement.orelse is not None:
        blocks += _blocks_of(statement.orelse) if isinstance(statement.orelse, cst.If) else [statement.orelse.body]
    return [block for block in blocks if isinstance(block, cst.IndentedBlock)]


def collate_places_batches(rule: cst.CSTVisitor, loader: cst.Name | cst.Call) -> bool:
    """`DataLoader(..., collate_fn=collate)` where `collate`, a function of this file, moves what
    it builds (`return xs.to(device), ys.to(device)`), or whose dataset's `__getitem__` moves what
    it returns, or whose `TensorDataset` holds device tensors: the batches arrive placed already.
    For a function's parameter: such a loader given by some call of the function in the file."""
    if isinstance(loader, cst.Call):
        return _places_batches(rule, loader)
    built = _built_with(rule, loader)
    if built is not None:
        return _places_batches(rule, built)
    return any(
        _places_batches(rule, value if isinstance(value, cst.Call) else _built_with(rule, value))
        for value in _given_for(rule, loader)
        if isinstance(value, (cst.Call, cst.Name))
    )


def _given_for(rule: cst.CSTVisitor, name: cst.Name) -> list[cst.BaseExpression]:
    """What the file's calls of a function pass for its parameter `name` (none for another name)."""
    scope = rule.get_metadata(ScopeProvider, name, None)
    for assignment in scope[name.value] if scope is not None else ():
        param = assignment.node if isinstance(assignment, Assignment) else None
        if isinstance(param, cst.Param):
            function = _function_of(rule, param)
            passed = arguments_for(rule.module, function, param.name.value) if function is not None else None
            return [value for _, value in passed or ()]
    return []


def _function_of(rule: cst.CSTVisitor, param: cst.Param) -> cst.FunctionDef | None:
    """The `def` whose parameter `param` is (None for a lambda's)."""
    function = rule.get_metadata(ParentProvider, rule.get_metadata(ParentProvider, param, None), None)
    return function if isinstance(function, cst.FunctionDef) else None


def _places_batches(rule: cst.CSTVisitor, built: cst.Call | None) -> bool:
    if built is None:
        return False
    if _dataset_places_items(rule, built):
        return True
    collate = keyword(built, "collate_fn")
    if collate is None or not isinstance(collate.value, cst.Name):
        return False
    functions = [node for node in rule.module.body if isinstance(node, cst.FunctionDef) and node.name.value == collate.value.value]
    finder = _Moves(rule.qualified)
    for function in functions:
        function.body.visit(finder)
    return finder.found


def _dataset_places_items(rule: cst.CSTVisitor, built: cst.Call) -> bool:
    """`DataLoader(Points(...))` (or a name bound to `Points(...)`) where `Points`, a class of this
    file, moves what its `__getitem__` returns (`return self.x[i].to(device)`), or keeps its tensors
    on the device (also a class of another file of the project); or a `TensorDataset` of tensors all
    on the device."""
    given = built.args[0] if built.args and built.args[0].keyword is None else keyword(built, "dataset")
    dataset = given.value if given is not None else None
    if isinstance(dataset, cst.Name):
        dataset = _built_with(rule, dataset) or _reaching_construction(rule, dataset)
    if isinstance(dataset, cst.Call) and "torch.utils.data.TensorDataset" in rule.qualified(dataset.func) and dataset.args:
        # `TensorDataset(x.to(device), y.to(device))`: its items are slices of device tensors
        facts = rule.scope_facts(dataset)
        return all(arg.keyword is None and not arg.star and facts.is_device_value(arg.value) for arg in dataset.args)
    if not (isinstance(dataset, cst.Call) and isinstance(dataset.func, cst.Name)):
        return False
    finder = _Moves(rule.qualified)
    local = False
    for node in rule.module.body:
        if isinstance(node, cst.ClassDef) and node.name.value == dataset.func.value:
            local = True
            for item in node.body.body:
                if isinstance(item, cst.FunctionDef) and item.name.value == "__getitem__":
                    item.body.visit(finder)
            if resident_tensors(node, rule.qualified, rule.line_of):
                return True  # `self.X = torch.tensor(X).to(device)` in `__init__`, read by `__getitem__`
    project = getattr(rule, "project", None)
    if not local and project is not None and any(
            project.imported_dataset_keeps_device_tensors(rule.context.filename or "<memory>", name) for name in rule.qualified(dataset.func)):
        return True  # the same, in a class of another file of the project (instafilter's `ColorizedDataset`)
    return finder.found


def resident_tensors(dataset_class: cst.ClassDef, qualified, line_of) -> list[tuple[str, cst.Call]]:
    """(attribute, move) for each `self.<attribute> = <value>` of the class's `__init__` whose value
    moves (`torch.tensor(X).to(device)`) and that its `__getitem__` reads: a dataset whose items
    are already on the device."""
    facts = class_facts(dataset_class, line_of)
    if "__init__" not in facts.methods or "__getitem__" not in facts.methods:
        return []
    found = []
    for name, use in facts.attributes.items():
        if "__getitem__" not in use.read_in:
            continue
        for method, statement in use.assignments:
            if method == "__init__" and len(statement.targets) == 1:
                moves = _Moves(qualified)
                statement.value.visit(moves)
                if moves.calls:
                    found.append((name, moves.calls[0]))
    return found


def non_tensor_positions_of(rule: cst.CSTVisitor, loader: cst.BaseExpression) -> frozenset[int | str]:
    """The positions (or keys) of the loader's batches that hold no tensor, strings or lists
    (`analysis.dataset_items`): of a DataLoader built here or bound once to a name, or of any the
    file's calls give a parameter."""
    if isinstance(loader, cst.Call):
        built = [loader]
    elif isinstance(loader, cst.Name):
        bound = _built_with(rule, loader)
        built = [bound] if bound is not None else [
            value if isinstance(value, cst.Call) else _built_with(rule, value)
            for value in _given_for(rule, loader) if isinstance(value, (cst.Call, cst.Name))
        ]
    else:
        return frozenset()
    return frozenset(position for call in built for position in _dataset_non_tensors(rule, call))


def _dataset_non_tensors(rule: cst.CSTVisitor, built: cst.Call | None) -> frozenset[int | str]:
    """What the DataLoader call `built` loads with the default collate: an instance of a class of
    the file (`DataLoader(Captions(...), batch_size=4)`, its `__getitem__`), or a list of rows
    (`DataLoader(list(zip(texts, labels)))`): the positions of its items that collate into no tensor;
    with a `collate_fn` of the file, the positions of what it returns that are no tensor."""
    if built is None:
        return frozenset()
    collate = keyword(built, "collate_fn")
    if collate is not None:  # a function of the file: what it returns
        function = file_functions(rule.module).get(collate.value.value) if isinstance(collate.value, cst.Name) else None
        return non_tensor_positions_of_collate(function)
    given = built.args[0] if built.args and built.args[0].keyword is None else keyword(built, "dataset")
    dataset = given.value if given is not None else None
    if isinstance(dataset, cst.Name):
        dataset = _bound_value(rule, dataset)
    if isinstance(dataset, cst.Call) and isinstance(dataset.func, cst.Name) and dataset.func.value not in ("list", "zip"):
        return non_tensor_positions(top_level_class(rule.module, dataset.func.value))
    return non_tensor_positions_of_rows(dataset, lambda name: _bound_value(rule, name))


def _bound_value(rule: cst.CSTVisitor, name: cst.Name) -> cst.BaseExpression | None:
    """The value a name is bound to by its only binding in the scope (a plain assignment)."""
    scope = rule.get_metadata(ScopeProvider, name, None)
    assignments = [a for a in scope[name.value] if isinstance(a, Assignment)] if scope is not None else []
    if len(assignments) != 1 or not isinstance(assignments[0].node, cst.Name):
        return None
    statement = assigning_statement(rule, assignments[0].node)
    return statement.value if statement is not None else None


def _reaching_construction(rule: cst.CSTVisitor, name: cst.Name) -> cst.Call | None:
    """The call bound to `name` last before it is read, outside any loop (instafilter's `data =
    ColorizedDataset(...)`, handed to `DataLoader(data)`, then `for data, target in loader:`)."""
    current = rule.get_metadata(ParentProvider, name, None)
    while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
        if isinstance(current, (cst.For, cst.While)):
            return None
        current = rule.get_metadata(ParentProvider, current, None)
    binding = rule.scope_facts(name)._binding_before(name.value, rule.line_of(name)) if hasattr(rule, "scope_facts") else None
    return binding.value if binding is not None and isinstance(binding.value, cst.Call) else None


def _built_with(rule: cst.CSTVisitor, loader: cst.Name) -> cst.Call | None:
    """The `DataLoader(...)` call a name was bound to (its only binding in the scope)."""
    value = _bound_value(rule, loader)
    return value if isinstance(value, cst.Call) else None


def calls_a_move(value: cst.CSTNode, qualified) -> bool:
    """Some move (`.to(device)`, `.cuda()`: `placement.as_move`) inside `value`."""
    finder = _Moves(qualified)
    value.visit(finder)
    return finder.found


class _Moves(cst.CSTVisitor):
    """The moves under a node: `found` any, `calls` the `.to(...)`/`.cuda()` calls themselves."""

    def __init__(self, qualified) -> None:
        self.qualified, self.found = qualified, False
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        move = as_move(node, self.qualified)
        if move is not None:
            self.found = True
            if move.call is node:
                self.calls.append(node)


def unwrap_loader(
    node: cst.For, qualified, self_attributes: bool = False
) -> tuple[cst.Name | cst.Call | cst.Attribute | None, cst.BaseExpression]:
    """What the loop iterates over under `enumerate`/`tqdm` (a name, or a call such as
    `DataLoader(dataset)` written in place; with `self_attributes`, also `self.loader`), and the
    loop's batch target."""
    iterable, target = node.iter, node.target
    while isinstance(iterable, cst.Call) and iterable.args and qualified(iterable.func) & PROGRESS_WRAPPERS:
        if qualified(iterable.func) & ENUMERATE_NAMES:
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                return None, target
            target = target.elements[1].value
        iterable = iterable.args[0].value
    if self_attributes and isinstance(iterable, cst.Attribute) and isinstance(iterable.value, cst.Name) and iterable.value.value == "self":
        return iterable, target
    return (iterable if isinstance(iterable, (cst.Name, cst.Call)) else None), target


def target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
        return [element.value.value for element in target.elements]
    return []


def move_statements(uses: list[BatchUse], device: str, torch_name: str) -> list[cst.SimpleStatementLine]:
    statements = []
    tensors = [use.name for use in uses if not use.is_dict]
    if tensors:
        targets = ", ".join(tensors)
        values = ", ".join(f"{name}.to({device})" for name in tensors)
        statements.append(cst.parse_statement(f"{targets} = {values}\n"))
    for use in uses:
        if use.is_dict:
            statements.append(cst.parse_statement(
                f"{use.name} = {{key: value.to({device}) if {torch_name}.is_tensor(value) else value "
                f"for key, value in {use.name}.items()}}\n"
            ))
    return statements


@dataclass(frozen=True)
class BatchMoves:
    """What a loop must move: whole batch variables at the top of the body, and elements taken by
    position (`batch[0]`) where they meet the model. `ambiguous` names a batch that reaches the
    model in a way that does not say which elements are tensors (`model(*batch)`, `batch[i]`)."""

    uses: list[BatchUse]
    indexed: list[cst.Subscript]
    ambiguous: str | None = None


def batches_to_move(body, names, callables, models, facts: PlacementFacts, qualified, helpers: Mapping[str, cst.FunctionDef] = MappingProxyType({}),
                    kept_on_host: frozenset[int] = frozenset()) -> BatchMoves:
    """The loop variables to move: those that meet a model or a device value unmoved. A variable
    moved only where one use needs it (`criterion(out, y.to(device))`) still moves when another
    use meets a device value raw (`accuracy(out, y)`, a `helpers` function that compares them).
    Arguments in `kept_on_host` (ids: lengths a model only packs) and the lengths of a
    `pack_padded_sequence` call meet nothing: they must stay on the CPU."""
    finder = _BatchUseFinder(set(names), set(callables), set(models), facts, qualified, helpers, kept_on_host)
    body.visit(finder)
    untouched = [
        name for name in names
        if (name not in facts.moved or name in finder.needed) and _only_reshaped(name, facts) and not name.startswith("_")
    ]
    uses, indexed = [], []
    for name in untouched:
        if name in finder.positional:
            return BatchMoves([], [], name)
        if name in finder.needed:
            uses.append(BatchUse(name, is_dict=name in finder.as_dict))
        else:
            indexed += finder.indexed.get(name, [])
    return BatchMoves(uses, indexed)


def _only_reshaped(name: str, facts: PlacementFacts) -> bool:
    """The body binds `name` only to itself reshaped or cast (`images = images.reshape(-1, 784)`),
    if at all: a move at the top of the body still reaches every use."""
    return all(_reshaped(value, name) for value in facts.assignments.get(name, ()))


def _reshaped(value: cst.BaseExpression | None, name: str) -> bool:
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in RESHAPING_METHODS:
        value = value.func.value
    return isinstance(value, cst.Name) and value.value == name


def names_meeting_devices(body, names, callables, models, facts: PlacementFacts, qualified,
                          helpers: Mapping[str, cst.FunctionDef] = MappingProxyType({}),
                          kept_on_host: frozenset[int] = frozenset()) -> set[str]:
    """Those of `names` that `body` feeds whole to a model or puts next to a device value
    (`batches_to_move`'s test, without its conditions on how the names are bound)."""
    finder = _BatchUseFinder(set(names), set(callables), set(models), facts, qualified, helpers, kept_on_host)
    body.visit(finder)
    return finder.needed - finder.as_dict


class _BatchUseFinder(cst.CSTVisitor):
    """Which loop variables meet a model or a device value, and how they are indexed there."""

    def __init__(self, names: set[str], callables: set[str], models: set[str], facts: PlacementFacts, qualified,
                 helpers: Mapping[str, cst.FunctionDef], kept_on_host: frozenset[int]) -> None:
        self.names, self.callables, self.models, self.facts, self.qualified = names, callables, models, facts, qualified
        self.helpers = helpers
        self.kept_on_host = set(kept_on_host)  # ids of arguments that must stay on the CPU
        self.needed: set[str] = set()
        self.as_dict: set[str] = set()
        self.positional: set[str] = set()
        self.indexed: dict[str, list[cst.Subscript]] = {}  # `batch[0]` where it meets the model

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        callee = node.func
        is_model = isinstance(callee, cst.Name) and callee.value in self.models
        is_torch = any(name.startswith("torch.") for name in self.qualified(callee))
        values = [arg.value for arg in node.args]
        meets_device = any(self.facts.is_device_value(value) for value in values)
        is_known_callable = isinstance(callee, cst.Name) and callee.value in self.callables
        # `nn.CrossEntropyLoss()(out, y)`: a torch.nn Module built where it is called
        is_known_callable |= isinstance(callee, cst.Call) and any(name.startswith("torch.nn.") for name in self.qualified(callee.func))
        # `pred.eq(target)`: a tensor method of a device value meets its arguments
        is_device_method = isinstance(callee, cst.Attribute) and callee.attr.value not in ("to", "cuda", "cpu") and self.facts.is_device_value(callee.value)
        lengths = packed_lengths(node, self.qualified)
        if lengths is not None:
            self.kept_on_host.add(id(lengths))
        helper = self.helpers.get(callee.value) if isinstance(callee, cst.Name) and not is_known_callable else None
        if helper is not None and meets_device:
            self._mark_met_in(helper, node)
        elif is_model or is_device_method or (meets_device and (is_torch or is_known_callable)):
            for arg in node.args:
                if arg.star == "**" and isinstance(arg.value, cst.Name) and arg.value.value in self.names:
                    self.needed.add(arg.value.value)  # `model(**batch)`: a dict of fields
                    self.as_dict.add(arg.value.value)
                elif arg.star == "*" and isinstance(arg.value, cst.Name) and arg.value.value in self.names:
                    self.positional.add(arg.value.value)  # `model(*batch)`: which elements are tensors?
                elif id(arg.value) not in self.kept_on_host:
                    self._mark(arg.value)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self.facts.is_device_value(node.left) or self.facts.is_device_value(node.right):
            self._mark(node.left)
            self._mark(node.right)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(target.comparator for target in node.comparisons)]
        if any(self.facts.is_device_value(operand) for operand in operands):
            for operand in operands:
                self._mark(operand)

    def _mark_met_in(self, helper: cst.FunctionDef, call: cst.Call) -> None:
        """`accuracy(out, y)`: `y` moves when the helper combines its parameter with the one
        given the device value."""
        positional = parameter_names(helper)
        received: list[tuple[str, cst.BaseExpression]] = []
        for index, arg in enumerate(call.args):
            if arg.star:
                return  # which parameter gets what is unknown
            name = arg.keyword.value if arg.keyword is not None else (positional[index] if index < len(positional) else None)
            if name is not None:
                received.append((name, arg.value))
        on_device = [name for name, value in received if self.facts.is_device_value(value)]
        for name, value in received:
            if any(parameters_meet(helper, device_parameter, name, self.qualified) for device_parameter in on_device):
                self._mark(value)

    def _mark(self, value: cst.BaseExpression) -> None:
        if isinstance(value, cst.Name) and value.value in self.names:
            self.needed.add(value.value)
        elif isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and value.value.value in self.names:
            name = value.value.value
            key = value.slice[0].slice if len(value.slice) == 1 else None
            if isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString):
                self.needed.add(name)
                self.as_dict.add(name)
            elif isinstance(key, cst.Index) and isinstance(key.value, cst.Integer):
                self.indexed.setdefault(name, []).append(value)  # it meets the model: a tensor
            else:
                self.positional.add(name)


def unpacked_batch(loop: cst.For, names: list[str], qualified) -> tuple[list[str], int]:
    """`for batch in loader: x, y = batch` (or, opening the body, `x = batch[0]` and
    `y = batch[1]`, or `x, y = batch[0], batch[1]`, or `labels = batch.pop("labels")`) → the
    unpacked names and where the move can go; an element moved where it is taken (`x, y =
    batch[0].to(device), batch[1]`) is left out, and the batch stays in when the body reads it after."""
    if len(names) != 1 or not isinstance(loop.body, cst.IndentedBlock):
        return names, 0
    statements = loop.body.body
    first = 0  # `netD.zero_grad()` before `real = data[0]`: statements that do not read the batch
    while first < min(3, len(statements)) and isinstance(statements[first], cst.SimpleStatementLine) \
            and names[0] not in names_in(statements[first]):
        first += 1
    taken, index = [], first
    while index < len(statements) and (elements := elements_by_position(statements[index], names[0], qualified)) is not None:
        taken += [name for name, moved in elements if not moved]  # `data[0].to(device)` is placed already
        index += 1
    if index > first:  # the batch itself too, where what follows still reads it (`model(**batch)` after a `pop`)
        read_later = any(names[0] in variables_in(statement) for statement in statements[index:])
        return ([*taken, names[0]] if read_later else taken), index
    for index, statement in enumerate(statements[:3]):
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            return names, 0
        assign = statement.body[0]
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
            continue
        if isinstance(assign.value, cst.Name) and assign.value.value == names[0]:
            unpacked = target_names(assign.targets[0].target)
            return (unpacked, index + 1) if len(unpacked) > 1 else (names, 0)
        if names[0] in target_names(assign.targets[0].target) and calls_a_move(assign.value, qualified):
            return names, 0  # `batch = tuple(t.to(device) for t in batch)` first: what is unpacked is placed already
        if _same_items_again(assign, names[0]):
            return names, index + 1  # `batch = {k: v for k, v in batch.items() if k != "idx"}`: the same tensors
    return names, 0


def _same_items_again(assign: cst.Assign, batch: str) -> bool:
    """`batch = {k: v for k, v in batch.items()}` (a filter allowed): the name bound again to a dict
    of the batch's own values, as they are."""
    target, value = assign.targets[0].target, assign.value
    if not (isinstance(target, cst.Name) and target.value == batch and isinstance(value, cst.DictComp)):
        return False
    loop = value.for_in
    iterated = loop.iter
    if loop.inner_for_in is not None or not (
            isinstance(iterated, cst.Call) and not iterated.args and isinstance(iterated.func, cst.Attribute)
            and iterated.func.attr.value == "items" and isinstance(iterated.func.value, cst.Name) and iterated.func.value.value == batch):
        return False
    parts = target_names(loop.target)
    return len(parts) == 2 and isinstance(value.key, cst.Name) and isinstance(value.value, cst.Name) \
        and (value.key.value, value.value.value) == (parts[0], parts[1])


def elements_by_position(statement: cst.BaseStatement, batch: str, qualified) -> list[tuple[str, bool]] | None:
    """`x = batch[0]` → [("x", False)]; `x, y = batch[0].to(device), batch[1]` → [("x", True),
    ("y", False)] (True: moved where it is taken); by key too (`labels = batch["labels"]`,
    `labels = batch.pop("labels")`); anything else → None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    assign = statement.body[0]
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
        return None
    targets = target_names(assign.targets[0].target)
    values = [element.value for element in assign.value.elements] if isinstance(assign.value, cst.Tuple) else [assign.value]
    if not targets or len(targets) != len(values):
        return None
    moved = []
    for value in values:
        is_move = as_move(value, qualified) is not None
        element = value.func.value if is_move and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) else value
        if item_taken(element, batch) is None:
            return None
        moved.append(is_move)
    return list(zip(targets, moved))
