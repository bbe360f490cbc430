"""DF029 loader-worker-device: a Dataset moves its items to the GPU in `__getitem__` (or a
`collate_fn` moves its batches), which the DataLoader runs in worker processes.

    Before:  def __getitem__(self, i):
                 return self.x[i].to(device), self.y[i].to(device)
             ...
             loader = DataLoader(dataset, batch_size=8, num_workers=2)
             for xb, yb in loader:
                 out = model(xb)
    After:   def __getitem__(self, i):
                 return self.x[i], self.y[i]
             ...
             for xb, yb in loader:
                 xb, yb = xb.to(device), yb.to(device)
                 out = model(xb)

A worker is a process forked from the program, and CUDA cannot start again in a process forked
after the program used it: the first item a worker moves raises "Cannot re-initialize CUDA in
forked subprocess" (or "CUDA error: initialization error"). The items stay on the CPU in the
workers and each batch goes, in the loop, to the device `__getitem__` moved its items to (what
PyTorch advises; `multiprocessing_context="spawn"` works around it but changes how the whole
program starts). Batches hold the same values.

Applies when the items are moved where `__getitem__` returns them (`return x.to(device), y`, or
a name bound once to such a move and read only there), to a module-level name (or an attribute
of one: `args.device`), a string or with `.cuda()`, or to the device the dataset keeps from its
constructor (`self.device = device`, every construction giving the same such name); the class only ever builds datasets that go straight to a DataLoader (and `len()`),
nothing else names it and no item is read in the main process (for a `collate_fn`: a function of
the file only ever given as one); and each loader is bound to a name that only `for` loops (also
under `enumerate`, a progress bar, or in a function of the file every call hands such a loader)
and `len()` read, each unpacking the batch into one name per item. A loop that moves the batch
itself already gets no second move; a loop whose scope names another `device` (a parameter) is
moved only when every call gives that parameter the module's `device`.

A dataset that keeps its tensors on the device (`self.X = torch.tensor(X).to(device)` in
`__init__`, read by `__getitem__`) fails the same way ("CUDA error: initialization error": a
worker cannot touch CUDA memory either); its loaders with workers read it in the main process
instead (`num_workers=0`), which is what that design means, unless they are given options that
need workers or run in them (`persistent_workers`, `prefetch_factor`, `worker_init_fn`,
`timeout`, `pin_memory`).

A Dataset class imported from another file of the project whose `__getitem__` moves its items to
the GPU (`.cuda()`, `.to("cuda")`, `.to(device)` of that file's module-level CUDA device) is not
this file's to change: its loaders with workers read it in the main process (`num_workers=0`),
with the same refusal for options that need workers.

Refuses, and reports without a fix: any other placement in `__getitem__`
(`torch.zeros(..., device=...)`, `self.device`, a move the method computes with), a `collate_fn`
beside a `__getitem__` that places items (it may regroup them), a loader or dataset handed on or
read otherwise. Left alone: loaders without workers (`num_workers=0`, the default: a dataset that
keeps its tensors on the GPU and is read in the main process is a legitimate design), and loaders
given a `multiprocessing_context`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import libcst as cst
from libcst.metadata import GlobalScope, ScopeProvider

from devfix.analysis.call_sites import constructor_values_for
from devfix.analysis.cst_bindings import bound_names
from devfix.analysis.cst_metadata import ParentProvider
from devfix.analysis.loaders import resident_tensors, target_names, unwrap_loader
from devfix.analysis.module_classes import class_facts, top_level_class
from devfix.analysis.placement import as_move
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_api import DATALOADER_NAMES
from devfix.analysis.torch_names import keyword
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety

WORKER_OPTIONS = ("persistent_workers", "prefetch_factor", "worker_init_fn", "timeout", "pin_memory")
_MOVED_ALREADY = cst.SimpleStatementLine([cst.Pass()])  # a loop that needs no new statement


@dataclass
class _Plan:
    """The edits for one `__getitem__` or `collate_fn`: the moves to drop there and the statements
    to put at the top of the loops over its loaders."""

    dropped: set[int] = field(default_factory=set)  # ids of `.to(...)`/`.cuda()` calls
    loop_moves: dict[int, cst.SimpleStatementLine] = field(default_factory=dict)  # id of a `for` → its new first statement


class LoaderWorkerDevice(ScopeTracker, DevfixRule):
    CODE = "DF029"
    NAME = "loader-worker-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Dataset moves its items to the GPU in DataLoader worker processes, where CUDA cannot start"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._dropped: set[int] = set()
        self._loop_moves: dict[int, cst.SimpleStatementLine] = {}
        self._without_workers: set[int] = set()  # ids of DataLoader calls to read in the main process
        index = _Index()
        node.visit(index)
        self._index = index
        loaders_by_class: dict[str, list[cst.Call]] = {}
        loaders_by_collate: dict[str, list[cst.Call]] = {}
        for loader in index.calls:
            if not self.qualified(loader.func) & DATALOADER_NAMES or not _has_workers(loader):
                continue
            collate = keyword(loader, "collate_fn")
            if collate is not None and isinstance(collate.value, cst.Name) and collate.value.value in index.functions:
                loaders_by_collate.setdefault(collate.value.value, []).append(loader)
            built = self._dataset_construction(loader)
            if built is not None and isinstance(built.func, cst.Name):
                loaders_by_class.setdefault(built.func.value, []).append(loader)
        for class_name, loaders in loaders_by_class.items():
            class_def = top_level_class(node, class_name)
            getitem = _method(class_def, "__getitem__") if class_def is not None else None
            if class_def is None and self.facts is not None and self.facts.imported_dataset_moves_items(class_name):
                self._plan_imported(class_name, loaders)
            if getitem is not None:
                self._plan_producer(f"`{class_name}.__getitem__` places items", getitem, loaders,
                                    partial(self._dataset_loaders, class_def), class_def)
                self._plan_resident(class_name, class_def, loaders)
        for function_name, loaders in loaders_by_collate.items():
            function = index.functions[function_name]
            self._plan_producer(f"`{function_name}` places batches", function, loaders, partial(self._collate_loaders, function))

    def _plan_producer(
        self, what: str, producer: cst.FunctionDef, loaders: list[cst.Call], loader_names, class_def: cst.ClassDef | None = None,
    ) -> None:
        """Report the placements of `producer` (a `__getitem__` of `class_def`, or a `collate_fn`),
        and plan the fix when `loader_names()` gives every loader it serves."""
        placements = _Placements(self.qualified)
        producer.body.visit(placements)
        if not placements.found:
            return
        first = placements.found[0]
        workers = cst.Module([]).code_for_node(keyword(loaders[0], "num_workers").value)
        message = (f"{what} on a device, and DataLoader workers run it (num_workers={workers}): "
                   "CUDA cannot start in a worker forked after the program used it")
        plan = self._plan(producer, placements, loader_names, class_def)
        if plan is None:
            self.report(first, message, fixable=False)
            return
        if self.report(first, message, fix_title="keep the items on the CPU and move each batch in the loop"):
            self._dropped |= plan.dropped
            self._loop_moves.update(plan.loop_moves)

    def _plan(self, producer: cst.FunctionDef, placements: _Placements, loader_names, class_def: cst.ClassDef | None) -> _Plan | None:
        moved = self._returned_moves(producer, placements, class_def)
        if moved is None:
            return None
        arity, devices = moved
        plan = _Plan(dropped={id(call) for call in placements.found})
        loaders = loader_names()
        if not loaders:
            return None
        references = [self._references(loader) if isinstance(loader, cst.Name) else [loader] for loader in loaders]
        if any(found is None for found in references):
            return None
        given = {id(node) for found in references for node in found}
        for loop in self._loops_over([node for found in references for node in found], given):
            statement = self._loop_move(loop, arity, devices)
            if statement is None:
                return None
            if statement is not _MOVED_ALREADY:
                plan.loop_moves[id(loop)] = statement
        return plan

    def _dataset_loaders(self, class_def: cst.ClassDef) -> list[cst.Name | cst.Call] | None:
        """The names of the loaders over every dataset the class builds (no `collate_fn`: it may
        regroup the items), or a loader built where a `for` loops over it."""
        constructions = self._constructions(class_def)
        if not constructions:
            return None  # the class named otherwise than built
        names = [self._only_loader_of(construction) for construction in constructions]
        return None if None in names else names

    def _collate_loaders(self, function: cst.FunctionDef) -> list[cst.Name] | None:
        """The names of the loaders the function collates for, when it is only ever given as a
        loader's `collate_fn` (and its batches are that function's tuples)."""
        names = []
        for node in self._references(function.name) or [None]:
            loader = self._index.collate_of.get(id(node))
            if loader is None or keyword(loader, "multiprocessing_context") is not None or self._items_placed(loader):
                return None
            names.append(self._index.assigned_to.get(id(loader)))
        return None if None in names else names

    def _returned_moves(
        self, getitem: cst.FunctionDef, placements: _Placements, class_def: cst.ClassDef | None,
    ) -> tuple[int, dict[int, str]] | None:
        """(how many items `__getitem__` returns, the device code of each moved position) when every
        placement in it is a move of a returned item; None otherwise."""
        statements = getitem.body.body
        last = statements[-1] if statements else None
        if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return) and last.body[0].value is not None):
            return None
        if sum(isinstance(n, cst.Return) for n in _walk(getitem.body)) != 1:
            return None
        value = last.body[0].value
        items = [element.value for element in value.elements] if isinstance(value, cst.Tuple) else [value]
        if isinstance(value, cst.Tuple) and any(isinstance(element, cst.StarredElement) for element in value.elements):
            return None
        bound = _bound_once(getitem)
        devices: dict[int, str] = {}
        covered: set[int] = set()
        for position, item in enumerate(items):
            if isinstance(item, cst.Name) and item.value in bound and _reads(getitem, item.value) == 1:
                item = bound[item.value]
            move = as_move(item, self.qualified)
            if move is None:
                continue
            device = self._device_code(move.call, class_def)
            if device is None:
                return None
            devices[position] = device
            covered.add(id(move.call))
        if covered != {id(call) for call in placements.found}:
            return None
        return len(items), devices

    def _device_code(self, call: cst.Call, class_def: cst.ClassDef | None) -> str | None:
        """The move's method and argument as the loop can repeat them: `.cuda()`, `.to("cuda")`,
        `.to(device)` with `device` a module-level name, also when the dataset keeps it
        (`.to(self.device)`, `self.device = device` in `__init__`, every construction given it)."""
        method = call.func.attr.value
        if method == "cuda":
            return ".cuda()" if not call.args else None
        if len(call.args) != 1 or call.args[0].keyword is not None and call.args[0].keyword.value != "device":
            return None
        device = call.args[0].value
        if isinstance(device, cst.Attribute) and isinstance(device.value, cst.Name) and device.value.value == "self":
            given = self._constructions_device(class_def, device) if class_def is not None else None
            codes = {self._repeatable(value) for value in given or []}
            return codes.pop() if len(codes) == 1 else None
        return self._repeatable(device)

    def _repeatable(self, device: cst.BaseExpression) -> str | None:
        """`.to(<device>)` when a loop of the file can name the same device: a string, or a
        module-level name (or an attribute of one: `args.device`)."""
        if isinstance(device, cst.SimpleString):
            return f".to({device.value})"
        root = device
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name) and self._global_only(root):
            return f".to({cst.Module([]).code_for_node(device)})"
        return None

    def _constructions_device(self, class_def: cst.ClassDef, attribute: cst.Attribute) -> list[cst.BaseExpression] | None:
        """What each construction of the class gives the `__init__` parameter that `self.<attr>`
        only ever holds (`self.device = device`)."""
        use = class_facts(class_def, self.line_of).attributes.get(attribute.attr.value)
        if use is None or len(use.assignments) != 1 or use.other_uses & {"augmented assignment"}:
            return None
        method, statement = use.assignments[0]
        value = statement.value
        if method != "__init__" or len(statement.targets) != 1 or not isinstance(value, cst.Name):
            return None
        scope = self.get_metadata(ScopeProvider, value, None)
        bindings = list(scope[value.value]) if scope is not None else []
        if len(bindings) != 1 or not isinstance(bindings[0].node, cst.Param):
            return None  # not the parameter, or rebound before it is kept
        return constructor_values_for(self.module, class_def, value.value)

    def _global_only(self, name: cst.Name) -> bool:
        scope = self.get_metadata(ScopeProvider, name, None)
        assignments = list(scope[name.value]) if scope is not None else []
        return bool(assignments) and all(isinstance(assignment.scope, GlobalScope) for assignment in assignments)

    def _constructions(self, class_def: cst.ClassDef) -> list[cst.Call]:
        """Every `Cls(...)` of the class, when the class name is read nowhere else."""
        scope = self.get_metadata(ScopeProvider, class_def.name, None)
        if scope is None:
            return []
        assignments = list(scope.assignments[class_def.name.value])
        if len(assignments) != 1:
            return []
        constructions = []
        for access in assignments[0].references:
            call = self._index.called.get(id(access.node))
            if call is None:
                return []
            constructions.append(call)
        return constructions

    def _only_loader_of(self, construction: cst.Call) -> cst.Name | cst.Call | None:
        """The name of the one loader built over this dataset: `loader = DataLoader(Cls(...))`, or
        `dataset = Cls(...)` read only by `DataLoader(dataset, ...)` and `len(dataset)`; or that
        loader's construction itself, where a `for` loops over it (`for x, y in DataLoader(data, ...)`)."""
        loader = self._index.loader_of_argument.get(id(construction))
        if loader is None:
            target = self._index.assigned_to.get(id(construction))
            references = self._references(target) if target is not None else None
            if not references:
                return None
            loaders = [self._index.loader_of_argument.get(id(node)) for node in references if id(node) not in self._index.len_arguments]
            if len(loaders) != 1 or loaders[0] is None:
                return None
            loader = loaders[0]
        if keyword(loader, "collate_fn") is not None or keyword(loader, "multiprocessing_context") is not None:
            return None
        if not self.qualified(loader.func) & DATALOADER_NAMES:
            return None
        return loader if id(loader) in self._index.loop_over else self._index.assigned_to.get(id(loader))

    def _references(self, target: cst.Name) -> list[cst.CSTNode] | None:
        """Where the name bound here (by an assignment or as a parameter) is read, when this is its
        only binding in its scope."""
        scope = self.get_metadata(ScopeProvider, target, None)
        assignments = list(scope.assignments[target.value]) if scope is not None else []
        node = assignments[0].node if len(assignments) == 1 else None
        if node is not target and not (isinstance(node, (cst.Param, cst.FunctionDef)) and node.name is target):
            return None
        return [access.node for access in assignments[0].references]

    def _loops_over(self, references: list[cst.CSTNode], loaders: set[int], depth: int = 0) -> list[cst.For | None]:
        """The loops over the loaders read at `references`, also inside the functions of the file
        they are handed to (`train(model, loader)`) when every call of such a function gives one of
        the `loaders` there; a None for a read that is neither a loop, `len()` nor such a call."""
        loops: list[cst.For | None] = []
        for node in references:
            if id(node) in self._index.len_arguments:
                continue
            loop = self._index.loop_over.get(id(node))
            if loop is not None:
                loops.append(loop)
                continue
            parameter = self._parameter_given(node, loaders) if depth < 2 else None
            if parameter is None:
                return [None]
            inner = self._references(parameter.name)
            if inner is None:
                return [None]
            loops += self._loops_over(inner, loaders | {id(read) for read in inner}, depth + 1)
        return loops

    def _parameter_given(self, argument: cst.CSTNode, loaders: set[int]) -> cst.Param | None:
        """The parameter of a top-level function of the file that receives `argument` at a call,
        when every call of the function passes one of `loaders` there."""
        call = self._index.argument_of.get(id(argument))
        function = self._index.functions.get(call.func.value) if call is not None and isinstance(call.func, cst.Name) else None
        if function is None:
            return None
        for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
            given = self.call_index().arguments_for(function, param.name.value)
            if given is None or not any(value is argument for _, value in given):
                continue
            return param if all(id(value) in loaders for _, value in given) else None
        return None

    def _loop_move(self, loop: cst.For | None, arity: int, devices: dict[int, str]) -> cst.SimpleStatementLine | None:
        if loop is None:
            return None
        _, target = unwrap_loader(loop, self.qualified)
        names = target_names(target)
        if arity == 1 and not isinstance(target, cst.Name) or arity > 1 and (not isinstance(target, (cst.Tuple, cst.List)) or len(names) != arity):
            return None
        moved = [(names[position], device) for position, device in sorted(devices.items())]
        if {name for name, _ in moved} <= self._moved_in_body(loop):
            return _MOVED_ALREADY  # the loop moves the batch itself as well (to a device of its own choosing)
        if self._shadows_device(loop, devices):
            return None
        targets = ", ".join(name for name, _ in moved)
        values = ", ".join(f"{name}{device}" for name, device in moved)
        return cst.parse_statement(f"{targets} = {values}\n")

    def _moved_in_body(self, loop: cst.For) -> set[str]:
        """Names the loop body's own statements rebind to a move of themselves (`x = x.to(device)`)."""
        moved = set()
        for statement in loop.body.body:
            if not (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign)):
                continue
            assign = statement.body[0]
            targets = [element.value for element in assign.targets[0].target.elements] \
                if isinstance(assign.targets[0].target, cst.Tuple) else [assign.targets[0].target]
            values = [element.value for element in assign.value.elements] if isinstance(assign.value, cst.Tuple) else [assign.value]
            for target, value in zip(targets, values):
                move = as_move(value, self.qualified) if len(targets) == len(values) else None
                if isinstance(target, cst.Name) and move is not None and isinstance(move.receiver, cst.Name) \
                        and move.receiver.value == target.value:
                    moved.add(target.value)
        return moved

    def _shadows_device(self, loop: cst.For, devices: dict[int, str]) -> bool:
        """A device name that the loop's scope, or a function around it, binds itself: there it is
        not the module's, unless it is a parameter of a top-level function that every call gives
        the module's name (`train(model, device, loader)`)."""
        scope = self.get_metadata(ScopeProvider, loop, None)
        if scope is None or isinstance(scope, GlobalScope):
            return False
        for device in devices.values():
            name = device[4:-1].split(".")[0]  # the name `args.device` is read from
            if device.startswith(".to(") and name.isidentifier() and any(
                not isinstance(seen.scope, GlobalScope) and not self._given_the_module_name(seen.node, name) for seen in scope[name]
            ):
                return True
        return False

    def _given_the_module_name(self, bound: cst.CSTNode, name: str) -> bool:
        """`bound` is the parameter `name` of a top-level function of the file, and every call of
        the function passes the module-level `name` for it."""
        function = self.get_metadata(ParentProvider, self.get_metadata(ParentProvider, bound, None), None) \
            if isinstance(bound, cst.Param) else None
        if not isinstance(function, cst.FunctionDef) or self._index.functions.get(function.name.value) is not function:
            return False
        given = self.call_index().arguments_for(function, name)
        return bool(given) and all(isinstance(value, cst.Name) and value.value == name and self._global_only(value) for _, value in given)

    def _plan_resident(self, class_name: str, class_def: cst.ClassDef, loaders: list[cst.Call]) -> None:
        """A dataset that keeps its tensors on the device (`self.X = torch.tensor(X).to(device)` in
        `__init__`) and whose `__getitem__` reads them: workers cannot touch CUDA memory either. Read
        in the main process (`num_workers=0`), the GPU-resident design works as meant."""
        resident = resident_tensors(class_def, self.qualified, self.line_of)
        if not resident or self._dropped & {id(call) for _, call in resident}:
            return
        name, first = resident[0]
        workers = cst.Module([]).code_for_node(keyword(loaders[0], "num_workers").value)
        message = (f"`{class_name}` keeps its tensors on a device (`self.{name}`), and DataLoader workers read them "
                   f"(num_workers={workers}): CUDA cannot be used in a worker forked after the program used it")
        self._read_without_workers(first, message, loaders)

    def _plan_imported(self, class_name: str, loaders: list[cst.Call]) -> None:
        """A Dataset class of another file of the project whose `__getitem__` moves its items to the
        GPU: its file cannot see these loaders, so the items stay where that code puts them and the
        loaders read the dataset in the main process (`num_workers=0`), where CUDA works."""
        workers = cst.Module([]).code_for_node(keyword(loaders[0], "num_workers").value)
        message = (f"`{class_name}.__getitem__` (another file) moves its items to the GPU, and DataLoader workers run it "
                   f"(num_workers={workers}): CUDA cannot start again in a worker forked after the program used it")
        self._read_without_workers(loaders[0], message, loaders)

    def _read_without_workers(self, anchor: cst.CSTNode, message: str, loaders: list[cst.Call]) -> None:
        """Report at `anchor`; fix by reading the dataset in the main process (`num_workers=0` for
        every loader), unless a loader is given options that need workers or that a worker runs."""
        if any(keyword(loader, option) is not None for loader in loaders for option in WORKER_OPTIONS):
            self.report(anchor, message, fixable=False)
            return
        if self.report(anchor, message, fix_title="read the dataset in the main process (`num_workers=0`)"):
            self._without_workers |= {id(loader) for loader in loaders}

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if id(original_node) in self._dropped:
            return updated_node.func.value
        if id(original_node) in self._without_workers:
            return updated_node.with_changes(args=[
                arg.with_changes(value=cst.Integer("0")) if arg.keyword is not None and arg.keyword.value == "num_workers" else arg
                for arg in updated_node.args
            ])
        return updated_node

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        statement = self._loop_moves.get(id(original_node))
        if statement is None:
            return updated_node
        body = list(updated_node.body.body)
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[statement, *body]))

    def _items_placed(self, loader: cst.Call) -> bool:
        """The loader's dataset is built by a class of the file whose `__getitem__` places items."""
        built = self._dataset_construction(loader)
        class_def = top_level_class(self.module, built.func.value) if built is not None and isinstance(built.func, cst.Name) else None
        getitem = _method(class_def, "__getitem__") if class_def is not None else None
        if getitem is None:
            return False
        placements = _Placements(self.qualified)
        getitem.body.visit(placements)
        return bool(placements.found)

    def _dataset_construction(self, loader: cst.Call) -> cst.Call | None:
        given = loader.args[0] if loader.args and loader.args[0].keyword is None else keyword(loader, "dataset")
        dataset = given.value if given is not None else None
        if isinstance(dataset, cst.Name):
            target = self._binding_of(dataset)
            dataset = self._index.assigned_values.get(id(target)) if target is not None else None
        return dataset if isinstance(dataset, cst.Call) else None

    def _binding_of(self, name: cst.Name) -> cst.Name | None:
        scope = self.get_metadata(ScopeProvider, name, None)
        assignments = list(scope[name.value]) if scope is not None else []
        if len(assignments) != 1 or not isinstance(assignments[0].node, cst.Name):
            return None
        return assignments[0].node


def _has_workers(loader: cst.Call) -> bool:
    """`num_workers=` given and not a literal 0, and no `multiprocessing_context=`."""
    workers = keyword(loader, "num_workers")
    if workers is None or keyword(loader, "multiprocessing_context") is not None:
        return False
    return not (isinstance(workers.value, cst.Integer) and workers.value.evaluated_value == 0)


class _Index(cst.CSTVisitor):
    """One walk of the module: calls, the names assignments bind them to, the arguments of
    DataLoader calls and of `len()`, and what `for` loops iterate over."""

    def __init__(self) -> None:
        self.calls: list[cst.Call] = []
        self.called: dict[int, cst.Call] = {}  # id of a called name → the call
        self.assigned_to: dict[int, cst.Name] = {}  # id of a value → the one name bound to it
        self.assigned_values: dict[int, cst.BaseExpression] = {}  # id of that name → the value
        self.loader_of_argument: dict[int, cst.Call] = {}  # id of a first argument → the call
        self.len_arguments: set[int] = set()
        self.loop_over: dict[int, cst.For] = {}  # id of the iterated name (under enumerate, tqdm) → the loop
        self.argument_of: dict[int, cst.Call] = {}  # id of any argument → its call
        self.collate_of: dict[int, cst.Call] = {}  # id of a `collate_fn=` value → its call
        self.functions: dict[str, cst.FunctionDef] = {}  # the top-level functions defined once

    def visit_Module(self, node: cst.Module) -> None:
        defined = [statement for statement in node.body if isinstance(statement, cst.FunctionDef)]
        names = [function.name.value for function in defined]
        self.functions = {function.name.value: function for function in defined if names.count(function.name.value) == 1}

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)
        self.called[id(node.func)] = node
        if isinstance(node.func, cst.Name) and node.func.value == "len" and len(node.args) == 1:
            self.len_arguments.add(id(node.args[0].value))
        given = node.args[0] if node.args and node.args[0].keyword is None else keyword(node, "dataset")
        if given is not None:
            self.loader_of_argument[id(given.value)] = node
        for arg in node.args:
            self.argument_of[id(arg.value)] = node
        collate = keyword(node, "collate_fn")
        if collate is not None:
            self.collate_of[id(collate.value)] = node

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.assigned_to[id(node.value)] = node.targets[0].target
            self.assigned_values[id(node.targets[0].target)] = node.value

    def visit_For(self, node: cst.For) -> None:
        iterable = node.iter
        while isinstance(iterable, cst.Call) and iterable.args:
            self.loop_over[id(iterable)] = node  # `for x, y in DataLoader(data, ...)`: the loader built in place
            iterable = iterable.args[0].value  # `enumerate(loader)`, `tqdm(loader)`: unwrap_loader checks them
        if isinstance(iterable, cst.Name):
            self.loop_over[id(iterable)] = node


class _Placements(cst.CSTVisitor):
    """The moves and `device=` constructions of a method's body (not of functions inside it)."""

    def __init__(self, qualified) -> None:
        self.qualified = qualified
        self.found: list[cst.Call] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        move = as_move(node, self.qualified)
        if move is not None and move.call is node:
            self.found.append(node)
        elif keyword(node, "device") is not None:
            self.found.append(node)


def _method(class_def: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    found = [item for item in class_def.body.body if isinstance(item, cst.FunctionDef) and item.name.value == name]
    return found[0] if len(found) == 1 else None


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


def _bound_once(function: cst.FunctionDef) -> dict[str, cst.BaseExpression]:
    """Names the method binds exactly once, by a plain `name = value`, with their values."""
    values: dict[str, list[cst.BaseExpression | None]] = {}
    for node in _walk(function.body):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                for name in bound_names(target.target):
                    values.setdefault(name, []).append(node.value if isinstance(target.target, cst.Name) and len(node.targets) == 1 else None)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            for name in bound_names(node.target):
                values.setdefault(name, []).append(None)
        elif isinstance(node, (cst.For, cst.CompFor)):
            for name in bound_names(node.target):
                values.setdefault(name, []).append(None)
    return {name: found[0] for name, found in values.items() if len(found) == 1 and found[0] is not None}


def _reads(function: cst.FunctionDef, name: str) -> int:
    """How many times the method's body mentions `name` outside the left side of an assignment."""
    stored = {id(target.target) for node in _walk(function.body) if isinstance(node, cst.Assign) for target in node.targets}
    return sum(
        isinstance(node, cst.Name) and node.value == name and id(node) not in stored
        for node in _walk(function.body)
    )
