"""DF020 trainer-attributes: a plain trainer class moves `self.model` but not what it feeds it.

    Before:  class Trainer:
                 def __init__(self, model, device):
                     self.device = device
                     self.model = model.to(device)
                     self.criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 3.0]))
                 def step(self, x, y):
                     return self.criterion(self.model(x), y)
    After:           self.criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 3.0])).to(device)
                 def step(self, x, y):
                     x, y = x.to(self.device), y.to(self.device)
                     ...

Batches of a DataLoader loop in a method are moved the same way, at the top of the loop body, when
the analysis proves them tensors (`for x, y in loader` over a `TensorDataset`, or over a Dataset
class of the file whose `__getitem__` returns a tuple of tensors, numbers and numpy arrays with at
least one tensor: the default collate stacks them all into tensors) and they meet the
model, or a loss attribute together with the model's output (also through a tensor method:
`self.criterion(output, labels.float())` after `output, h = self.model(inputs, h)`). A loader the
class keeps from its constructor (`self.loader = loader`) is what the constructions give: those of
the file, or, for a class the file only defines, those of the files beside it (`Trainer(model,
DataLoader(TensorDataset(x, y)))` in `main.py`; `ProjectIndex.constructed_kinds`); one a method is
given (`def train_epoch(self, loader)`) is what the calls of the method give, for a class the file
only defines those in the files that construct it (`trainer.train_epoch(loader)` in `main.py`;
`ProjectIndex.method_call_kinds`), where a torch.nn loss built in place by every construction
(`Trainer(model, nn.CrossEntropyLoss())`) is a loss attribute as one built in the file is.

A factory without `device=` given to the moved model (`self.generator(torch.randn(n, 2))`), or
to a method of it that hands the parameter to its layers (`self.model.decode(torch.randn(n, 2))`,
where `self.model` holds a class of the file, built there or given by every construction of the
trainer; `analysis.method_inputs`), is created on the model's device: `device=self.device`; so is
one a local holds where it is fed, also the first token of a decoding loop that rebinds the local
only after feeding it (`token = torch.tensor([[SOS]])`, `self.decoder(token, h)`, `token =
logits.argmax(-1)`). What the model's `forward` hands to `torch.nn.utils.rnn` as lengths stays on the CPU.

A local the analysis proves a tensor built on the host (`rows = torch.from_numpy(table).float()`)
and fed to the moved model is moved where it is fed: `self.network(rows.to(self.device))`; so is
an argument built there from a constructor that takes no device
(`self.q(torch.FloatTensor(state).unsqueeze(0))`).
Such a local that meets the model's output instead (a DQN agent's `rewards + gamma * next_q *
(1 - dones)`, `self.q(states).gather(1, actions)`, also through a torch function of it:
`torch.log_softmax(self.policy(s), -1).gather(1, actions.unsqueeze(1))`;
`analysis.output_meetings`) is moved where it meets it, or, made there by a factory, created on the
model's device, unless it may be a 0-dim tensor, which arithmetic accepts on the CPU. So are the names a
method unpacks from a batch another class of the file samples on the host (a DQN agent's `states,
actions, rewards, next_states, dones = experiences`, where every call of `learn` passes what
`self.memory.sample()` returns, and the replay buffer's `sample` returns a tuple of tensors built
there from numpy; or where the method samples them itself, `states, ... = self.buffer.sample(n)`;
`analysis.sampled_batches`).

A model `__init__` keeps as given (`self.model = model`) is on a device when every construction of
the class in the file gives it a name its scope moved before the call (`Evaluator(model)` after
`model = Net().to(device)`), or, for a class its file never constructs, every construction in the
files beside it does (`Trainer(model, loader)` in `main.py`): what the methods feed it moves to the
model's own device; in a loop that moves some batches itself to one device the class keeps or the
method is given (`inputs = inputs.to(self.device)`), the others that meet the model go there too. A method of
the class whose factory meets the model's output (`self.bce(self.D(real), self._labels(n, 1.0))`)
makes it on the model's device when every use of the method is such a call. A batch of a loader
`__init__` builds (`self.loader = DataLoader(dataset)`, of a dataset nothing proves) read only by
string keys (`batch["x"]`) moves value by value, strings and lists left as they are.

Applies to classes that are not `nn.Module`s (those are moved as a whole; Lightning moves batches
itself) when `__init__` moves a model attribute: `self.model = model.to(device)` (also as an item
of a tuple assignment: `self.G, self.D = G.to(device), D.to(device)`), or a Module it
builds or is given, then moved in place (`self.model.to(self.device)`), or when another method builds
and moves one to the device `__init__` keeps, that attribute's only binding in the file (a
sklearn-style `fit`: `self.net_ = nn.Sequential(...).to(self.device)`; `predict` runs after it or
raises). A model a method moves in
place itself, in a statement of its own body (`self.model.to(self.device)` at the top of `fit`),
has the batches of that method's later loops moved (other methods may run before the move). Method arguments fed to
that model, or to a loss together with its output, are moved at the top of the method, to the
model's device: `self.device` when the class keeps one, else `next(self.model.parameters()).device`
(not those every caller gives moved, a call of an instance itself, `cam(img)`, calling `__call__`,
or, from a method of the class, gives a name it feeds the model itself as it is: a SAC agent's `self.evaluate(bn_s)` beside `self.value_net(bn_s)`); names the
method first unpacks from a parameter (`inputs, targets = batch`) and feeds are moved right after
the unpacking, when every call gives it the batch of a loop over a proven DataLoader
(`[self.train_step(batch) for batch in loader]`). Module attributes holding
state (a loss with `weight=`) that are never moved get the model's device at construction; so does
a torchmetrics Metric whose `update(...)` is given the model's output (`self.accuracy.update(
logits.detach(), y)`).
A method that moves some arguments it gives a Module attribute (`solvents = solvents.unsqueeze(0).to(self.device)`),
when nothing the method can see moves the model (a `load_model` method does), shows where the model
is at that call: a parameter it gives beside them, as the caller gave it or through its own tensor
methods, is moved to the same device at the top of the method, when the model's class (of the file,
or of the project, also through a package's `__init__`) hands that parameter to its layers and not
to `torch.nn.utils.rnn` as lengths.

A Module attribute `__init__` builds or is given is moved too when the code holding an object of
the class moves it in place (`agent = DQN(...)`, then `agent.Q.to(device)`): arguments go to that
model's own device (a stored `self.device` may name another), and calls on an object whose models
nobody moved, or that pass the argument already moved, need nothing.

A tensor `__init__` makes on the host once and keeps (`self.class_weights = torch.tensor([1.0,
3.0])`), given as `weight=` or `pos_weight=` to a functional loss of the model's output in a method
(`F.cross_entropy(self.model(x), y, weight=self.class_weights)`, also through a local bound to
that output), is created on the model's device: `device=self.device`.

Refuses: arguments or batches already moved in the method, arguments only used elsewhere, arguments
some call gives as something the value analysis proves no tensor (a list of captions), batches
not proven tensors, unpacked names at the positions the loaders' Dataset class of the file gives as
strings or lists (captions, `analysis.dataset_items`), loops over anything not proven a DataLoader, Module classes.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devfix.analysis.call_sites import argument_for, constructor_arguments_for
from devfix.analysis.cst_bindings import calls_in, names_in, parameter_names, return_values
from devfix.analysis.cst_metadata import ParentProvider
from devfix.analysis.dataset_items import item_taken
from devfix.analysis.host_made import HostContext, host_made
from devfix.analysis.kinds import TENSOR_ONLY_METHODS, Kind
from devfix.analysis.loaders import (
    BatchUse,
    collate_places_batches,
    is_dataloader,
    loops_of,
    move_statements,
    non_tensor_positions_of,
    target_names,
    unwrap_loader,
)
from devfix.analysis.method_inputs import MethodInputs
from devfix.analysis.module_classes import AttributeUse, class_facts, is_self_attribute, self_attribute_nodes
from devfix.analysis.output_meetings import OutputMeetings
from devfix.analysis.placement import Move, as_move, collect, device_code
from devfix.analysis.sampled_batches import host_unpacked_names
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.tensors import chain_root, is_factory_call, without_tensor_methods
from devfix.analysis.torch_api import (
    CHAIN_STOPS,
    DATALOADER_NAMES,
    FUNCTIONAL_LOSSES,
    LOSS_TENSOR_KEYWORDS,
    MOVED_AFTER,
    is_torch_tensor_function,
)
from devfix.analysis.torch_names import builds_a_metric, holds_state, keyword
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import add_keyword, insert_in_body, moved_to, prepend_to_function
from devfix.findings import Safety

TENSOR_ONLY_CASTS = TENSOR_ONLY_METHODS | {"float", "double", "half", "long", "bool"}  # a numpy array has none of them


class TrainerAttributes(ScopeTracker, DevfixRule):
    CODE = "DF020"
    NAME = "trainer-attributes"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Trainer class moves its model but not the inputs and losses it feeds it"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._argument_moves: dict[cst.FunctionDef, tuple[list[str], str]] = {}
        # `x, y = batch` of a parameter → the names to move after it, the device, where the first meets the model
        self._unpacked_moves: dict[cst.SimpleStatementLine, tuple[list[str], str, cst.Name]] = {}
        self._attribute_moves: dict[cst.Assign, str] = {}
        self._loop_moves: dict[cst.For, tuple[list[str], str]] = {}
        self._keyed_batches: set[tuple[cst.For, str]] = set()  # dict batches read by string keys: moved value by value
        self._factory_moves: dict[cst.Call, tuple[str, str]] = {}  # a factory → (the model it feeds, the device)
        self._weight_moves: dict[cst.Call, tuple[str, str]] = {}  # a kept loss weight's factory → (the model, the device)
        self._input_moves: dict[cst.Arg, tuple[str, str]] = {}  # a host-made local fed to a model → (the model, the device)
        self._meeting_moves: dict[cst.Name, tuple[str, str]] = {}  # a host-made local meeting a model's output → the same
        self._host_unpacked: set[tuple[str, int]] = set()  # (name, line) unpacked from a batch another class samples on the host
        self._top_level_names: list[tuple[cst.CSTNode, set[str]]] | None = None  # `_constructed_here`, read once
        finder = _InstanceAttributeMoves(self.qualified)
        node.visit(finder)
        self._moved_from_outside = finder  # `agent.q_net.to(device)` of `agent = Agent(...)`

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if self.is_module_classdef(node):
            return
        facts = class_facts(node, self.line_of)
        self._instances = self._moved_from_outside.instances.get(node.name.value, set())
        self._outside_models = self._models_moved_from_outside(facts)
        inside_models = self._moved_models(facts)
        models = inside_models | self._outside_models
        # the instances whose calls may meet a model on a device: all when `__init__` moves one,
        # else those whose models the code holding them moves (`host_agent` never moved stays put)
        self._calling_instances = self._instances if inside_models else {
            instance for instance, attribute in self._moved_from_outside.moves if attribute in self._outside_models
        }
        given_moved: set[str] = set()
        if not models:
            planned = (len(self._loop_moves), len(self._argument_moves))
            self._plan_models_moved_in_methods(facts)
            self._plan_models_fed_moved_batches(node, facts)
            self._plan_arguments_beside_moved_ones(node, facts)
            # else, models every construction gives moved (`Evaluator(model)`), on their own devices
            given_moved = self._models_given_moved(node, facts) if planned == (len(self._loop_moves), len(self._argument_moves)) else set()
            if not given_moved:
                return
            self._outside_models = models = given_moved
            self._calling_instances = self._instances
        model = sorted(models)[0]
        device, ready_line = self._device_expression(facts, model)
        state_attributes = {name: statement for name, statement in self._unmoved_state(facts).items() if name not in models}
        callables = set(models) | set(state_attributes) | self._module_attributes(facts) | self._given_torch_modules(node, facts)
        self._host_unpacked |= host_unpacked_names(facts, self._file_classes(), self._host_tuple_size, self.line_of,
                                                   lambda method: self.scope_facts(method.body).bindings)
        metrics = {name for name, statement in state_attributes.items() if builds_a_metric(statement.value, self.qualified)}
        finders = {method_name: _Feeds(callables, set(models), self, metrics) for method_name in facts.methods if method_name != "__init__"}
        for method_name, finder in finders.items():
            facts.methods[method_name].body.visit(finder)
        self._fed_in = {method_name: finder.fed for method_name, finder in finders.items()}
        self._method_meetings: dict[str, list[tuple[cst.Arg, str]]] = {}
        for method_name, method in facts.methods.items():
            if method_name == "__init__":
                continue
            self._plan_factories(node, facts, method, models)
            self._plan_loss_weights(facts, method, models, device, ready_line)
            self._plan_meetings(node, facts, method, models)
        self._plan_method_meetings(node, facts)
        for method_name, method in facts.methods.items():
            if method_name == "__init__":
                continue
            for loop in loops_of(method):
                batches = self._batches_to_move(loop, callables, set(models), facts)
                if batches and not (given_moved and self._batch_placements(loop)):
                    self._loop_moves[loop] = (batches, device)
                elif batches and (placed := self._batch_placement(loop, facts, method)) is not None:
                    self._loop_moves[loop] = (batches, placed)  # `data = data.to(self.device)` there: the loop says where
            finder = finders[method_name]
            parameters = [param.name.value for param in method.params.params[1:]]
            moved_here = self.scope_facts(method.body).moved
            moved_by_callers = self._moved_by_every_caller(facts, method_name, parameters)
            defaulted = _defaulted(method)  # `weight=0.5`: the default is no tensor, and a move at the top would meet it
            to_move = [name for name in parameters if name in finder.fed and name not in set(moved_here) | moved_by_callers | defaulted
                       and self._fed_as_given(method, name, finder.fed_nodes[name])
                       and not any(self.kind_of(node).is_known_non_tensor for node in finder.fed_nodes[name])
                       and not any(self._read_as_a_mapping_by_the_model(facts, node) for node in finder.fed_nodes[name])]
            if to_move:
                self._argument_moves[method] = (to_move, device)
            for statement, (batch, names) in _unpacked_parameters(method, parameters).items():
                unpacked_to_move = [name for name in names if name in finder.fed and name not in moved_here
                                    and self._fed_as_unpacked(method, name, statement, finder.fed_nodes[name])]
                given = unpacked_to_move and batch not in moved_here
                non_tensors = self._given_loader_batches(facts, method_name, parameters, batch) if given else None
                # positions the loaders' datasets give as strings or lists (captions) stay as they are
                unpacked_to_move = [name for name in unpacked_to_move if non_tensors is not None and names.index(name) not in non_tensors]
                if unpacked_to_move:
                    self._unpacked_moves[statement] = (unpacked_to_move, device, finder.fed_nodes[unpacked_to_move[0]][0])
            for attribute in finder.used_attributes & set(state_attributes):
                statement = state_attributes[attribute]
                # the device must exist where the attribute is built (later in __init__)
                self._attribute_moves.setdefault(statement, device if ready_line < self.line_of(statement) else "")

    def _fed_as_given(self, method: cst.FunctionDef, parameter: str, fed: list[cst.Name]) -> bool:
        """Every place `parameter` is fed holds what the caller gave, or a tensor method's copy of it
        (`x = x.float()`, which only a tensor has): the method binds nothing else to it on an
        earlier line (`X = torch.tensor(X)` turns a numpy array into a tensor there, and `.to()` on
        the array would raise)."""
        bindings = self.scope_facts(method.body).bindings.get(parameter, ())
        return not any(
            binding.line < self.line_of(node) and not _tensor_method_of(binding.value, parameter)
            for node in fed for binding in bindings
        )

    def _given_loader_batches(self, facts, method_name: str, parameters: list[str], batch: str) -> frozenset[int] | None:
        """Every call of the method (`self.<method>(...)` in the class, `trainer.<method>(...)` on
        an instance) passes for `batch` the batch of a loop over a proven DataLoader, on the CPU
        (`[self.train_step(batch) for batch in loader]`), and some call does: the positions of those
        batches that hold strings (`analysis.dataset_items`); None when not so."""
        calls = [call for method in facts.methods.values() for call in _self_calls(method, method_name)]
        calls += [call for instance, called, call in self._moved_from_outside.calls if called == method_name and instance in self._instances]
        found: set[int] = set()
        for call in calls:
            value = argument_for(call, batch, parameters)
            positions = self._loader_batch_at(call, value.value) if isinstance(value, cst.Name) else None
            if positions is None:
                return None
            found |= positions
        return frozenset(found) if calls else None

    def _loader_batch_at(self, node: cst.CSTNode, name: str) -> frozenset[int] | None:
        """`name` at `node` is the batch of the loop (or comprehension) around it, over a proven
        DataLoader whose `collate_fn` does not place batches, and nothing rebinds it in the loop:
        the positions of its batches that hold strings; None when not so."""
        child, parent = node, self.get_metadata(ParentProvider, node, None)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
            loops = []
            if isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
                for_in = parent.for_in
                while for_in is not None:
                    loops.append(for_in)
                    for_in = for_in.inner_for_in
            elif isinstance(parent, cst.For) and child is parent.body:
                loops.append(parent)
            for loop in loops:
                loader, target = unwrap_loader(loop, self.qualified, self_attributes=True)
                if name in target_names(target):
                    rebound = isinstance(loop, cst.For) and any(
                        self.line_of(loop) < binding.line <= self.line_of(node) for binding in self.scope_facts(loop).bindings.get(name, ()))
                    if loader is None or rebound or not is_dataloader(self, loader) or collate_places_batches(self, loader):
                        return None
                    return non_tensor_positions_of(self, loader)
            child, parent = parent, self.get_metadata(ParentProvider, parent, None)
        return None

    def _fed_as_unpacked(self, method: cst.FunctionDef, name: str, unpacking: cst.SimpleStatementLine, fed: list[cst.Name]) -> bool:
        """`name`, unpacked from a parameter by `unpacking`, is fed as unpacked there (or as a
        tensor method's copy of it): nothing else is bound to it before it is fed."""
        line = self.line_of(unpacking)
        bindings = self.scope_facts(method.body).bindings.get(name, ())
        return all(
            binding.line == line or binding.line >= self.line_of(node) or _tensor_method_of(binding.value, name)
            for node in fed for binding in bindings
        )

    def _plan_factories(self, class_def: cst.ClassDef, facts, method: cst.FunctionDef, models: set[str]) -> None:
        """Factories without `device=` given to a moved model attribute (`self.generator(torch.randn(n, 2))`)
        or to a method of it that hands them to its layers (`self.model.decode(z)`, `analysis.method_inputs`),
        directly or through a local bound once to the factory; and, given to the model itself, other
        locals made on the host (`_plan_host_inputs`)."""
        calls = _ModelCalls(models)
        method.body.visit(calls)
        placement = self.scope_facts(method.body)
        for call, model, model_method in calls.found:
            inputs = self._model_class_inputs(class_def, facts, model)
            device = self._device_expression(facts, model)[0]
            if model_method is None:
                lengths = [] if inputs is None else [argument_for(call, name, inputs.positional("forward")) for name in inputs.kept_on_the_host("forward")]
                fed = [arg.value for arg in call.args if not arg.star and arg.value not in lengths]  # lengths stay on the CPU
                self._plan_host_inputs(call, model, device, lengths, placement)
            elif inputs is not None:
                positional = inputs.positional(model_method)
                fed = [value for name in inputs.reaching(model_method) if (value := argument_for(call, name, positional)) is not None]
            else:
                continue
            for value in fed:
                for factory in self._factories(value, placement, self.line_of(call)):
                    self._factory_moves.setdefault(factory, (model, device))

    def _plan_loss_weights(self, facts, method: cst.FunctionDef, models: set[str], device: str, ready_line: int) -> None:
        """`F.cross_entropy(logits, y, weight=self.class_weights)` where `logits = self.model(x)` and
        `__init__` keeps `self.class_weights = torch.tensor([1.0, 3.0])`: the factory takes the
        model's device, where that device is known (built after it in `__init__`)."""
        bindings = self.scope_facts(method.body).bindings
        for call in _functional_losses(method, self.qualified):
            model = _model_behind(call.args[0].value, models, bindings)
            if model is None:
                continue
            for name in LOSS_TENSOR_KEYWORDS:
                weight = keyword(call, name)
                attribute = weight.value.attr.value if weight is not None and is_self_attribute(weight.value) else None
                factory = self._kept_host_tensor(facts, attribute) if attribute is not None else None
                if factory is not None and ready_line < self.line_of(factory):
                    self._weight_moves.setdefault(factory, (model, device))

    def _kept_host_tensor(self, facts, attribute: str) -> cst.Call | None:
        """The factory without `device=` that `__init__` alone assigns to `self.<attribute>`, never moved."""
        use = facts.attributes.get(attribute)
        if use is None or len(use.assignments) != 1 or use.assignments[0][0] != "__init__" or use.other_uses & {"to", "cuda"}:
            return None
        value = use.assignments[0][1].value
        if not isinstance(value, cst.Call) or not is_factory_call(value, self.qualified) or keyword(value, "device") is not None \
                or keyword(value, "generator") is not None:
            return None
        return value

    def _plan_host_inputs(self, call: cst.Call, model: str, device: str, lengths: list, placement) -> None:
        """`x = torch.from_numpy(arr).float()` then `self.model(x)`: a local the analysis proves a
        tensor built on the host (`analysis.host_made`), fed to a moved model, is moved where it is
        fed (what the model's `forward` hands to `torch.nn.utils.rnn` as lengths stays); so is an
        argument a device-less constructor starts (`torch.FloatTensor(state).unsqueeze(0)`), and a
        torch function of host values (`pad_sequence([torch.tensor(t) for t in data])`)."""
        where = self._host_context(placement)
        for arg in call.args:
            value = arg.value
            if arg.keyword is not None or arg.star or value in lengths:
                continue
            root = chain_root(value)  # `torch.FloatTensor(state)` of `torch.FloatTensor(state).unsqueeze(0)`
            if isinstance(root, cst.Call) and self.qualified(root.func) & MOVED_AFTER and host_made(value, self.line_of(call), 0, where):
                self._input_moves[arg] = (model, device)  # `self.q(torch.FloatTensor(state).unsqueeze(0))`
                continue
            if isinstance(value, cst.Name) and self._host_made_local(value, self.line_of(call), placement, where):
                self._input_moves[arg] = (model, device)
            elif isinstance(value, cst.Call) and is_torch_tensor_function(self.qualified(value.func)) \
                    and not is_factory_call(value, self.qualified) and host_made(value, self.line_of(call), 0, where):
                self._input_moves[arg] = (model, device)  # `self.model(pad_sequence(tensors))` of host tensors

    def _host_context(self, placement) -> HostContext:
        """What `host_made` asks of a scope: its placement facts, and the file's host-tensor helpers."""
        return HostContext(placement, self.qualified, self._host_tensor_helper, kind_of=self.kind_of)

    def _host_tensor_helper(self, name: str) -> bool:
        """A top-level function of the file whose every `return` is a tensor made on the host
        (`to_tensor(image)` returning `torch.from_numpy(...)`, `analysis.host_helpers`)."""
        summary = self.facts.local_helper(name) if self.facts is not None else None
        return summary is not None and summary.returns_host_tensors

    def _plan_meetings(self, class_def: cst.ClassDef, facts, method: cst.FunctionDef, models: set[str]) -> None:
        """`rewards + gamma * self.target(s).max(1)[0]`, `self.q(s).gather(1, actions)`,
        `self.loss_fct(logits, label)`: a local made on the host that meets a moved model's output
        (`analysis.output_meetings`) is moved where it meets it; one that may be 0-dim
        (`torch.tensor(0.5)`) may meet it as it is. A factory bound once to the local before
        (`label = torch.tensor(labels)`) is created on the model's device instead."""
        losses = self._module_attributes(facts) | self._given_torch_modules(class_def, facts)

        def joins(call: cst.Call) -> bool:
            names = self.qualified(call.func)
            if any(name.startswith("torch.nn.utils.rnn.") or "ctc" in name for name in names):
                return False  # lengths stay on the CPU
            return is_torch_tensor_function(names) and not is_factory_call(call, self.qualified)

        def meets(call: cst.Call) -> bool:
            if is_self_attribute(call.func):
                return call.func.attr.value in losses - models
            return joins(call)

        meetings = OutputMeetings(models, meets, follows=joins)
        method.body.visit(meetings)
        placement = self.scope_facts(method.body)
        where = self._host_context(placement)
        for arg, model in meetings.met_method_calls.items():
            self._method_meetings.setdefault(arg.value.func.attr.value, []).append((arg, model))
        for name, model in meetings.met.items():
            device = self._device_expression(facts, model)[0]
            if self._host_made_local(name, self.line_of(name), placement, where, pointwise=True):
                self._meeting_moves[name] = (model, device)
            elif self.kind_of(name) is Kind.TENSOR:
                for factory in self._factories(name, placement, self.line_of(name)):
                    if not self.is_scalar_tensor(factory):
                        self._factory_moves.setdefault(factory, (model, device))
        for call, model in meetings.met_calls.items():  # `self.bce(self.D(fake), torch.ones(n, 1))`
            if is_factory_call(call, self.qualified) and keyword(call, "device") is None and not self.is_scalar_tensor(call):
                self._factory_moves.setdefault(call, (model, self._device_expression(facts, model)[0]))

    def _file_classes(self) -> set[str]:
        return {statement.name.value for statement in self.module.body if isinstance(statement, cst.ClassDef)}

    def _plan_method_meetings(self, class_def: cst.ClassDef, facts) -> None:
        """`self.bce(self.D(real), self._labels(n, 1.0))` where the class's `_labels` returns a
        tensor made on the host: when every call of the method in the class meets a model's output
        and each `return` is a factory, the factories are made on the model's device (one edit);
        else each meeting call's result is moved where it meets the output."""
        for method_name, meetings in self._method_meetings.items():
            method = facts.methods.get(method_name)
            if method is None or not self._returns_host_tensors(class_def, method_name):
                continue
            returned = return_values(method)
            calls = _self_calls(class_def, method_name)
            models = {model for _, model in meetings}
            device = self._device_expression(facts, sorted(models)[0])[0]
            every_call_meets = len(calls) == len(meetings) == len(self_attribute_nodes(class_def.body, method_name)) and len(models) == 1
            if every_call_meets and returned and all(is_factory_call(value, self.qualified) for value in returned):
                for value in returned:
                    self._factory_moves.setdefault(value, (meetings[0][1], device))
                continue
            for arg, model in meetings:
                self._input_moves[arg] = (model, self._device_expression(facts, model)[0])

    def _returns_host_tensors(self, class_def: cst.ClassDef, method: str) -> bool:
        """That method of the class returns, at every `return`, a tensor made on the host that is
        not 0-dim (`return torch.full((n, 1), value)`), which must be moved to meet a device tensor."""
        summary = self.facts.method_summary(class_def.name.value, method) if self.facts is not None else None
        return summary is not None and summary.returns_host_tensors and not summary.may_return_a_scalar

    def _host_tuple_size(self, class_name: str, method: str) -> int:
        """n when that method of the file's class returns a tuple of n tensors made on the host,
        none of them maybe 0-dim (which may meet a device tensor as it is)."""
        summary = self.facts.method_summary(class_name, method) if self.facts is not None else None
        return summary.host_tuple_size if summary is not None and not summary.may_return_a_scalar else 0

    def _host_made_local(self, name: cst.Name, line: int, placement, where: HostContext, pointwise: bool = False) -> bool:
        """A local the analysis proves a tensor, bound before `line` to a value made on the host
        (`analysis.host_made`) and not moved since; not a factory (`_plan_factories` creates those
        on the device). `pointwise`: not a 0-dim tensor, which may meet a device tensor as it is.
        Or a name unpacked from a batch another class of the file samples on the host
        (`analysis.sampled_batches`)."""
        if name.value in placement.moved:
            return False
        binding = placement._binding_before(name.value, line)
        if binding is not None and (name.value, binding.line) in self._host_unpacked:
            return True
        if binding is None or binding.value is None or is_factory_call(binding.value, self.qualified):
            return False
        root = chain_root(binding.value)
        if pointwise and isinstance(root, cst.Call) and self.is_scalar_tensor(root):
            return False
        return self.kind_of(name) is Kind.TENSOR and host_made(binding.value, binding.line, 0, where)

    def _factories(self, value: cst.BaseExpression, placement, line: int) -> list[cst.Call]:
        """The factory call `value` is, or that a local holds where it is fed: bound to it last before
        the call, where no earlier binding can still reach the call (`states = np.array(batch)`, then
        `states = torch.tensor(states)`), even if bound again after it (a decoding loop's `token =
        torch.tensor([[SOS]])`, then `token = logits.argmax(-1)` after feeding it: the first pass
        feeds the factory, and on the device it serves the later ones too)."""
        if isinstance(value, cst.Name):
            binding = placement._binding_before(value.value, line) if value.value not in placement.moved else None
            value = binding.value if binding is not None and placement.reaching_past(value.value, binding, line) == ([], False) else None
        if is_factory_call(value, self.qualified) and keyword(value, "device") is None:
            return [value]
        return []

    def _model_class_inputs(self, class_def: cst.ClassDef, facts, model: str) -> MethodInputs | None:
        """The summary (`analysis.method_inputs`) of the file's class that `self.<model>` holds:
        `self.model = VAE().to(device)`, or `self.model = model.to(device)` where every construction
        of this class in the file passes `VAE(...)` for `model`."""
        moves = [move for method, value in _init_values(facts.attributes[model])
                 if method == "__init__" and (move := as_move(value, self.qualified)) is not None]
        if len(moves) != 1:
            return None
        receiver = moves[0].receiver
        names = {receiver.func.value} if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) else set()
        if isinstance(receiver, cst.Name):
            passed = constructor_arguments_for(self.module, class_def, receiver.value) or []
            names = {value.func.value if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) else "" for _, value in passed}
        return self._file_class_inputs(names.pop()) if len(names) == 1 else None

    def _file_class_inputs(self, name: str) -> MethodInputs | None:
        """The summary (`analysis.method_inputs`) of the class `name` the file defines once."""
        defined = [item for item in self.module.body if isinstance(item, cst.ClassDef) and item.name.value == name]
        return MethodInputs(defined[0], self.qualified) if len(defined) == 1 else None

    def _batches_to_move(self, loop: cst.For, callables: set[str], models: set[str], facts, proving: set[str] = frozenset()) -> list[str]:
        """Batch variables of a DataLoader loop that meet the model (or a loss with its output),
        proven tensors, and neither moved nor rebound in the body. A batch given straight to one of
        the `proving` attributes (torch.nn losses: `self.criterion(out, labels)` raises on anything
        but a tensor) is proven a tensor there."""
        loader, target = unwrap_loader(loop, self.qualified, self_attributes=True)
        names = target_names(target)
        if loader is None or not names or not isinstance(loop.body, cst.IndentedBlock):
            return []
        proven = is_dataloader(self, loader)
        built_here = not proven and self._loader_built_in_init(loader, facts)
        if not (proven or built_here):
            return []
        if not isinstance(loader, cst.Attribute) and collate_places_batches(self, loader):
            return []
        finder = _Feeds(callables, models, self)
        loop.body.visit(finder)
        body = collect([loop.body], self.qualified, self.line_of)
        untouched = [name for name in names if name not in body.moved and name not in body.assignments]
        fed = [name for name in untouched if name in finder.fed]
        if not all(self.kind_of(node) is Kind.TENSOR or self._given_to(node, proving) for name in fed for node in finder.fed_nodes[name]):
            return []  # a dict or list batch would need another move: refuse the whole loop
        if built_here and fed:
            return []  # a loader of a dataset nothing proves: only its dict batches, moved value by value
        keyed = [name for name in untouched if name in finder.keyed_nodes and name not in fed and _read_only_by_key(loop.body, name)]
        self._keyed_batches.update((loop, name) for name in keyed)  # `batch["label"]` of a dict batch
        return fed + keyed

    def _loader_built_in_init(self, loader: cst.BaseExpression, facts) -> bool:
        """`self.loader`, which `__init__` (of the class whose `facts` are given) alone binds, once, to
        `DataLoader(...)` (of a dataset it is given: the loader is proven, what its batches hold is not)."""
        use = facts.attributes.get(loader.attr.value) if is_self_attribute(loader) else None
        if use is None or [method for method, _ in use.assignments] != ["__init__"]:
            return False
        value = use.assignments[0][1].value
        return isinstance(value, cst.Call) and bool(self.qualified(value.func) & DATALOADER_NAMES) and keyword(value, "collate_fn") is None

    def _given_to(self, node: cst.Name, attributes: set[str]) -> bool:
        """`self.<attribute>(..., node, ...)`: the name is a positional argument of such a call."""
        arg = self.get_metadata(ParentProvider, node, None)
        call = self.get_metadata(ParentProvider, arg, None) if isinstance(arg, cst.Arg) and arg.keyword is None and not arg.star else None
        return isinstance(call, cst.Call) and is_self_attribute(call.func) and call.func.attr.value in attributes

    def _module_attributes(self, facts) -> set[str]:
        """Attributes `__init__` builds as Modules (a loss, a metric): called with the model's
        output, their other arguments must be on its device."""
        return {
            name
            for name, use in facts.attributes.items()
            for method, statement in use.assignments
            if method == "__init__" and isinstance(statement.value, cst.Call) and self.builds_module(statement.value)
        }

    def _moved_by_every_caller(self, facts, method_name: str, parameters: list[str], seen: frozenset[str] = frozenset()) -> set[str]:
        """Parameters that every `self.<method>(...)` call in the class, and every call of the
        method on a name holding an instance of the class (`agent.learn(...)`), passes already
        moved (`source = source.to(self.gpu_id)` then `self._run_batch(source, targets)`), or, from a
        method of the class, a name that method feeds to the model itself (a SAC agent's `update`
        giving `self.evaluate(bn_s)` the `bn_s` of `self.value_net(bn_s)`), or a parameter of its own
        that every call of it passes moved (morl-baselines' `act(obs, w)` handing on to
        `self.max_action(obs, w)`): where that caller's value is, the method's is."""
        calls = [(name, method, call, self._fed_in.get(name, set())) for name, method in facts.methods.items()
                 for call in _self_calls(method, method_name)]
        calls += [(None, None, call, set()) for instance, called, call in self._moved_from_outside.calls
                  if called == method_name and instance in self._calling_instances]  # `agent.learn(s.to(device))`
        if not calls:
            return set()
        moved = set(parameters)
        for caller, method, call, fed_there in calls:
            caller_facts = self.scope_facts(method.body if method is not None else call)
            positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
            passed = dict(zip(parameters, positional))
            passed.update({arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None})
            handed_on = self._handed_on_moved(facts, caller, method, call, passed, seen | {method_name})
            moved &= {name for name, value in passed.items()
                      if caller_facts.is_device_value(value) or self._fed_as_placed(value, call, caller_facts, fed_there)
                      or name in handed_on}
        return moved

    def _handed_on_moved(self, facts, caller: str | None, method: cst.FunctionDef | None, call: cst.Call,
                         passed: dict[str, cst.BaseExpression], seen: frozenset[str]) -> set[str]:
        """The parameters `call` gives a parameter of the calling method, never rebound there, that
        every call of that method passes moved."""
        if caller is None or method is None or caller in seen or caller == "__init__" or len(seen) > 3:
            return set()
        own = [param.name.value for param in method.params.params][1:]
        bindings = self.scope_facts(method.body).bindings
        given = {name: value.value for name, value in passed.items()
                 if isinstance(value, cst.Name) and value.value in own and value.value not in bindings}
        if not given:
            return set()
        moved_there = self._moved_by_every_caller(facts, caller, own, seen)
        return {name for name, parameter in given.items() if parameter in moved_there}

    def _fed_as_placed(self, value: cst.BaseExpression, call: cst.Call, caller_facts, fed_there: set[str]) -> bool:
        """A name the calling method feeds to the model as it is: not one made on the host, which
        the rule moves only where it is fed (`self.q(rows.to(self.device))`)."""
        if not (isinstance(value, cst.Name) and value.value in fed_there):
            return False
        where = self._host_context(caller_facts)
        return not self._host_made_local(value, self.line_of(call), caller_facts, where)

    def _moved_models(self, facts) -> set[str]:
        """Attributes `__init__` assigns from a move (`self.model = model.to(device)`), or builds as
        a Module, loads with a `from_pretrained` constructor (a transformers model) or takes from its
        parameters, then moves in place (`self.model = Net()` or `self.model = model`, then
        `self.model.to(self.device)`); and a Module another method builds and moves to the device
        `__init__` keeps (a sklearn-style `fit`: `self.net_ = Net(...).to(self.device)`), its one
        binding: every other read comes after it ran, or raises."""
        moved = set()
        for name, use in facts.attributes.items():
            for method, value in _init_values(use):
                if method == "__init__" and as_move(value, self.qualified) is not None:
                    moved.add(name)
            if self._built_moved_once(facts, name, use):
                moved.add(name)
        init = facts.methods.get("__init__")
        for statement in init.body.body if init is not None else ():
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                move = as_move(small.value, self.qualified) if isinstance(small, cst.Expr) else None
                if move is None or not is_self_attribute(move.receiver):
                    continue
                name = move.receiver.attr.value
                built = [s for method, s in facts.attributes[name].assignments if method == "__init__"] if name in facts.attributes else []
                if len(built) == 1 and self.line_of(built[0]) < self.line_of(small) and (
                        self._holds_a_module(facts, built[0].value) or _pretrained(built[0].value)):
                    moved.add(name)
        return moved

    def _built_moved_once(self, facts, name: str, use) -> bool:
        """`self.net_ = nn.Sequential(...).to(self.device)` in a method, the attribute's only binding
        in the file but None in `__init__` (nothing outside the class sets it), never moved again,
        where `self.device` is set in `__init__` alone."""
        built = [(method, statement) for method, statement in use.assignments
                 if not (method == "__init__" and isinstance(statement.value, cst.Name) and statement.value.value == "None")]
        if len(built) != 1 or use.unpacked or built[0][0] == "__init__" or use.other_uses & {"to", "cuda", "cpu"}:
            return False
        value = built[0][1].value
        move = as_move(value, self.qualified)
        device = facts.attributes.get("device")
        if move is None or not self._holds_a_module(facts, move.receiver) or not (
                isinstance(move.device, cst.Attribute) and is_self_attribute(move.device) and move.device.attr.value == "device"):
            return False
        return device is not None and [method for method, _ in device.assignments] == ["__init__"] and not device.unpacked \
            and name not in _attributes_set_outside_methods(self.module)

    def _plan_models_moved_in_methods(self, facts) -> None:
        """A Module attribute that a method itself moves in place, in a statement of its body's own
        (`self.model.to(self.device)` at the top of `fit`), when `__init__` moves no model: the loops
        after that statement in the method feed it on that device. Other methods may run before the
        move, so only that method's later loops are planned."""
        for method_name, method in facts.methods.items():
            if method_name == "__init__":
                continue
            for statement in method.body.body if isinstance(method.body, cst.IndentedBlock) else ():
                moved = self._attribute_moved_by(facts, statement)
                if moved is None:
                    continue
                model, move = moved
                kept = move.device.attr.value if isinstance(move.device, cst.Attribute) and is_self_attribute(move.device) else None
                stored = facts.attributes.get(kept) if kept is not None else None
                in_init = stored is not None and [method for method, _ in stored.assignments] == ["__init__"]
                device = f"self.{kept}" if in_init else f"next(self.{model}.parameters()).device"
                callables = {model} | self._module_attributes(facts)
                for loop in loops_of(method):
                    if self.line_of(loop) > self.line_of(statement):
                        batches = self._batches_to_move(loop, callables, {model}, facts)
                        if batches:
                            self._loop_moves.setdefault(loop, (batches, device))

    def _plan_models_fed_moved_batches(self, class_def: cst.ClassDef, facts) -> None:
        """A loop over a DataLoader that feeds a Module attribute a batch it moves there
        (`self.model(data.to(self.device))`, kindle's `TorchTrainer` before its `e9ea40a`), when
        nothing in the class moves the model: past that call the model is on that device, or the
        program failed, so the loop's other batches that meet the model or its output (`labels` of
        `self.criterion(model_out, labels)`) go there too, at the top of the loop. The device is an
        attribute `__init__` alone binds (`self.device`), or a parameter the method never rebinds."""
        modules = {  # attributes `__init__` alone binds to a Module it builds or is given
            name for name, use in facts.attributes.items()
            if [method for method, _ in use.assignments] == ["__init__"] and self._holds_a_module(facts, use.assignments[0][1].value)
        }
        if not modules:
            return
        losses = self._module_attributes(facts) | self._given_torch_modules(class_def, facts)
        for method_name, method in facts.methods.items():
            if method_name == "__init__":
                continue
            parameters = {param.name.value for param in method.params.params[1:]}
            rebound = set(self.scope_facts(method.body).bindings)
            for loop in loops_of(method):
                _, target = unwrap_loader(loop, self.qualified, self_attributes=True)
                names = set(target_names(target)) if target is not None else set()
                calls = _ModelCalls(modules)
                loop.body.visit(calls)
                for call, model, model_method in calls.found:
                    device = self._fed_batch_device(call, names, facts, parameters - rebound) if model_method is None else None
                    if device is None:
                        continue
                    batches = self._batches_to_move(loop, {model} | losses, {model}, facts, proving=losses)
                    if batches:
                        self._loop_moves.setdefault(loop, (batches, device))
                    break

    def _plan_arguments_beside_moved_ones(self, class_def: cst.ClassDef, facts) -> None:
        """`solvents = solvents.unsqueeze(0).to(self.device)`, then `self.model(rxn_fp, solvents)`:
        a method that moves some arguments it gives a Module attribute to a device, when nothing in
        the class moves the model where the method can see it (a `load_model` method does): at that
        call the model is on that device, or the program failed, so a parameter the method gives
        beside them, as the caller gave it (or a tensor method's copy), goes there too, at the top of
        the method (rxn_yield_context's `Ranking_Evaluator.predict_scores` before its `e116cd4`).
        Only for a model of a class of the file or of the project whose `forward` hands that
        parameter to its layers, and not to `torch.nn.utils.rnn` as lengths (`analysis.method_inputs`);
        the device is an attribute the method does not rebind, or a parameter it does not rebind."""
        modules = {name: classes for name in facts.attributes if (classes := self._model_classes(facts, name))}
        for method_name, method in facts.methods.items():
            if method_name == "__init__" or method in self._argument_moves:
                continue
            parameters = [param.name.value for param in method.params.params[1:]]
            placement = self.scope_facts(method.body)
            calls = _ModelCalls(set(modules))
            method.body.visit(calls)
            for call, model, model_method in calls.found:
                inputs = self._single_inputs(modules[model])
                device = self._sibling_device(call, placement, facts, method, parameters) if model_method is None and inputs else None
                if device is None:
                    continue
                forward = inputs.positional("forward")
                reaching, lengths = inputs.reaching("forward"), inputs.kept_on_the_host("forward")
                to_move = [
                    arg.value.value for index, arg in enumerate(call.args)
                    if arg.keyword is None and not arg.star and isinstance(arg.value, cst.Name) and arg.value.value in parameters
                    and index < len(forward) and forward[index] in reaching - lengths
                    and arg.value.value not in placement.moved and self.kind_of(arg.value) is Kind.TENSOR
                    and all(_method_chain_of(binding.value, arg.value.value) for binding in placement.bindings.get(arg.value.value, ()))
                ]
                if to_move:
                    self._argument_moves[method] = (to_move, device)
                    break

    def _read_as_a_mapping_by_the_model(self, facts, fed: cst.Name) -> bool:
        """`self.model(batch)` where the model's class reads that `forward` parameter by key
        (`batch["positions"]`, `batch.items()`): a dict of tensors, which has no `.to()` (nanofold's
        `Trainer.training_loop`)."""
        arg = self.get_metadata(ParentProvider, fed, None)
        call = self.get_metadata(ParentProvider, arg, None) if isinstance(arg, cst.Arg) and arg.value is fed else None
        if not (isinstance(call, cst.Call) and is_self_attribute(call.func) and call.func.attr.value in facts.attributes):
            return False
        inputs = self._single_inputs(self._model_classes(facts, call.func.attr.value))
        forward = inputs.methods.get("forward") if inputs is not None else None
        index = call.args.index(arg)
        positional = inputs.positional("forward") if inputs is not None else []
        if forward is None or arg.keyword is not None or arg.star or index >= len(positional):
            return False
        return _reads_by_key(forward, positional[index])

    def _model_classes(self, facts, attribute: str) -> list[tuple[str, str]]:
        """(file, class) for each Module class the class binds `self.<attribute>` to (`None`
        placeholders aside): a class of the file (`"", name`) or of the project (`path, qualified`)."""
        found = []
        for _, statement in facts.attributes[attribute].assignments:
            value = statement.value
            if isinstance(value, cst.Name) and value.value == "None" or _moves_itself(statement, attribute, self.qualified):
                continue  # a placeholder, or `self.model = self.model.to(device)`
            if not (isinstance(value, cst.Call) and self.builds_module(value) and isinstance(value.func, (cst.Name, cst.Attribute))):
                return []
            local = value.func.value if isinstance(value.func, cst.Name) and value.func.value in self._file_classes() else None
            qualified = sorted(self.qualified(value.func))
            if local is None and not qualified:
                return []
            found.append(("", local) if local is not None else (self.facts._path if self.facts is not None else "", qualified[0]))
        return found

    def _single_inputs(self, classes: list[tuple[str, str]]) -> MethodInputs | None:
        """The summary of the one Module class `classes` names (`analysis.method_inputs`)."""
        if len(set(classes)) != 1:
            return None
        path, name = classes[0]
        return self._file_class_inputs(name) if not path else self.project.imported_method_inputs(path, name)

    def _sibling_device(self, call: cst.Call, placement, facts, method: cst.FunctionDef, parameters: list[str]) -> str | None:
        """The device another argument of `call` was moved to in the method (`x.to(self.device)`, or
        a name bound to such a move), as code that reads the same at the top of the method."""
        rebound = set(placement.bindings)
        for arg in call.args:
            value = arg.value
            if isinstance(value, cst.Name):
                binding = placement._binding_before(value.value, self.line_of(call))
                value = binding.value if binding is not None else None
            move = as_move(value, self.qualified) if value is not None else None
            device = move.device if move is not None else None
            if isinstance(device, cst.Attribute) and is_self_attribute(device) and method.name.value not in {
                    assigning for assigning, _ in facts.attributes.get(device.attr.value, AttributeUse()).assignments}:
                return f"self.{device.attr.value}"  # an attribute the method does not rebind
            if isinstance(device, cst.Name) and device.value in parameters and device.value not in rebound:
                return device.value
        return None

    def _given_torch_modules(self, class_def: cst.ClassDef, facts) -> set[str]:
        """Attributes `__init__` stores from a parameter (`self.criterion = criterion`) that every
        construction of the class in the file gives a torch.nn Module built there
        (`TorchTrainer(model, nn.CrossEntropyLoss(), ...)`); for a class the file never constructs,
        every construction in the files beside it (`analysis.importers`)."""
        init = facts.methods.get("__init__")
        parameters = parameter_names(init)[1:] if init is not None else []
        found = set()
        for name, use in facts.attributes.items():
            if [method for method, _ in use.assignments] != ["__init__"] or not isinstance(use.assignments[0][1].value, cst.Name):
                continue
            given = use.assignments[0][1].value.value
            passed = constructor_arguments_for(self.module, class_def, given)
            if passed and all(isinstance(value, cst.Call) and self.builds_module(value)
                              and any(qualified.startswith("torch.nn.") for qualified in self.qualified(value.func)) for _, value in passed):
                found.add(name)
            elif not passed and given in parameters and class_def in self.module.body and self.facts is not None \
                    and self.facts.torch_modules_built_beside(class_def.name.value, parameters.index(given), given) \
                    and not self._constructed_here(class_def):
                found.add(name)
        return found

    def _fed_batch_device(self, call: cst.Call, batches: set[str], facts, parameters: set[str]) -> str | None:
        """The device of a batch the call gives the model moved (`data.to(self.device)`), as code
        that reads the same at the top of the loop; None when no argument is such a move."""
        for arg in call.args:
            move = as_move(arg.value, self.qualified)
            if move is None or arg.keyword is not None or not isinstance(move.receiver, cst.Name) or move.receiver.value not in batches:
                continue
            code = _kept_device_code(move.device, facts, parameters)
            if code is not None:
                return code
        return None

    def _attribute_moved_by(self, facts, statement: cst.BaseStatement) -> tuple[str, Move] | None:
        """(attribute, move) for `self.model.to(device)` or `self.model = self.model.to(device)` as a
        whole statement, of an attribute `__init__` alone binds, to a Module it builds or is given."""
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        if isinstance(small, cst.Expr):
            move = as_move(small.value, self.qualified)
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and is_self_attribute(small.targets[0].target) \
                and _moves_itself(small, small.targets[0].target.attr.value, self.qualified):
            move = as_move(small.value, self.qualified)
        else:
            move = None
        if move is None or not is_self_attribute(move.receiver):
            return None
        name = move.receiver.attr.value
        use = facts.attributes.get(name)
        if use is None or any(method != "__init__" and not _moves_itself(assigned, name, self.qualified) for method, assigned in use.assignments):
            return None  # bound to something else in another method
        built = [assigned for method, assigned in use.assignments if method == "__init__"]
        return (name, move) if len(built) == 1 and self._holds_a_module(facts, built[0].value) else None

    def _holds_a_module(self, facts, value: cst.BaseExpression) -> bool:
        """`__init__` builds a Module into the attribute (`Net()`) or stores one of its parameters."""
        init = facts.methods.get("__init__")
        parameters = {param.name.value for param in init.params.params} if init is not None else set()
        return (isinstance(value, cst.Call) and self.builds_module(value)) or (isinstance(value, cst.Name) and value.value in parameters)

    def _batch_placements(self, loop: cst.For) -> list[cst.Call]:
        """The calls of the loop's body that place one of the batch names it binds
        (`self.model(data.to(device))`, `.cpu()`)."""
        _, target = unwrap_loader(loop, self.qualified, self_attributes=True)
        names = set(target_names(target))
        return [call for call in calls_in(loop.body) if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("to", "cuda", "cpu")
                and isinstance(call.func.value, cst.Name) and call.func.value.value in names]

    def _batch_placement(self, loop: cst.For, facts, method: cst.FunctionDef) -> str | None:
        """Where the loop's body moves its batches, when every placement of a batch name there is a
        `.to(...)` of one device an attribute `__init__` alone binds (`self.device`) or a parameter
        the method never rebinds (`inputs = inputs.to(self.device)`): the other batches that meet
        the model go there too. None for anything else (`.cpu()`, two devices, a local)."""
        parameters = {param.name.value for param in method.params.params[1:]} - set(self.scope_facts(method.body).bindings)
        found = set()
        for call in self._batch_placements(loop):
            move = as_move(call, self.qualified)
            code = _kept_device_code(move.device, facts, parameters) if move is not None else None
            if code is None:
                return None
            found.add(code)
        return found.pop() if len(found) == 1 else None

    def _models_given_moved(self, class_def: cst.ClassDef, facts) -> set[str]:
        """Attributes `__init__` stores from a parameter as given (`self.model = model`), where every
        construction of the class in the file gives it a name its scope moved before the call
        (`model = Net().to(device)`, then `Evaluator(model)`): a model on that device, or on the CPU
        for a `.to("cpu")` between (then nothing is found: the move must still hold at the call).
        A class the file never constructs counts when every construction in the files beside it
        does so (`Trainer(model, loader)` in `main.py`, `analysis.importers`)."""
        init = facts.methods.get("__init__")
        parameters = parameter_names(init)[1:] if init is not None else []
        found = set()
        for name, use in facts.attributes.items():
            if [method for method, _ in use.assignments] != ["__init__"]:
                continue
            value = use.assignments[0][1].value
            if not (isinstance(value, cst.Name) and value.value in parameters) or value.value in self.scope_facts(init.body).bindings:
                continue
            passed = constructor_arguments_for(self.module, class_def, value.value)
            if passed and all(self._moved_before(call, given) for call, given in passed):
                found.add(name)
            elif not passed and class_def in self.module.body and self.facts is not None \
                    and self.facts.models_moved_beside(class_def.name.value, parameters.index(value.value), value.value) \
                    and not self._constructed_here(class_def):
                found.add(name)
        return found

    def _constructed_here(self, class_def: cst.ClassDef) -> bool:
        """The file itself names the class outside its own body (a construction, a subclass, an alias)."""
        if self._top_level_names is None:
            self._top_level_names = [(statement, names_in(statement)) for statement in self.module.body]
        return any(class_def.name.value in names for statement, names in self._top_level_names if statement is not class_def)

    def _moved_before(self, call: cst.Call, given: cst.BaseExpression) -> bool:
        """`given` is a name its scope moved to a device before `call`, not brought back since."""
        if not isinstance(given, cst.Name):
            return False
        caller = self.scope_facts(call)
        move, line = caller.moved_at(given.value, self.line_of(call)), self.line_of(call)
        return move is not None and self.line_of(move.call) < line and device_code(move.device) is not None \
            and not caller.brought_back_between(given.value, self.line_of(move.call), line)

    def _models_moved_from_outside(self, facts) -> set[str]:
        """Module attributes `__init__` builds or takes from its parameters (`self.q = QNet(...)`),
        that the code holding an instance moves in place (`agent = DQN(...)`, then
        `agent.q.to(device)`): the model is wherever that move put it when a method runs."""
        found = set()
        for instance, attribute in self._moved_from_outside.moves:
            use = facts.attributes.get(attribute)
            if instance not in self._instances or use is None or len(use.assignments) != 1 or use.assignments[0][0] != "__init__":
                continue
            if self._holds_a_module(facts, use.assignments[0][1].value):
                found.add(attribute)
        return found

    def _device_expression(self, facts, model: str) -> tuple[str, int]:
        """`self.device` when __init__ keeps one, else the model's own device; and the line of
        __init__ from which that expression can be evaluated. A model moved from outside the class
        has only its own device: `self.device` may name another."""
        device = facts.attributes.get("device")
        stored = [statement for method, statement in (device.assignments if device else []) if method == "__init__"]
        if stored and model not in self._outside_models:
            return "self.device", self.line_of(stored[0])
        use = facts.attributes[model]
        statements = [*use.assignments, *((method, statement) for method, statement, _ in use.unpacked)]
        model_statement = next(statement for method, statement in statements if method == "__init__")
        return f"next(self.{model}.parameters()).device", self.line_of(model_statement)

    def _unmoved_state(self, facts) -> dict[str, cst.Assign]:
        """Module attributes with tensors (a loss with `weight=`) built once and never moved."""
        state = {}
        for name, use in facts.attributes.items():
            if len(use.assignments) != 1 or use.assignments[0][0] != "__init__" or use.other_uses & {"to", "cuda"}:
                continue
            value = use.assignments[0][1].value
            if isinstance(value, cst.Call) and self.builds_module(value) and holds_state(value, self.qualified) \
                    and not self._tensors_built_placed(value):
                state[name] = use.assignments[0][1]
        return state

    def _tensors_built_placed(self, loss: cst.Call) -> bool:
        """`nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0]).cuda())`: a torch loss whose tensor
        arguments are all moved or made on a device where it is built holds no CPU tensor."""
        if not any(name.startswith("torch.nn.") and name.endswith("Loss") for name in self.qualified(loss.func)):
            return False
        tensors = [arg.value for arg in loss.args if arg.keyword is None or arg.keyword.value in LOSS_TENSOR_KEYWORDS]
        return bool(tensors) and all(
            as_move(value, self.qualified) is not None or (isinstance(value, cst.Call) and keyword(value, "device") is not None)
            for value in tensors)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        plan = self._argument_moves.get(original_node)
        if plan is None:
            return updated_node
        names, device = plan
        listed = ", ".join(f"`{name}`" for name in names)
        if not self.report(original_node.name, f"{listed} reach a model the class moved to a device, but are not moved themselves",
                           fix_title=f"move them to `{device}` at the top of `{original_node.name.value}`"):
            return updated_node
        statements = move_statements([BatchUse(name, is_dict=False) for name in names], device, "torch")  # no dict: torch unused
        return prepend_to_function(updated_node, statements)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine):
        plan = self._unpacked_moves.get(original_node)
        if plan is None:
            return updated_node
        names, device, fed = plan
        listed = ", ".join(f"`{name}`" for name in names)
        # reported where the batch meets the model: the line a device error's traceback names
        if not self.report(fed, f"{listed} reach a model the class moved to a device, but are not moved where they are unpacked",
                           fix_title=f"move them to `{device}` where they are unpacked"):
            return updated_node
        return cst.FlattenSentinel([updated_node, *move_statements([BatchUse(name, is_dict=False) for name in names], device, "torch")])

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        plan = self._loop_moves.get(original_node)
        if plan is None:
            return updated_node
        names, device = plan
        listed = ", ".join(f"`{name}`" for name in names)
        if not self.report(original_node.target, f"batch {listed} reaches a model the class moved to a device, but is not moved itself",
                           fix_title=f"move it to `{device}` at the top of the loop"):
            return updated_node
        uses = [BatchUse(name, is_dict=(original_node, name) in self._keyed_batches) for name in names]
        torch_name = self.torch_name() if any(use.is_dict for use in uses) else "torch"  # only dict moves write it
        return insert_in_body(updated_node, 0, move_statements(uses, device, torch_name))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        weighted = self._weight_moves.get(original_node)
        if weighted is not None:
            model, device = weighted
            factory = cst.Module([]).code_for_node(original_node.func)
            if not self.report(original_node, f"`{factory}(...)` is created on the CPU but weights a loss of the output of "
                               f"`self.{model}`, which the class moved to a device", fix_title=f"create it on `{device}`"):
                return updated_node
            return add_keyword(updated_node, "device", device)
        plan = self._factory_moves.get(original_node)
        if plan is None:
            return updated_node
        model, device = plan
        factory = cst.Module([]).code_for_node(original_node.func)
        if keyword(original_node, "generator") is not None:  # `device=` would not match the CPU generator
            if not self.report(original_node, f"`{factory}(...)` draws from a CPU generator but is fed to `self.{model}`, "
                               "which the class moved to a device", fix_title=f"move it to `{device}`"):
                return updated_node
            return moved_to(updated_node, device)
        if not self.report(original_node, f"`{factory}(...)` is created on the CPU but is fed to `self.{model}`, or meets its output, "
                           "and that model is on a device", fix_title=f"create it on `{device}`"):
            return updated_node
        return add_keyword(updated_node, "device", device)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        plan = self._input_moves.get(original_node)
        if plan is None:
            return updated_node
        model, device = plan
        name = cst.Module([]).code_for_node(original_node.value)
        if not self.report(original_node.value, f"`{name}` is a tensor made on the CPU but is fed to `self.{model}`, or meets its "
                           "output, and that model is on a device", fix_title=f"move it to `{device}`"):
            return updated_node
        return updated_node.with_changes(value=moved_to(updated_node.value, device))

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        plan = self._meeting_moves.get(original_node)
        if plan is None:
            return updated_node
        model, device = plan
        if not self.report(original_node, f"`{original_node.value}` is a tensor made on the CPU but meets the output of `self.{model}`, "
                           "which the class moved to a device", fix_title=f"move it to `{device}`"):
            return updated_node
        return moved_to(updated_node, device)

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        device = self._attribute_moves.get(original_node)
        if device is None:
            return updated_node
        target = cst.Module([]).code_for_node(original_node.targets[0].target)
        message = f"`{target}` holds tensors but stays on the CPU while the model is moved"
        if not device:
            self.report(original_node.value, message + "; build it after the model's device is known, with `.to(...)`", fixable=False)
            return updated_node
        if not self.report(original_node.value, message, fix_title=f"move it to `{device}`"):
            return updated_node
        moved = moved_to(updated_node.value, device)
        return updated_node.with_changes(value=moved)


class _InstanceAttributeMoves(cst.CSTVisitor):
    """Statements that move a model an object keeps (`agent.q.to(device)`: `moves` holds
    ("agent", "q")), the names bound to a construction of each class (`instances`), and the method
    calls on names (`calls`: ("agent", "learn", the call); ("cam", "__call__", the call) for `cam(x)`)."""

    def __init__(self, qualified) -> None:
        self.qualified = qualified
        self.moves: set[tuple[str, str]] = set()
        self.instances: dict[str, set[str]] = {}
        self.calls: list[tuple[str, str, cst.Call]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value != "self":
            self.calls.append((func.value.value, func.attr.value, node))
        elif isinstance(func, cst.Name):
            self.calls.append((func.value, "__call__", node))  # `cam(img, 1)` of `cam = GradCam(model)`

    def visit_Expr(self, node: cst.Expr) -> None:
        move = as_move(node.value, self.qualified)
        receiver = move.receiver if move is not None else None
        if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and receiver.value.value != "self":
            self.moves.add((receiver.value.value, receiver.attr.value))

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Name):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.instances.setdefault(node.value.func.value, set()).add(target.target.value)


def _moves_itself(statement: cst.Assign, name: str, qualified) -> bool:
    """`self.<name> = self.<name>.to(device)`."""
    move = as_move(statement.value, qualified)
    return move is not None and is_self_attribute(move.receiver) and move.receiver.attr.value == name


def _unpacked_parameters(method: cst.FunctionDef, parameters: list[str]) -> dict[cst.SimpleStatementLine, tuple[str, list[str]]]:
    """`inputs, targets = batch` among the method's first statements, `batch` a parameter the
    method has not rebound before: the statement → the parameter and the names it unpacks (plain names only)."""
    found: dict[cst.SimpleStatementLine, tuple[str, list[str]]] = {}
    rebound: set[str] = set()
    for statement in method.body.body if isinstance(method.body, cst.IndentedBlock) else ():
        if not isinstance(statement, cst.SimpleStatementLine):
            break
        for small in statement.body:
            if not isinstance(small, cst.Assign):
                continue
            target, value = small.targets[-1].target, small.value
            if len(statement.body) == 1 and len(small.targets) == 1 and isinstance(target, (cst.Tuple, cst.List)) \
                    and isinstance(value, cst.Name) and value.value in parameters and value.value not in rebound \
                    and all(isinstance(element, cst.Element) and isinstance(element.value, cst.Name) for element in target.elements):
                found[statement] = (value.value, [element.value.value for element in target.elements])
            rebound |= {name for assigned in small.targets for name in target_names(assigned.target)}
    return found


def _kept_device_code(device: cst.BaseExpression | None, facts, parameters: set[str]) -> str | None:
    """A move's device as code that reads the same anywhere in the method: an attribute `__init__`
    alone binds (`self.device`), or one of `parameters` (those the method never rebinds)."""
    if isinstance(device, cst.Attribute) and is_self_attribute(device):
        stored = facts.attributes.get(device.attr.value)
        return f"self.{device.attr.value}" if stored is not None and [method for method, _ in stored.assignments] == ["__init__"] else None
    return device.value if isinstance(device, cst.Name) and device.value in parameters else None


def _functional_losses(method: cst.FunctionDef, qualified) -> list[cst.Call]:
    """The functional losses (`F.cross_entropy(...)`) a method calls with a positional input."""
    found: list[cst.Call] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if qualified(node.func) & FUNCTIONAL_LOSSES and node.args and node.args[0].keyword is None:
                found.append(node)

    method.body.visit(Finder())
    return found


def _model_behind(value: cst.BaseExpression, models: set[str], bindings) -> str | None:
    """The moved model whose output `value` is: `self.model(x)`, a tensor method of it, or a
    local bound once in the method to such a value (`logits = self.model(x)`)."""
    value = without_tensor_methods(value)
    if isinstance(value, cst.Name) and len(bindings.get(value.value, ())) == 1:
        value = without_tensor_methods(bindings[value.value][0].value)
    if isinstance(value, cst.Call) and is_self_attribute(value.func) and value.func.attr.value in models:
        return value.func.attr.value
    return None


def _defaulted(method: cst.FunctionDef) -> set[str]:
    """The parameters with a default value (`weight=0.5`, `mask=None`): where the caller leaves them
    out, the method holds that value, which no `.to()` at its top may meet (gfpgan's `enhance`)."""
    params = method.params
    return {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params) if param.default is not None}


def _tensor_method_of(value: cst.BaseExpression | None, name: str) -> bool:
    """`x.float()`, `x.unsqueeze(0).contiguous()`: methods only a tensor has, called on `name`."""
    return _methods_called_on(value, name, lambda method: method in TENSOR_ONLY_CASTS)


def _pretrained(value: cst.BaseExpression) -> bool:
    """`AutoModelForSequenceClassification.from_pretrained(...)`: what the class then moves in place
    with `.to(device)` is a model (a tokenizer has no `.to`)."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "from_pretrained"


def _method_chain_of(value: cst.BaseExpression | None, name: str) -> bool:
    """`x.view(1, -1)`, `x.repeat(n, 1).unsqueeze(0)`: methods called on `name` itself, which keep
    what it is (a tensor's give tensors), not a conversion of it (`torch.tensor(x)`) nor a move."""
    return _methods_called_on(value, name, lambda method: method not in CHAIN_STOPS)


def _methods_called_on(value: cst.BaseExpression | None, name: str, counts: Callable[[str], bool]) -> bool:
    """`value` is a chain of one or more method calls that `counts` accepts, on the name `name`."""
    found = False
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and counts(value.func.attr.value):
        value, found = value.func.value, True
    return found and isinstance(value, cst.Name) and value.value == name


def _self_calls(method: cst.FunctionDef | cst.ClassDef, name: str) -> list[cst.Call]:
    """`self.<name>(...)` calls in `method` (or in every method of a class)."""
    calls: list[cst.Call] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if is_self_attribute(node.func) and node.func.attr.value == name:
                calls.append(node)

    method.body.visit(Finder())
    return calls


def _keyed_item(value: cst.BaseExpression) -> str | None:
    """`batch["label"]` → "batch": an item of a name read by a string key; else None."""
    name = value.value.value if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) else None
    return name if name is not None and isinstance(item_taken(value, name), str) else None


def _read_only_by_key(body: cst.BaseSuite, name: str) -> bool:
    """Every read of `name` in `body` is an item by string key (`batch["x"]`): a mapping, whose
    tensor values a dict comprehension can move, leaving its other values as they are."""
    reads, keyed = [0], [0]

    class Finder(cst.CSTVisitor):
        def visit_Subscript(self, node: cst.Subscript) -> None:
            if _keyed_item(node) == name:
                keyed[0] += 1

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            self_read = isinstance(node.value, cst.Name) and node.value.value == name
            reads[0] += self_read
            return not self_read

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                reads[0] += 1

    body.visit(Finder())
    return reads[0] == keyed[0] > 0


class _ModelCalls(cst.CSTVisitor):
    """`self.<model>(...)` and `self.<model>.<method>(...)` calls of a method, for the moved models."""

    def __init__(self, models: set[str]) -> None:
        self.models = models
        self.found: list[tuple[cst.Call, str, str | None]] = []  # (call, model, method or None)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if is_self_attribute(func) and func.attr.value in self.models:
            self.found.append((node, func.attr.value, None))
        elif isinstance(func, cst.Attribute) and is_self_attribute(func.value) and func.value.attr.value in self.models:
            method = None if func.attr.value == "forward" else func.attr.value  # `self.model.forward(x)` is `self.model(x)`
            self.found.append((node, func.value.attr.value, method))


class _Feeds(cst.CSTVisitor):
    """Names passed to `self.<model>(...)`, or to a state attribute together with a model output;
    and names the analysis proves tensors passed to a torch function or to a torch.nn Module built where
    it is called together with a model output (`F.mse_loss(self.model(x), y)`, `nn.MSELoss()(out, y)`),
    or put with it into arithmetic or a comparison
    (`self.model(x).squeeze(1) - y`, `logits.argmax(1) == y`)."""

    def __init__(self, callables: set[str], models: set[str], rule: TrainerAttributes, metrics: set[str] = frozenset()) -> None:
        self.callables, self.models, self.metrics = callables, models, metrics
        self.rule = rule
        self.fed_nodes: dict[str, list[cst.Name]] = {}  # each name fed, with where it is fed
        self.keyed_nodes: dict[str, list[cst.Subscript]] = {}  # names whose items are fed by string key (`batch["x"]`)
        self.used_attributes: set[str] = set()
        self.outputs: set[str] = set()

    @property
    def fed(self) -> set[str]:
        return set(self.fed_nodes)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._is_model_call(node.value):  # `logits = self.model(x)`, `output, h = self.model(x, h)`
            self.outputs.update(name for t in node.targets for name in target_names(t.target))

    def visit_Call(self, node: cst.Call) -> None:
        if is_torch_tensor_function(self.rule.qualified(node.func)) and not is_factory_call(node, self.rule.qualified):
            self._feed_torch_function(node)
        if isinstance(node.func, cst.Call) and self.rule.builds_module(node.func):
            self._feed_torch_function(node)  # `nn.CrossEntropyLoss()(out, y)`: a Module built where it is called
        called = node.func
        if isinstance(called, cst.Attribute) and called.attr.value == "update" and is_self_attribute(called.value) \
                and called.value.attr.value in self.metrics:
            called = called.value  # `self.metric.update(out, y)` of a torchmetrics Metric: its states meet them
        if not (is_self_attribute(called) and called.attr.value in self.callables):
            return
        attribute = called.attr.value
        values = [arg.value for arg in node.args]
        meets_model = attribute in self.models or any(self._is_model_call(v) or self._is_output(v) for v in values)
        if meets_model:
            self.used_attributes.add(attribute)
            for value in map(without_tensor_methods, values):  # `labels` of `labels.float()` too
                if isinstance(value, cst.Name) and value.value not in self.outputs:
                    self.fed_nodes.setdefault(value.value, []).append(value)
                elif (keyed := _keyed_item(value)) is not None and keyed not in self.outputs:
                    self.keyed_nodes.setdefault(keyed, []).append(value)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        """`self.model(x).squeeze(1) - y`: arithmetic with the model's output meets `y` too."""
        self._meet_output([node.left, node.right])

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._meet_output([node.left, *(item.comparator for item in node.comparisons)])

    def _feed_torch_function(self, call: cst.Call) -> None:
        self._meet_output([arg.value for arg in call.args])

    def _meet_output(self, values: list[cst.BaseExpression]) -> None:
        """Names the analysis proves tensors, among values one of which is the model's output."""
        if not any(self._is_model_call(v) or self._is_output(v) for v in values):
            return
        for value in map(without_tensor_methods, values):
            if isinstance(value, cst.Name) and value.value not in self.outputs and self.rule.kind_of(value) is Kind.TENSOR:
                self.fed_nodes.setdefault(value.value, []).append(value)

    def _is_output(self, value: cst.BaseExpression) -> bool:
        """A name bound to the model's output, or a tensor method of it (`logits.argmax(1)`)."""
        value = without_tensor_methods(value)
        return isinstance(value, cst.Name) and value.value in self.outputs

    def _is_model_call(self, value: cst.BaseExpression) -> bool:
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not is_self_attribute(value.func):
            value = value.func.value
        return isinstance(value, cst.Call) and is_self_attribute(value.func) and value.func.attr.value in self.models



def _reads_by_key(function: cst.FunctionDef, parameter: str) -> bool:
    """Does `function` read `parameter` as a mapping: `parameter["key"]`, `.items()`, `.keys()`,
    `.values()`, `.get(...)`?"""
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Subscript(self, node: cst.Subscript) -> None:
            nonlocal found
            if isinstance(node.value, cst.Name) and node.value.value == parameter and any(
                    isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.SimpleString) for element in node.slice):
                found = True

        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == parameter \
                    and func.attr.value in ("items", "keys", "values", "get"):
                found = True

    function.body.visit(Finder())
    return found


def _attributes_set_outside_methods(module: cst.Module) -> set[str]:
    """Attribute names the file binds on something other than `self` (`clf.net_ = other`)."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            targets = [element.value for element in node.target.elements] if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]
            found.update(target.attr.value for target in targets if isinstance(target, cst.Attribute) and not is_self_attribute(target))

    module.visit(Finder())
    return found


def _init_values(use: AttributeUse) -> list[tuple[str, cst.BaseExpression]]:
    """(method, value) of each assignment of the attribute, also as an item of a tuple assignment
    (`self.G, self.D = G.to(device), D.to(device)`)."""
    return [(method, statement.value) for method, statement in use.assignments] + [(method, item) for method, _, item in use.unpacked]
