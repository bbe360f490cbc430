"""The walk behind `analysis.kinds`: every scope of a file, statement by statement.

Each function starts from its parameters (annotations give kinds) and the file's globals; each
statement updates the environment (name → Kind); branches join, loops repeat until nothing
changes. Every name read is recorded with its kind at that point; `self.x` reads as the join of
what the class's methods assign to it, and a call of the file's functions as the kind they return
(computed on demand, once).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from devfix.analysis.ast_nodes import bound_names, children, every_node, may_name_a_device, parameters, scope_nodes
from devfix.analysis.imports import ImportTable
from devfix.analysis.kinds import BATCH_KINDS, ITEM_KINDS, Kind, Resolver, join
from devfix.analysis.module_instances import called_instances, calls_itself
from devfix.analysis.size_parameters import size_parameters
from devfix.analysis.torch_api import FACTORY_LAST_NAMES, TENSOR_OUTPUT_LAYERS, TENSOR_TO_TENSOR_LAYERS

Env = dict[str, Kind]
ANNOTATION_KINDS = {
    "torch.Tensor": Kind.TENSOR, "torch.FloatTensor": Kind.TENSOR, "torch.LongTensor": Kind.TENSOR,
    "torch.nn.Parameter": Kind.TENSOR, "builtins.int": Kind.SCALAR, "builtins.float": Kind.SCALAR,
    "builtins.bool": Kind.SCALAR, "builtins.str": Kind.STR, "builtins.list": Kind.LIST, "typing.List": Kind.LIST,
    "builtins.dict": Kind.DICT, "typing.Dict": Kind.DICT, "builtins.tuple": Kind.TUPLE, "typing.Tuple": Kind.TUPLE,
    "numpy.ndarray": Kind.NDARRAY, "torch.nn.Module": Kind.MODULE, "torch.device": Kind.DEVICE,
}
# what `isinstance(x, T)` proves `x` is: the annotations' kinds, and numpy's and `numbers`' scalar types
ISINSTANCE_KINDS = {
    **ANNOTATION_KINDS, "numbers.Number": Kind.SCALAR, "numbers.Real": Kind.SCALAR, "numbers.Integral": Kind.SCALAR,
    "numpy.number": Kind.NDARRAY, "numpy.bool_": Kind.NDARRAY, "numpy.generic": Kind.NDARRAY, "numpy.integer": Kind.NDARRAY,
    "numpy.floating": Kind.NDARRAY,
}
DATASET_NAMES = frozenset({"torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset"})
COLLATED_TO_TENSORS = frozenset({Kind.TENSOR, Kind.SCALAR, Kind.NDARRAY})  # what `default_collate` stacks into tensors
GRAD_MODE_DECORATORS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.enable_grad"})
LOOP_LIMIT = 4
SIMPLE_STATEMENTS = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)
# torch functions whose first argument may be something else than a tensor (data, a shape, a path)
NOT_TENSOR_INPUTS = frozenset({
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm",
    "arange", "range", "linspace", "logspace", "eye", "Tensor", "FloatTensor", "LongTensor", "DoubleTensor",
    "IntTensor", "BoolTensor", "ByteTensor", "HalfTensor", "tril_indices", "triu_indices", "Parameter", "scalar_tensor",
    "asarray", "frombuffer", "einsum",
})
SEQUENCE_INPUTS = frozenset({
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack", "meshgrid",
    "broadcast_tensors", "block_diag", "cartesian_prod", "atleast_1d", "atleast_2d", "atleast_3d", "chain_matmul",
})


@dataclass
class PassedKinds:
    """The kinds one call passes: by position, and by keyword (`self.q_sample(x0, t, noise=noise)`)."""

    positional: list[Kind]
    keywords: dict[str, Kind] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.positional) + len(self.keywords)

    def given(self, names: list[str]) -> list[Kind] | None:
        """The kind passed to each parameter of `names` (unknown where nothing is); None when a
        keyword names none of them or one the positions already gave: the call does not fit."""
        if any(name not in names[len(self.positional):] for name in self.keywords):
            return None
        return [self.positional[index] if index < len(self.positional) else self.keywords.get(name, Kind.UNKNOWN)
                for index, name in enumerate(names)]


@dataclass
class ValueFacts:
    """Kinds of names where they are read, and the 0-dim tensors made of Python numbers."""

    reads: dict[tuple[int, int], Kind] = field(default_factory=dict)  # (line, byte column) of a Name
    read_names: dict[tuple[int, int], str] = field(default_factory=dict)
    attribute_reads: dict[tuple[int, int], Kind] = field(default_factory=dict)  # (line, byte column) of a read `self.x`
    iterated_calls: dict[tuple[int, int], Kind] = field(default_factory=dict)  # `for x, y in make_batches(...)`: the call
    scalar_tensors: set[tuple[int, int]] = field(default_factory=set)  # `torch.tensor(<a Python number>)` calls
    call_sites: dict[str, list[PassedKinds]] = field(default_factory=dict)  # function → what each call passes
    escaped: set[str] = field(default_factory=set)  # functions used otherwise than called (callbacks)


INFERENCE_ROUNDS = 3  # a parameter's kind can come from a caller's parameter (q_sample(x, t) → extract(table, t))


def analyse_values(
    tree: ast.Module, imports: ImportTable, module_classes: dict[str, Kind], declared_global: set[str],
    imported: Callable[[str], Kind] | None = None, constructed: Callable[[str], list[PassedKinds] | None] | None = None,
    watched_calls: frozenset[str] = frozenset(), called_beside: Callable[[str, str], list[PassedKinds] | None] | None = None,
    watched_methods: frozenset[str] = frozenset(), forward_beside: Callable[[str], list[PassedKinds] | None] | None = None,
    imported_modules: frozenset[str] = frozenset(),
) -> ValueFacts:
    """`imported`: the kind a function of another file of the project returns; `constructed`: what
    the constructions of a class of the file in the files beside it pass (`ProjectIndex`);
    `called_beside`: what the calls of a method of such a class pass there (`trainer.train_epoch(loader)`);
    `forward_beside`: what the calls of the instances of a Module class of the file pass there
    (`model(ids.to(device), lengths.to(device))` in `train.py` gives `Pooler.forward` its kinds);
    `watched_calls`: calls through an imported module (`training.Trainer`), and `watched_methods`:
    calls of methods of that name on any object, whose passed kinds to note; `imported_modules`:
    Module classes of other files whose instances' calls to note (`forward_calls_passed`)."""
    facts = ValueFacts()
    methods = _inferable_methods(tree, imports)
    method_names = frozenset(name for _, name in methods) | watched_methods
    resolver, summaries = _resolver(tree, imports, module_classes, declared_global, imported, method_names)
    resolver.watched_calls = watched_calls
    functions, globals_env = summaries.functions, summaries.globals_env
    modules = {name for name, kind in module_classes.items() if kind is Kind.MODULE}
    resolver.instances = called_instances(tree, modules, imports.qualify, imported_modules)  # `model(x, lengths)` gives `Pool.forward` its kinds
    resolver.forward_output = _ForwardOutputs(tree, resolver, globals_env).kind
    _Walker(resolver, facts, None).block(tree.body, {}, globals_env)
    for _ in range(INFERENCE_ROUNDS):  # read the file again, knowing what its functions are called with
        inferred = _parameter_kinds_from_calls(functions, facts.call_sites, facts.escaped, constructed)
        inferred.update(_method_parameter_kinds_from_calls(methods, facts.call_sites, facts.escaped, called_beside, tree))
        inferred.update(_constructor_parameter_kinds(tree, facts.call_sites, facts.escaped, constructed))
        inferred.update(_forward_parameter_kinds(tree, resolver.instances, facts.call_sites, facts.escaped, modules, forward_beside))
        if inferred == resolver.parameter_kinds:
            break
        resolver.parameter_kinds = inferred
        summaries.clear()  # what a function returns, read again with what its calls give it
        resolver.class_attributes = _class_attribute_kinds(tree, resolver)
        resolver.classes = {**resolver.classes, **_tensor_datasets(tree, resolver)}  # `self.y` of a given array
        resolver.forward_output = _ForwardOutputs(tree, resolver, globals_env).kind  # read again with the new kinds
        facts = ValueFacts()
        _Walker(resolver, facts, None).block(tree.body, {}, globals_env)
    return facts


def returned_kind(tree: ast.Module, imports: ImportTable, name: str) -> Kind:
    """What the top-level function `name` of a file returns, its parameters unknown: the answer
    for another file that imports it (`train_loader, val_loader = make_loaders()`)."""
    if not any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name for node in tree.body):
        return Kind.UNKNOWN
    declared_global = {global_name for node in ast.walk(tree) if isinstance(node, ast.Global) for global_name in node.names}
    return _resolver(tree, imports, {}, declared_global, class_attributes=False)[1].get(name)


def passed_to(
    tree: ast.Module, imports: ImportTable, names: set[str], imported: Callable[[str], Kind] | None = None,
    module_classes: dict[str, Kind] | None = None, forward_beside: Callable[[str], list[PassedKinds] | None] | None = None,
) -> list[PassedKinds] | None:
    """What each call of the names `names` (a class or function another file defines, as this file
    imports it: `Trainer`, or `training.Trainer` through its module) passes, by the value analysis
    of this file (with its own `module_classes`, whose `forward` takes what `forward_beside` says);
    None when one of them is used otherwise than called or a call unpacks (`Trainer(*args)`)."""
    declared_global = {global_name for node in ast.walk(tree) if isinstance(node, ast.Global) for global_name in node.names}
    facts = analyse_values(tree, imports, module_classes or {}, declared_global, imported,
                           watched_calls=frozenset(name for name in names if "." in name), forward_beside=forward_beside)
    if names & facts.escaped:
        return None
    return [passed for name in sorted(names) for passed in facts.call_sites.get(name, ())]


def forward_calls_passed(
    tree: ast.Module, imports: ImportTable, names: set[str], imported: Callable[[str], Kind] | None = None,
) -> list[PassedKinds] | None:
    """What each call of an instance of the Module classes `names` (defined in another file, as this
    file imports them) passes to their `forward`, by the value analysis of this file; None unless
    every construction of them here is held by a name or layer that is only called or asked for an
    attribute (`analysis.module_instances`), and called at least once."""
    declared_global = {global_name for node in ast.walk(tree) if isinstance(node, ast.Global) for global_name in node.names}
    facts = analyse_values(tree, imports, {}, declared_global, imported, imported_modules=frozenset(names))
    passed = [passed for name in sorted(names) for passed in facts.call_sites.get(name + "()", ())]
    return passed if passed and not {name + "()" for name in names} & facts.escaped else None


def method_calls_passed(
    tree: ast.Module, imports: ImportTable, method: str, imported: Callable[[str], Kind] | None = None,
) -> list[PassedKinds] | None:
    """What each call of a method named `method` on any object passes (`trainer.train_epoch(loader)`),
    by the value analysis of this file; None when the name is also used as a value."""
    declared_global = {global_name for node in ast.walk(tree) if isinstance(node, ast.Global) for global_name in node.names}
    facts = analyse_values(tree, imports, {}, declared_global, imported, watched_methods=frozenset({method}))
    return None if "." + method in facts.escaped else facts.call_sites.get("." + method, [])


def _resolver(
    tree: ast.Module, imports: ImportTable, module_classes: dict[str, Kind], declared_global: set[str],
    imported: Callable[[str], Kind] | None = None, method_names: frozenset[str] = frozenset(), class_attributes: bool = True,
) -> tuple[Resolver, _Summaries]:
    """A resolver for the file: return kinds of its top-level functions computed when asked, the
    kinds of its classes' attributes (unless not wanted), then its module-level names' kinds (in
    that order: a global may be computed from an attribute)."""
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    summaries = _Summaries(functions)
    resolver = Resolver(imports, module_classes, summaries)
    if imported is not None:
        resolver.imported = imported
    resolver.method_names = method_names
    summaries.walker = _Walker(resolver, None, None)
    if class_attributes:
        resolver.class_attributes = _class_attribute_kinds(tree, resolver)
        resolver.class_constants = _class_constant_kinds(tree, resolver)
        resolver.tensor_layers = _tensor_layers(tree, resolver)
        resolver.tensor_layer_names = _tensor_layer_names(tree, resolver)
        datasets = _tensor_datasets(tree, resolver)
        if datasets:
            resolver.classes = {**resolver.classes, **datasets}
    summaries.globals_env = _global_kinds(tree, resolver, declared_global)
    return resolver, summaries


def _watched(func: ast.expr, watched: frozenset[str], env: Env) -> str | None:
    """`module.Name` of a call when it is one of `watched` and `module` is no local value."""
    if not watched or not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)) or func.value.id in env:
        return None
    dotted = f"{func.value.id}.{func.attr}"
    return dotted if dotted in watched else None


def _joined_kinds(calls: list[PassedKinds], names: list[str], function: ast.FunctionDef | ast.AsyncFunctionDef | None = None) -> list[Kind] | None:
    """The join, parameter by parameter, of what `calls` pass to the parameters `names` (a call
    that gives nothing to one leaves it unknown, or, with the `function`, the kind of its literal
    default: `stride=8` is a number where a call leaves it out); None when nothing is known or a
    call does not fit."""
    given = [call.given(names) for call in calls]
    if any(kinds is None for kinds in given):
        return None
    defaults = _default_kinds(function) if function is not None else {}
    if defaults:
        given = [[defaults.get(name, kind) if _left_out(call, index, name) else kind for index, (name, kind) in enumerate(zip(names, kinds))]
                 for call, kinds in zip(calls, given)]
    kinds = [join(passed[index] for passed in given) for index in range(len(names))]
    return kinds if any(kind is not Kind.UNKNOWN for kind in kinds) else None


def _left_out(call: PassedKinds, index: int, name: str) -> bool:
    return index >= len(call.positional) and name not in call.keywords


def _default_kinds(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Kind]:
    """The kinds of the function's literal defaults (`stride=8`, `sizes=(16, 32)`, `mode="nearest"`)."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
             *((argument, default) for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is not None)]
    kinds = {argument.arg: _literal_kind(default) for argument, default in pairs}
    return {name: kind for name, kind in kinds.items() if kind is not Kind.UNKNOWN}


def _literal_kind(value: ast.expr) -> Kind:
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    if isinstance(value, ast.Tuple):
        return Kind.TUPLE if all(_literal_kind(item) in (Kind.SCALAR, Kind.STR, Kind.NONE) for item in value.elts) else Kind.UNKNOWN
    if not isinstance(value, ast.Constant):
        return Kind.UNKNOWN
    if value.value is None:
        return Kind.NONE
    return Kind.STR if isinstance(value.value, str) else Kind.SCALAR if isinstance(value.value, (bool, int, float, complex)) else Kind.UNKNOWN


def _fits(call: PassedKinds, function: ast.FunctionDef | ast.AsyncFunctionDef, names: list[str]) -> bool:
    """The call gives at least the parameters without a default, and only parameters of `names`."""
    return len(names) - len(function.args.defaults) <= call.count <= len(names) and call.given(names) is not None


def _parameter_kinds_from_calls(functions, call_sites, escaped, called_beside=None) -> dict[str, list[Kind]]:
    """A top-level function's parameters take the kind every call of the file passes them
    (`dropout_mask(x, 0.1)` with `x` a tensor): only for functions used by plain calls alone. One
    the file never calls, which makes tensors with a factory (`make_mask(lengths, n)`, whose
    `torch.arange(n)` meets `lengths`), takes what its calls in the files beside it pass
    (`called_beside`, `ProjectIndex.constructed_kinds`)."""
    inferred = {}
    sites = dict(call_sites)
    if called_beside is not None:
        for name, function in functions.items():
            if name not in sites and name not in escaped and _makes_factories(function):
                beside = called_beside(name)
                if beside:
                    sites[name] = beside
    for name, calls in sites.items():
        function = functions.get(name)
        if function is None or name in escaped or function.args.vararg or function.args.posonlyargs:
            continue
        kinds = _joined_kinds(calls, [argument.arg for argument in function.args.args], function)
        if kinds is not None:
            inferred[name] = kinds
    return inferred


def _hands_on_parameters(forward: ast.FunctionDef) -> bool:
    """Does `forward` give one of its parameters to a function called by name (`sequence_mask(lengths,
    n)`), or make tensors with a factory beside them? Only then may the kinds its callers in other
    files pass decide anything, and only then are those files read."""
    parameters = {argument.arg for argument in forward.args.args[1:]}
    for node in every_node(forward):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and any(
                isinstance(argument, ast.Name) and argument.id in parameters for argument in node.args):
            return True
    return _makes_factories(forward)


def _makes_factories(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A statement of the function makes a tensor with a factory without `device=` and reads a
    parameter outside that factory's arguments (`return torch.arange(n)[None, :] < lengths[:, None]`):
    the two may meet, the only reason to ask other files what the parameters are."""
    parameters = {argument.arg for argument in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    for statement in every_node(function):
        if not isinstance(statement, (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)):
            continue
        factories = [node for node in every_node(statement) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                     and node.func.attr in FACTORY_LAST_NAMES and not may_name_a_device(node)]
        if not factories:
            continue
        inside = {id(node) for factory in factories for argument in (*factory.args, *factory.keywords) for node in every_node(argument)}
        if any(isinstance(node, ast.Name) and node.id in parameters and id(node) not in inside for node in every_node(statement)):
            return True
    return False


def _inferable_methods(tree: ast.Module, imports: ImportTable) -> dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef]:
    """(class, method) of the file's top-level classes whose parameters may take the kinds their
    calls pass: plain instance methods called by name (`trainer.step(x, y)`, `self.encode(t)`),
    also under a grad-mode decorator (`@torch.no_grad()` keeps the signature), and static methods
    (`self.timestep_embedding(t, dim)`: every parameter is given); not `forward` (a Module is
    called, not its forward), dunders, class methods, other decorators."""
    methods = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if not all(_keeps_the_signature(decorator, imports) or _is_static_decorator(decorator) for decorator in item.decorator_list):
                continue
            if item.name == "forward" or item.name.startswith("__") or item.args.vararg or item.args.posonlyargs:
                continue
            methods[(node.name, item.name)] = item
    return methods


def _keeps_the_signature(decorator: ast.expr, imports: ImportTable) -> bool:
    """`@torch.no_grad()`, `@torch.inference_mode()`, `@torch.enable_grad()` (called or not)."""
    called = decorator.func if isinstance(decorator, ast.Call) and not decorator.args and not decorator.keywords else decorator
    return imports.qualify(called) in GRAD_MODE_DECORATORS


def _method_parameter_kinds_from_calls(methods, call_sites, escaped, called_beside=None, tree=None) -> dict[str, list[Kind]]:
    """`Class.method` → the kinds of its parameters after `self` (all of a static method's): the
    join over every call of a method of that name in the file whose argument count fits
    (`.step(x, y)` of any object counts, a different class's `step` can only make the join less
    precise; `optimizer.step()` cannot be a call of `step(self, x, y)`), unless the name is also
    used as a value. A method of a plain class the file never calls by name, which loops over one
    of its parameters (`def train_epoch(self, loader): for x, y in loader`), takes what the calls of
    that name pass in the files that construct the class (`called_beside`: `trainer.train_epoch(loader)`
    in `main.py`)."""
    inferred = {}
    plain = {node.name for node in tree.body if isinstance(node, ast.ClassDef) and not node.bases and not node.keywords} if tree else set()
    for (class_name, name), function in methods.items():
        names = [argument.arg for argument in function.args.args][0 if _is_static(function) else 1:]
        sites = call_sites.get("." + name)
        if sites is None and called_beside is not None and class_name in plain and _loops_over_a_parameter(function, names):
            sites = called_beside(class_name, name)
        calls = [call for call in sites or () if _fits(call, function, names)]
        if not calls or "." + name in escaped:
            continue
        kinds = _joined_kinds(calls, names, function)
        if kinds is not None:
            inferred[f"{class_name}.{name}"] = kinds
    return inferred


def _constructor_parameter_kinds(tree: ast.Module, call_sites, escaped, constructed=None) -> dict[str, list[Kind]]:
    """`Class.__init__` → the kinds of its parameters after `self`: the join over every call of the
    class in the file (`Trainer(model, DataLoader(data), device)`), for a top-level class that no
    class of the file derives from (a subclass calls `super().__init__` with its own arguments)
    and whose name is only called. A plain class the file never names, whose methods loop over what
    `__init__` keeps of a parameter (`for x, y in self.loader`) or over one of their own parameters
    (`def train_epoch(self, loader)`), takes what its constructions in the files beside it pass
    (`constructed`; `Trainer(model, loader)` in `main.py`)."""
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    derived = {base.id for node in classes for base in node.bases if isinstance(base, ast.Name)}
    inferred = {}
    for node in classes:
        init = next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
        if init is None or node.name in derived or node.name in escaped or init.args.vararg or init.args.posonlyargs:
            continue
        names = [argument.arg for argument in init.args.args][1:]
        sites = call_sites.get(node.name)
        if sites is None and constructed is not None and (_loops_over_kept_parameters(node, init) or _loops_over_given_loaders(node, init)):
            sites = constructed(node.name)
        calls = [call for call in sites or () if _fits(call, init, names)]
        if not calls or len(calls) != len(sites):
            continue
        kinds = _joined_kinds(calls, names, init)
        if kinds is not None:
            inferred[f"{node.name}.__init__"] = kinds
    return inferred


def _loops_over_a_parameter(function: ast.FunctionDef | ast.AsyncFunctionDef, parameters: list[str]) -> bool:
    """`for x, y in loader` (or `enumerate(loader)`, `tqdm(loader)`) of a parameter of the function."""
    return any(
        isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(iterated := _iterated(loop.iter), ast.Name) and iterated.id in parameters
        for loop in every_node(function)
    )


def _loops_over_given_loaders(node: ast.ClassDef, init: ast.FunctionDef) -> bool:
    """A plain class (no base) with a method that loops over one of its own parameters
    (`def train_epoch(self, loader): for x, y in loader`): what the constructions give the class
    (its model, its loss) matters to what the loop feeds them."""
    return not node.bases and not node.keywords and any(
        isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method is not init
        and _loops_over_a_parameter(method, [argument.arg for argument in method.args.args[1:]])
        for method in node.body
    )


def _loops_over_kept_parameters(node: ast.ClassDef, init: ast.FunctionDef) -> bool:
    """A plain class (no base) whose methods iterate over an attribute `__init__` binds to one of its
    parameters (`self.loader = loader`, `for x, y in self.loader`): only then is asking the other
    files what its constructions pass worth it."""
    if node.bases or node.keywords:
        return False
    parameters = {argument.arg for argument in init.args.args[1:]}
    kept = {
        target.attr for statement in init.body if isinstance(statement, ast.Assign)
        and isinstance(statement.value, ast.Name) and statement.value.id in parameters
        for target in statement.targets if isinstance(target, ast.Attribute) and _is_self(target.value)
    }
    return any(
        isinstance(loop, (ast.For, ast.AsyncFor)) and _iterated_attribute(loop.iter) in kept
        for method in node.body if isinstance(method, ast.FunctionDef) and method is not init for loop in every_node(method)
    )


def _iterated_attribute(iterable: ast.expr) -> str | None:
    """`x` of `self.x`, also inside `enumerate(...)`/`tqdm(...)` (first arguments, as the rules unwrap)."""
    iterable = _iterated(iterable)
    return iterable.attr if isinstance(iterable, ast.Attribute) and _is_self(iterable.value) else None


def _iterated(iterable: ast.expr) -> ast.expr:
    """`loader` of `enumerate(tqdm(loader))`: the first arguments of the calls around it."""
    while isinstance(iterable, ast.Call) and iterable.args:
        iterable = iterable.args[0]
    return iterable


def _forward_parameter_kinds(tree: ast.Module, instances, call_sites, escaped, modules: set[str] = frozenset(),
                             forward_beside: Callable[[str], list[PassedKinds] | None] | None = None) -> dict[str, list[Kind]]:
    """`Class.forward` → the kinds of its parameters after `self`: the join over every call of an
    instance (`analysis.module_instances`, noted as `Class()`), when every call fits the signature.
    A Module class the file never names again (a model file: `train.py` builds and calls it) takes
    what the calls of its instances in the files beside it pass (`forward_beside`)."""
    inferred = {}
    held = instances.classes()
    named: set[str] | None = None  # names the file reads, and whether it reads some `.forward`
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or (node.name not in held and (forward_beside is None or node.name not in modules)):
            continue
        forward = next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "forward"), None)
        key = f"{node.name}()"
        if forward is None:
            continue
        if node.name in held:
            calls = call_sites.get(key, [])
        else:
            if named is None:
                named = {item.id for item in every_node(tree) if isinstance(item, ast.Name)} | {
                    "forward" for item in every_node(tree) if isinstance(item, ast.Attribute) and item.attr == "forward"}
            if node.name in named or "forward" in named or calls_itself(node) or not _hands_on_parameters(forward):
                continue
            calls = forward_beside(node.name) or []
        if forward.args.vararg or forward.args.posonlyargs or key in escaped or not calls:
            continue
        names = [argument.arg for argument in forward.args.args][1:]
        if not all(_fits(call, forward, names) for call in calls):
            continue
        kinds = _joined_kinds(calls, names, forward)
        if kinds is not None:
            inferred[f"{node.name}.forward"] = kinds
    return inferred


def _class_attribute_kinds(tree: ast.Module, resolver: Resolver) -> dict[tuple[str, str], Kind]:
    """`self.x` of each top-level class: the join of what its methods assign, judged without the
    methods' local names (`self.temperature = 2.0` is a number; `self.w = w` is unknown), except
    parameters the method never rebinds, which have the kinds its calls pass (`self.loader = loader`)."""
    kinds: dict[tuple[str, str], list[Kind]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for method in [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            env = _unbound_parameter_kinds(method, node.name, resolver)
            for assignment in every_node(method):
                buffer = _registered_buffer(assignment)
                if buffer is not None:  # `self.register_buffer("pe", pe)`: `self.pe` holds that value
                    kinds.setdefault((node.name, buffer[0]), []).append(resolver.kind(buffer[1], env))
                elif isinstance(assignment, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and assignment.value is not None:
                    targets = assignment.targets if isinstance(assignment, ast.Assign) else [assignment.target]
                    for target in targets:
                        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                            kind = Kind.UNKNOWN if isinstance(assignment, ast.AugAssign) else resolver.kind(assignment.value, env)
                            kinds.setdefault((node.name, target.attr), []).append(kind)
                elif isinstance(assignment, ast.Attribute) and isinstance(assignment.ctx, ast.Del):
                    kinds.setdefault((node.name, assignment.attr), []).append(Kind.UNKNOWN)
    return {key: join(values) for key, values in kinds.items()}


def _tensor_datasets(tree: ast.Module, resolver: Resolver) -> dict[str, Kind]:
    """Top-level `torch.utils.data.Dataset` classes whose `__getitem__` returns, at every `return`, a
    tuple display of one length of values `default_collate` makes tensors of: a TENSOR_DATASET when
    all are proven tensors (`return x.unsqueeze(-1), y` after `x = torch.tensor(...)`: its items are
    what a TensorDataset's are), a COLLATED_DATASET when some are numbers or numpy arrays (`return
    torch.from_numpy(self.X[i]), int(self.y[i])`: only its batches are all tensors). Either way a
    DataLoader over it, collated by default, gives batches of tensors."""
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or not any(resolver.imports.qualify(base) in DATASET_NAMES for base in node.bases):
            continue
        getitems = [item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__getitem__"]
        if len(getitems) != 1:
            continue
        walker = _Walker(resolver.for_class(node.name), None, node.name)
        walker.method_result(getitems[0], {})
        items = walker.returned_items
        if not items or any(kinds is None or len(kinds) != len(items[0]) for kinds in items):
            continue
        kinds = {kind for returned in items for kind in returned}
        if kinds == {Kind.TENSOR}:
            found[node.name] = Kind.TENSOR_DATASET
        elif Kind.TENSOR in kinds and kinds <= COLLATED_TO_TENSORS:
            found[node.name] = Kind.COLLATED_DATASET
    return found


def _class_constant_kinds(tree: ast.Module, resolver: Resolver) -> dict[tuple[str, str], Kind]:
    """`Config.weights` where the top-level class `Config` (defined once, never rebound) binds
    `weights = torch.tensor(...)` once in its body, and nothing in the file stores `Config.weights`
    or `self.weights` in its methods: the kind of that one value."""
    defined: dict[str, int] = {}
    for node in tree.body:
        for name in _top_level_names(node):
            defined[name] = defined.get(name, 0) + 1
    stored = {
        (target.value.id, target.attr) for target in every_node(tree)
        if isinstance(target, ast.Attribute) and not isinstance(target.ctx, ast.Load) and isinstance(target.value, ast.Name)
    }
    kinds: dict[tuple[str, str], Kind] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or defined.get(node.name) != 1:
            continue
        bound: dict[str, list[ast.stmt]] = {}
        for statement in node.body:
            for name in _top_level_names(statement):
                bound.setdefault(name, []).append(statement)
        for name, statements in bound.items():
            value = statements[0].value if len(statements) == 1 and isinstance(statements[0], ast.Assign) else None
            if value is None or len(statements[0].targets) != 1 or (node.name, name) in stored | resolver.class_attributes.keys():
                continue
            kinds[(node.name, name)] = resolver.kind(value, {})
    return kinds


def _top_level_names(statement: ast.stmt) -> list[str]:
    """The names a statement binds in the block that holds it (not inside its own body)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return [node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)]
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).split(".")[0] for alias in statement.names]
    return [node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)]


def _registered_buffer(node: ast.AST) -> tuple[str, ast.expr] | None:
    """`self.register_buffer("pe", value, ...)` → ("pe", value)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "register_buffer"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self" and len(node.args) >= 2):
        return None
    name = node.args[0]
    return (name.value, node.args[1]) if isinstance(name, ast.Constant) and isinstance(name.value, str) else None


def _tensor_layers(tree: ast.Module, resolver: Resolver) -> frozenset[tuple[str, str]]:
    """(class, attribute) where a method of a top-level class stores a torch.nn layer whose output
    is one tensor (`self.emb = nn.Embedding(...)`), and nothing else in the class."""
    stores: dict[tuple[str, str], list[bool]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for assignment in every_node(node):
            if isinstance(assignment, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = assignment.targets if isinstance(assignment, ast.Assign) else [assignment.target]
                for target in targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                        value = assignment.value if isinstance(assignment, ast.Assign) and len(assignment.targets) == 1 else None
                        stores.setdefault((node.name, target.attr), []).append(value is not None and _builds_a_tensor_layer(value, resolver.imports))
    return frozenset(key for key, layers in stores.items() if all(layers))


def _tensor_layer_names(tree: ast.Module, resolver: Resolver) -> frozenset[str]:
    """Module-level names bound once, and bound nowhere else in the file (no local, parameter or
    loop variable of that name), to a torch.nn layer whose output is one tensor, or to an
    `nn.Sequential` of such layers (`G = nn.Sequential(nn.Linear(8, 64), nn.Tanh()).to(device)`):
    `G(z)` is a tensor."""
    candidates = {
        statement.targets[0].id for statement in tree.body
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
        and isinstance(statement.value, ast.Call) and _builds_a_tensor_layer(statement.value, resolver.imports)
    }
    if not candidates:
        return frozenset()  # most files: no walk
    stores: dict[str, int] = {}
    for node in every_node(tree):
        name = node.id if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) else node.arg if isinstance(node, ast.arg) else None
        if name in candidates:
            stores[name] = stores.get(name, 0) + 1
    return frozenset(name for name in candidates if stores.get(name) == 1)


LAYER_KEEPING_METHODS = frozenset({"to", "cuda", "cpu", "eval", "train", "float", "double", "half", "requires_grad_"})


def _builds_a_tensor_layer(value: ast.expr, imports: ImportTable, depth: int = 0) -> bool:
    """`nn.Linear(...)` (a layer of TENSOR_OUTPUT_LAYERS or TENSOR_TO_TENSOR_LAYERS), moved or put in a
    mode (`.to(device)`, `.eval()`), or an `nn.Sequential` of such layers: called on a tensor, it gives
    one tensor."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in LAYER_KEEPING_METHODS:
        value = value.func.value
    qualified = imports.qualify(value.func) if isinstance(value, ast.Call) else None
    if qualified is None or not qualified.startswith("torch.nn.") or depth > 4:
        return False
    layer = qualified.rsplit(".", 1)[-1]
    if layer == "Sequential":
        return bool(value.args) and not value.keywords and all(
            not isinstance(item, ast.Starred) and _builds_a_tensor_layer(item, imports, depth + 1) for item in value.args)
    if any(keyword.arg == "return_indices" for keyword in value.keywords):
        return False
    return layer in TENSOR_OUTPUT_LAYERS or (depth > 0 and layer in TENSOR_TO_TENSOR_LAYERS)


def _unbound_parameter_kinds(method: ast.FunctionDef | ast.AsyncFunctionDef, class_name: str, resolver: Resolver) -> Env:
    """The inferred kinds of a method's parameters (after `self`) that its body never rebinds; where
    the calls tell nothing, a parameter annotated as a Python number is one (`num_components: int =
    50`, kept as `self.num_components`: `torch.tensor(self.num_components)` is 0-dim). Only refusals
    rest on a number (no tensor method, no alignment), so a caller that breaks the annotation costs a
    missed fix, never a wrong one."""
    stored = {name.id for name in every_node(method) if isinstance(name, ast.Name) and not isinstance(name.ctx, ast.Load)}
    passed = resolver.parameter_kinds.get(f"{class_name}.{method.name}", ())
    kinds = {argument.arg: kind for argument, kind in zip(method.args.args[1:], passed) if argument.arg not in stored}
    for argument in [*method.args.args[1:], *method.args.kwonlyargs]:
        if argument.arg not in stored and kinds.get(argument.arg, Kind.UNKNOWN) is Kind.UNKNOWN and _annotated_number(argument.annotation):
            kinds[argument.arg] = Kind.SCALAR
    return kinds


def _annotated_number(annotation: ast.expr | None) -> bool:
    """`int`, `float` or `bool` (not `Optional[int]`, not a string annotation)."""
    return isinstance(annotation, ast.Name) and annotation.id in ("int", "float", "bool")


class _ForwardOutputs:
    """What the `forward` of each Module class of the file (defined once, at the top level) returns,
    read with the kinds its calls give its parameters, computed the first time a call of an
    instance asks (recursion: unknown)."""

    def __init__(self, tree: ast.Module, resolver: Resolver, globals_env: Env) -> None:
        self.classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        self.resolver, self.globals_env = resolver, globals_env
        self.kinds: dict[str, Kind] = {}

    def kind(self, class_name: str) -> Kind:
        if class_name not in self.kinds:
            self.kinds[class_name] = Kind.UNKNOWN  # while it is read: a forward that calls itself
            node = self.classes.get(class_name)
            forwards = [item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "forward"] if node else []
            if len(forwards) == 1:
                walker = _Walker(self.resolver.for_class(class_name), None, class_name)
                self.kinds[class_name] = walker.method_result(forwards[0], self.globals_env)
        return self.kinds[class_name]


class _Summaries(dict):
    """Function name → return kind, computed the first time a call asks (recursion: unknown)."""

    def __init__(self, functions: dict[str, ast.FunctionDef]) -> None:
        super().__init__()
        self.functions = functions
        self.walker: _Walker | None = None
        self.globals_env: Env = {}
        self._busy: set[str] = set()

    def get(self, name: str, default: Kind = Kind.UNKNOWN) -> Kind:
        if name in self:
            return self[name]
        if name not in self.functions or name in self._busy or self.walker is None:
            return default
        self._busy.add(name)
        self[name] = self.walker.function_result(self.functions[name], self.globals_env)
        self._busy.discard(name)
        return self[name]


def _global_kinds(tree: ast.Module, resolver: Resolver, declared_global: set[str]) -> Env:
    """Each module-level name with one kind over all its top-level bindings (else unknown)."""
    seen: dict[str, list[Kind]] = {}
    walker = _Walker(resolver, None, None)
    env: Env = {}
    for statement in tree.body:
        before = dict(env)
        env = walker.statement(statement, env)
        for name, kind in env.items():
            if before.get(name) is not kind or name not in before:
                seen.setdefault(name, []).append(kind)
    return {name: (Kind.UNKNOWN if name in declared_global else join(kinds)) for name, kinds in seen.items()}


class _Walker:
    """Runs statements over an environment; records reads into `facts` when given one."""

    def __init__(self, resolver: Resolver, facts: ValueFacts | None, class_name: str | None) -> None:
        self.resolver = resolver
        self.facts = facts
        self.class_name = class_name
        self.returned: list[Kind] = []
        self.returned_items: list[tuple[Kind, ...] | None] = []  # per `return`: its tuple display's item kinds

    def block(self, statements: list[ast.stmt], env: Env, outer: Env | None = None) -> Env:
        if outer is not None:
            env = {**outer, **env}
        for statement in statements:
            env = self.statement(statement, env)
        return env

    def function_result(self, function: ast.FunctionDef | ast.AsyncFunctionDef, outer: Env) -> Kind:
        return _Walker(self.resolver, None, None).method_result(function, outer)

    def method_result(self, method: ast.FunctionDef | ast.AsyncFunctionDef, outer: Env) -> Kind:
        """What a function (of this walker's class, when it has one) returns, its parameters as
        its calls give them."""
        self.block(method.body, self._parameters(method, self.class_name), outer)
        if any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in every_node(method)):
            return Kind.OBJECT
        return join(self.returned or [Kind.NONE])

    def statement(self, node: ast.stmt, env: Env) -> Env:
        handler = getattr(self, f"_{type(node).__name__}", None)
        if handler is not None:
            after = handler(node, env)
        else:
            self._record(node, env)
            after = self._forget_stores(node, env)
        if isinstance(node, SIMPLE_STATEMENTS):
            after = self._proven_by_use(node, after)
        if isinstance(node, ast.Expr):
            after = self._filled_lists(node.value, after)
        return after

    def _filled_lists(self, call: ast.expr, env: Env) -> Env:
        """`xs.append(v)` (`insert`, `extend`) on a list of tensors: a list of tensors still only
        when what it adds is tensors."""
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
                and env.get(call.func.value.id) is Kind.TENSOR_LIST and call.func.attr in ("append", "insert", "extend")):
            return env
        added = call.args[-1] if call.args else None
        wanted = Kind.TENSOR_LIST if call.func.attr == "extend" else Kind.TENSOR
        return env if self.resolver.kind(added, env) is wanted else {**env, call.func.value.id: Kind.LIST}

    def _proven_by_use(self, node: ast.stmt, env: Env) -> Env:
        """`torch.cat([a, b])`, `torch.exp(a)`: a torch op raises unless its first argument is a
        tensor, so past this statement a name given there is one (if nothing said otherwise)."""
        proven = {}
        for call in every_node(node):
            if not (isinstance(call, ast.Call) and call.args):
                continue
            qualified = self.resolver.imports.qualify(call.func) or ""
            if not qualified.startswith("torch.") or qualified.rsplit(".", 1)[-1] in NOT_TENSOR_INPUTS:
                continue
            if self.resolver.kind(call, env) is not Kind.TENSOR:
                continue
            first = call.args[0]
            if isinstance(first, (ast.List, ast.Tuple)):
                names = first.elts
            else:  # `torch.stack(chunks)`: the list is not a tensor, its elements are
                names = [] if qualified.rsplit(".", 1)[-1] in SEQUENCE_INPUTS else [first]
            for name in names:
                if isinstance(name, ast.Name) and env.get(name.id, Kind.UNKNOWN) is Kind.UNKNOWN:
                    proven[name.id] = Kind.TENSOR
        return {**env, **proven} if proven else env

    # --- definitions -------------------------------------------------------------------------
    def _FunctionDef(self, node: ast.FunctionDef, env: Env) -> Env:
        for expression in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if expression is not None:
                self._record(expression, env)
        if self.facts is not None:
            walker = _Walker(self.resolver, self.facts, self.class_name)
            walker.block(node.body, self._parameters(node, self.class_name), env)
        return env  # the name resolves as a definition of the file (ImportTable.defined)

    _AsyncFunctionDef = _FunctionDef

    def _ClassDef(self, node: ast.ClassDef, env: Env) -> Env:
        for expression in [*node.bases, *node.decorator_list]:
            self._record(expression, env)
        if self.facts is not None:
            walker = _Walker(self.resolver.for_class(node.name), self.facts, node.name)
            walker.block(node.body, {}, env)
        return env

    def _parameters(self, node: ast.FunctionDef | ast.AsyncFunctionDef, class_name: str | None) -> Env:
        arguments = parameters(node)
        env = {argument.arg: self._annotation_kind(argument.annotation) for argument in arguments}
        inferred = node.args.args if class_name is None or _is_static(node) else node.args.args[1:]
        key = node.name if class_name is None else f"{class_name}.{node.name}"
        for argument, kind in zip(inferred, self.resolver.parameter_kinds.get(key, ())):
            if env[argument.arg] is Kind.UNKNOWN:
                env[argument.arg] = kind
        if id(node) not in self.resolver.sizes:  # read once a function: every round and summary asks again
            self.resolver.sizes[id(node)] = size_parameters(scope_nodes(node.body), self.resolver.imports, env)
        for name in self.resolver.sizes[id(node)]:  # `create_window(k, c)` building `torch.ones(c, 1, k, k)`: numbers
            if env[name] is Kind.UNKNOWN:
                env[name] = Kind.SCALAR
        for special in (node.args.vararg, node.args.kwarg):
            if special is not None:
                env[special.arg] = Kind.TUPLE if special is node.args.vararg else Kind.DICT
        if class_name is not None and arguments and not _is_static(node):
            env[arguments[0].arg] = self.resolver.classes.get(class_name, Kind.UNKNOWN)
        return env

    def _annotation_kind(self, annotation: ast.expr | None) -> Kind:
        if annotation is None:
            return Kind.UNKNOWN
        if isinstance(annotation, ast.Subscript):
            annotation = annotation.value
        qualified = self.resolver.imports.qualify(annotation)
        return ANNOTATION_KINDS.get(qualified or "", Kind.UNKNOWN)

    # --- bindings ------------------------------------------------------------------------------
    def _Assign(self, node: ast.Assign, env: Env) -> Env:
        self._record(node.value, env)
        kind = self.resolver.kind(node.value, env)
        new = dict(env)
        for target in node.targets:
            self._record_target(target, env)
            self._bind(target, kind, node.value, new, env)
        return new

    def _AnnAssign(self, node: ast.AnnAssign, env: Env) -> Env:
        if node.value is None:
            return env
        self._record(node.value, env)
        new = dict(env)
        self._bind(node.target, self.resolver.kind(node.value, env), node.value, new, env)
        return new

    def _AugAssign(self, node: ast.AugAssign, env: Env) -> Env:
        self._record(node, env)
        if not isinstance(node.target, ast.Name):
            return env
        combined = ast.BinOp(left=ast.Name(node.target.id, ast.Load()), op=node.op, right=node.value)
        return {**env, node.target.id: self.resolver.kind(combined, env)}

    def _bind(self, target: ast.expr, kind: Kind, value: ast.expr | None, new: Env, env: Env) -> None:
        if isinstance(target, ast.Name):
            new[target.id] = kind
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = value.elts if isinstance(value, (ast.Tuple, ast.List)) else None
            if parts is not None and len(parts) == len(target.elts) and not any(isinstance(p, ast.Starred) for p in parts):
                for element, part in zip(target.elts, parts):
                    self._bind(element, self.resolver.kind(part, env), part, new, env)
            else:
                items = _unpacked_kinds(kind, len(target.elts))
                for index, element in enumerate(target.elts):
                    self._bind(element, Kind.LIST if isinstance(element, ast.Starred) else items[index], None, new, env)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, Kind.LIST, None, new, env)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and new.get(target.value.id) is Kind.TENSOR_LIST:
            if kind is not (Kind.TENSOR_LIST if isinstance(target.slice, ast.Slice) else Kind.TENSOR):
                new[target.value.id] = Kind.LIST  # `xs[i] = None`: no longer a list of tensors only

    # --- control flow ----------------------------------------------------------------------------
    def _If(self, node: ast.If, env: Env) -> Env:
        self._record(node.test, env)
        body_env, else_env = dict(env), dict(env)
        narrowed = self._isinstance_test(node.test)
        if narrowed is not None:
            name, kind, negated = narrowed
            inside, outside = (kind, Kind.UNKNOWN) if not negated else (Kind.UNKNOWN, kind)
            if kind is Kind.TENSOR:  # `not isinstance(x, torch.Tensor)`: whatever x is there, no tensor
                inside, outside = (Kind.TENSOR, Kind.OBJECT) if not negated else (Kind.OBJECT, Kind.TENSOR)
            body_env[name], else_env[name] = inside, outside
        return _join_envs(self.block(node.body, body_env), self.block(node.orelse, else_env))

    def _isinstance_test(self, test: ast.expr) -> tuple[str, Kind, bool] | None:
        """`isinstance(x, torch.Tensor)` → ("x", TENSOR, False); under `not`, negated."""
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        call = test.operand if negated else test
        if not (isinstance(call, ast.Call) and self.resolver.imports.qualify(call.func) == "builtins.isinstance"):
            return None
        if len(call.args) != 2 or not isinstance(call.args[0], ast.Name):
            return None
        kind = self._isinstance_kind(call.args[1])
        return None if kind is None else (call.args[0].id, kind, negated)

    def _isinstance_kind(self, types: ast.expr) -> Kind | None:
        """The kind `isinstance(x, types)` proves: one type, or a tuple or `|` union of types none of
        which is a tensor (tianshou's `isinstance(x, np.number | np.bool_ | Number)`: a host number,
        whatever `x` was before)."""
        parts = []
        pending = [types]
        while pending:
            part = pending.pop()
            if isinstance(part, ast.Tuple):
                pending.extend(part.elts)
            elif isinstance(part, ast.BinOp) and isinstance(part.op, ast.BitOr):
                pending.extend((part.left, part.right))
            else:
                parts.append(part)
        kinds = {ISINSTANCE_KINDS.get(self.resolver.imports.qualify(part) or "") for part in parts}
        if None in kinds:
            return None
        if len(kinds) == 1:
            return kinds.pop()
        return None if Kind.TENSOR in kinds else Kind.OBJECT

    def _For(self, node: ast.For, env: Env) -> Env:
        self._record(node.iter, env)
        if self.facts is not None and isinstance(node.iter, ast.Call):
            self.facts.iterated_calls[(node.iter.lineno, node.iter.col_offset)] = self.resolver.kind(node.iter, env)
        parts = self._loop_parts(node.target, node.iter, env)
        if parts is not None:
            return self._loop(node, env, lambda start: self._bound_parts(node.target, parts, start))
        element = self._element_kinds(node.iter, env)
        return self._loop(node, env, lambda start: self._bound_to(node.target, element, start))

    def _loop_parts(self, target: ast.expr, iterable: ast.expr, env: Env) -> list[tuple[ast.Name, Kind]] | None:
        """The names `for t, p in zip(ys, preds)` binds, each with its kind: an element of its own
        iterable; `for i, img in enumerate(samples)` binds a count, then an element of `samples`;
        `for i, (t, p) in enumerate(zip(ys, preds))` both. None for any other loop."""
        if not (isinstance(iterable, ast.Call) and not iterable.keywords and isinstance(target, ast.Tuple)
                and not any(isinstance(arg, ast.Starred) for arg in iterable.args)):
            return None
        called = self.resolver.imports.qualify(iterable.func)
        if called == "builtins.zip" and len(target.elts) == len(iterable.args) \
                and all(isinstance(part, ast.Name) for part in target.elts):
            return [(part, self._element_kinds(arg, env)) for part, arg in zip(target.elts, iterable.args)]
        if called == "builtins.enumerate" and len(iterable.args) == 1 and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name):
            count, element = target.elts
            if isinstance(element, ast.Name):
                return [(count, Kind.SCALAR), (element, self._element_kinds(iterable.args[0], env))]
            inner = self._loop_parts(element, iterable.args[0], env)
            return None if inner is None else [(count, Kind.SCALAR), *inner]
        return None

    def _bound_parts(self, target: ast.Tuple, parts: list[tuple[ast.Name, Kind]], env: Env) -> Env:
        self._record_target(target, env)
        new = dict(env)
        for part, kind in parts:
            self._bind(part, kind, None, new, env)
        return new

    _AsyncFor = _For

    def _While(self, node: ast.While, env: Env) -> Env:
        return self._loop(node, env, lambda start: start, test=node.test)

    def _loop(self, node: ast.For | ast.While, env: Env, enter, test: ast.expr | None = None) -> Env:
        facts, self.facts = self.facts, None
        start = dict(env)
        for _ in range(LOOP_LIMIT):  # kinds only go to unknown: a few rounds reach the fixed point
            end = self.block(node.body, enter(dict(start)))
            joined = _join_envs(start, end)
            if joined == start:
                break
            start = joined
        self.facts = facts
        if test is not None:
            self._record(test, start)
        end = self.block(node.body, enter(dict(start)))
        return self.block(node.orelse, _join_envs(start, end))

    def _bound_to(self, target: ast.expr, element: Kind, env: Env) -> Env:
        self._record_target(target, env)
        new = dict(env)
        if isinstance(target, ast.Tuple) and element is Kind.TUPLE:
            for part in target.elts:
                self._bind(part, Kind.UNKNOWN, None, new, env)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._bind(target, element, None, new, env)  # `for x, y in dataset`
        else:
            self._bind(target, element, None, new, env)
        return new

    def _element_kinds(self, iterable: ast.expr, env: Env) -> Kind:
        kind = self.resolver.kind(iterable, env)
        if kind in (Kind.TENSOR, Kind.TENSOR_LIST):
            return Kind.TENSOR
        if kind in ITEM_KINDS:
            return ITEM_KINDS[kind]
        if kind in BATCH_KINDS:
            return BATCH_KINDS[kind]
        qualified = self.resolver.imports.qualify(iterable.func) if isinstance(iterable, ast.Call) else None
        if qualified == "builtins.range":
            return Kind.SCALAR
        return Kind.UNKNOWN

    def _With(self, node: ast.With, env: Env) -> Env:
        new = dict(env)
        for item in node.items:
            self._record(item.context_expr, env)
            if item.optional_vars is not None:
                self._bind(item.optional_vars, Kind.UNKNOWN, None, new, env)
        return self.block(node.body, new)

    _AsyncWith = _With

    def _Try(self, node: ast.Try, env: Env) -> Env:
        after_body = self.block(node.body, dict(env))
        ends = [self.block(node.orelse, after_body)]
        for handler in node.handlers:
            start = _join_envs(env, after_body)
            if handler.name:
                start[handler.name] = Kind.OBJECT
            ends.append(self.block(handler.body, start))
        end = ends[0]
        for other in ends[1:]:
            end = _join_envs(end, other)
        return self.block(node.finalbody, end)

    _TryStar = _Try

    def _Return(self, node: ast.Return, env: Env) -> Env:
        self._record(node, env)
        self.returned.append(self.resolver.kind(node.value, env))
        items = node.value.elts if isinstance(node.value, ast.Tuple) and not any(isinstance(item, ast.Starred) for item in node.value.elts) else None
        self.returned_items.append(tuple(self.resolver.kind(item, env) for item in items) if items else None)
        return env

    def _Global(self, node: ast.Global, env: Env) -> Env:
        return {**env, **{name: Kind.UNKNOWN for name in node.names}}

    _Nonlocal = _Global

    def _Import(self, node: ast.Import, env: Env) -> Env:
        return env

    _ImportFrom = _Import

    # --- recording -------------------------------------------------------------------------------
    def _record(self, node: ast.AST, env: Env) -> None:
        """Note the kind of every name read in `node` (not inside nested functions or classes).
        Dispatched on the node's exact class: this walk visits every node of every statement, once
        per pass of a loop's fixed point (most of the analysis's time)."""
        if self.facts is None:
            return
        reads, read_names, escaped = self.facts.reads, self.facts.read_names, self.facts.escaped
        defined, method_names = self.resolver.imports.defined, self.resolver.method_names
        local: set[str] = set()  # comprehension and lambda variables: unknown ...
        items: dict[int, Kind] = {}  # ... but in a comprehension `for w in W` over tensors, each `w` read (by id) is a tensor
        callees: set[int] = set()  # `f` of `f(...)`: a call, not a use of `f` as a value
        stack = [node]
        while stack:
            current = stack.pop()
            kind_of_node = current.__class__
            if kind_of_node is ast.Name:  # no children: its context is a leaf
                if id(current) not in callees and current.id in defined and current.id not in env:
                    escaped.add(current.id)  # read as a value, not called: a callback
                if current.ctx.__class__ is ast.Load:
                    kind = items.get(id(current), Kind.UNKNOWN) if current.id in local else env.get(current.id, Kind.UNKNOWN)
                    reads[(current.lineno, current.col_offset)] = kind
                    read_names[(current.lineno, current.col_offset)] = current.id
                continue
            if kind_of_node is ast.Attribute:
                if id(current) not in callees and current.attr in method_names:
                    escaped.add("." + current.attr)  # `callback=self.step`
                if current.ctx.__class__ is ast.Load and (
                    (_is_self(current.value) and self.class_name) or self.resolver.is_class_constant(current, env)
                ):
                    self.facts.attribute_reads[(current.lineno, current.col_offset)] = self.resolver.kind(current, env)
            elif kind_of_node is ast.Call:
                self._record_call(current, env, local, items, callees)
            elif kind_of_node in _NESTED_DEFINITIONS:
                continue
            elif kind_of_node in _COMPREHENSIONS:
                local |= {name.id for generator in current.generators for name in every_node(generator.target) if isinstance(name, ast.Name)}
                self._comprehension_items(current, env, items)
            elif kind_of_node is ast.Lambda:
                local |= {argument.arg for argument in every_node(current.args) if isinstance(argument, ast.arg)}
            elif kind_of_node is ast.NamedExpr:
                local.add(current.target.id)
            stack.extend(children(current))

    def _record_call(self, current: ast.Call, env: Env, local: set[str], items: dict[int, Kind], callees: set[int]) -> None:
        """`_record` of a call: a scalar tensor it makes, and the kinds it passes to the file's functions."""
        if self._makes_a_scalar_tensor(current, env, local):
            self.facts.scalar_tensors.add((current.lineno, current.col_offset))
        func = current.func
        if isinstance(func, ast.Name) and func.id in self.resolver.instances.names:
            self._note_call(current, env, local, items, self.resolver.instances.names[func.id] + "()")  # its `forward`
            callees.add(id(func))
        elif (built := self.resolver.instances.called_at(current)) is not None:
            self._note_call(current, env, local, items, built + "()")  # `Loss()(x, y)`: its `forward`
        elif isinstance(func, ast.Attribute) and _is_self(func.value) and (self.class_name, func.attr) in self.resolver.instances.layers:
            held = self.resolver.instances.layers[(self.class_name, func.attr)]
            self._note_call(current, env, local, items, held + "()")  # `self.time_mlp(t)`: its first module's `forward`
            callees.add(id(func))
        elif isinstance(func, ast.Name) and func.id not in env:
            self._note_call(current, env, local, items, func.id)
            callees.add(id(func))
        elif (dotted := _watched(func, self.resolver.watched_calls, env)) is not None:
            self._note_call(current, env, local, items, dotted)  # `training.Trainer(model, loader)`
            callees.add(id(func))
        elif isinstance(func, ast.Attribute) and func.attr in self.resolver.method_names:
            self._note_call(current, env, local, items, "." + func.attr)
            callees.add(id(func))

    def _note_call(self, call: ast.Call, env: Env, local: set[str], items: dict[int, Kind], name: str) -> None:
        """The kinds a call of one of the file's functions (or of a method, `.name`) passes, by
        position and by keyword (`*args`, `**kwargs`: the call is not understood, so nothing is
        inferred for it)."""
        if any(keyword.arg is None for keyword in call.keywords) or any(isinstance(arg, ast.Starred) for arg in call.args):
            self.facts.escaped.add(name)
            return

        def kind(value: ast.expr) -> Kind:
            return items.get(id(value), Kind.UNKNOWN) if isinstance(value, ast.Name) and value.id in local else self.resolver.kind(value, env)

        passed = PassedKinds([kind(arg) for arg in call.args], {keyword.arg: kind(keyword.value) for keyword in call.keywords})
        self.facts.call_sites.setdefault(name, []).append(passed)

    def _comprehension_items(self, comprehension: ast.expr, env: Env, items: dict[int, Kind]) -> None:
        """The kind of each read of the variable of a comprehension's first `for` (a single name,
        over an iterable of the enclosing scope) inside the comprehension: an item of a tensor or of
        a list of tensors is a tensor, as for a `for` statement."""
        generator = comprehension.generators[0]
        if not isinstance(generator.target, ast.Name):
            return
        kind = self._element_kinds(generator.iter, env)
        if kind is Kind.UNKNOWN:
            return
        name = generator.target.id
        inner = [comprehension.elt] if not isinstance(comprehension, ast.DictComp) else [comprehension.key, comprehension.value]
        inner += [*generator.ifs, *(part for later in comprehension.generators[1:] for part in (later.iter, *later.ifs))]
        if any(name in bound_names(later.target) for later in comprehension.generators[1:]):
            return  # bound again by a later `for` of the same comprehension
        stack = list(inner)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Lambda) and name in {
                argument.arg for argument in (*parameters(node), node.args.vararg, node.args.kwarg) if argument is not None
            }:
                continue  # a nested scope that binds the name again
            if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) and any(
                name in bound_names(nested.target) for nested in node.generators
            ):
                continue
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                items.setdefault(id(node), kind)
            stack.extend(children(node))

    def _makes_a_scalar_tensor(self, call: ast.Call, env: Env, local: set[str]) -> bool:
        """`torch.tensor(x)` of one Python number: 0-dim, allowed next to CUDA tensors in arithmetic."""
        if len(call.args) != 1 or call.keywords and any(k.arg == "device" for k in call.keywords):
            return False
        if self.resolver.imports.qualify(call.func) not in ("torch.tensor", "torch.as_tensor", "torch.scalar_tensor"):
            return False
        names = {node.id for node in every_node(call.args[0]) if isinstance(node, ast.Name)}
        return not names & local and self.resolver.kind(call.args[0], env) is Kind.SCALAR

    def _record_target(self, target: ast.expr, env: Env) -> None:
        """`x[i] = v`, `x.attr = v`: the names inside are read."""
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            self._record(target, env)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._record_target(element, env)

    def _forget_stores(self, node: ast.stmt, env: Env) -> Env:
        stored = {name.id for name in every_node(node) if isinstance(name, ast.Name) and isinstance(name.ctx, (ast.Store, ast.Del))}
        return {**env, **{name: Kind.UNKNOWN for name in stored}} if stored else env


def _unpacked_kinds(kind: Kind, count: int) -> list[Kind]:
    """What unpacking a value of `kind` into `count` names gives each: every part of a tuple of
    tensors is a tensor, of a tuple of loaders a loader; the first part of an image sample is a
    tensor; anything else is unknown."""
    if kind in (Kind.TENSOR_TUPLE, Kind.TENSOR_LIST):
        return [Kind.TENSOR] * count
    if kind in (Kind.TENSOR_LOADERS, Kind.IMAGE_LOADERS):
        return [Kind.TENSOR_LOADER if kind is Kind.TENSOR_LOADERS else Kind.IMAGE_LOADER] * count
    if kind is Kind.IMAGE_SAMPLE and count == 2:
        return [Kind.TENSOR, Kind.UNKNOWN]
    return [Kind.UNKNOWN] * count


_NESTED_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})


def _join_envs(first: Env, second: Env) -> Env:
    """Each name's kinds on both paths joined; a name bound on one path only is unknown. (Most
    names keep their kind on both paths: comparing them first spares `join` its set.)"""
    joined = {name: kind if (other := second.get(name)) is kind else Kind.UNKNOWN if other is None else join((kind, other))
              for name, kind in first.items()}
    for name in second.keys() - first.keys():
        joined[name] = Kind.UNKNOWN
    return joined


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"  # as `kinds.Resolver` reads `self.x`


def _is_static_decorator(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Name) and decorator.id == "staticmethod"


def _is_static(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(_is_static_decorator(decorator) for decorator in node.decorator_list)
