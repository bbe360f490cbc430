"""Which shapes of code a file contains, from one walk of Python's `ast`: the signals rules need.

A rule can only find something where its signal is present (a `.cuda()` call, a factory call
without `device=` that meets other values, a plain-list attribute of a Module, ...). A file with
none of the signals the selected rules need is clean without building a libcst tree: that is most
library code, and the reason a check costs about what parsing costs. Each signal over-approximates
its rule's conditions; `tests/test_screen.py` checks that no rule finds anything without them.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from devfix.analysis.ast_nodes import (
    FUNCTIONS,
    bound_names,
    children,
    every_node,
    is_self_attribute,
    method_chain,
    operand_names,
    parameters,
    scope_bindings,
    scope_nodes,
)
from devfix.analysis.factory_meetings import encodings_meet_a_moved_model
from devfix.analysis.gpu_options import gpu_in_device_string
from devfix.analysis.host_sinks import may_be_axes_call
from devfix.analysis.imports import ImportTable, cast_argument, may_be_project_name
from devfix.analysis.kinds import Kind
from devfix.analysis.method_factories import (
    attributes_given_values,
    class_feeds_fresh_tensors,
    factory_helpers,
    is_unplaced_factory,
)
from devfix.analysis.moves import is_move
from devfix.analysis.parameter_copies import classes_copying_parameters
from devfix.analysis.signals import (
    ALL_SIGNALS,
    BARE_MOVE,
    COPY_OF_MOVED,
    DATA_PARALLEL,
    DEVICE_ARGUMENT_LAYER,
    DEVICE_CAPTURED_AT_INIT,
    DISTRIBUTION_ATTRIBUTE,
    ENCODED_INPUTS,
    HARDCODED_CUDA,
    HOST_SINK,
    LAYER_REPLACED_AFTER_MOVE,
    LEGACY_CONSTRUCTOR,
    LOAD_CALL,
    LOAD_INTO_STATE_DICT,
    LOADER_LOOP,
    LOSS_WEIGHT,
    MODULE_CONTAINER,
    MODULE_TENSOR_ATTRIBUTE,
    MOVE_CALL,
    OPTIMIZER_LOADED_BEFORE_MOVE,
    PLAIN_CLASS_MOVE,
    PLAIN_CLASS_TABLE,
    RUNTIME_PLACEMENT,
    UNPLACED_FACTORY_IN_METHOD,
)
from devfix.analysis.torch_api import (
    CHECKPOINT_LOADERS,
    CUDA_LITERALS,
    DATALOADER_NAMES,
    DEVICE_NAMES,
    EAGER_STATE_OPTIMIZERS,
    FACTORY_FUNCTIONS,
    FUNCTIONAL_LOSSES,
    GUARD_WORDS,
    HOST_LIBRARY_MODULES,
    INDEX_READING_FUNCTIONS,
    INDEX_READING_METHODS,
    JOINS,
    LEGACY_CPU_CONSTRUCTORS,
    LEGACY_DTYPES,
    LOSS_TENSOR_KEYWORDS,
    NON_TENSOR_METHODS,
    PARAMETER_FREE_NN,
    PIPELINE_FACTORIES,
    PLACEMENT_KEEPING_METHODS,
    TENSOR_ANNOTATIONS,
    TENSOR_ONLY_MEMBERS,
    VARIABLE_WRAPPERS,
    is_torch_tensor_function,
)
from devfix.analysis.values import ANNOTATION_KINDS

DEVICE_PARAMETERS = frozenset({"device", "dev", "torch_device"})
HOLDERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"})


@dataclass
class _Place:
    """Where a node stands: its parent, the enclosing class (None outside classes), and the
    method of that class it is directly in (None at other depths and outside classes)."""

    parent: ast.AST | None
    class_node: ast.ClassDef | None
    method: ast.FunctionDef | ast.AsyncFunctionDef | None


@dataclass
class Walk:
    """What one walk of the tree collected: imports, and the nodes the signals look at."""

    tree: ast.Module
    imports: ImportTable = field(default_factory=ImportTable)
    star_import: bool = False
    import_statements: list[ast.Import | ast.ImportFrom] = field(default_factory=list)  # anywhere in the file
    nodes: list[tuple[ast.AST, _Place]] = field(default_factory=list)
    declared_global: set[str] = field(default_factory=set)  # `global x` somewhere in a function
    tensor_candidates: list[ast.Name] = field(default_factory=list)  # names DF014 would accept if tensors
    bare_move_receivers: list[ast.Name] = field(default_factory=list)  # `x` in a statement `x.to(device)`
    bare_item_moves: list[ast.Name] = field(default_factory=list)  # `batch` in a statement `batch[key].to(device)`
    built: set[str] = field(default_factory=set)  # names assigned from a call (`model = Net()`)
    lists_tuples: bool = False  # a list display or comprehension of tuple displays (`_may_list_batches`)
    called: set[str] = field(default_factory=set)  # names called (`model(x)`)
    inits: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef]] = field(default_factory=list)
    # the other methods of classes, with a parameter named like a device (DF019's `create_grids(self, ng, device)`)
    device_methods: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef]] = field(default_factory=list)
    annotations: list[tuple[str, ast.expr]] = field(default_factory=list)  # (parameter, its annotation)
    calls_assigned: list[tuple[str, ast.Call]] = field(default_factory=list)  # `name = call(...)`
    calls_unpacked: list[tuple[str, ast.Call]] = field(default_factory=list)  # `a, b = call(...)`: (a, call), (b, call)
    loader_calls: list[str] = field(default_factory=list)  # set by `signals`: imported calls that may return loaders
    # set by `signals`: (function, position, parameter) of a top-level function the file only
    # defines, whose parameter a loop iterates: the files beside it may pass a DataLoader
    loader_parameters: list[tuple[str, int, str]] = field(default_factory=list)
    # set by `signals`: (class, position, parameter) of a top-level plain class the file never
    # constructs, whose `__init__` keeps that parameter and whose methods call it (DF020 asks the
    # files beside it whether every construction gives a moved model)
    given_models: list[tuple[str, int, str]] = field(default_factory=list)
    constructions: list[ast.Call] = field(default_factory=list)  # `Layer(...)` of `Layer(...)(x)` in a method
    cuda_defaults: list[ast.expr] = field(default_factory=list)  # `def f(x, device="cuda")` at the top level
    # set by `signals`: per signal of one class's code (DF014, DF015, DF019), the nodes that raised
    # it, and the classes DF016 may find a factory in and DF012 a table used: where those rules'
    # findings can be (None: anywhere, as for DF012's table of the top level)
    class_sites: dict[str, list[ast.AST] | None] = field(default_factory=dict)
    # set by `signals`: names the methods (but `__init__`) of classes call, that the file imports and
    # whose calls DF016 may follow (a helper of the project making CPU tensors: `FileFacts.signals` asks)
    imported_calls_in_methods: dict[str, list[ast.ClassDef]] = field(default_factory=dict)
    # set by `signals`: the file's functions that make factories, when some method calls a name (`method_factories.factory_helpers`)
    factory_helpers: frozenset[str] = frozenset()


WATCHED = (ast.Call, ast.Constant, ast.For, ast.AsyncFor, ast.Expr, ast.Assign, ast.AnnAssign)
LEAVES = (ast.Name, ast.Constant, ast.alias)  # nothing a signal looks at is under them


def walk(tree: ast.Module) -> Walk:
    """One pass: imports for the whole file, and every node a signal may need, with its place."""
    found = Walk(tree)
    stack: list[tuple[ast.AST, _Place]] = [(node, _Place(tree, None, None)) for node in tree.body]
    while stack:
        node, place = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.star_import |= found.imports.add(node)
            found.import_statements.append(node)
            continue
        if isinstance(node, ast.ClassDef):
            inner = _Place(node, node, None)
            stack.extend((child, inner) for child in node.body)
            stack.extend((child, _Place(node, place.class_node, place.method)) for child in [*node.bases, *node.decorator_list])
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            is_method = place.class_node is not None and place.parent is place.class_node
            if is_method and node.name == "__init__":
                found.inits.append((node, place.class_node))
            elif is_method and {argument.arg for argument in parameters(node)} & DEVICE_PARAMETERS:
                found.device_methods.append((node, place.class_node))
            found.annotations += [(argument.arg, argument.annotation) for argument in parameters(node) if argument.annotation]
            if place.parent is tree:
                defaults = [*node.args.defaults, *node.args.kw_defaults]
                found.cuda_defaults += [value for value in defaults if isinstance(value, ast.Constant) and value.value in CUDA_LITERALS]
            inner = _Place(node, place.class_node, node if is_method else None)
            stack.extend((child, inner) for child in children(node))
            continue
        if isinstance(node, ast.Global):
            found.declared_global.update(node.names)
            continue
        if isinstance(node, (ast.ListComp, ast.List)) and not found.lists_tuples:
            found.lists_tuples = _may_list_batches(node)
        if isinstance(node, WATCHED):
            found.nodes.append((node, place))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                found.called.add(node.func.id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update" \
                    and isinstance(node.func.value, ast.Name):
                found.called.add(node.func.value.id)  # DF003: `metric.update(preds, y)` of a torchmetrics Metric
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                found.built.update(target.id for target in node.targets if isinstance(target, ast.Name))
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.calls_assigned += [(target.id, node.value) for target in targets if isinstance(target, ast.Name)]
                found.calls_unpacked += [
                    (element.id, node.value) for target in targets if isinstance(target, ast.Tuple)
                    for element in target.elts if isinstance(element, ast.Name)
                ]
        if isinstance(node, LEAVES):
            continue
        inner = _Place(node, place.class_node, place.method)
        stack.extend((child, inner) for child in children(node))
    cast_names = {name for node, _ in found.nodes if (name := cast_argument(node)) is not None}
    found.imports.define(tree, cast_names, [node for node, _ in found.nodes if isinstance(node, ast.Assign)])
    return found


def signals(found: Walk, classes: dict[str, Kind]) -> frozenset[str]:
    """Every signal but those that need the value analysis or the other files of the run (see
    `FileFacts.has_signal`): MODULE_TENSOR_ATTRIBUTE and BARE_MOVE for bare names
    (`found.tensor_candidates`, `found.bare_move_receivers`), FACTORY_MEETS_TENSOR, PLACES_DEVICES,
    DEVICE_VALUE_TO_HOST, CALLED_CONSTRUCTION and BUILT_AND_CALLED (`found.constructions`,
    `built_once_and_called`)."""
    if found.star_import:
        return ALL_SIGNALS  # names devfix cannot resolve: assume anything
    screen = _Screen(found, classes)
    for node, place in found.nodes:
        screen.node(node, place)
    for init, class_node in found.inits:
        screen.init(init, class_node)
    for method, class_node in found.device_methods:
        screen.device_method(method, class_node)
    if (screen.cuda_sites and _any_unguarded(screen.cuda_sites, found.tree)) or found.cuda_defaults:
        screen.found.add(HARDCODED_CUDA)  # a default is never under a CUDA test
    if screen.moves_after_dispatch():
        screen.found.add(RUNTIME_PLACEMENT)
    if screen.moves_after_optimizer_load():
        screen.found.add(OPTIMIZER_LOADED_BEFORE_MOVE)
    if screen.tables_in_use():
        screen.found.add(PLAIN_CLASS_TABLE)  # `class_sites`: the classes using tables (None: a top-level table, read anywhere)
    if screen.looped_over and _may_loop_over_a_loader(screen.looped_over, found):
        screen.found.add(LOADER_LOOP)
    elif found.lists_tuples and _may_loop_over_listed_batches(screen.unpacking_loops, found):
        screen.found.add(LOADER_LOOP)
    elif screen.looped_over:
        found.loader_calls = _imported_calls_binding(screen.looped_over, found)
        found.loader_parameters = _parameters_other_files_may_give(screen.looped_over, found)
    if screen.encoded and encodings_meet_a_moved_model(found.tree):
        screen.found.add(ENCODED_INPUTS)
    for container in screen.empty_lists & screen.appended:
        if screen.stores.get(container, 0) <= 1:  # DF015 wraps a container `__init__` stores once, and nothing else stores
            screen.raised(MODULE_CONTAINER, screen.class_nodes[container[0]])
    found.imported_calls_in_methods = {name: list(classes.values()) for name, classes in screen.named_calls_in_methods.items()
                                       if name in found.imports.names}
    helpers = found.factory_helpers = factory_helpers(found.tree, found.imports) if screen.named_calls_in_methods else frozenset()
    for name in helpers & screen.named_calls_in_methods.keys():  # a method calling the file's `causal_mask(t)`
        screen.factory_classes.update(screen.named_calls_in_methods[name])
    found.class_sites[UNPLACED_FACTORY_IN_METHOD] = list(screen.factory_classes.values())  # DF016 seeds: those that feed
    if any(class_feeds_fresh_tensors(node, found.imports, helpers) for node in screen.factory_classes.values()):
        screen.found.add(UNPLACED_FACTORY_IN_METHOD)
    if any(names & screen.moved for class_name, names in screen.constructions if class_name in screen.storing_classes):
        screen.found.add(PLAIN_CLASS_MOVE)  # `Evaluator(model)` of a moved `model`, kept as `self.model = model`
    constructed = {class_name for class_name, _ in screen.constructions}
    found.given_models = [  # `Trainer(model, loader)` of another file, kept and called as `self.model(x)`: the project decides
        (class_name, position, parameter) for class_name, stored in screen.stored_parameters.items() if class_name not in constructed
        for attribute, parameter, position in stored if attribute in screen.called_attributes.get(class_name, set())
    ]
    if screen.copied & screen.moved:
        screen.found.add(COPY_OF_MOVED)
    if screen.given_layers & (screen.placed | {moved for moved, _ in screen.moves}):  # `model.to(device)`, not `model.to(unet.dtype)`
        screen.found.add(LAYER_REPLACED_AFTER_MOVE)
    if screen.loads:
        screen.found.add(LOAD_CALL)
        if screen.loads_into_state_dict():
            screen.found.add(LOAD_INTO_STATE_DICT)
    return frozenset(screen.found)


class _Screen:
    def __init__(self, walked: Walk, classes: dict[str, Kind]) -> None:
        self.walked, self.imports, self.classes = walked, walked.imports, classes
        self.found: set[str] = set()
        self.cuda_sites: list[ast.AST] = []  # what DF001 rewrites, unless a CUDA test guards it
        # RUNTIME_PLACEMENT's and OPTIMIZER_LOADED_BEFORE_MOVE's parts: moves of names, names loaded
        # with `device_map=`, `<name>.load_state_dict(...)` calls
        self.moves: list[tuple[str, int]] = []
        self.dispatched: set[str] = set()
        self.state_loads: list[tuple[str, int]] = []
        self.class_tensors: dict[int, set[str]] = {}
        # plain classes' attributes, per class, each attribute's values: made by torch (True), placed or of no torch (False), or
        # computed from the attributes and methods of `self` named (`1.0 - self.beta`, `self.schedule()`)
        self.table_candidates: dict[int, tuple[ast.ClassDef, dict[str, list[bool | frozenset[str]]]]] = {}
        self.empty_lists: set[tuple[int, str]] = set()  # (class, attribute) set to `[]` in __init__
        self.class_nodes: dict[int, ast.ClassDef] = {}  # the classes of `empty_lists`, by id
        self.stores: dict[tuple[int, str], int] = {}  # (class, attribute) → `self.<attribute> = ...` in its methods
        self.appended: set[tuple[int, str]] = set()  # (class, attribute) given a call's value with `.append`
        self.looped_over: set[str] = set()  # names a `for` iterates over
        self.unpacking_loops: list[ast.expr] = []  # what a `for a, b in ...` iterates over, as written
        self.encoded = False  # a `return_tensors="pt"` call in the file
        self.factory_classes: dict[int, ast.ClassDef] = {}  # classes with a factory in a method but __init__
        self.named_calls_in_methods: dict[str, dict[int, ast.ClassDef]] = {}  # name called in a method but __init__ → classes
        self.held_values: dict[int, set[str]] = {}  # per class: `self.<attr>` that may hold a CPU tensor type
        self.init_names: dict[int, tuple[dict[str, Kind], set[str]]] = {}  # DF014: `_settled_parameter_kind`
        self.attribute_uses: dict[int, tuple[dict[str, tuple[int, int]], set[str]]] = {}  # DF014: `_kept_for_other_methods`
        self.copied: set[str] = set()  # names given to `copy.deepcopy` whose copy is assigned to a name
        self.given_layers: set[str] = set()  # `name` of `name.attr = <call>` (DF026: a layer given after a move)
        self.placed: set[str] = set()  # names bound to a move to a device (`model = Net().to(device)`; not a cast)
        self.moved: set[str] = set()  # names moved (`x.to(...)`) or assigned a move (`x = Net().to(...)`)
        self.storing_classes: set[str] = set()  # plain classes whose `__init__` keeps a parameter as it is (`self.model = model`)
        self.stored_parameters: dict[str, list[tuple[str, str, int]]] = {}  # … of those at the top level: (attribute, parameter, position)
        self.called_attributes: dict[str, set[str]] = {}  # plain classes → `self.<attr>(...)` their methods call
        self.constructions: list[tuple[str, set[str]]] = []  # `Name(a, b=c)` calls: the name, and the names given
        self.loads: list[tuple[ast.Call, ast.AST | None]] = []  # DF007's loads, with their parents
        self.state_dict_loads: list[ast.Call] = []  # `<anything>.load_state_dict(...)`

    def loads_into_state_dict(self) -> bool:
        """Some load is an argument of `load_state_dict`, or is assigned to a name that some
        `load_state_dict` call mentions (DF007's `_feeds_load_state_dict`, file-wide)."""
        loads = {id(call) for call, _ in self.loads}
        fed: set[str] = set()
        for call in self.state_dict_loads:
            arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
            if any(id(argument) in loads for argument in arguments):
                return True
            fed.update(node.id for node in every_node(call) if isinstance(node, ast.Name))
        for _, parent in self.loads:
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name) \
                    and parent.targets[0].id in fed:
                return True
        return False

    def tables_in_use(self) -> bool:
        """DF012's shapes: a table of a class proven plain (every base resolves to a non-Module; a
        nested class is not resolved here: it is kept) (an attribute every assignment makes with
        torch and none places) indexed with a name (`self.betas[t]`), computing with a name (`x - self.mean`),
        or handed to a function of the file (`extract(self.alphas, t, x)`). Arithmetic counts only
        with a name the rule may act on: a parameter of the enclosing function, or a name it may
        prove a tensor there (`logtwopi = np.log(2 * np.pi)` is neither)."""
        functions = {node.name for node in self.walked.tree.body if isinstance(node, FUNCTIONS)}
        if self._top_level_tables_handed_to(functions):
            self.walked.class_sites[PLAIN_CLASS_TABLE] = None  # read anywhere
            return True
        for class_node, candidates in self.table_candidates.values():
            tables = self._tables_of(class_node, candidates)
            if tables and self._uses_a_table(class_node, tables, functions):
                self.walked.class_sites.setdefault(PLAIN_CLASS_TABLE, []).append(class_node)
        return PLAIN_CLASS_TABLE in self.walked.class_sites

    def _tables_of(self, class_node: ast.ClassDef, candidates: dict[str, list[bool | frozenset[str]]]) -> set[str]:
        """The attributes every value of which is made by torch, or computed from such attributes or
        from a method of the class that calls torch (`self.beta = self.prepare_noise_schedule()`,
        `self.alpha = 1.0 - self.beta`), to a fixed point."""
        if all(all(verdict is True for verdict in verdicts) or False in verdicts for verdicts in candidates.values()):
            return {attribute for attribute, verdicts in candidates.items() if False not in verdicts}  # most classes
        making = {method.name for method in class_node.body
                  if isinstance(method, FUNCTIONS) and any(self._is_torch_call(node) for node in every_node(method))}
        tables: set[str] = set()
        while True:
            known = tables | making
            found = {attribute for attribute, verdicts in candidates.items()
                     if all(verdict is True or verdict and verdict & known for verdict in verdicts)}
            if found == tables:
                return tables
            tables = found

    def _uses_a_table(self, class_node: ast.ClassDef, tables: set[str], functions: set[str]) -> bool:
        for node, function in _nodes_with_function(class_node):
            if isinstance(node, ast.Subscript):
                used = [node.value] if isinstance(node.slice, ast.Name) else []
            elif isinstance(node, ast.BinOp):
                used = [side for side, other in ((node.left, node.right), (node.right, node.left))
                        if self._may_meet_a_tensor(other, function)]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
                used = list(node.args)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in INDEX_READING_METHODS:
                used = [node.func.value]  # `self.alphas.gather(0, t)`
            elif isinstance(node, ast.Call) and (table := self._table_read_by_a_function(node)) is not None:
                used = [table]  # `F.embedding(ids, self.table)`
            elif isinstance(node, ast.AugAssign):  # `self.correct += (preds == y).sum()`
                names = [name.id for name in every_node(node.value) if isinstance(name, ast.Name)]
                used = [node.target] if self._may_be_tensors(names, function) else []
            elif isinstance(node, ast.Assign) and (joined := self._self_join(node)) is not None:
                table, others = joined  # `self.losses = torch.cat([self.losses, loss])`
                names = [name.id for other in others for name in every_node(other) if isinstance(name, ast.Name)]
                used = [table] if self._may_be_tensors(names, function) else []
            else:
                continue
            if any(is_self_attribute(value) and value.attr in tables for value in used):
                return True
        return False

    def _self_join(self, node: ast.Assign) -> tuple[ast.Attribute, list[ast.expr]] | None:
        """DF012's `_self_join`: `self.x = torch.cat([self.x, ...])`, the attribute and the other elements."""
        value = node.value
        if not (len(node.targets) == 1 and is_self_attribute(node.targets[0]) and isinstance(value, ast.Call)
                and value.args and isinstance(value.args[0], (ast.List, ast.Tuple))
                and self.imports.qualify(value.func) in JOINS):
            return None
        elements = value.args[0].elts
        table = next((element for element in elements if is_self_attribute(element) and element.attr == node.targets[0].attr), None)
        return None if table is None else (table, [element for element in elements if element is not table])

    def _top_level_tables_handed_to(self, functions: set[str]) -> bool:
        """DF012's cases for tables of the top level: a name bound once there from a torch call that
        places nothing (`alphas_cumprod = torch.cumprod(...)`), or from such tables by operators and
        tensor methods (`class_weights = counts.sum() / (3 * counts)`), computes an argument of a call of a
        function of the file (`extract(alphas_cumprod.sqrt(), t, x.shape)`), or is indexed with a
        name (`class_weights[y]`, `alphas_cumprod.gather(0, t)`), or meets a parameter in arithmetic in a top-level function
        (`(images - MEAN) / STD` in `def normalize(images)`)."""
        bindings = scope_bindings(scope_nodes(self.walked.tree.body))
        tables: set[str] = set()
        for name, bound in sorted(bindings.items(), key=lambda item: item[1][0][0]):  # each after what it computes with
            value = bound[0][1] if len(bound) == 1 else None
            if value is not None and not _places(list(every_node(value))) and (
                    any(self._is_torch_call(node) for node in every_node(value))
                    or set(_names_computed_with(value)) & tables):  # `class_weights = counts.sum() / (3 * counts)`
                tables.add(name)
        if not tables:
            return False
        return any(
            (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions
             and any(set(_names_computed_with(argument)) & tables for argument in node.args))
            or (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in tables
                and isinstance(node.slice, ast.Name))  # `class_weights[y]`, wherever the table is read
            or (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in INDEX_READING_METHODS
                and isinstance(node.func.value, ast.Name) and node.func.value.id in tables)  # `alphas_cumprod.gather(0, t)`
            or (isinstance(node, ast.Call) and isinstance(table := self._table_read_by_a_function(node), ast.Name)
                and table.id in tables)  # `F.embedding(ids, TABLE)`
            for node in every_node(self.walked.tree)
        ) or any(_computes_a_table_with_a_parameter(function, tables) for function in self.walked.tree.body if isinstance(function, FUNCTIONS))

    def _table_read_by_a_function(self, call: ast.Call) -> ast.expr | None:
        """The table of `F.embedding(ids, table)`, `torch.gather(table, 0, t)` and the like."""
        places = INDEX_READING_FUNCTIONS.get(self.imports.qualify(call.func) or "")
        if places is None:
            return None
        (position, keyword), _ = places
        named = next((item.value for item in call.keywords if item.arg == keyword), None)
        return named if named is not None else call.args[position] if position < len(call.args) else None

    def _may_meet_a_tensor(self, operand: ast.expr, function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
        """DF012's `_tensor_in` and `_parameter_in`: a name `operand` computes with is a parameter of
        the enclosing function, or may be a tensor there (outside a function: any name)."""
        return self._may_be_tensors(_names_computed_with(operand), function)

    def _may_be_tensors(self, names: list[str], function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
        """One of `names` is a parameter of `function`, or may be a tensor there (outside a function: any name)."""
        if function is None:
            return bool(names)
        named = {argument.arg for argument in parameters(function)}
        return any(name in named or self._may_be_evidenced(name, function) for name in names)

    def raised(self, signal: str, node: ast.AST) -> None:
        """`signal` found, at `node` (`Walk.class_sites`)."""
        self.found.add(signal)
        self.walked.class_sites.setdefault(signal, []).append(node)

    def owner_kind(self, place: _Place) -> Kind | None:
        if place.class_node is None:
            return None
        return self.classes.get(place.class_node.name, Kind.UNKNOWN)

    def init(self, init: ast.FunctionDef | ast.AsyncFunctionDef, class_node: ast.ClassDef) -> None:
        if self.classes.get(class_node.name, Kind.UNKNOWN) is Kind.OBJECT:
            return
        accepted = {argument.arg for argument in [*init.args.args, *init.args.kwonlyargs]}
        if accepted & DEVICE_PARAMETERS and any(self._is_unplaced_factory(n) for n in every_node(init)):
            self.raised(DEVICE_ARGUMENT_LAYER, init)
        if any(_captures_own_device(node) for node in every_node(init)):
            self.found.add(DEVICE_CAPTURED_AT_INIT)

    def device_method(self, method: ast.FunctionDef | ast.AsyncFunctionDef, class_node: ast.ClassDef) -> None:
        """DF019 beyond `__init__`: a method given a device makes a tensor on it and another without."""
        if self.classes.get(class_node.name, Kind.UNKNOWN) is Kind.OBJECT:
            return
        devices = {argument.arg for argument in parameters(method)} & DEVICE_PARAMETERS
        nodes = list(every_node(method))
        placed = any(
            isinstance(node, ast.Call) and any(keyword.arg == "device" and isinstance(keyword.value, ast.Name) and keyword.value.id in devices
                                               for keyword in node.keywords)
            for node in nodes
        )
        if placed and any(self._is_unplaced_factory(node) for node in nodes):
            self.raised(DEVICE_ARGUMENT_LAYER, method)

    def node(self, node: ast.AST, place: _Place) -> None:
        found = self.found
        if isinstance(node, (ast.For, ast.AsyncFor)):
            if isinstance(node.target, ast.Tuple):
                self.unpacking_loops.append(node.iter)
            iterable = node.iter
            while isinstance(iterable, ast.Call) and iterable.args:  # enumerate(tqdm(loader)), as the rules unwrap
                if _may_build_a_loader(iterable, self.imports):
                    found.add(LOADER_LOOP)  # `for batch in DataLoader(dataset)`
                if isinstance(iterable.func, ast.Name) and iterable.func.id == "zip":  # every loader zipped
                    self.looped_over.update(arg.id for arg in iterable.args if isinstance(arg, ast.Name))
                    if any(isinstance(arg, ast.Call) and _may_build_a_loader(arg, self.imports) for arg in iterable.args):
                        found.add(LOADER_LOOP)
                iterable = iterable.args[0]
            if isinstance(iterable, ast.Name):
                self.looped_over.add(iterable.id)
        elif isinstance(node, ast.Expr):
            if _method_name(node.value) in ("to", "cuda", "cpu"):
                receiver = node.value.func.value
                if isinstance(receiver, ast.Name):
                    self.walked.bare_move_receivers.append(receiver)  # DF005 needs it proven a tensor
                elif isinstance(receiver, ast.Subscript) and isinstance(receiver.value, ast.Name):
                    self.walked.bare_item_moves.append(receiver.value)  # … or a dict or list, for an item
                elif is_self_attribute(receiver) and receiver.attr in self._torch_attributes(place.class_node):
                    found.add(BARE_MOVE)  # `self.mean.to(device)` of a tensor the class makes
        elif isinstance(node, ast.Call):
            self._call(node, place)
        elif isinstance(node, ast.Constant):
            pass
        else:
            self._assignment(node, place)

    def _assignment(self, node: ast.Assign | ast.AnnAssign, place: _Place) -> None:
        found = self.found
        single = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(single, ast.Name) and single.id in DEVICE_NAMES and _is_cuda_device(node.value):
            self.cuda_sites.append(node)  # `device = "cuda"`
        if isinstance(single, ast.Name) and isinstance(node.value, ast.Attribute) and _is_cuda_tensor_type(node.value):
            self.cuda_sites.append(node)  # `dtype = torch.cuda.FloatTensor`
        value = node.value
        if isinstance(value, ast.Call) and any(keyword.arg == "device_map" for keyword in value.keywords):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            self.dispatched.update(name for target in targets for name in bound_names(target))
        if value is not None and any(self._legacy_type(option) == "torch.cuda" for option in _if_options(value)):
            found.add(LEGACY_CONSTRUCTOR)  # `Tensor = torch.cuda.FloatTensor`: DF009 reports the alias
        if isinstance(single, ast.Name) and _deep_copies_a_name(value, self.imports):
            self.copied.add(value.args[0].id)
        if isinstance(single, ast.Name) and _method_name(value) in ("to", "cuda"):
            self.moved.add(single.id)
            if is_move(value, self.imports):
                self.placed.add(single.id)
        if isinstance(single, ast.Attribute) and isinstance(single.value, ast.Name) and isinstance(value, ast.Call):
            self.given_layers.add(single.value.id)
        if isinstance(node, ast.Assign) and place.method is not None and place.method.name == "__init__" \
                and self.owner_kind(place) not in (None, Kind.MODULE) and _moves_into_unpacked_attributes(node, self.imports):
            found.add(PLAIN_CLASS_MOVE)  # `self.G, self.D = G.to(device), D.to(device)`
        if isinstance(node, ast.Assign) and place.method is not None and _is_the_method_named(place.method, place.class_node):
            for target in node.targets:  # what DF015's `class_facts` counts as the attribute's assignments
                if is_self_attribute(target):
                    key = (id(place.class_node), target.attr)
                    self.stores[key] = self.stores.get(key, 0) + 1
        if is_self_attribute(single) and isinstance(value, ast.Call) and place.method is not None and place.method.name != "__init__" \
                and _tests_unset(place.parent, single.attr) and may_hold_state(value, self.imports):
            self.walked.constructions.append(value)  # DF018: `if self.head is None: self.head = nn.Linear(h.size(1), 1)`
        if place.class_node is not None and place.parent is place.class_node and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # `MEAN = torch.tensor(...)` in the class body
            constants = {target.id for target in targets if isinstance(target, ast.Name)}
            if constants:
                self._table_candidates(place.class_node, constants, node.value)
        if place.class_node is not None and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            attributes = {target.attr for target in targets if is_self_attribute(target)}
            if attributes:
                stored_once = isinstance(node, ast.Assign) and len(node.targets) == 1
                self._self_assignment(node.value, place, attributes, stored_once)

    def _call(self, node: ast.Call, place: _Place) -> None:
        found, owner = self.found, self.owner_kind(place)
        name = _method_name(node)
        if isinstance(node.func, ast.Name):
            given = {value.id for value in [*node.args, *(keyword.value for keyword in node.keywords)] if isinstance(value, ast.Name)}
            if given:
                self.constructions.append((node.func.id, given))
        elif is_self_attribute(node.func) and owner is not None and owner is not Kind.MODULE and place.class_node is not None:
            self.called_attributes.setdefault(place.class_node.name, set()).add(node.func.attr)  # `self.model(x)`
        self._hardcoded_cuda(node, name)
        if name == "device" and isinstance(place.parent, ast.withitem) and _is_cuda_device(node):
            self.cuda_sites.append(node)  # `with torch.device("cuda"):` sets the default device
        self._runtime_placement(node, name)
        if isinstance(node.func, ast.Name) and node.func.id == "iter" and len(node.args) == 1:
            # `next(iter(loader))`: DF002 reads a batch taken by hand like a loop's
            if isinstance(node.args[0], ast.Name):
                self.looped_over.add(node.args[0].id)
            elif isinstance(node.args[0], ast.Call) and _may_build_a_loader(node.args[0], self.imports):
                found.add(LOADER_LOOP)
        if name in PLACEMENT_KEEPING_METHODS and owner is not None and owner is not Kind.MODULE \
                and _moves_into_attribute_in_init(node, place) and is_move(node, self.imports) and not self._moves_a_tensor_attribute(node, place):
            found.add(PLAIN_CLASS_MOVE)  # `self.model = model.to(device).eval()`
        if name in ("to", "cuda"):
            found.add(MOVE_CALL)
            if isinstance(node.func.value, ast.Name):
                self.moved.add(node.func.value.id)
            if owner is not None and owner is not Kind.MODULE and _moves_into_attribute_in_init(node, place) and is_move(node, self.imports) \
                    and not self._moves_a_tensor_attribute(node, place):
                found.add(PLAIN_CLASS_MOVE)
            elif _moves_an_instance_attribute(node, place) and is_move(node, self.imports):
                found.add(PLAIN_CLASS_MOVE)  # `agent.q_net.to(device)`: a plain class's model moved from outside
            elif owner is not None and owner is not Kind.MODULE and _feeds_a_self_attribute(node, place):
                found.add(PLAIN_CLASS_MOVE)  # `self.model(data.to(self.device))`: the model is on that device
            elif owner is not None and owner is not Kind.MODULE and _bound_to_the_class_device(node, place):
                found.add(PLAIN_CLASS_MOVE)  # `x = x.unsqueeze(0).to(self.device)`: fed beside other arguments?
            if isinstance(node.func.value, ast.Call) and self.imports.qualify(node.func.value.func) in HOLDERS:
                found.add(LEGACY_CONSTRUCTOR)
        if any(keyword.arg == "device" for keyword in node.keywords):
            found.add(MOVE_CALL)  # a tensor created on a device: what meets it may need a move
        self._encoded_inputs(node)
        if name == "numpy" and not node.args and "cpu" not in method_chain(node.func.value):
            found.add(HOST_SINK)  # `t.numpy()` (DF008 leaves `t.cpu()...numpy()` alone)
        qualified = self.imports.qualify(node.func) or ""
        if qualified in CHECKPOINT_LOADERS and _may_lack_map_location(node):
            self.loads.append((node, place.parent))
        if name == "load_state_dict":
            self.state_dict_loads.append(node)
        if qualified.split(".", 1)[0] in HOST_LIBRARY_MODULES or may_be_axes_call(node, self.imports):
            found.add(HOST_SINK)  # … or `ax.imshow(t)` of a file that plots
        legacy = self._legacy_type(node.func)
        if legacy == "torch.cuda" or (legacy == "torch" and any(keyword.arg == "device" for keyword in node.keywords)):
            found.add(LEGACY_CONSTRUCTOR)  # a CUDA-only constructor, or a CPU-only one given `device=`
        if name == "type" and len(node.args) == 1 and self._legacy_type(node.args[0]) is not None:
            found.add(LEGACY_CONSTRUCTOR)  # `x.type(torch.FloatTensor)` moves a GPU tensor to the CPU; a CUDA type needs a GPU
        if qualified in FUNCTIONAL_LOSSES and node.args and any(
            keyword.arg in LOSS_TENSOR_KEYWORDS and isinstance(keyword.value, (ast.Name, ast.Attribute)) for keyword in node.keywords
        ):
            found.add(LOSS_WEIGHT)
        in_method = place.method is not None and place.method.name != "__init__" and owner is not Kind.OBJECT
        if in_method and (self._is_unplaced_factory(node) or self._calls_a_held_type(node, place.class_node)):
            self.factory_classes[id(place.class_node)] = place.class_node  # DF016: where does it go?
        elif in_method and isinstance(node.func, ast.Name):
            self.named_calls_in_methods.setdefault(node.func.id, {})[id(place.class_node)] = place.class_node  # `causal_mask(t)`?
        if isinstance(node.func, ast.Call) and in_method and may_hold_state(node.func, self.imports):
            self.walked.constructions.append(node.func)  # DF018 if it builds a Module (FileFacts asks the project)
        if name == "append" and is_self_attribute(node.func.value) and owner is not Kind.OBJECT and self._may_build(node.args):
            self.appended.add((id(place.class_node), node.func.value.attr))  # a container if `__init__` made it `[]`

    def _encoded_inputs(self, call: ast.Call) -> None:
        """DF004's encodings fed to a moved model: a `return_tensors="pt"` call anywhere in the file
        (`encodings_meet_a_moved_model` then looks for the meeting)."""
        if any(keyword.arg == "return_tensors" and isinstance(keyword.value, ast.Constant) and keyword.value.value == "pt"
               for keyword in call.keywords):
            self.encoded = True

    def _legacy_type(self, func: ast.expr) -> str | None:
        """"torch.cuda" for `torch.cuda.FloatTensor` and the like, "torch" for `torch.LongTensor`."""
        owner, _, type_name = (self.imports.qualify(func) or "").rpartition(".")
        return owner if type_name in LEGACY_DTYPES and owner in ("torch", "torch.cuda") else None

    def _moves_a_tensor_attribute(self, move: ast.Call, place: _Place) -> bool:
        """A move in a method other than `__init__` of an attribute `__init__` does not bind only to
        parameters or to calls of something else than torch functions (a scheduler's
        `self.alphas_cumprod = self.alphas_cumprod.to(device)`): no model DF020 follows there."""
        if place.method is None or place.method.name == "__init__":
            return False
        receiver = move.func.value if isinstance(move.func, ast.Attribute) else None
        while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute):  # `.to(device).eval()`
            receiver = receiver.func.value
        if not is_self_attribute(receiver) or place.class_node is None:
            return True
        init = next((item for item in place.class_node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
        bound = [node.value for node in every_node(init) if isinstance(node, ast.Assign)
                 and any(is_self_attribute(target) and target.attr == receiver.attr for target in node.targets)] if init is not None else []
        return not bound or not all(isinstance(value, ast.Name) or isinstance(value, ast.Call) and self._may_build_a_model(value) for value in bound)

    def _may_build_a_model(self, call: ast.Call) -> bool:
        qualified = self.imports.qualify(call.func) or ""
        return not qualified.startswith("torch.") or (qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1][:1].isupper())

    def _torch_attributes(self, class_node: ast.ClassDef | None) -> set[str]:
        """Attributes the class assigns from a torch call that is not `torch.nn.*` (DF005's tensors)."""
        if class_node is None:
            return set()
        if id(class_node) not in self.class_tensors:
            names = set()
            for node in every_node(class_node):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    qualified = self.imports.qualify(node.value.func) or ""
                    if qualified.startswith("torch.") and not qualified.startswith("torch.nn."):
                        names.update(target.attr for target in node.targets if isinstance(target, ast.Attribute))
            self.class_tensors[id(class_node)] = names
        return self.class_tensors[id(class_node)]

    def _hardcoded_cuda(self, node: ast.Call, name: str | None) -> None:
        """The calls DF001 rewrites: a plain `.cuda()` (no other GPU named, or an option's, `analysis.gpu_options`), a CUDA device in
        `.to(...)`, `device=` or `map_location=`, a `--device` option defaulting to CUDA, a
        global default set to CUDA (`torch.set_default_device("cuda")`), and transformers'
        `pipeline(task, device=0)`."""
        if name == "cuda":
            positional, keywords = node.args, {keyword.arg for keyword in node.keywords}
            zero = not positional or (len(positional) == 1 and isinstance(positional[0], ast.Constant) and positional[0].value == 0)
            option = len(positional) == 1 and isinstance(positional[0], ast.Attribute) and isinstance(positional[0].value, ast.Name)
            if (zero or option) and keywords <= {"non_blocking"}:  # `.cuda(args.gpu)`: maybe one GPU an option chooses
                self.cuda_sites.append(node)
        elif name == "to" and any(_is_cuda_device(value) for value in [*node.args[:1], *_keyword_values(node, "device")]):
            self.cuda_sites.append(node)
        if any(_is_cuda_device(value) for value in _keyword_values(node, "device", "map_location")):
            self.cuda_sites.append(node)
        if name == "add_argument" and any(_is_cuda_device(value) for value in _keyword_values(node, "default")):
            self.cuda_sites.append(node)
        if self.imports.qualify(node.func) in PIPELINE_FACTORIES and any(
                isinstance(value, ast.Constant) and value.value == 0 and type(value.value) is int for value in _keyword_values(node, "device")):
            self.cuda_sites.append(node)  # `pipeline(task, device=0)`: transformers' GPU 0
        if name in ("set_default_device", "set_default_tensor_type") and node.args and (
            _is_cuda_device(node.args[0]) or _is_cuda_tensor_type(node.args[0])
        ):
            self.cuda_sites.append(node)  # a global default that needs CUDA

    def _runtime_placement(self, node: ast.Call, name: str | None) -> None:
        """DF013's cases: `torch.jit.trace(...)`; the parts of a move after `device_map=` loading
        (`moves_after_dispatch`) or after an optimizer's `load_state_dict` (DF022, `moves_after_optimizer_load`)."""
        qualified = self.imports.qualify(node.func)
        if qualified in ("torch.jit.trace", "torch.jit.trace_module"):
            self.found.add(RUNTIME_PLACEMENT)
        if qualified is not None and qualified.startswith("torch.nn.") and qualified.endswith(".DataParallel"):
            self.found.add(DATA_PARALLEL)
        if is_move(node, self.imports) and isinstance(node.func.value, ast.Name):
            self.moves.append((node.func.value.id, node.lineno))
        if name == "load_state_dict" and isinstance(node.func.value, ast.Name):
            self.state_loads.append((node.func.value.id, node.lineno))

    def moves_after_dispatch(self) -> bool:
        """DF013: a name moved that was loaded with `device_map=` (anywhere in the file here, in its
        scope for the rule)."""
        return any(moved in self.dispatched for moved, _ in self.moves)

    def moves_after_optimizer_load(self) -> bool:
        """DF022: a name bound to a call moved after a `torch.optim` optimizer's `load_state_dict`
        (or one unpacked from a call of a function of the file: `model, optimizer = build()`)
        or after an Adagrad is built
        (anywhere in the file here; in one block for the rule)."""
        optimizers = {
            target for target, call in self.walked.calls_assigned if (self.imports.qualify(call.func) or "").startswith("torch.optim.")
        }
        # `model, optimizer = build()` of a function of the file (the rule asks what it returns)
        functions = {node.name for node in self.walked.tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        unpacked = {target for target, call in self.walked.calls_unpacked if isinstance(call.func, ast.Name) and call.func.id in functions}
        eager = [call.lineno for _, call in self.walked.calls_assigned if self.imports.qualify(call.func) in EAGER_STATE_OPTIMIZERS]
        copies = self._parameter_copies() if self.moves else []
        first_load = min([line for receiver, line in self.state_loads if receiver in optimizers | unpacked] + eager + copies, default=None)
        return first_load is not None and any(first_load < line and moved in self.walked.built | unpacked for moved, line in self.moves)

    def _parameter_copies(self) -> list[int]:
        """Lines of `ema = EMA(model)` where the file's class copies the parameters it is given
        (`analysis.parameter_copies`), asked only when the file builds a plain class of its own."""
        called: dict[str, int] = {}
        for _, call in self.walked.calls_assigned:
            if isinstance(call.func, ast.Name):
                called[call.func.id] = min(call.lineno, called.get(call.func.id, call.lineno))
        tree = self.walked.tree
        if not any(isinstance(node, ast.ClassDef) and not node.bases and node.name in called for node in tree.body):
            return []
        return [called[name] for name in classes_copying_parameters(tree, self.imports) if name in called]

    def _self_assignment(self, value: ast.expr, place: _Place, attributes: set[str], single_target: bool) -> None:
        owner = self.owner_kind(place)
        if owner is Kind.OBJECT or place.class_node not in self.walked.tree.body:  # PLAIN_CLASS_TABLE: `tables_in_use`
            self._table_candidates(place.class_node, attributes, value)
        if owner is not None and owner is not Kind.MODULE and place.method is not None and place.method.name == "__init__" \
                and isinstance(value, ast.Name) and value.id in {argument.arg for argument in parameters(place.method)}:
            self.storing_classes.add(place.class_node.name)  # DF020: a model every construction may give moved
            given = [argument.arg for argument in parameters(place.method)][1:]  # (not `self`)
            if place.class_node in self.walked.tree.body and value.id in given:
                self.stored_parameters.setdefault(place.class_node.name, []).extend(
                    (attribute, value.id, given.index(value.id)) for attribute in attributes)
        if owner is Kind.OBJECT or place.method is None or place.method.name != "__init__":
            return  # DF014 and DF015 look at what `__init__` stores
        if self._may_build(_container_items(value)):
            self.raised(MODULE_CONTAINER, value)
        if isinstance(value, ast.List) and not value.elts:
            self.empty_lists.update((id(place.class_node), attribute) for attribute in attributes)
            self.class_nodes[id(place.class_node)] = place.class_node
        if not single_target:
            return
        if isinstance(value, ast.Call) and (self.imports.qualify(value.func) or "").startswith("torch.distributions.") \
                and self._kept_for_other_methods(place.class_node, *attributes):
            self.raised(DISTRIBUTION_ATTRIBUTE, value)  # `self.prior = Normal(torch.zeros(d), torch.ones(d))`
            return
        verdict = self._may_be_tensor(value, place.method)  # first: it is cheaper than the class-wide walk
        if verdict is not False and self._kept_for_other_methods(place.class_node, *attributes):
            if verdict is None:
                self.walked.tensor_candidates.append(value)  # a name the value analysis must prove a tensor
                self.walked.class_sites.setdefault(MODULE_TENSOR_ATTRIBUTE, []).append(value)
            else:
                self.raised(MODULE_TENSOR_ATTRIBUTE, value)

    def _table_candidates(self, class_node: ast.ClassDef, names: set[str], value: ast.expr) -> None:
        """Note `names` of the class given `value`: a table while every value they are given is made
        by torch (or from other tables, `_tables_of`) and placed nowhere (`tables_in_use`)."""
        nodes = every_node(value)
        verdict: bool | frozenset[str] = False
        if not _places(nodes):
            verdict = any(self._is_torch_call(n) for n in nodes) or frozenset(n.attr for n in nodes if is_self_attribute(n)) or False
        tables = self.table_candidates.setdefault(id(class_node), (class_node, {}))[1]
        for name in names:
            tables.setdefault(name, []).append(verdict)

    def _kept_for_other_methods(self, class_node: ast.ClassDef, attribute: str) -> bool:
        """DF014's attributes: assigned by one statement of the class's methods (not counting
        nested functions), or two of `__init__` (one in each branch of an `if`), and mentioned by a
        method other than `__init__`."""
        if id(class_node) not in self.attribute_uses:
            stores: dict[str, tuple[int, int]] = {}  # attribute → (stores in `__init__`, stores in other methods)
            mentioned: set[str] = set()
            for method in class_node.body:
                if not isinstance(method, FUNCTIONS):
                    continue
                in_init = method.name == "__init__"
                for node in scope_nodes(method.body, FUNCTIONS):
                    if isinstance(node, ast.Assign):
                        for target in node.targets:
                            if is_self_attribute(target):
                                init, other = stores.get(target.attr, (0, 0))
                                stores[target.attr] = (init + 1, other) if in_init else (init, other + 1)
                if not in_init:
                    mentioned.update(node.attr for node in every_node(method) if is_self_attribute(node))
            self.attribute_uses[id(class_node)] = (stores, mentioned)
        stores, mentioned = self.attribute_uses[id(class_node)]
        init, other = stores.get(attribute, (0, 0))
        return (init in (1, 2) and other == 0 or init == 0 and other == 1) and attribute in mentioned

    def _may_build(self, items: list[ast.expr | None]) -> bool:
        """Some item is a call that may construct a Module or a Parameter (not `dict(...)`)."""
        for item in items:
            if isinstance(item, ast.Call) and not (self.imports.qualify(item.func) or "").startswith("builtins."):
                return True
        return False

    def _may_be_tensor(self, value: ast.expr, init: ast.FunctionDef | ast.AsyncFunctionDef) -> bool | None:
        """The values DF014 accepts. A name stored whole must be proven a tensor by the value
        analysis (None: ask it; a parameter of `__init__` never rebound there is settled by its
        annotation); anything else is a tensor expression over names with tensor evidence in
        `__init__` (`analysis.tensors.is_tensor_expression`), not rooted in `torch.nn.*`; either
        branch of a conditional expression whose other branch is `None`."""
        if isinstance(value, ast.IfExp):
            for branch, other in ((value.body, value.orelse), (value.orelse, value.body)):
                if isinstance(other, ast.Constant) and other.value is None:
                    return self._may_be_tensor(branch, init)
        if isinstance(value, ast.Call) and self.imports.qualify(value.func) in VARIABLE_WRAPPERS and value.args:
            return self._may_be_tensor(value.args[0], init)  # `Variable(t)` is `t` today (AGNN's `self.beta`)
        if isinstance(value, ast.Name):
            settled = self._settled_parameter_kind(value.id, init)
            return None if settled is None else settled is Kind.TENSOR
        if isinstance(value, ast.List):  # `self.anchors = [torch.tensor(...), ...]`: each item a tensor
            return bool(value.elts) and all(
                not isinstance(item, (ast.Starred, ast.Name)) and self._may_be_tensor(item, init) is True for item in value.elts
            )
        if isinstance(value, ast.ListComp):  # `self.anchors = [torch.tensor(a) for a in anchors]`: its item a tensor
            return len(value.generators) == 1 and not isinstance(value.elt, ast.Name) and self._may_be_tensor(value.elt, init) is True
        if isinstance(value, ast.Call) and is_self_attribute(value.func):
            return self._method_returns_tensors(value.func.attr, init)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            function = next((node for node in self.walked.tree.body if isinstance(node, FUNCTIONS) and node.name == value.func.id), None)
            if function is not None and self._returns_tensors(function):
                return True  # `self.b = sample_b(sigma, size)`
        root = value
        while isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute) and self.imports.qualify(root.func) is None:
            root = root.func.value  # `nn.Parameter(t).cuda()`: the call the chain starts from
        if isinstance(root, ast.Call) and (self.imports.qualify(root.func) or "").startswith("torch.nn."):
            return False  # Parameters, layers and functional ops at the root: DF014 leaves them
        return self._tensor_expression(value, init, frozenset())

    def _method_returns_tensors(self, name: str, init: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """DF014's `self.table = self.build_table()`: the class's method `name` (not a generator)
        returns a tensor expression at every `return`."""
        class_node = next((owner for method, owner in self.walked.inits if method is init), None)
        method = next((item for item in class_node.body if isinstance(item, ast.FunctionDef) and item.name == name), None) if class_node else None
        if method is None or name == "__init__":
            return False
        return self._returns_tensors(method)

    def _returns_tensors(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Not a generator, and a tensor expression at every `return`."""
        nodes = list(scope_nodes(function.body, (*FUNCTIONS, ast.ClassDef, ast.Lambda)))
        if any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in nodes):
            return False
        returned = [node.value for node in nodes if isinstance(node, ast.Return)]
        return bool(returned) and all(item is not None and self._tensor_expression(item, function, frozenset()) for item in returned)

    def _settled_parameter_kind(self, name: str, init: ast.FunctionDef | ast.AsyncFunctionDef) -> Kind | None:
        """The kind of a parameter of `__init__` that the body never rebinds nor tests with
        `isinstance`: what its annotation says (the value analysis reads it so, and infers nothing
        from calls for `__init__`); None for any other name."""
        named, unsettled = self._init_names(init)
        if name not in named or name in unsettled:
            return None
        return named[name]

    def _init_names(self, init: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[dict[str, Kind], set[str]]:
        if id(init) not in self.init_names:
            arguments = init.args
            named = {
                argument.arg: ANNOTATION_KINDS.get(self._annotation_name(argument.annotation), Kind.UNKNOWN)
                for argument in parameters(init)
            }
            for special, kind in ((arguments.vararg, Kind.TUPLE), (arguments.kwarg, Kind.DICT)):
                if special is not None:
                    named[special.arg] = kind
            unsettled = {node.id for node in every_node(init) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
            unsettled |= {
                node.args[0].id for node in every_node(init)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
                and node.args and isinstance(node.args[0], ast.Name)
            }
            self.init_names[id(init)] = (named, unsettled)
        return self.init_names[id(init)]

    def _annotation_name(self, annotation: ast.expr | None) -> str:
        if isinstance(annotation, ast.Subscript):
            annotation = annotation.value
        return (self.imports.qualify(annotation) or "") if annotation is not None else ""

    def _may_be_evidenced(self, name: str, function: ast.FunctionDef | ast.AsyncFunctionDef, seen: frozenset[str] = frozenset()) -> bool:
        """What `analysis.tensors.tensor_names` may count as a tensor in a function (`__init__` for
        DF014, the method a table meets a name in for DF012): a name used with a tensor-only member,
        given first to a torch op, annotated as a tensor, or assigned a value that is a tensor
        expression over such names."""
        if name in seen:
            return False
        for node in every_node(function):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name \
                    and node.attr in TENSOR_ONLY_MEMBERS:
                return True
            if isinstance(node, ast.Call) and node.args and name in operand_names(node.args[0]) and self._is_tensor_op(node.func):
                return True  # `torch.cat([a, b])`: the first argument of a torch op is a tensor
            if isinstance(node, ast.arg) and node.arg == name and node.annotation is not None and (
                    self._annotation_name(node.annotation) in TENSOR_ANNOTATIONS or ast.unparse(node.annotation) in TENSOR_ANNOTATIONS):
                return True
            if isinstance(node, ast.Assign) and any(isinstance(target, ast.Name) and target.id == name for target in node.targets) \
                    and self._tensor_expression(node.value, function, seen | {name}):
                return True
        return False

    def _is_tensor_op(self, func: ast.expr) -> bool:
        """`torch.cat`, `F.relu`: a torch function that takes tensors (not a factory, not a layer)."""
        qualified = self.imports.qualify(func)
        return qualified is not None and qualified not in FACTORY_FUNCTIONS and is_torch_tensor_function({qualified})

    def _tensor_expression(self, value: ast.expr, init: ast.FunctionDef | ast.AsyncFunctionDef, seen: frozenset[str]) -> bool:
        """`analysis.tensors.is_tensor_expression`, with names judged by `_may_be_evidenced`."""
        again = lambda inner: self._tensor_expression(inner, init, seen)
        if isinstance(value, ast.Name):
            return self._may_be_evidenced(value.id, init, seen)
        if isinstance(value, ast.BinOp):
            return again(value.left) or again(value.right)
        if isinstance(value, ast.Compare):
            return any(again(operand) for operand in [value.left, *value.comparators])
        if isinstance(value, ast.UnaryOp) and not isinstance(value.op, ast.Not):
            return again(value.operand)
        if isinstance(value, ast.Attribute) and value.attr in ("T", "mT", "data", "grad"):
            return again(value.value)
        if isinstance(value, ast.Subscript):
            return again(value.value)
        if isinstance(value, ast.Call):
            qualified = self.imports.qualify(value.func)
            if qualified is not None and qualified.startswith("torch."):
                return qualified in LEGACY_CPU_CONSTRUCTORS or is_torch_tensor_function({qualified})
            if isinstance(value.func, ast.Attribute) and value.func.attr not in NON_TENSOR_METHODS:
                return again(value.func.value)
        return False

    def _is_torch_call(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and (self.imports.qualify(node.func) or "").startswith("torch.")

    def _calls_a_held_type(self, node: ast.Call, class_node: ast.ClassDef) -> bool:
        """`self.Tensor(input.size())` where `__init__` assigns `self.Tensor` a name or an attribute
        (pix2pixHD's `self.Tensor = tensor`): it may be a CPU tensor type."""
        if not (is_self_attribute(node.func) and class_node is not None):
            return False
        if id(class_node) not in self.held_values:
            init = next((item for item in class_node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
            self.held_values[id(class_node)] = attributes_given_values(init) if init is not None else set()
        return node.func.attr in self.held_values[id(class_node)]

    def _is_unplaced_factory(self, node: ast.AST) -> bool:
        return is_unplaced_factory(node, self.imports)


def _any_unguarded(sites: list[ast.AST], tree: ast.Module) -> bool:
    """Some site is outside every branch of an `if`/`while`/conditional expression whose test asks
    about CUDA or a GPU, and outside such a test (DF001's `_guarded`)."""
    parents = {id(child): node for node in every_node(tree) for child in children(node)}
    for site in sites:
        child, current, guarded = site, parents.get(id(site)), False
        while current is not None and not guarded:
            if isinstance(current, (ast.If, ast.IfExp, ast.While)) and child is not current.test:
                guarded = bool(GUARD_WORDS.search(ast.unparse(current.test)))
            guarded = guarded or (isinstance(current, ast.IfExp) and child is current.test)
            child, current = current, parents.get(id(current))
        if not guarded:
            return True
    return False


def _may_lack_map_location(call: ast.Call) -> bool:
    """DF007 looks at loads with at most the path given by position, and no `map_location` or `**`."""
    if len(call.args) > 1 or any(isinstance(argument, ast.Starred) for argument in call.args):
        return False
    return not any(keyword.arg in ("map_location", None) for keyword in call.keywords)


def _places(nodes: list[ast.AST]) -> bool:
    """`.to(...)`, `.cuda(...)` or `device=` somewhere: DF012 leaves a table made so alone."""
    return any(
        (isinstance(node, ast.Attribute) and node.attr in ("to", "cuda")) or (isinstance(node, ast.keyword) and node.arg == "device")
        for node in nodes
    )


def _computes_a_table_with_a_parameter(function: ast.FunctionDef | ast.AsyncFunctionDef, tables: set[str]) -> bool:
    """Arithmetic of the function putting one of the top level's `tables` (a bare name) with a value
    computed from one of its parameters."""
    names = {argument.arg for argument in parameters(function)}
    return any(
        isinstance(node, ast.BinOp) and any(
            isinstance(side, ast.Name) and side.id in tables and set(_names_computed_with(other)) & names
            for side, other in ((node.left, node.right), (node.right, node.left))
        )
        for node in scope_nodes(function.body)
    )


def _names_computed_with(expression: ast.expr) -> list[str]:
    """The names `expression` computes with (`x` in `x`, `x * 2`, `-x`, `x.float()`, `x[0]`), as DF012 reads operands."""
    while True:
        if isinstance(expression, ast.Name):
            return [expression.id]
        if isinstance(expression, ast.BinOp):
            return _names_computed_with(expression.left) + _names_computed_with(expression.right)
        if isinstance(expression, ast.UnaryOp):
            expression = expression.operand
        elif isinstance(expression, ast.Call) and isinstance(expression.func, ast.Attribute):
            expression = expression.func.value
        elif isinstance(expression, ast.Subscript):
            expression = expression.value
        else:
            return []


def _is_the_method_named(method: ast.FunctionDef | ast.AsyncFunctionDef, class_node: ast.ClassDef) -> bool:
    """The last `def` of its name in the class body: the one the libcst rules' `class_facts` keeps."""
    last = next(node for node in reversed(class_node.body) if isinstance(node, FUNCTIONS) and node.name == method.name)
    return last is method


def _nodes_with_function(class_node: ast.ClassDef) -> Iterator[tuple[ast.AST, ast.FunctionDef | ast.AsyncFunctionDef | None]]:
    """The nodes of a class, each with the function that is its scope for the libcst rules (the
    nearest `def`; lambdas and classes do not count; None at class level)."""
    stack: list[tuple[ast.AST, ast.FunctionDef | ast.AsyncFunctionDef | None]] = [(class_node, None)]
    while stack:
        node, function = stack.pop()
        yield node, function
        inner = node if isinstance(node, FUNCTIONS) else function
        stack.extend((child, inner) for child in children(node))


def _deep_copies_a_name(value: ast.expr | None, imports: ImportTable) -> bool:
    """`copy.deepcopy(model)`: DF017's copy."""
    return isinstance(value, ast.Call) and bool(value.args) and isinstance(value.args[0], ast.Name) \
        and imports.qualify(value.func) == "copy.deepcopy"


def _if_options(value: ast.expr) -> list[ast.expr]:
    """`a if c else b` → [a, b]; anything else → [value]."""
    return [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]


def _tests_unset(node: ast.AST | None, attribute: str) -> bool:
    """`if self.<attribute> is None:`"""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) and is_self_attribute(test.left)
            and test.left.attr == attribute and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


def may_hold_state(construction: ast.Call, imports: ImportTable) -> bool:
    """`torch_names.holds_state`: torch.nn classes known to hold no parameters or buffers do not."""
    qualified = imports.qualify(construction.func) or ""
    if not qualified.startswith("torch.nn."):
        return True
    class_name = qualified.rsplit(".", 1)[1]
    if class_name in PARAMETER_FREE_NN:
        return False
    if class_name.endswith("Loss"):
        return bool(construction.args) or any(keyword.arg in (*LOSS_TENSOR_KEYWORDS, None) for keyword in construction.keywords)
    return True


def _container_items(value: ast.expr) -> list[ast.expr | None]:
    """The items of a list, tuple or dict display or comprehension (nothing for other values)."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return list(value.elts)
    if isinstance(value, ast.Dict):
        return list(value.values)
    if isinstance(value, ast.ListComp):
        return [value.elt]
    return [value.value] if isinstance(value, ast.DictComp) else []


def _is_cuda_device(node: ast.expr) -> bool:
    """`"cuda"`, `"cuda:0"`, `f"cuda:{args.gpu}"` or another string naming an option's GPU (maybe the one it chooses,
    `analysis.gpu_options`), or a call given one first (`torch.device("cuda")`, `torch.device("cuda", 0)`)."""
    if isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    named = gpu_in_device_string(node)
    if isinstance(named, ast.Attribute) and isinstance(named.value, ast.Name):
        return True
    return isinstance(node, ast.Constant) and node.value in CUDA_LITERALS




def _is_cuda_tensor_type(node: ast.expr) -> bool:
    """`torch.cuda.FloatTensor` (as written), or the same as a string."""
    code = node.value if isinstance(node, ast.Constant) else ast.unparse(node) if isinstance(node, ast.Attribute) else None
    return isinstance(code, str) and code.startswith("torch.cuda.") and code.endswith("Tensor")


def _keyword_values(call: ast.Call, *names: str) -> list[ast.expr]:
    return [keyword.value for keyword in call.keywords if keyword.arg in names]


def built_once_and_called(found: Walk, classes: dict[str, Kind]) -> list[ast.Call]:
    """DF003's start: in some scope, a name bound once, by `name = SomeClass(...)` (a resolvable
    class, not one of the file proven plain, that may hold state), and called somewhere
    (`name(x)`), in a scope that places something itself (a `.to()`/`.cuda()` or `device=`: the
    rule calls the name with device data of that scope). Whether the constructions build Modules
    is for `FileFacts` to ask. The top level also counts as placing when one of its functions
    places (the rule follows a global model into the functions that call it, or are handed it), and
    so does a function that hands such a name to a function of the file (`train(args, model, device,
    loader)` in `main`)."""
    starts: list[ast.Call] = []
    top = found.tree.body
    helpers = {node.name for node in top if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    # and those a function imported from the project may call (`train_one_epoch(model, loader, opt, criterion)`)
    helpers |= {name for name, qualified in found.imports.names.items() if may_be_project_name(qualified)}
    handed = {  # names handed to a top-level function of the file: the rule follows them into it
        arg.id for node in every_node(found.tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers
        for arg in [*node.args, *(keyword.value for keyword in node.keywords)] if isinstance(arg, ast.Name)
    } if helpers else set()
    called = found.called | handed
    candidates = found.built & called
    if not candidates:
        return starts
    # only the scopes where a candidate is bound from a call (`model = Net()`) can start anything
    lines = sorted({call.lineno for name, call in found.calls_assigned if name in candidates})
    scopes = [top] + [
        node.body for node in every_node(found.tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _spans(node, lines)
    ]
    for body in scopes:
        bindings: dict[str, int] = {}
        constructed: dict[str, ast.Call] = {}
        places = False
        for node in scope_nodes(body):
            if isinstance(node, ast.Call):
                places = places or _is_placing_call(node)
            if isinstance(node, ast.Assign):
                value = node.value
                if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(value, ast.Call) \
                        and classes.get(found.imports.qualify(value.func) or "", Kind.UNKNOWN) is not Kind.OBJECT \
                        and found.imports.qualify(value.func) is not None and may_hold_state(value, found.imports):
                    constructed[node.targets[0].id] = value
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
                targets = [node.target]
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
            else:
                continue
            for target in targets:
                for name in bound_names(target):
                    bindings[name] = bindings.get(name, 0) + 1
        found_here = {name: call for name, call in constructed.items() if bindings[name] == 1 and name in called}
        helps = body is top or bool(found_here.keys() & handed)  # the rule follows a model handed to the file's functions
        if found_here and (places or (helps and _some_function_places(top))):
            starts += found_here.values()
    return starts


def _spans(function: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[int]) -> bool:
    """Some of the (sorted) `lines` lie within the function."""
    index = bisect.bisect_left(lines, function.lineno)
    return index < len(lines) and lines[index] <= (function.end_lineno or function.lineno)


def _some_function_places(top: list[ast.stmt]) -> bool:
    return any(_is_placing_call(node) for function in top if isinstance(function, ast.FunctionDef) for node in scope_nodes(function.body))






def _captures_own_device(node: ast.AST) -> bool:
    """`self.device = next(<...>.parameters()...).device`: DF023's start (the rule checks the rest)."""
    return (
        isinstance(node, ast.Assign) and len(node.targets) == 1 and is_self_attribute(node.targets[0])
        and node.targets[0].attr == "device" and isinstance(node.value, ast.Attribute) and node.value.attr == "device"
        and any(_method_name(inner) == "parameters" for inner in every_node(node.value))
    )


def _is_placing_call(node: ast.AST) -> bool:
    """A `.to()`/`.cuda()` call or a call given `device=`."""
    return isinstance(node, ast.Call) and (_method_name(node) in ("to", "cuda") or any(keyword.arg == "device" for keyword in node.keywords))


def _may_loop_over_a_loader(looped_over: set[str], found: Walk) -> bool:
    """What `analysis.loaders.is_dataloader` may accept: a parameter annotated as a DataLoader, or
    any name in a file that builds a DataLoader (it may be bound to one, be given one by the
    callers of its function, or be proven one by the value analysis). Names bound by imported
    functions and parameters other files may give a loader are decided lazily, with the project
    (`_imported_calls_binding`, `_parameters_other_files_may_give`)."""
    if any(parameter in looped_over and _names_a_loader(annotation, found.imports) for parameter, annotation in found.annotations):
        return True
    return any(isinstance(node, ast.Call) and _may_build_a_loader(node, found.imports) for node, _ in found.nodes)


def _may_loop_over_listed_batches(iterables: list[ast.expr], found: Walk) -> bool:
    """A `for a, b in ...` over a list of tuple displays (`_may_list_batches`): written there, bound
    to a name the loop reads, or returned by a top-level function of the file the loop calls (or
    whose call the name is bound to): what the value analysis may prove a `Kind.BATCH_LIST`."""
    if not iterables:
        return False
    listing = {function.name for function in found.tree.body if isinstance(function, FUNCTIONS) and _returns_listed_batches(function)}
    listed = _names_bound_to_listed_batches(node for node, _ in found.nodes)
    listed |= {name for name, call in found.calls_assigned if isinstance(call.func, ast.Name) and call.func.id in listing}
    return any(
        _may_list_batches(iterable) or (isinstance(iterable, ast.Name) and iterable.id in listed)
        or (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id in listing)
        for iterable in iterables
    )


def _returns_listed_batches(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A `return` of a list of tuple displays, written there or bound to the name returned."""
    nodes = list(ast.walk(function))
    listed = _names_bound_to_listed_batches(nodes)
    return any(
        isinstance(node, ast.Return) and node.value is not None
        and (_may_list_batches(node.value) or (isinstance(node.value, ast.Name) and node.value.id in listed))
        for node in nodes
    )


def _names_bound_to_listed_batches(nodes: Iterable[ast.AST]) -> set[str]:
    """The names that assignments among `nodes` bind to a list of tuple displays."""
    return {
        target.id for node in nodes if isinstance(node, ast.Assign) and _may_list_batches(node.value)
        for target in node.targets if isinstance(target, ast.Name)
    }


def _may_list_batches(node: ast.AST) -> bool:
    """A list of tuple displays the value analysis may prove batches of tensors (`Kind.BATCH_LIST`):
    `[(x[i:i + n], y[i:i + n]) for i in range(0, len(x), n)]`, `[(x1, y1), (x2, y2)]`; no row holds a
    literal (`[("conv", "stem"), ...]` is a table of names)."""
    rows = [node.elt] if isinstance(node, ast.ListComp) else node.elts if isinstance(node, ast.List) else []
    return bool(rows) and all(
        isinstance(row, ast.Tuple) and len(row.elts) >= 2 and not any(isinstance(item, ast.Constant) for item in row.elts) for row in rows
    )


def _parameters_other_files_may_give(looped_over: set[str], found: Walk) -> list[tuple[str, int, str]]:
    """(function, position, parameter) for each unannotated positional parameter a loop iterates,
    of a top-level function the file never calls (`FileFacts.has_signal` asks its callers in the
    files beside it, as `loaders.is_dataloader` does)."""
    return [
        (function.name, position, argument.arg)
        for function in found.tree.body if isinstance(function, FUNCTIONS) and function.name not in found.called
        for position, argument in enumerate([*function.args.posonlyargs, *function.args.args])
        if argument.arg in looped_over and argument.annotation is None
    ]


def _imported_calls_binding(looped_over: set[str], found: Walk) -> list[str]:
    """The imported functions (qualified) whose results bind a looped-over name, or a name the file
    gives a function for a looped-over parameter: `train_loader, val_loader = make_loaders()` may be
    loaders of another file (`FileFacts.has_signal` asks the project index, lazily)."""
    names = looped_over | _names_given_to(looped_over, found)
    called = {found.imports.qualify(call.func) or "" for name, call in [*found.calls_assigned, *found.calls_unpacked] if name in names}
    return sorted(name for name in called if "." in name and not name.startswith(("torch.", "numpy.", "builtins.")))


def _names_given_to(parameters: set[str], found: Walk) -> set[str]:
    """Names the file hands to its top-level functions that have one of `parameters`
    (`train_epoch(model, train_loader, ...)` for `def train_epoch(model, loader, ...)` looping over
    `loader`), at any position: the value analysis gives the parameter their kind."""
    functions = {
        function.name for function in found.tree.body if isinstance(function, FUNCTIONS)
        and parameters & {argument.arg for argument in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    }
    if not functions:
        return set()
    return {
        value.id for node, _ in found.nodes if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions
        for value in [*node.args, *(keyword.value for keyword in node.keywords)] if isinstance(value, ast.Name)
    }


def _may_build_a_loader(call: ast.Call, imports: ImportTable) -> bool:
    """`DataLoader(...)` however imported (`DL(...)`, `data.DataLoader(...)`)."""
    return _names_a_loader(call.func, imports)


def _names_a_loader(name: ast.expr, imports: ImportTable) -> bool:
    """`DataLoader`, `data.DataLoader`, `torch.utils.data.DataLoader`, however imported."""
    qualified = imports.qualify(name) or ""
    return qualified in DATALOADER_NAMES or qualified.endswith("DataLoader")


def _moves_into_attribute_in_init(move: ast.Call, place: _Place) -> bool:
    """`self.model = model.to(device)` or `self.model.to(device)` directly in `__init__`, or a
    model attribute moved in place in another method (`self.model.to(self.device)` or `self.model =
    self.model.to(self.device)` at the top of `fit`): the moves DF020 starts from."""
    parent = place.parent
    if place.method is None:
        return False
    if isinstance(parent, ast.Expr) and parent.value is move:
        return isinstance(move.func, ast.Attribute) and is_self_attribute(move.func.value)
    if not (isinstance(parent, ast.Assign) and parent.value is move):
        return False
    if place.method.name == "__init__":
        return any(is_self_attribute(target) for target in parent.targets)
    receiver = move.func.value if isinstance(move.func, ast.Attribute) else None  # `self.model = self.model.to(device)`
    return is_self_attribute(receiver) and any(is_self_attribute(target) and target.attr == receiver.attr for target in parent.targets)


def _moves_into_unpacked_attributes(node: ast.Assign, imports: ImportTable) -> bool:
    """`self.G, self.D = G.to(device), D.to(device)`: an item of a tuple display, assigned to a
    `self` attribute, is a move (DF020's `AttributeUse.unpacked`)."""
    value = node.value
    return isinstance(value, (ast.Tuple, ast.List)) and any(
        isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(value.elts)
        and any(is_self_attribute(element) and is_move(item, imports) for element, item in zip(target.elts, value.elts))
        for target in node.targets)


def _feeds_a_self_attribute(move: ast.Call, place: _Place) -> bool:
    """`self.model(data.to(self.device))` in a method but `__init__`, `data` a name a `for` of the
    method binds: a loop's batch moved straight into a callable attribute (DF020 reads the model as
    on that device, and moves the loop's other batches there)."""
    parent = place.parent
    receiver = move.func.value if isinstance(move.func, ast.Attribute) else None
    if not (place.method is not None and place.method.name != "__init__" and isinstance(parent, ast.Call)
            and is_self_attribute(parent.func) and move in parent.args and isinstance(receiver, ast.Name)):
        return False
    return any(isinstance(node, (ast.For, ast.AsyncFor)) and receiver.id in set(bound_names(node.target))
               for node in every_node(place.method))


def _bound_to_the_class_device(move: ast.Call, place: _Place) -> bool:
    """`solvents = solvents.unsqueeze(0).to(self.device)` in a method but `__init__`: an argument
    moved to a device the object keeps (DF020 moves the parameters given beside it to a model)."""
    return place.method is not None and place.method.name != "__init__" and isinstance(place.parent, ast.Assign) \
        and len(move.args) == 1 and is_self_attribute(move.args[0])


def _moves_an_instance_attribute(move: ast.Call, place: _Place) -> bool:
    """`agent.q_net.to(device)` as a statement: a model an object (not `self`) keeps, moved in
    place by the code that holds the object (DF020)."""
    receiver = move.func.value if isinstance(move.func, ast.Attribute) else None
    return isinstance(place.parent, ast.Expr) and place.parent.value is move and isinstance(receiver, ast.Attribute) \
        and isinstance(receiver.value, ast.Name) and receiver.value.id != "self"


def _method_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None
