"""DF016 method-tensor-device: a Module method builds a tensor on the CPU and feeds it to a submodule
(or returns it), while the module itself may be on a GPU.

    Before:  def forward(self, x):                      def init_hidden(self, batch):
                 pos = torch.arange(x.size(1))              return torch.zeros(1, batch, self.hidden)
                 return self.emb(x) + self.pos_emb(pos)
    After:       pos = torch.arange(x.size(1), device=x.device)
                                                            return torch.zeros(1, batch, self.hidden, device=self.device)

The tensor follows the method's first tensor input (`x.device`). A method with no tensor input uses
the module's own device through a `device` property derived from its parameters, added to the class
once (a stored `self.device = ...` would go stale after `.to()`: a class storing one uses
`next(self.parameters()).device`, a sklearn-style `predict` after `fit` moved it); an existing property or a
framework's live `self.device` (Lightning, transformers) is reused. A class deriving from another
class of the project gets `next(self.parameters()).device` instead: its base might assign
`self.device`, which a read-only property would break; so does every class of a file that sets a
`device` attribute anywhere (`enc.device = device` after the encoder is built, a subclass's
`self.device = device`). `torch.from_numpy(a)` and the legacy CPU
constructors (`torch.BoolTensor(rows)`) get `.to(x.device)` (they accept no CUDA `device=`); so does a
call of a function of the file or of the project whose every `return` makes a tensor on the host, never
a 0-dim one (`self.block(x, src_mask=causal_mask(t))` → `causal_mask(t).to(x.device)`; `analysis.host_helpers`),
or of a static or class method of the class that does so (CLAM's `self.create_positive_targets(k)`
→ `.to(A.device)`: it has no module of its own to take a device from). A tensor made of a parameter's data (`state =
torch.from_numpy(state)`, `torch.tensor(x)`) takes the module's device: that parameter is an array,
a list or a number where the call reads it, though the name later holds the tensor fed to a submodule.

A tensor `forward` fills with what a submodule returns and then returns (a seq2seq decoder's
`outputs = torch.zeros(...)`, `outputs[:, t] = self.out(h)`) is the module's output: it is made on
the input's device too. So is an attribute the method makes with a factory and puts together with
an input (a lazy weight: `if self.weight is None: self.weight = nn.Parameter(torch.randn(...))`,
then `x @ self.weight`); a local that does so is DF004's.

A tensor handed to another method of the class that passes that parameter straight to a submodule
(`self.ode_step(h, tau=tau)` → `self.ode_f(x, h, tau)`) is fed to it as well; so is one handed to
`self(...)`, which runs `forward` (a GAN generator's `sample(n)`: `self(torch.randn(n, self.z_dim))`).
A method's parameter is a tensor input also when every call of the method in the class gives it a
tensor (a GAN loss's `get_target_tensor(prediction, real)`, called by `forward` with what it feeds
`self.loss`), and what such a method returns counts when a caller feeds the result to a submodule.
A module without parameters (a sinusoidal encoding) has no device of its own: a CPU tensor its
method returns goes, where the class's other methods put it together with a tensor input, to that
input's device (`x + self.positional_encoding(n)` → `x + self.positional_encoding(n).to(x.device)`;
also through a local bound once to it, `freqs = self.frequencies().to(t.device)`, and through a lazy
cache, `self.pe = self._build(x.size(1)).to(x.device)` where `forward` then reads `x + self.pe[:, :n]`;
`analysis.self_calls.results_joining_inputs`); used anywhere else, it is reported without a fix.
State `__init__` makes with a method nothing else calls (the tutorials' `self.hidden =
self.init_hidden(batch)`, every `return` of it CPU factories) is made before any move, and `.to()`
leaves a tuple attribute where it is: where a layer reads it beside an input before any other
binding in its method (`self.lstm(seq, self.hidden)`), the read goes to the input's device
(`tuple(item.to(seq.device) for item in self.hidden)`; `analysis.constructor_state`).
A name bound in both branches of an `if` (or a conditional expression) may hold either tensor.
A tensor type the class holds counts as a factory when it is proven a CPU one (pix2pixHD's
`self.Tensor = tensor`, whose default `torch.FloatTensor` no construction of the class in the file
replaces): `self.Tensor(input.size())` gets `.to(input.device)`, as it takes no `device=`; a target
the method caches in `self.<attr>` and reads back is followed.

Refuses: tensors that already have `device=` or a CPU `generator=`, tensors made in the `else` of
`if torch.cuda.is_available():` (that branch runs on the CPU only) or in a file that sets a global
default device (`torch.set_default_tensor_type('torch.cuda.FloatTensor')` places them), static and class methods
without a tensor input (`self` is no name there), a method's result only ever used as indices
(`table[index.view(-1)]`: CPU indices may index a table on any device), tensors used only on the host
(lengths handed to `torch.nn.utils.rnn`, `pack_padded_sequence(emb, lengths)`, stay on the CPU),
methods the file calls only inside `__init__` (they run while a module is built, before any move),
a result that every call of the method in the class moves at once (phi4's `mask = self._streaming_mask(n)`,
then `mask = mask.to(x.device)`: the callers place it where they need it),
`torch.tensor(<a Python number>)` in arithmetic (a 0-dim CPU tensor may meet a CUDA one),
tensors the method computes with a value it brought to the host (`zeros.scatter_(1,
targets.data.cpu(), 1)`, then `targets.cuda()` where the class asks: the CPU is chosen there),
classes that store `self.device = ...` and hold no parameters (the stored value goes stale;
reported instead), and
parameter-free modules but for the results above (they have no device of their own; a loss held in
`self.loss = nn.MSELoss()` gives none either, nor does a `ModuleList` of the file's own classes that
build no parameter, `analysis.parameter_free`: `next(self.parameters())` would raise StopIteration),
and factories cast with `.type_as(x)` (they take `x`'s device). Nor does it look into a program that places nothing,
nor do the modules it imports (as DF004): its Modules run on the CPU there, and a tutorial script's
`init_hidden` is right as it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import libcst as cst

from devfix.analysis.call_sites import argument_for, constructor_values_for
from devfix.analysis.constructor_state import StateRead, constructor_state_reads
from devfix.analysis.cst_bindings import assigned_names, is_static_method, parameter_names, parameters
from devfix.analysis.cst_metadata import ParentProvider
from devfix.analysis.kinds import Kind
from devfix.analysis.module_classes import (
    class_facts,
    first_parameter_owner,
    indexings_fed_to_submodules,
    is_self_attribute,
    names_fed_to_submodules,
)
from devfix.analysis.none_tests import proven_none_at
from devfix.analysis.parameter_free import builds_parameter_free_module
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.self_calls import (
    parameters_given_tensors,
    results_fed_to_submodules,
    results_joining_inputs,
    self_calls,
)
from devfix.analysis.tensors import is_factory_call, is_whole_reduction, subscript_root, without_tensor_methods
from devfix.analysis.torch_api import (
    CPU_TENSOR_TYPES,
    DATA_CONVERTERS,
    HOST_SIDE_PREFIXES,
    MOVED_AFTER,
    NON_TENSOR_METHODS,
    is_torch_tensor_function,
)
from devfix.analysis.torch_names import keyword
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import add_device_property, add_keyword, moved_to
from devfix.findings import Safety

LIVE_DEVICE_BASES = ("LightningModule", "PreTrainedModel")


class MethodTensorDevice(ScopeTracker, DevfixRule):
    CODE = "DF016"
    NAME = "method-tensor-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Tensor built on the CPU inside a Module method and fed to its submodules"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._targets: dict[cst.Call, str] = {}
        self._state_reads: dict[cst.Arg, StateRead] = {}  # `self.hidden` read by a layer beside an input
        self._joined_results: dict[cst.Call, str] = {}  # `self.<method>(...)` → the input its CPU result meets
        self._storing_device: set[cst.ClassDef] = set()  # classes that assign `self.device`
        self._without_property: set[cst.ClassDef] = set()  # classes whose `self.device` must be added
        self._property_users: set[cst.ClassDef] = set()  # ... and that an applied fix now relies on
        # `enc.device = device` (or a subclass's `self.device = ...`) in the file: a read-only
        # `device` property would make it raise
        self._devices_set_from_outside = _sets_a_device_attribute(node)
        self._mentions: Counter[str] | None = None

    def _attribute_mentions(self) -> Counter[str]:
        """How often the file names each attribute: counted once, when a method's result is first in question."""
        if self._mentions is None:
            mentions = _AttributeMentions()
            self.module.visit(mentions)
            self._mentions = mentions.counts
        return self._mentions

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not self.is_module_classdef(node):
            return
        facts = class_facts(node, self.line_of)
        calls = self_calls(facts.methods)
        builders = _building_methods(calls)
        submodules = {name for name, use in facts.attributes.items() if self._is_submodule(use, builders)}
        has_state = any(self._is_submodule(facts.attributes[name], builders, facts.methods) for name in submodules) or any(
            self._is_parameter(use) for use in facts.attributes.values())  # `self.loss = nn.MSELoss()` has no device
        tensor_types = self._cpu_tensor_types(node, facts)
        self._plan_state_reads(node, facts.methods, submodules)
        stored_device = "device" in facts.attributes
        if stored_device:
            self._storing_device.add(node)
        live_device = "device" in facts.methods or any(
            cst.Module([]).code_for_node(base.value).endswith(LIVE_DEVICE_BASES) for base in node.bases
        )
        # a base class of ours might assign `self.device`, which a read-only property would break
        direct_subclass = all(any(n.startswith("torch.nn.") for n in self.qualified(base.value)) for base in node.bases)
        feeding = _parameters_fed_to_submodules(facts.methods, submodules)
        given_tensors = parameters_given_tensors(facts.methods, lambda caller: names_fed_to_submodules(caller, submodules, self.qualified)
                                                 | indexings_fed_to_submodules(caller, submodules) | self.scope_tensors(caller.body), calls,
                                                 lambda name: self.kind_of(name) is Kind.TENSOR)
        results_fed = results_fed_to_submodules(facts.methods, submodules, calls, self.qualified)
        static_helpers = self._static_host_helpers(node, facts.methods)
        for name, method in facts.methods.items():
            if name == "__init__" or name in self._methods_called_only_in_constructors():
                continue  # a method only called while a module is built runs before any move
            def finder_of(result_fed: bool) -> _FedToSubmodules:
                finder = _FedToSubmodules(self, method, submodules, not _only_indexes_with(node, name), feeding,
                                          given_tensors.get(name, set()), result_fed, tensor_types, static_helpers)
                method.body.visit(finder)
                return finder

            finder = finder_of(name in results_fed)
            if finder.reference is None and not (stored_device or live_device or has_state or submodules):
                # no parameter, layer or device of the module's own to follow, and a CPU tensor
                # returned: where the class puts it together with an input, it goes to that input's device
                def inputs(caller: cst.FunctionDef) -> set[str]:
                    return set(_tensor_parameters(self, caller, submodules, given_tensors.get(caller.name.value, set()), proven=True))

                joined = results_joining_inputs(node, name, inputs, self.qualified) if finder.calls or name not in results_fed else None
                if joined and not finder.calls:
                    finder = finder_of(True)  # a result put with an input is no index: follow its methods (`pe.unsqueeze(0)`)
                if joined is not None and finder.calls:
                    self._joined_results.update(joined)
                    continue
            moved_by_callers = name not in results_fed and any(call in finder.returned for call in finder.calls) \
                and _results_moved_by_every_caller(node, name, self._attribute_mentions())
            for call in finder.calls:
                if call in finder.returned and moved_by_callers:
                    continue  # phi4's `_streaming_mask(...)`: each caller moves the result where it needs it
                if call in finder.returned and is_self_attribute(call.func) and static_helpers(call.func.attr.value):
                    continue  # OWLv2's `compute_box_bias`: a static method's result only returned is its callers' to place
                reference = finder.reference
                if reference is not None and proven_none_at(call, reference, lambda node: self.get_metadata(ParentProvider, node, None)):
                    reference = None  # `if indices is None: indices = torch.arange(n)`: no input's device there
                if (reference is None or self._converts(call, reference)) and is_static_method(method):
                    continue  # a static or class method: no module of its own to take a device from (its callers place)
                if reference is None or self._converts(call, reference):
                    if not (live_device or has_state) or (stored_device and live_device):
                        reference = ""  # reported without a fix
                    elif stored_device:
                        # a stored `self.device` goes stale after `.to()`; a result only returned may be
                        # moved by its callers (facexlib's `frames = frames.to(self.device)`): reported
                        fed_here = call not in finder.returned or name in results_fed
                        reference = "next(self.parameters())" if fed_here else ""
                    elif live_device or (direct_subclass and not self._devices_set_from_outside):
                        reference = "self"
                        if not live_device:
                            self._without_property.add(node)
                    else:
                        reference = "next(self.parameters())"
                self._targets.setdefault(call, reference)

    def _plan_state_reads(self, node: cst.ClassDef, methods: dict[str, cst.FunctionDef], submodules: set[str]) -> None:
        """State `__init__` makes with a method only constructors call, read by a layer beside an
        input (`self.lstm(seq, self.hidden)`): the read goes to the input's device
        (`analysis.constructor_state`)."""
        def inputs(method: cst.FunctionDef) -> set[str]:
            tensors = self.scope_tensors(method.body)
            return {param.name.value for param in method.params.params[1:]
                    if param.name.value in tensors or _proven_tensor(self, method, param.name.value)}

        self._state_reads.update(constructor_state_reads(
            node, methods, self._methods_called_only_in_constructors(), submodules, inputs, self.qualified))

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        read = self._state_reads.get(original_node)
        if read is None:
            return updated_node
        device = f"{read.beside}.device"
        message = (f"`self.{read.attribute}` is made on the CPU while the module is built and fed to a layer beside "
                   f"`{read.beside}`: `.to()` does not move it")
        if not self.report(original_node.value, message, fix_title=f"move it to `{device}` where it is read"):
            return updated_node
        state = cst.Module([]).code_for_node(updated_node.value)
        item = "item" if read.beside != "item" else "part"
        code = f"tuple({item}.to({device}) for {item} in {state})" if read.is_tuple else f"{state}.to({device})"
        return updated_node.with_changes(value=cst.parse_expression(code))

    def _converts(self, call: cst.Call, name: str) -> bool:
        """`torch.from_numpy(state)`, `torch.tensor([x, y])`: the call makes a tensor of `name`'s
        data, so where the method reads `name` it is no tensor whose device to take (`act(self,
        state)` rebinding `state = torch.from_numpy(state)` before feeding it to a submodule)."""
        data = call.args[0].value if call.args and not call.args[0].keyword and not call.args[0].star else None
        if data is None or not self.qualified(call.func) & DATA_CONVERTERS:
            return False
        items = [element.value for element in data.elements] if isinstance(data, (cst.List, cst.Tuple)) else [data]
        return any(isinstance(item, cst.Name) and item.value == name for item in items)

    def returns_host_tensors(self, function: str) -> bool:
        """A function of the file (or imported from the project) whose every `return` makes a tensor
        on the host, never a 0-dim one (`causal_mask(n)`; `analysis.host_helpers`)."""
        summary = self.facts.helper(function) if self.facts is not None else None
        return summary is not None and summary.makes_host_tensors

    def _static_host_helpers(self, node: cst.ClassDef, methods: dict[str, cst.FunctionDef]) -> Callable[[str], bool]:
        """Is that a static or class method of the class whose every `return` makes a tensor on the
        host (CLAM's `create_positive_targets(length)`: `torch.full((length,), 1).long()`)? They have no
        module to take a device from, so their callers place the result, as for a helper of the file.
        Each is summarised when a call of it is first met."""
        statics = {name for name, method in methods.items() if is_static_method(method)}
        verdicts: dict[str, bool] = {}

        def makes_host_tensors(name: str) -> bool:
            if name not in statics or self.facts is None:
                return False
            if name not in verdicts:
                summary = self.facts.method_summary(node.name.value, name)
                verdicts[name] = summary is not None and summary.makes_host_tensors
            return verdicts[name]

        return makes_host_tensors

    def _is_helper_call(self, call: cst.Call) -> bool:
        return isinstance(call.func, cst.Name) and not is_factory_call(call, self.qualified) and self.returns_host_tensors(call.func.value)

    def _methods_called_only_in_constructors(self) -> frozenset[str]:
        return self.facts.methods_called_only_in_constructors if self.facts is not None else frozenset()

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if original_node in self._joined_results:
            return self._move_joined_result(original_node, updated_node)
        reference = self._targets.get(original_node)
        if reference is None or self.made_where_everything_is(original_node):
            return updated_node
        code = cst.Module([]).code_for_node(original_node.func)
        message = f"`{code}(...)` builds a CPU tensor inside a Module method and feeds it to the module"
        if not reference:
            why = ("the class stores `self.device`, which goes stale after `.to()`" if self._class_of(original_node) in self._storing_device
                   else "devfix finds no parameter or layer of the module's own to take its device from")
            self.report(original_node, f"{message}; {why}: derive the device from an input or a parameter", fixable=False)
            return updated_node
        if not self.report(original_node, message, fix_title=f"create it on `{reference}.device`"):
            return updated_node
        owner = self._class_of(original_node)
        if reference == "self" and owner in self._without_property:
            self._property_users.add(owner)
        if self.qualified(original_node.func) & MOVED_AFTER or is_self_attribute(original_node.func) or self._is_helper_call(original_node):
            return moved_to(updated_node, f"{reference}.device")  # none takes `device=` (`self.Tensor` is a CPU type)
        return add_keyword(updated_node, "device", f"{reference}.device")

    def _move_joined_result(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        """`x + self.positional_encoding(n)` → `x + self.positional_encoding(n).to(x.device)`."""
        joined = self._joined_results[original_node]
        code = cst.Module([]).code_for_node(original_node.func)
        message = (f"`{code}(...)` returns a CPU tensor (devfix finds no parameter or layer of the module's own to take "
                   f"its device from) and meets `{joined}`, which may be on a GPU")
        if not self.report(original_node, message, fix_title=f"move it to `{joined}.device`"):
            return updated_node
        return moved_to(updated_node, f"{joined}.device")

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        if original_node not in self._property_users:
            return updated_node
        return add_device_property(updated_node)

    def _class_of(self, node: cst.CSTNode) -> cst.ClassDef | None:
        current = node
        while current is not None and not isinstance(current, cst.ClassDef):
            current = self.get_metadata(ParentProvider, current, None)
        return current

    def _is_submodule(self, use, builders: frozenset[str], stateful_in: dict[str, cst.FunctionDef] | None = None) -> bool:
        """Every assignment, all in methods that build the module (`__init__`, or a method only it
        calls: pytorch_geometric_temporal's `_create_parameters_and_layers()`), builds a Module, in
        both branches of a conditional expression too (pix2pixHD's `nn.MSELoss() if use_lsgan else
        nn.BCELoss()`). With `stateful_in` (the class's methods): one that may hold parameters (not
        `nn.MSELoss()`, `nn.ReLU()`, nor a list of the file's parameter-free modules, where
        `next(self.parameters())` would raise StopIteration), whichever branch runs."""
        if not use.assignments or any(method not in builders for method, _ in use.assignments):
            return False
        return all(
            isinstance(value, cst.Call) and self.builds_module(value)
            and (stateful_in is None
                 or not builds_parameter_free_module(value, stateful_in.get(method), self.module, self.qualified,
                                                     imported_free=self._imported_parameter_free))
            for method, statement in use.assignments for value in _branches(statement.value))

    def _imported_parameter_free(self, qualified_name: str) -> bool:
        return self.project.imported_class_is_parameter_free(self.context.filename or "<memory>", qualified_name)

    def _cpu_tensor_types(self, class_def: cst.ClassDef, facts) -> frozenset[str]:
        """Attributes holding a CPU tensor type (pix2pixHD's `self.Tensor = tensor`, a parameter
        whose default is `torch.FloatTensor` and that no construction of the class in the file
        gives anything else): `self.Tensor(input.size())` builds a CPU tensor. (The constructions
        are read only for such a parameter: reading them is a walk of the whole file.)"""
        init = facts.methods.get("__init__")
        defaults = {param.name.value: param.default for param in parameters(init)} if init is not None else {}
        found = set()
        for name, use in facts.attributes.items():
            values = []
            for method, statement in use.assignments:
                value = statement.value if method == "__init__" else None
                if isinstance(value, cst.Name) and value.value in defaults:
                    default = defaults[value.value]
                    typed = default is not None and self.qualified(default) & CPU_TENSOR_TYPES
                    values.extend((constructor_values_for(self.module, class_def, value.value) or [None]) if typed else [None])
                else:
                    values.append(value)
            if values and all(value is not None and self.qualified(value) & CPU_TENSOR_TYPES for value in values):
                found.add(name)
        return frozenset(found)

    def _is_parameter(self, use) -> bool:
        return any(
            isinstance(statement.value, cst.Call) and any(n.startswith("torch.nn.Parameter") for n in self.qualified(statement.value.func))
            for _, statement in use.assignments
        )


class _FedToSubmodules(cst.CSTVisitor):
    """Factory calls of one method whose tensors reach `self.<submodule>(...)`, or the return value
    of a method without tensor inputs or whose callers feed its result to a submodule; and the
    method's first tensor input (one its callers in the class always give a tensor counts)."""

    def __init__(
        self,
        rule: MethodTensorDevice,
        method: cst.FunctionDef,
        submodules: set[str],
        returns_count: bool = True,
        feeding: dict[str, tuple[list[str], set[str]]] | None = None,
        given_tensors: set[str] = frozenset(),
        result_fed: bool = False,
        tensor_types: frozenset[str] = frozenset(),
        static_helpers: Callable[[str], bool] = lambda name: False,
    ) -> None:
        self.rule, self.submodules, self.returns_count, self.result_fed = rule, submodules, returns_count, result_fed
        self.feeding = feeding or {}  # the class's other methods: their parameters, and those fed to a submodule
        self.fresh: dict[str, list[cst.Call]] = {}
        self.fresh_for_returns: dict[str, list[cst.Call]] = {}  # the same, without methods of named values
        self.outputs: set[str] = set()  # names holding what a submodule returned
        self.calls: list[cst.Call] = []
        self.returned: set[cst.Call] = set()  # those found only where the method returns them
        self.tensor_types = tensor_types  # `self.<attr>` holding a CPU tensor type
        self.static_helpers = static_helpers  # is it a static method of the class returning host tensors?
        self.inputs = list(_tensor_parameters(rule, method, submodules, given_tensors))
        self.reference = next(iter(self.inputs), None)
        self.forward = method.name.value == "forward"
        self.local_names = assigned_names(method) | set(parameter_names(method))  # they shadow the file's helpers
        self.filled: set[str] = set()  # names of fresh tensors given what a submodule returned (`outputs[:, t] = logits`)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_If(self, node: cst.If) -> bool:
        """The branches join: after them a name may hold what either bound. Under `if
        torch.cuda.is_available():` the other path runs only without CUDA, where everything is on
        the CPU (`runs_without_cuda`): what it binds or feeds is never met on a GPU
        (pytorch-beginner's `if torch.cuda.is_available(): char = char.cuda()`). So does `if x.is_cuda:`
        of a tensor input: without it, the input and the submodules it feeds are off CUDA
        (pytorch-a2c-ppo-acktr-gail's `zeros = torch.zeros(...)`, `if x.is_cuda: zeros = zeros.cuda()`)."""
        node.test.visit(self)
        before = self._bindings()
        node.body.visit(self)
        after_body = self._bindings()
        if self.rule.fails_only_without_cuda(node.test) or self._tests_an_input_on_cuda(node.test):
            return False  # the body's bindings hold from here on
        self.fresh, self.fresh_for_returns = before
        if node.orelse is not None:
            node.orelse.visit(self)
        for current, other in zip((self.fresh, self.fresh_for_returns), after_body):
            for name, sources in other.items():
                current[name] = current.get(name, []) + [call for call in sources if call not in current.get(name, [])]
        return False

    def _tests_an_input_on_cuda(self, test: cst.BaseExpression) -> bool:
        """`if x.is_cuda:` of an input, or `if next(self.lstm.parameters()).is_cuda:` (QuaPy's
        `__init_hidden`): the module's own placement decides, and the body places what it made."""
        if not (isinstance(test, cst.Attribute) and test.attr.value == "is_cuda"):
            return False
        if isinstance(test.value, cst.Name):
            return test.value.value in self.inputs
        owner = first_parameter_owner(test.value)
        return (isinstance(owner, cst.Name) and owner.value == "self") or is_self_attribute(owner)

    def _bindings(self) -> tuple[dict[str, list[cst.Call]], dict[str, list[cst.Call]]]:
        return ({name: list(calls) for name, calls in self.fresh.items()},
                {name: list(calls) for name, calls in self.fresh_for_returns.items()})

    def visit_Assign(self, node: cst.Assign) -> None:
        for names, _ in _targets_and_values(node):
            if self._is_module_output(node.value):
                self.outputs.update(name.value for name in names if isinstance(name, cst.Name))
        for target in node.targets:
            stored = target.target
            if isinstance(stored, cst.Subscript) and isinstance(stored.value, cst.Name) and stored.value.value in self.fresh \
                    and self._is_module_output(node.value):
                self.filled.add(stored.value.value)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        """After the value was visited (`state = self.cell(x, state)` feeds the old `state`)."""
        for names, values in _targets_and_values(original_node, self.rule.qualified):
            for name, value in zip(names, values):
                key = _binding_key(name)
                if key is not None:
                    for named, fresh in ((True, self.fresh), (False, self.fresh_for_returns)):
                        sources = self._sources(value, named)
                        if sources:
                            fresh[key] = sources
                        else:
                            fresh.pop(key, None)  # rebound to something else: a new value

    def visit_Call(self, node: cst.Call) -> None:
        if is_self_attribute(node.func) and node.func.attr.value in self.submodules:
            for arg in node.args:
                self._feed(arg.value)
        elif _method_run(node) in self.feeding:
            # `self.ode_step(h, tau=tau)`, whose parameter `tau` goes straight to `self.ode_f(...)`;
            # `self(z)` in a GAN generator's `sample`, whose `forward` hands `z` to `self.net(...)`
            parameters, fed = self.feeding[_method_run(node)]
            for parameter in fed:
                value = argument_for(node, parameter, parameters)
                if value is not None:
                    self._feed(value)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        """`out * scale`: a fresh tensor meets what a submodule returned; `x @ self.weight`: an
        attribute the method made with a factory (a lazy weight, a cached table) meets an input.
        (A local meeting an input is DF004's.)"""
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if self._is_module_output(side) or (self._is_input(side) and is_self_attribute(subscript_root(other))):
                self._feed(other, pointwise=True)

    def _is_input(self, value: cst.BaseExpression) -> bool:
        """A tensor input of the method, or a tensor method of one (`x.transpose(1, 2)`)."""
        value = without_tensor_methods(value)
        return isinstance(value, cst.Name) and value.value in self.inputs

    def _is_module_output(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Name):
            return value.value in self.outputs
        if isinstance(value, cst.BinaryOperation):  # `self.linear(x) * scale` is on the module's device too
            return self._is_module_output(value.left) or self._is_module_output(value.right)
        if isinstance(value, cst.UnaryOperation):
            return self._is_module_output(value.expression)
        if isinstance(value, (cst.Subscript, cst.Attribute)):
            return self._is_module_output(value.value)
        if isinstance(value, cst.Call):
            if is_self_attribute(value.func) and value.func.attr.value in self.submodules:
                return True
            if _is_value_method(value, self.rule.qualified):
                return self._is_module_output(value.func.value)
            if is_torch_tensor_function(self.rule.qualified(value.func)) and not is_factory_call(value, self.rule.qualified):
                return any(self._is_module_output(arg.value) for arg in value.args)  # torch.relu(self.fc(x))
        return False

    def visit_Return(self, node: cst.Return) -> None:
        counts = self.returns_count if self.reference is None else self.result_fed
        found = len(self.calls)
        if node.value is not None and counts:
            # a result a caller hands to a submodule is an input there, not an index: follow its methods
            self._feed(node.value, named=self.result_fed)
        elif self.forward and isinstance(node.value, cst.Name) and node.value.value in self.filled:
            # a seq2seq decoder's `outputs = torch.zeros(...)`, given each step's logits, is the output
            self._feed(node.value)
        self.returned.update(self.calls[found:])

    def _feed(self, value: cst.BaseExpression, pointwise: bool = False, named: bool = True) -> None:
        """`pointwise`: arithmetic, where a 0-dim CPU tensor (`torch.tensor(1.0)`) may meet a CUDA one.
        `named`: follow methods of named values too (see `_sources`)."""
        if isinstance(value, (cst.Tuple, cst.List)):
            for element in value.elements:
                self._feed(element.value, named=named)
            return
        for call in self._sources(value, named):
            if pointwise and self.rule.is_scalar_tensor(call):
                continue
            if call not in self.calls:
                self.calls.append(call)

    def _sources(self, value: cst.BaseExpression, named: bool = True) -> list[cst.Call]:
        """The factory calls `value` is built from. Without `named`, methods of named values
        (`index.view(...)`) are not followed: a method's returned index may only serve to index
        device tensors (CPU indices are allowed there), and its callers are not looked at."""
        qualified = self.rule.qualified
        again = lambda inner: self._sources(inner, named)
        if isinstance(value, (cst.Name, cst.Attribute)) and _binding_key(value) is not None:
            return list((self.fresh if named else self.fresh_for_returns).get(_binding_key(value), []))
        if isinstance(value, cst.Call):
            if is_self_attribute(value.func) and (value.func.attr.value in self.tensor_types or self.static_helpers(value.func.attr.value)):
                return [value]  # `self.Tensor(input.size())`, `self.create_positive_targets(k)`
            if isinstance(value.func, cst.Name) and value.func.value not in self.local_names and self.rule.returns_host_tensors(value.func.value):
                return [value]  # `causal_mask(t)`, a helper whose every `return` makes a tensor on the host
            if is_factory_call(value, qualified) or qualified(value.func) & MOVED_AFTER:
                placed = keyword(value, "device") is not None or keyword(value, "generator") is not None
                return [] if placed else [value]
            if any(_brought_to_the_host(arg.value) for arg in value.args):
                return []  # `zeros.scatter_(1, targets.data.cpu(), 1)`: computed on the CPU on purpose (torchreid)
            if _is_value_method(value, qualified) and value.func.attr.value not in ("to", "cuda", "cpu", "type_as", *NON_TENSOR_METHODS):
                # `idx.unsqueeze(0)`, `torch.arange(n).view(1, -1)`; not `lengths.sum()`, 0-dim, nor
                # `torch.zeros(1).type_as(x)`, which takes `x`'s device
                follows = named or not qualified(value.func)
                return again(value.func.value) if follows and not is_whole_reduction(value) else []
            if any(name.startswith(HOST_SIDE_PREFIXES) for name in qualified(value.func)):
                # `pack_padded_sequence(emb, lengths)`: only the data goes on; lengths stay on the CPU
                return again(value.args[0].value) if value.args and not value.args[0].keyword else []
            if any(name.startswith("torch.") for name in qualified(value.func)):
                return [call for arg in value.args for call in again(arg.value)]
        if isinstance(value, cst.BinaryOperation):
            return again(value.left) + again(value.right)
        if isinstance(value, (cst.List, cst.Tuple)):  # `torch.stack([xs, ys], -1)`
            return [call for element in value.elements for call in again(element.value)]
        if isinstance(value, cst.Comparison):  # `torch.triu(torch.ones(n, n)) == 1`: a mask
            return again(value.left) + [call for target in value.comparisons for call in again(target.comparator)]
        if isinstance(value, cst.UnaryOperation):  # `~mask`, `-scores`
            return again(value.expression)
        if isinstance(value, cst.IfExp):
            if self.rule.fails_only_without_cuda(value.test):
                return again(value.body)  # `ids.cuda() if torch.cuda.is_available() else ids`: the CPU path meets no GPU
            return again(value.body) + again(value.orelse)
        if isinstance(value, cst.Subscript):
            return again(value.value)
        return []


def _tensor_parameters(
    rule: MethodTensorDevice, method: cst.FunctionDef, submodules: set[str], given: set[str], proven: bool = False,
) -> list[str]:
    """The parameters after `self` that hold tensors: proven in the method's own code, fed to a
    submodule, or given a tensor by every call in the class (what `_FedToSubmodules.reference`
    chooses from); with `proven`, also those the value analysis proves tensors (the inputs a
    parameter-free module's results join)."""
    tensors = rule.scope_tensors(method.body)
    fed = names_fed_to_submodules(method, submodules, rule.qualified)
    names = [param.name.value for param in method.params.params[1:]]
    return [name for name in names if name in tensors | fed | given or (proven and _proven_tensor(rule, method, name))]


def _proven_tensor(rule: MethodTensorDevice, method: cst.FunctionDef, name: str) -> bool:
    """The value analysis proves the parameter a tensor where the method first reads it (`t` of a
    Module's `forward`, given a tensor by every call of its instances and layers in the file)."""
    found: list[cst.Name] = []

    class FirstRead(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name and not found:
                found.append(node)

    method.body.visit(FirstRead())
    return bool(found) and rule.kind_of(found[0]) is Kind.TENSOR


def _building_methods(calls) -> frozenset[str]:
    """`__init__` and the methods of the class called only from such methods, to a fixed point:
    they run while the module is built."""
    builders = {"__init__"}
    changed = True
    while changed:
        changed = False
        for name, callers in calls.items():
            if name not in builders and callers and all(caller.name.value in builders for caller, _ in callers):
                builders.add(name)
                changed = True
    return frozenset(builders)


def _parameters_fed_to_submodules(
    methods: dict[str, cst.FunctionDef], submodules: set[str]
) -> dict[str, tuple[list[str], set[str]]]:
    """Method name → its parameters after `self`, and those it passes straight to a submodule."""
    feeding = {}
    for name, method in methods.items():
        decorators = {cst.Module([]).code_for_node(decorator.decorator) for decorator in method.decorators}
        if name == "__init__" or decorators & {"staticmethod", "classmethod"}:
            continue
        parameters = [param.name.value for param in [*method.params.posonly_params, *method.params.params][1:]]
        fed = names_fed_to_submodules(method, submodules) & {*parameters, *(param.name.value for param in method.params.kwonly_params)}
        if fed:
            feeding[name] = (parameters, fed)
    return feeding


def _branches(value: cst.BaseExpression | None) -> list[cst.BaseExpression | None]:
    """The values a conditional expression may give (`a if c else b`: `a` and `b`), else the value itself."""
    if isinstance(value, cst.IfExp):
        return _branches(value.body) + _branches(value.orelse)
    return [value]


def _binding_key(target: cst.BaseExpression) -> str | None:
    """What a method binds and reads back: a name, or an attribute of `self` (a cached target,
    `self.real_label_var = Variable(real_tensor)`, then `target = self.real_label_var`)."""
    if isinstance(target, cst.Name):
        return target.value
    if is_self_attribute(target):
        return f"self.{target.attr.value}"
    return None


def _targets_and_values(node: cst.Assign, qualified=None) -> list[tuple[list[cst.BaseExpression], list[cst.BaseExpression]]]:
    """Per target of `node`: the names (or attributes) it binds, and the value of each when it can be
    told apart (with `qualified`, each part of what a torch function returns is that whole value)."""
    pairs = []
    for target in node.targets:
        names = [target.target] if isinstance(target.target, (cst.Name, cst.Attribute)) else (
            [e.value for e in target.target.elements] if isinstance(target.target, cst.Tuple) else [])
        values = [node.value] if len(names) == 1 else (
            [e.value for e in node.value.elements] if isinstance(node.value, cst.Tuple) and len(node.value.elements) == len(names) else [])
        if not values and names and qualified is not None and isinstance(node.value, cst.Call) and any(
                name.startswith("torch.") for name in qualified(node.value.func)):
            values = [node.value] * len(names)  # `ys, xs = torch.meshgrid(...)`: each part is where the inputs are
        pairs.append((names, values))
    return pairs


def _only_indexes_with(class_node: cst.ClassDef, method: str) -> bool:
    """Is every use of `self.<method>(...)` in the class an index (`self.pos[:, self.method()]`, or
    a name bound to it and only read as one, also through a tensor method: `table[index.view(-1)]`)?
    CPU indices may index tensors on any device. (Names are counted per method: a name used
    otherwise anywhere in that method makes the answer no.)"""
    uses = _IndexUses(method)
    class_node.body.visit(uses)
    indexing = uses.direct_indexing + sum(
        count for key, count in uses.bound.items() if uses.reads.get(key, 0) - count == uses.index_reads.get(key, 0)
    )
    return uses.calls > 0 and indexing == uses.calls


class _IndexUses(cst.CSTVisitor):
    def __init__(self, method: str) -> None:
        self.method = method
        self.calls = 0  # `self.<method>(...)` calls
        self.direct_indexing = 0  # of them, those written as an index
        self._scopes: list[int] = [0]  # the functions around the node (names are their own in each)
        self.bound: dict[tuple[int, str], int] = {}  # (scope, name) → calls bound to it (`index = self.<method>(...)`)
        self.reads: dict[tuple[int, str], int] = {}  # (scope, name) → occurrences (bindings included)
        self.index_reads: dict[tuple[int, str], int] = {}  # (scope, name) → occurrences as an index

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(id(node))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()

    def visit_Call(self, node: cst.Call) -> None:
        if self._is_call(node):
            self.calls += 1

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and self._is_call(node.value):
            key = (self._scopes[-1], node.targets[0].target.value)
            self.bound[key] = self.bound.get(key, 0) + 1

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        index = without_tensor_methods(node.slice.value) if isinstance(node.slice, cst.Index) else None
        if self._is_call(index):
            self.direct_indexing += 1
        elif isinstance(index, cst.Name):
            key = (self._scopes[-1], index.value)
            self.index_reads[key] = self.index_reads.get(key, 0) + 1

    def visit_Name(self, node: cst.Name) -> None:
        key = (self._scopes[-1], node.value)
        self.reads[key] = self.reads.get(key, 0) + 1

    def _is_call(self, node: cst.CSTNode | None) -> bool:
        return isinstance(node, cst.Call) and is_self_attribute(node.func) and node.func.attr.value == self.method


def _results_moved_by_every_caller(class_node: cst.ClassDef, method: str, mentions: Counter[str]) -> bool:
    """Every call of `self.<method>(...)` in the class moves its result at once (`self.m(...).to(d)`,
    or `mask = self.m(...)` followed by `mask = mask.to(d)`), and the file names `.<method>`
    nowhere else (`mentions`: how often the file names each attribute): the callers place what it
    returns, as they need it."""
    moves = _ResultMoves(method)
    class_node.body.visit(moves)
    return moves.calls > 0 and moves.moved == moves.calls and mentions[method] == moves.calls


class _ResultMoves(cst.CSTVisitor):
    def __init__(self, method: str) -> None:
        self.method = method
        self.calls = 0  # `self.<method>(...)` calls
        self.moved = 0  # of them, those whose result is moved at once

    def visit_Call(self, node: cst.Call) -> None:
        if is_self_attribute(node.func) and node.func.attr.value == self.method:
            self.calls += 1
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cuda") and isinstance(inner := node.func.value, cst.Call) \
                and is_self_attribute(inner.func) and inner.func.attr.value == self.method:
            self.moved += 1  # `self.m(...).to(device)`

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        statements = list(node.body)
        for statement, after in zip(statements, statements[1:]):
            name = _bound_to_a_call_of(statement, self.method)
            if name is not None and _rebinds_moved(after, name):
                self.moved += 1  # `mask = self.m(...)`, then `mask = mask.to(device)`


def _bound_to_a_call_of(statement: cst.BaseStatement, method: str) -> str | None:
    """`name` of a statement `name = self.<method>(...)`."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
            and isinstance(small.value, cst.Call) and is_self_attribute(small.value.func) and small.value.func.attr.value == method:
        return small.targets[0].target.value
    return None


def _rebinds_moved(statement: cst.BaseStatement, name: str) -> bool:
    """A statement `name = name.to(...)` (or `.cuda(...)`)."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
        return False
    value = small.value
    return small.targets[0].target.value == name and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
        and value.func.attr.value in ("to", "cuda") and isinstance(value.func.value, cst.Name) and value.func.value.value == name


class _AttributeMentions(cst.CSTVisitor):
    """How often the file names each attribute (`.<name>`), counted in one walk."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.counts[node.attr.value] += 1


def _method_run(call: cst.Call) -> str | None:
    """The method of the class a call runs: `ode_step` of `self.ode_step(...)`, `forward` of `self(...)`."""
    if is_self_attribute(call.func):
        return call.func.attr.value
    return "forward" if isinstance(call.func, cst.Name) and call.func.value == "self" else None


def _brought_to_the_host(value: cst.BaseExpression) -> bool:
    """`targets.cpu()`, `targets.unsqueeze(1).data.cpu()`, `x.cpu().long()`: a copy on the host."""
    while isinstance(value, (cst.Call, cst.Attribute)):
        if isinstance(value, cst.Call):
            if isinstance(value.func, cst.Attribute) and value.func.attr.value == "cpu" and not value.args:
                return True
            if not isinstance(value.func, cst.Attribute):
                return False
            value = value.func.value
        else:
            value = value.value
    return False


def _is_value_method(call: cst.Call, qualified) -> bool:
    """`x.view(...)`, `self.fc(x).relu()`: a method of a value, not a torch function. (libcst
    qualifies a method of a local name too, `forward.<locals>.x.view`, so a qualified name alone
    does not tell.)"""
    return isinstance(call.func, cst.Attribute) and not any(name.startswith("torch.") for name in qualified(call.func))


def _sets_a_device_attribute(module: cst.Module) -> bool:
    """Some `<object>.device = ...` in the file (`enc.device = device` after the encoder is built, a
    subclass's `self.device = device`), or `setattr(<object>, "device", ...)`."""
    found = False

    class Finder(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            nonlocal found
            target = node.target
            if isinstance(target, cst.Attribute) and target.attr.value == "device":
                found = True

        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            if isinstance(node.func, cst.Name) and node.func.value == "setattr" and len(node.args) >= 2 \
                    and isinstance(node.args[1].value, cst.SimpleString) and node.args[1].value.evaluated_value == "device":
                found = True

    module.visit(Finder())
    return found
