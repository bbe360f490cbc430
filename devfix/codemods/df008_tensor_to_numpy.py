"""DF008 tensor-to-numpy: a tensor that may be on a GPU is handed to numpy.

    Before:  preds = model(x).argmax(1).numpy()
    After:   preds = model(x).argmax(1).detach().cpu().numpy()

`.numpy()` on a CUDA tensor raises "can't convert cuda:0 device type tensor to numpy"; on a tensor
that requires grad it raises too. The rule adds only what is missing (`.detach()`, `.cpu()`), so it
never stacks `.cpu().cpu()`. It acts when the value is known to live on a device (moved there,
computed from moved values, or the output of a moved model). `np.array(t)`/`np.asarray(t)` and
other `numpy`, `matplotlib` and `sklearn` calls fed such a tensor get `t.detach().cpu()`, as do the
data methods of the Axes a scope makes (`fig, ax = plt.subplots()` … `ax.imshow(t)`, `analysis.axes`),
and so does each such item of a list or tuple they are fed (`np.array([acc * 100, loss])` →
`np.array([(acc * 100).detach().cpu(), loss.detach().cpu()])`), and each row of a device tensor a
loop or a comprehension takes (`for ax, img in zip(axes, samples): ax.imshow(img)`, also under
`enumerate`; `[img.numpy() for img in samples]`, the comprehension's own `img`), `samples`
proven a tensor: the output of a torch.nn layer or of an `nn.Sequential` of them; a dict would give
its keys).

Under `if self.framework == "tf":` (or "jax", "flax") the arrays are another library's, whose
tensors have `.numpy()` but no `.detach()`: left alone (transformers' pipelines).

A list that collects such tensors (`losses.append(loss)`) and is then handed to numpy
(`np.mean(losses)`), or to a function of the file that hands that parameter whole to one
(`f1_score(all_labels, all_preds)` running `np.asarray(y_pred)` before it rebinds it,
`analysis.host_sinks.parameters_given_to_host`; also one imported from the project, the script
importing no numpy itself: `summarize(losses)` of `utils.py`), gets each tensor brought to the host as it is
appended (each device item of a row appended as a list or tuple display: `rows.append([out.mean(),
out.std()])`), unless the scope reads the list otherwise too (`torch.cat(preds) == labels` needs its
tensors where they are); reads that give the same on the host (`float(losses[-1])`, `sum(e.item()
for e in errors)`) do not count, nor do those after `preds = np.concatenate(preds)` rebinds the
name to the host array. `probs += list(t)` fills a list as `probs.extend(t)` does, and a list a
function of the file fills and returns (`y_pred, probs = collect(model, xs)` … `return y_pred,
probs`; also one a loop extends with it, `history += train(model, loader)`) is handled where that
function collects it.
The same holds for a list kept in a dict display (`history["loss"].append(loss)` or
`history[phase].append(loss)` … `plt.plot(history["loss"])`:
every item of the display starts as `[]`) and one an object keeps (`self.losses.append(loss)` in
one method, `np.mean(self.losses)` in another), when every binding of it is such an empty display
and nothing else in the file reads it; what such an object appends may be a parameter of the
method that every call of it on the class's instances in the file gives a device value
(`meter.update(model(x).argmax(1), y)`). Joined first (`torch.cat(predictions).numpy()`, also of a list a dict
display keeps, `torch.cat(results["logits"])`), the joined tensor is brought over; converted item by item (`[p.numpy() for p in predictions]`, or a comprehension of its
items handed to numpy, `np.mean([l.detach() for l in losses])`), each item is; made
by a comprehension (`losses = [trainer.step(batch) for batch in loader]`, or handed to numpy where it
is written, `np.sum([criterion(out[i], y) for i in range(k)])`), each item as it is made. A sum kept
with `running += loss` is where `loss` is, a value of a model's dict output where the dict is (`for
name, value in loss_dict.items()`), a model fed a dict or list display of device values
(`model({"images": x.to(device)})`) is fed device values, and so is what a callable kept by the
object returns (`self.net(x.to(device))`), and what a method of its class returns where its every
`return` is proven on a device (`return self.model(images.to(device)).softmax(1)`; another may hand
back a CPU copy), also called on an object of the class the scope builds (`trainer.step(batch)`; `clf =
Classifier().fit(X, y)` builds one when every `return` of `fit` gives `self`).
A Module the object's `__init__` moved (`self.model = model.to(device)`), or kept
where every construction of the class gives it a moved model (`Evaluator(model, loader)` after
`model.to(device)`), gives device values, and one it built (`self.criterion = nn.MSELoss()`)
follows its input, also for the lists above
(`losses.append(self.criterion(self.model(x), y).detach())`); a callable it was given may return
anything (`self.score_fn(out, y)` may be a float).
An attribute the class keeps only from what a hook of its own is handed (`self.gradients =
grad_output[0].detach()` in a method registered with `layer.register_full_backward_hook(self.save)`,
`analysis.hook_attributes`) is a layer's output or gradients, where the layer's model is: its
`.numpy()` gets `.cpu()` in a file that places things on devices.
What a plain function returns counts only for `.numpy()` (only tensors have it): `train_step(...)`
may return a float. A store into an item of a numpy array (`g_loss[i] = loss.data`, the array
proven one, not made with `dtype=object`) converts the tensor too: it gets `.cpu()`. So do the
columns of a pandas DataFrame or Series given as a dict display (`pd.DataFrame({"pred": preds})`),
and a column stored into a DataFrame the scope made or read (`submission["label"] = (preds > 0.5).int()`).

A helper's parameter that every call of the helper in the file gives a device value (for a method,
every `self.show(...)` and call on the class's instances) is one where the helper hands it over
(`def show(ax, image): ax.imshow(image[0])`, `ax` an Axes where every caller gives one): the
callers' values are tensors, so the host copy goes there, once for them all. A top-level function
of a helper module that never calls it itself, whose every call in the files beside it gives a value
that may be on a device (`accuracy(out, y)` in `train.py`, `out = model(x)` of a moved model), gets
the host copy in its own body instead (`pred.numpy()` → `pred.detach().cpu().numpy()`): the callers
are in other files. Where it does not, a caller of a function it imports from the project that only
hands that parameter to numpy (`def accuracy(preds, labels): preds = np.asarray(preds)`, every read
of it a host conversion, `FileFacts.imported_host_functions`) brings a device tensor over where it
gives it: `accuracy(predicted.detach().cpu(), expected)`; other callers may pass lists or arrays.

Refuses: `np.ones(out.shape)` (a size, not the tensor's values); a parameter's `.numpy()` in a
helper whose every call, all in the file, gives a value not on a device (the CIFAR tutorial's
`imshow(make_grid(images))` of a loader's batch shown before training); one branch of a conditional
expression whose other branch brings the same value over (`t.numpy() if not train_on_gpu else
t.cpu().numpy()`: the code already converts by where `t` is); `x.cpu().numpy()` and other already-correct chains stay byte-identical; values devfix
cannot place on a device are left alone, and so is a function parameter's `.numpy()` in a file that
imports another array library with that method (TensorFlow, JAX, CuPy: `t.numpy()` may be theirs),
or in a test file (its helpers are given what fixtures and parametrizations make), or under a test
that asks only whether it has the method (`elif hasattr(array, "numpy"):`, any object with one); an item unpacked
from a moved model's output where the class's `forward` may return a number at that position
(hgraph2graph's `kl_div.item()`, `analysis.forward_items`: a float has no `.detach()`), or read by a
string key from such an item (`metrics["nrmse"][0]` of `x, metrics = osem(y, physics)`: a mapping
handed back beside the output holds what was logged, lists of floats in deepinv); a string
formatted with a tensor (`"pred %d" % pred`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from devfix.analysis.axes import AxesNames
from devfix.analysis.call_sites import argument_for, file_functions, instance_calls, passed_arguments
from devfix.analysis.cst_bindings import assigned_names, is_static_method, parameter_names, return_values
from devfix.analysis.cst_metadata import ParentProvider
from devfix.analysis.facts import FileRole
from devfix.analysis.hook_attributes import hook_kept_attributes
from devfix.analysis.host_sinks import HostParameters
from devfix.analysis.kinds import Kind
from devfix.analysis.module_classes import is_self_attribute
from devfix.analysis.placement import PlacementFacts
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.tensors import chain_root, subscript_root, without_tensor_methods
from devfix.analysis.torch_api import (
    AXES_DATA_METHODS,
    DATA_FRAME_MAKERS,
    HOST_LIBRARIES,
    HOST_LIBRARY_MODULES,
    LIST_FILLERS,
    LIST_JOINS,
    METADATA_ATTRIBUTES,
    NUMPY_ARRAYS_BY_SHAPE,
    OBJECT_DTYPES,
    OTHER_ARRAY_LIBRARIES,
    OTHER_FRAMEWORK_LITERALS,
    PLACEMENT_KEEPING_METHODS,
    RESHAPING_METHODS,
)
from devfix.analysis.torch_names import QualifiedNames
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import call_methods, parenthesized
from devfix.findings import Safety

TORCH_FRAMEWORK_LITERALS = frozenset({"pt", "torch", "pytorch"})  # `if self.framework == "pt":`
TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio", "timm"})  # their callables return tensors or Modules

PANDAS_FRAMES = frozenset({"pandas.DataFrame", "pandas.core.frame.DataFrame", "pandas.Series", "pandas.core.series.Series"})
DETACHING = frozenset({"detach", "data", "item", "tolist"})


class TensorToNumpy(ScopeTracker, DevfixRule):
    CODE = "DF008"
    NAME = "tensor-to-numpy"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Tensor that may be on a GPU converted to numpy without .cpu()"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._appended: dict[cst.Call, tuple[str, str]] = {}  # list.append(tensor) → (list, host call)
        self._comprehended: dict[cst.ListComp, tuple[str, str]] = {}  # `[tensor for ...]` bound to a list → (list, host call)
        self._narrowed: set[int] = set()  # functions whose callback parameters left `passthrough`
        self._callbacks: dict[int, frozenset[str]] = {}  # `_callback_parameters`, by function
        self._axes: dict[int, AxesNames] = {}  # each scope's matplotlib Axes, as asked for
        self._given: dict[tuple[int, str], list[tuple[cst.Call, cst.BaseExpression]] | None] = {}  # `_arguments_given`
        self._plots = self.facts is None or self.facts.imports.imports_any(("matplotlib",))
        if self.facts is not None and not self.facts.imports.imports_any(HOST_LIBRARY_MODULES) and not self.facts.host_functions:
            return  # no name can reach a host library's function: the search would walk the tree for nothing
        finder = _HostCallsOnNames(self)
        node.visit(finder)
        handed = {id(name) for name, _ in finder.uses}
        for name, host_call in finder.uses:
            if isinstance(name, cst.Name):
                self._plan_appends(name, host_call, handed)
            else:
                self._plan_collector_appends(name, host_call, handed, node)
        for comprehension, host_call in finder.comprehensions:
            self._plan_comprehension_items(comprehension, host_call)

    def is_host_call(self, call: cst.Call) -> bool:
        """A numpy, matplotlib, sklearn, scipy or pandas function, or a data method of a matplotlib
        Axes of the scope (`ax.imshow(t)`, `analysis.axes`): each converts its arguments with numpy."""
        if any(name.startswith(HOST_LIBRARIES) for name in self.qualified(call.func)):
            return True
        if not (self._plots and isinstance(call.func, cst.Attribute) and call.func.attr.value in AXES_DATA_METHODS):
            return False
        if self._axes_of(call).is_axes_call(call):
            return True
        receiver = call.func.value  # `def show(ax, image): ax.imshow(image)`, every caller giving an Axes
        given = self._arguments_given(_parameter_read(receiver) if isinstance(receiver, (cst.Name, cst.Subscript)) else None, call)
        return bool(given) and all(self._axes_of(argument).is_axes(argument) for _, argument in given)

    def _axes_of(self, node: cst.CSTNode) -> AxesNames:
        """The Axes of the scope around `node` (`analysis.axes`)."""
        scope = self.enclosing_scope(node)
        if id(scope) not in self._axes:
            self._axes[id(scope)] = AxesNames(scope, self.qualified)
        return self._axes[id(scope)]

    def _host_facts(self, node: cst.CSTNode) -> PlacementFacts:
        """`scope_facts`, but a parameter the file's callers give a function (`check(_mean, device)`,
        a lambda, a numpy function) is no model whose output follows its input: what
        `true_result_fn(x)` returns may be an array. In a method, the Modules the object's
        `__init__` moved or built give device values or follow their inputs
        (`ScopeTracker.object_modules`), and so do the class's methods whose every return is on a
        device (`ScopeTracker.methods_returning_device_values`), as they do for an object of the
        class built in the scope (`trainer.step(batch)`): a needless `.cpu()` is harmless,
        where a move that rested on them would be DF020's to make, at construction. A model
        parameter every caller moved runs on a device too (`_moved_model_parameters`)."""
        facts = self.scope_facts(node)
        scope = self.enclosing_scope(node)
        if isinstance(scope, cst.FunctionDef) and id(scope) not in self._narrowed:
            self._narrowed.add(id(scope))
            facts.passthrough -= self._callback_parameters(scope)
            self.add_object_facts(facts, scope)
            facts.modules_on_device |= self._moved_model_parameters(scope, facts)
            if not facts.file_places_devices:  # (where it does, a parameter's `.numpy()` gets `.cpu()` already)
                facts.device_parameters |= self._parameters_given_device_values_beside(scope)
        elif isinstance(scope, cst.Module) and id(scope) not in self._narrowed:
            self._narrowed.add(id(scope))
            self.add_object_facts(facts, scope)
        return facts

    def _parameters_given_device_values_beside(self, function: cst.FunctionDef) -> set[str]:
        """The positional parameters of a top-level function of a module that never uses it itself,
        which every call in the files beside it gives a value that may be on a device
        (`FileFacts.device_values_beside`: `accuracy(logits, y)` in `utils.py`, called by
        `train.py` with a moved model's output)."""
        if self.facts is None or not self.only_defined_here(function):  # a call here may pass an array
            return set()
        positional = [param.name.value for param in (*function.params.posonly_params, *function.params.params)]
        return {name for index, name in enumerate(positional) if self.facts.device_values_beside(function.name.value, index, name)}

    def _moved_model_parameters(self, function: cst.FunctionDef, facts: PlacementFacts) -> set[str]:
        """The parameters a top-level function calls (`out = model(x)`) that every call of it in
        the file gives a name its scope moved before the call (`confusion(model, batches)` after
        `model = Net().to(device)`): what they return may be on a device. Not one the function
        brings to the host itself (`model.cpu()`)."""
        found = set()
        for name in sorted(facts.parameters & facts.called - set(facts.bindings) - facts.hosted):
            passed = self.call_index().arguments_for(function, name) if self.class_of_method(function) is None else None
            if passed and all(self._moved_before(value, call) for call, value in passed):
                found.add(name)
        return found

    def _moved_before(self, value: cst.BaseExpression, call: cst.Call) -> bool:
        move = self.scope_facts(call).moved.get(value.value) if isinstance(value, cst.Name) else None
        return move is not None and self.line_of(move.call) < self.line_of(call)

    def facts_of_returns(self, node: cst.CSTNode) -> PlacementFacts:
        return self._host_facts(node)

    def _callback_parameters(self, function: cst.FunctionDef) -> frozenset[str]:
        """The parameters of a top-level or nested function (not a method) that some call of it
        gives a function of the file, a lambda, a host library's function, or a parameter of the
        function that defines it that is such a parameter itself."""
        if id(function) in self._callbacks:
            return self._callbacks[id(function)]
        self._callbacks[id(function)] = frozenset()  # a recursive call ends here
        outer = None if function in self.module.body else self.enclosing_scope(self.get_metadata(ParentProvider, function))
        if outer is not None and not isinstance(outer, cst.FunctionDef):
            return frozenset()  # a method, or a function of a class body: called as an attribute
        passed = self.call_index().passed_arguments(function) if outer is None else passed_arguments(outer, function)
        functions = file_functions(self.module)
        outer_callbacks = self._callback_parameters(outer) if outer is not None else frozenset()
        found = frozenset(
            name for given in passed or () for name, value in given.items()
            if isinstance(value, cst.Lambda) or isinstance(value, cst.Name) and (value.value in functions or value.value in outer_callbacks)
            or any(qualified.startswith(HOST_LIBRARIES) for qualified in self.qualified(value))
        )
        self._callbacks[id(function)] = found
        return found

    def _plan_appends(self, name: cst.Name, host_call: cst.Call, handed: set[int]) -> None:
        """`losses.append(loss)` … `np.mean(losses)`: the list's tensors go to numpy one by one, so
        each is brought to the host as it is appended; not when the scope reads the list otherwise
        too (`torch.cat(preds) == labels` keeps needing them where they are)."""
        callee = cst.Module([]).code_for_node(host_call.func)
        scope = self.enclosing_scope(host_call)
        reads = _OtherReads(name.value, handed, self.qualified, scope)
        rebinding = self._rebound_by(name, host_call, scope)
        if rebinding is not None:
            reads.read_until = (self.line_of(rebinding), self.line_of)
        scope.visit(reads)
        if reads.found:
            return
        for append in self._device_appends(name, host_call):
            self._appended.setdefault(append, (name.value, callee))
        for function, returned in self._lists_returned_to(name, host_call):
            inner = _OtherReads(returned[0].value, {id(node) for node in returned}, self.qualified, function)
            function.visit(inner)
            if not inner.found:
                for node in returned:
                    for append in self._device_appends(node, node):
                        self._appended.setdefault(append, (node.value, callee))
        comprehension = self._device_comprehension(name, host_call)
        if comprehension is not None:
            self._comprehended.setdefault(comprehension, (name.value, callee))

    def _lists_returned_to(self, name: cst.Name, use: cst.CSTNode) -> list[tuple[cst.FunctionDef, list[cst.Name]]]:
        """`y_pred, probs = collect(model, xs)` … `f1_score(y_true, y_pred)`, or `history +=
        train(model, loader)` … `plt.plot(history)`: the function of the file whose every `return`
        gives, at that name's place, one local list (`return y_pred, probs`), with the names it
        returns; the function's own appends to it are what numpy gets."""
        facts = self._host_facts(use)
        binding = facts._binding_before(name.value, self.line_of(use))
        given = [(binding.value, binding)] if binding is not None else []
        given += [(value, None) for (bound, _), value in facts.augmented.items() if bound == name.value]  # `history += train(...)`
        functions = file_functions(self.module)
        found = []
        for call, bound in given:
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
                continue
            function = functions.get(call.func.value)
            names = self._returned_items(function, bound) if function is not None else []
            if names and all(isinstance(value, cst.Name) for value in names) and len({value.value for value in names}) == 1:
                found.append((function, names))
        return found

    def _returned_items(self, function: cst.FunctionDef, binding) -> list[cst.BaseExpression | None]:
        """What each `return` of `function` gives at the place a binding unpacks (all of it when
        `binding` is None or not unpacked); None where it gives no such item."""
        items = []
        for value in return_values(function):
            if binding is not None and binding.unpacked:
                value = value.elements[binding.position].value if isinstance(value, cst.Tuple) and len(value.elements) == binding.unpacked \
                    and not any(isinstance(element, cst.StarredElement) for element in value.elements) else None
            items.append(value)
        return items

    def _rebound_by(self, name: cst.Name, host_call: cst.Call, scope: cst.CSTNode) -> cst.Assign | None:
        """`preds = np.concatenate(preds)` run once in the scope (not in a loop, nor under a
        condition): the statement that hands the list over also rebinds its name to the host array,
        so what the scope reads of the name after it is the array, not the list."""
        statement = self.get_metadata(ParentProvider, host_call, None)
        if not (isinstance(statement, cst.Assign) and statement.value is host_call and len(statement.targets) == 1):
            return None
        target = statement.targets[0].target
        if not (isinstance(target, cst.Name) and target.value == name.value):
            return None
        current = self.get_metadata(ParentProvider, statement, None)
        while current is not None and current is not scope:
            if not isinstance(current, (cst.SimpleStatementLine, cst.IndentedBlock, cst.With)):
                return None
            current = self.get_metadata(ParentProvider, current, None)
        return statement if current is scope else None

    def _plan_comprehension_items(self, comprehension: cst.ListComp, host_call: cst.Call) -> None:
        """`np.mean([l.detach() for l in losses])`, `losses` a list the scope filled with device
        tensors: each item the comprehension hands to numpy is brought to the host there
        (`[l.detach().cpu() for l in losses]`); the list itself keeps its tensors for other reads.
        So is each item of a comprehension surely on a device (`np.sum([criterion(out[i], y) for i
        in range(k)])`)."""
        code = cst.Module([]).code_for_node(comprehension)
        if self._host_facts(host_call).is_device_value(comprehension.elt):
            self._comprehended.setdefault(comprehension, (code, cst.Module([]).code_for_node(host_call.func)))
            return
        for_in = comprehension.for_in
        if for_in.inner_for_in is not None or not isinstance(for_in.target, cst.Name) or not isinstance(for_in.iter, cst.Name):
            return
        if not (isinstance(item := without_tensor_methods(comprehension.elt), cst.Name) and item.value == for_in.target.value):
            return
        if self._device_appends(for_in.iter, host_call):
            self._comprehended.setdefault(comprehension, (code, cst.Module([]).code_for_node(host_call.func)))

    def _plan_collector_appends(self, handed_value: cst.BaseExpression, host_call: cst.Call, handed: set[int], module: cst.Module) -> None:
        """`history["loss"].append(loss)` … `np.array(history["loss"])`, and the same kept by an object
        (`self.losses.append(loss)` in one method, `np.mean(self.losses)` in another): a list that
        starts empty (an item of a dict display, or an attribute every method binds only to such an
        empty display), read only to be filled, measured and handed to the host, gets each tensor
        brought to the host as it is appended. An attribute read anywhere else in the file (a
        subclass, another object's `trainer.losses`) is left alone."""
        collector = _collector(handed_value)
        if collector is None:
            return
        if collector.on_instance:
            owner = self._method_owner(host_call)
            if owner is None or not self._instance_collector(collector, owner, handed, module):
                return
            scope: cst.CSTNode = owner
        else:
            scope = self.enclosing_scope(host_call)
            binding = self._host_facts(host_call)._binding_before(collector.root, self.line_of(host_call))
            if binding is None or not _empty_collector(binding.value, collector):
                return
            reads = _CollectorReads(collector, handed, self.qualified)
            scope.visit(reads)
            if reads.found:
                return
        callee = cst.Module([]).code_for_node(host_call.func)
        shown = cst.Module([]).code_for_node(handed_value)
        appends = _CollectorAppends(collector)
        scope.visit(appends)
        for append in appends.calls:
            value = append.args[0].value if append.args else None
            if value is not None and (
                self._host_facts(append).is_device_value(value) or collector.on_instance and self._given_on_device(value, scope)
            ):
                self._appended.setdefault(append, (shown, callee))

    def _given_on_device(self, value: cst.BaseExpression, owner: cst.ClassDef) -> bool:
        """`self.preds.append(preds)` in `def update(self, preds, targets)` of the class, where every
        call of `update` on the class's instances in the file passes a device value for `preds`
        (`meter.update(model(x).argmax(1), y)`), and the class never calls it itself; or a tensor
        method's result of it (`self.preds.append(logits.argmax(1))`: where `logits` is)."""
        value = without_tensor_methods(value)
        method = self.enclosing_scope(value)
        if not isinstance(value, cst.Name) or not isinstance(method, cst.FunctionDef) or self.class_of_method(method) is not owner:
            return False
        if value.value not in self.scope_parameters(value) or value.value in self._host_facts(value).bindings:
            return False
        own_calls = _AttributeReads(method.name.value)
        owner.visit(own_calls)
        calls = instance_calls(self.module, owner)
        if own_calls.count or calls is None:
            return False
        positional = [param.name.value for param in (*method.params.posonly_params, *method.params.params)][1:]
        passed = [argument_for(call, value.value, positional) for call, name in calls if name == method.name.value]
        return bool(passed) and all(
            given is not None and self._host_facts(given).is_device_value(given, through_functions=True) for given in passed
        )

    def _method_owner(self, node: cst.CSTNode) -> cst.ClassDef | None:
        """The class of the method `node` is in (not a static or class method's)."""
        scope = self.enclosing_scope(node)
        if not isinstance(scope, cst.FunctionDef) or is_static_method(scope):
            return None
        return self.class_of_method(scope)

    def _instance_collector(self, collector: _Collector, owner: cst.ClassDef, handed: set[int], module: cst.Module) -> bool:
        """Every binding of `self.<root>` in the class is an empty display of the collector's shape,
        the class reads it only to fill, measure or hand it to the host, and nothing else in the
        file reads an attribute of that name."""
        reads = _CollectorReads(collector, handed, self.qualified)
        owner.visit(reads)
        if reads.found or not reads.bindings or not all(_empty_collector(value, collector) for value in reads.bindings):
            return False
        elsewhere = _AttributeReads(collector.root)
        module.visit(elsewhere)
        return elsewhere.count == reads.occurrences

    def _device_appends(self, name: cst.Name, use: cst.CSTNode, loose: bool = False) -> list[cst.Call]:
        """`name.append(v)` calls of a list that starts empty, where `v` is surely on a device
        (strictly: what `train_step(model, x)` returns may be a float; `loose` for items known
        to be tensors)."""
        facts = self._host_facts(use)
        binding = facts._binding_before(name.value, self.line_of(use))
        while binding is not None and binding.value is None and _is_list_call(facts.augmented.get((name.value, binding.line))):
            binding = facts._binding_before(name.value, binding.line)  # `probs += list(t)` extends the list bound before
        if binding is None or not (isinstance(binding.value, cst.List) and not binding.value.elements):
            return []
        appends = _Appends(name.value)
        self.enclosing_scope(use).visit(appends)
        return [append for append in appends.calls if append.args and (
            facts.is_device_value(append.args[0].value, loose=loose) or _displays_device_values(append.args[0].value, facts))]

    def _device_comprehension(self, name: cst.Name, use: cst.CSTNode) -> cst.ListComp | None:
        """`losses = [model(x).sum() for x in xs]` … `np.mean(losses)`: the list comprehension the
        name holds where it is used, when each item it makes is surely on a device."""
        facts = self._host_facts(use)
        binding = facts._binding_before(name.value, self.line_of(use))
        comprehension = binding.value if binding is not None else None
        if not isinstance(comprehension, cst.ListComp) or binding.unpacked:
            return None
        return comprehension if facts.is_device_value(comprehension.elt) else None

    def _iterates_device_list(self, receiver: cst.BaseExpression, call: cst.Call) -> bool:
        """`[p.numpy() for p in preds]` where `preds` collects tensors that are on a device."""
        root = _without_items(chain_root(receiver))
        if not isinstance(root, cst.Name):
            return False
        current = self.get_metadata(ParentProvider, call, None)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            if isinstance(current, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                for_in = current.for_in
                while for_in is not None:
                    if isinstance(for_in.target, cst.Name) and for_in.target.value == root.value:
                        return isinstance(for_in.iter, cst.Name) and bool(self._device_appends(for_in.iter, current, loose=True))
                    for_in = for_in.inner_for_in
            current = self.get_metadata(ParentProvider, current, None)
        return False

    def _joins_device_list(self, receiver: cst.BaseExpression) -> bool:
        """`torch.cat(predictions)` / `torch.stack(...)` of a list of device tensors."""
        if not (isinstance(receiver, cst.Call) and self.qualified(receiver.func) & LIST_JOINS and receiver.args):
            return False
        listed = receiver.args[0].value
        return isinstance(listed, cst.Name) and bool(self._device_appends(listed, receiver, loose=True))

    def leave_ListComp(self, original_node: cst.ListComp, updated_node: cst.ListComp) -> cst.BaseExpression:
        if original_node not in self._comprehended:
            return updated_node
        name, callee = self._comprehended[original_node]
        copied = self._reported_host_copy(
            original_node.elt, updated_node.elt,
            lambda code: f"`{name}` holds `{code}`, which may be on a GPU, and `{callee}` converts it with numpy",
            lambda code, added: f"make it `{code}{added}`",
        )
        return updated_node if copied is None else updated_node.with_changes(elt=copied)

    def _reported_host_copy(self, value: cst.BaseExpression, updated: cst.BaseExpression,
                            message: Callable[[str], str], title: Callable[[str, str], str]) -> cst.BaseExpression | None:
        """An item a list gets (appended, or made by a comprehension) brought to the host with what
        it lacks of `.detach().cpu()`, once reported; None when it has `.cpu()` or the fix is off."""
        code = cst.Module([]).code_for_node(value)
        detached = self._detached(value)
        added = "".join(f".{method}()" for method in _missing_host_methods(value, detached))
        if "cpu" in _method_chain(value) or not self.report(value, message(code), fix_title=title(code, added)):
            return None
        return _host_copy(updated, detached)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if original_node in self._appended:
            return self._fix_append(original_node, updated_node)
        func = original_node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and not original_node.args:
            return self._fix_numpy_method(original_node, updated_node)
        if self.is_host_call(original_node):
            return self._fix_host_arguments(original_node, updated_node)
        if isinstance(func, cst.Name):
            return self._fix_helper_arguments(original_node, updated_node, func.value)
        return updated_node

    def _fix_helper_arguments(self, original: cst.Call, updated: cst.Call, function: str) -> cst.BaseExpression:
        """`accuracy(preds, golds)` of `from metrics import accuracy`, which only hands `preds` to
        numpy (`FileFacts.imported_host_functions`): a device tensor given for it is brought to the
        host here, where devfix knows it is one, unless the helper's own file gets the fix."""
        host = self.facts.imported_host_functions.get(function) if self.facts is not None else None
        if host is None:
            return updated
        fed = {id(value) for value in _fed_arguments(original, host)}
        args, changed = list(updated.args), False
        for index, arg in enumerate(original.args):
            if id(arg.value) in fed and self._needs_host_copy(original, arg.value, function):
                args[index] = args[index].with_changes(value=_host_copy(args[index].value, self._detached(arg.value)))
                changed = True
        return updated.with_changes(args=args) if changed else updated

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        """`g_loss[ind] = loss.data` into a numpy array: numpy converts the tensor as it stores it."""
        if len(original_node.targets) != 1 or not isinstance(target := original_node.targets[0].target, cst.Subscript):
            return updated_node
        array = target.value
        if not isinstance(array, cst.Name) or not (
                self._data_frame(array) or self.kind_of(array) is Kind.NDARRAY and self._numeric_array(array)):
            return updated_node
        store = f"{cst.Module([]).code_for_node(target)} = ..."
        if not self._needs_host_copy(original_node, original_node.value, store):
            return updated_node
        return updated_node.with_changes(value=_host_copy(updated_node.value, self._detached(original_node.value)))

    def _data_frame(self, array: cst.Name) -> bool:
        """The name's binding reaching the store, in the scope, makes a pandas DataFrame
        (`submission = pd.DataFrame(...)`): a column stored into it goes through numpy."""
        binding = self._host_facts(array)._binding_before(array.value, self.line_of(array))
        value = None if binding is None else binding.value
        return isinstance(value, cst.Call) and bool(self.qualified(value.func) & DATA_FRAME_MAKERS)

    def _numeric_array(self, array: cst.Name) -> bool:
        """The array's binding reaching the store, in the scope, makes it by shape (`np.zeros((n, 1))`),
        not with `dtype=object` (which would hold the tensor itself)."""
        binding = self._host_facts(array)._binding_before(array.value, self.line_of(array))
        value = None if binding is None else binding.value
        maker = self.qualified(value.func) & NUMPY_ARRAYS_BY_SHAPE if isinstance(value, cst.Call) else set()
        if not maker:
            return False
        dtype = next((arg.value for arg in value.args if arg.keyword is not None and arg.keyword.value == "dtype"), None)
        if dtype is None and sum(arg.keyword is None for arg in value.args) > (2 if "numpy.full" in maker else 1):
            return False  # the dtype given by position (after the shape, and `full`'s fill value)
        return dtype is None or not (self.qualified(dtype) & OBJECT_DTYPES or _string(dtype) in OBJECT_DTYPES)

    def _fix_numpy_method(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.fix_asked_elsewhere(original):
            return updated
        receiver = original.func.value
        chain = _method_chain(receiver)
        # a parameter's `.numpy()` may be a torch tensor's on a device, unless another array library
        # is imported; in a test file the callers are fixtures and parametrizations devfix does not see
        other_arrays = self.facts is not None and self.facts.imports.imports_any(OTHER_ARRAY_LIBRARIES)
        in_a_test = self.facts is not None and self.facts.role is FileRole.TEST
        on_device = self._host_facts(original).is_device_value(receiver, loose=True, tensor_parameters=not (other_arrays or in_a_test)) \
            or not (other_arrays or in_a_test) and self._kept_by_a_hook(without_tensor_methods(receiver), original)
        if "cpu" in chain or not (on_device or self._joins_device_list(chain_root(receiver)) or self._iterates_device_list(receiver, original)):
            return updated
        if self._callers_give_host_values(receiver, original):
            return updated
        if self._other_branch_brings_it_over(original, receiver) or self._in_another_frameworks_branch(original):
            return updated
        if self._under_a_duck_type_test(original, receiver):
            return updated
        code = cst.Module([]).code_for_node(receiver)
        missing = _missing_host_methods(receiver, self._detached(receiver))
        added = "".join(f".{method}()" for method in missing)
        if not self.report(original, f"`{code}.numpy()` fails when `{code}` is on a GPU", fix_title=f"call `{added}` first"):
            return updated
        return updated.with_changes(func=updated.func.with_changes(value=call_methods(updated.func.value, *missing)))

    def _kept_by_a_hook(self, receiver: cst.BaseExpression, call: cst.Call) -> bool:
        """`self.gradients.numpy()` of an attribute the class keeps only from what its hooks are
        handed (`analysis.hook_attributes`), in a file that places things on devices: a layer's
        output or gradients, where the layer's model is."""
        receiver = subscript_root(receiver)  # `self.gradients[0]`
        if not (isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and receiver.value.value == "self"):
            return False
        owner = self._method_owner(call)
        return owner is not None and self._host_facts(call).file_places_devices and receiver.attr.value in hook_kept_attributes(owner)

    def _in_another_frameworks_branch(self, call: cst.Call) -> bool:
        """Under `if self.framework == "tf":` (or "jax", "flax"), or in the `else` of `if
        self.framework == "pt" ...:`: the arrays there may be another library's, whose tensors have
        `.numpy()` but no `.detach()` (transformers' pipelines)."""
        return any(
            (child is test.body and _compares_to(test.test, OTHER_FRAMEWORK_LITERALS))
            # (an `elif` names its own case: `elif self.framework == "pt-gpu":` is torch's)
            or (isinstance(child, cst.Else) and child is test.orelse and _compares_to(test.test, TORCH_FRAMEWORK_LITERALS))
            for test, child in self._ifs_around(call)
        )

    def _under_a_duck_type_test(self, call: cst.Call, receiver: cst.BaseExpression) -> bool:
        """`elif hasattr(array, "numpy"): array = array.numpy()` (tensordict's `_convert_to_tensor`,
        a TensorFlow tensor in its comment): the code asks only for the method, so any object with
        one may be there, and one without `.detach()` too."""
        root = _without_items(chain_root(receiver))
        return isinstance(root, cst.Name) and any(
            child is test.body and _tests_an_attribute_of(test.test, root.value) for test, child in self._ifs_around(call)
        )

    def _ifs_around(self, node: cst.CSTNode):
        """Each `if` statement around `node` in its function, with the part of it `node` is in."""
        child, current = node, self.get_metadata(ParentProvider, node, None)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
            if isinstance(current, cst.If):
                yield current, child
            child, current = current, self.get_metadata(ParentProvider, current, None)

    def _other_branch_brings_it_over(self, call: cst.Call, receiver: cst.BaseExpression) -> bool:
        """`np.squeeze(t.numpy()) if not train_on_gpu else np.squeeze(t.cpu().numpy())`: the code already
        picks the conversion by where `t` is (Udacity's notebooks); the other branch of the conditional
        expression brings the same value over with `.cpu()`."""
        code = cst.Module([]).code_for_node(receiver)
        child, current = call, self.get_metadata(ParentProvider, call, None)
        while current is not None and not isinstance(current, (cst.BaseStatement, cst.BaseSmallStatement)):
            if isinstance(current, cst.IfExp) and child is not current.test:
                other = current.orelse if child is current.body else current.body
                finder = _HostCopies(code)
                other.visit(finder)
                if finder.found:
                    return True
            child, current = current, self.get_metadata(ParentProvider, current, None)
        return False

    def _fix_append(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name, callee = self._appended[original]
        value = original.args[0].value
        if isinstance(value, (cst.List, cst.Tuple)):  # `pairs.append([out[0, 0], out[0, 1]])`: a row of device values
            elements = self._host_elements(original, value, updated.args[0].value, callee)
            if elements is None:
                return updated
            return updated.with_changes(args=[updated.args[0].with_changes(value=updated.args[0].value.with_changes(elements=elements)),
                                              *updated.args[1:]])
        moved = self._reported_host_copy(
            original.args[0].value, updated.args[0].value,
            lambda code: f"`{name}` collects `{code}`, which may be on a GPU, and `{callee}` converts it with numpy",
            lambda code, added: f"collect `{code}{added}`",
        )
        return updated if moved is None else updated.with_changes(args=[updated.args[0].with_changes(value=moved), *updated.args[1:]])

    def _fix_host_arguments(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        args = list(updated.args)
        changed = False
        callee = cst.Module([]).code_for_node(original.func)
        for index, arg in enumerate(original.args):
            value = arg.value
            # `np.array([acc * 100, loss])`: each item; `pd.DataFrame({"pred": preds})`: each column
            if isinstance(value, (cst.List, cst.Tuple)) or (isinstance(value, cst.Dict) and self.qualified(original.func) & PANDAS_FRAMES):
                elements = self._host_elements(original, value, updated.args[index].value, callee)
                if elements is not None:
                    args[index] = args[index].with_changes(value=args[index].value.with_changes(elements=elements))
                    changed = True
            elif self._needs_host_copy(original, value, callee):
                args[index] = args[index].with_changes(value=_host_copy(args[index].value, self._detached(value)))
                changed = True
        return updated.with_changes(args=args) if changed else updated

    def _host_elements(self, call: cst.Call, display: cst.List | cst.Tuple | cst.Dict, updated: cst.List | cst.Tuple | cst.Dict, callee: str):
        """The display's elements (a dict's: its values) with `.detach().cpu()` on those that may be
        on a GPU, or None."""
        elements, changed = list(updated.elements), False
        for index, element in enumerate(display.elements):
            if isinstance(element, (cst.Element, cst.DictElement)) and self._needs_host_copy(call, element.value, callee):
                elements[index] = elements[index].with_changes(value=_host_copy(elements[index].value, self._detached(element.value)))
                changed = True
        return elements if changed else None

    def _needs_host_copy(self, call: cst.Call, value: cst.BaseExpression, callee: str) -> bool:
        """Report `value` handed to a host library while it may be on a GPU; True to fix it."""
        if not isinstance(value, (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.BinaryOperation)) or "cpu" in _method_chain(value):
            return False
        if _reads_metadata(value):
            return False  # `np.ones(out.shape)`: a size, wherever the tensor is
        if isinstance(value, cst.Name) and self.kind_of(value).is_known_non_tensor:
            return False  # no tensor there: tianshou's `np.asanyarray(x)` under `isinstance(x, np.number | Number)`
        if not (self._host_facts(call).is_device_value(value, through_functions=True) or self._given_device_values(value, call)):
            return False  # strict: what any function returns when fed device values may be an array
        if self._returned_by_a_foreign_object(value, call):
            return False  # perhaps no tensor at all: `pipeline(..., output_type="np")[0]`
        if self._unpacked_maybe_no_tensor(value, call):
            return False  # `kl_div` of a model whose `forward` returns `kl_div.item()` there
        code = cst.Module([]).code_for_node(value)
        shown = f"({code})" if isinstance(value, cst.BinaryOperation) else code
        added = "".join(f".{method}()" for method in _missing_host_methods(value, self._detached(value)))
        return self.report(value, f"`{code}` may be on a GPU; `{callee}` converts it with numpy, which fails",
                           fix_title=f"pass `{shown}{added}`")

    def _returned_by_a_foreign_object(self, value: cst.BaseExpression, node: cst.CSTNode) -> bool:
        """`out = pipeline(prompt, output_type="np")[0]` of `pipeline = StableDiffusionPipeline.
        from_pretrained(...).to(device)`: a moved object that is no proven `nn.Module`, built by a
        class that is none (a plain class of the project with its own `to()`) or by a library devfix
        cannot read (not torch's, not the project's), may return numpy arrays, which have no
        `.detach()`. Read through subscripts and attributes, and one binding of a name."""
        facts = self._host_facts(node)
        root = _without_items(value)
        if isinstance(root, cst.Name):
            binding = facts._binding_before(root.value, self.line_of(node))
            root = _without_items(binding.value) if binding is not None and binding.value is not None else None
        if not (isinstance(root, cst.Call) and isinstance(root.func, cst.Name)) or self.kind_of(root.func) is Kind.MODULE:
            return False
        names = self._class_of_moved(root.func.value, facts)
        return bool(names) and all(self._no_module_maker(name) for name in names)

    def _class_of_moved(self, name: str, facts: PlacementFacts, written: bool = False) -> set[str]:
        """The qualified names of the class that built the object `name` holds, read from its
        first move (`model = HierVAE(args).to(device)`, or `model = Net()` then `model.to(device)`);
        `written`: a bare name as written where it has none (`from hgraph import *`)."""
        move = facts.moved.get(name)
        built = move.receiver if move is not None else None
        if isinstance(built, cst.Name):
            binding = facts._binding_before(built.value, self.line_of(move.call))
            built = binding.value if binding is not None else None
        while isinstance(built, cst.Call) and isinstance(built.func, cst.Attribute) and built.func.attr.value in PLACEMENT_KEEPING_METHODS:
            built = built.func.value
        names = self.qualified(built.func) if isinstance(built, cst.Call) else set()
        if not names and written and isinstance(built, cst.Call) and isinstance(built.func, cst.Name):
            return {built.func.value}
        return names

    def _unpacked_maybe_no_tensor(self, value: cst.BaseExpression, node: cst.CSTNode) -> bool:
        """`loss, kl_div, wacc = model(*batch)` where the `forward` of the moved model's class (of
        the file or the project) returns `kl_div.item()` at that position, or a number on some path
        (`analysis.forward_items`): `kl_div`, `wacc * 100` may be floats, which have no `.detach()`."""
        if isinstance(value, cst.BinaryOperation):
            return self._unpacked_maybe_no_tensor(value.left, node) or self._unpacked_maybe_no_tensor(value.right, node)
        if _read_by_a_string_key(value):
            # `metrics["nrmse"][0]` of `x, metrics = osem(y, physics, compute_metrics=True)` (deepinv's
            # optimizers): a mapping handed back beside the output holds whatever was logged (lists of floats)
            root = _without_items(value)
            binding = self._host_facts(node)._binding_before(root.value, self.line_of(node)) if isinstance(root, cst.Name) else None
            return binding is not None and binding.position >= 0
        if not isinstance(value, cst.Name) or self.project is None:
            return False
        facts = self._host_facts(node)
        binding = facts._binding_before(value.value, self.line_of(node))
        if binding is None or binding.position < 0 or not (isinstance(binding.value, cst.Call) and isinstance(binding.value.func, cst.Name)):
            return False
        path = self.context.filename or "<memory>"
        names = self._class_of_moved(binding.value.func.value, facts, written=True)
        return any(binding.position in self.project.forward_host_items(path, name) for name in names)

    def _no_module_maker(self, qualified: str) -> bool:
        """A class of the project proven no `nn.Module`, or a name neither torch's (nor torchvision's,
        timm's) nor the project's; not a function of the project (`load_model()`), which may return one."""
        if qualified.split(".")[0] in TORCH_FAMILY or self.project is None:
            return False
        path = self.context.filename or "<memory>"
        if self.project.is_module_class(path, qualified) is False:
            return True
        local = any(isinstance(statement, (cst.ClassDef, cst.FunctionDef)) and statement.name.value == qualified for statement in self.module.body)
        return not local and not self.project.is_project_name(path, qualified)

    def _given_device_values(self, value: cst.BaseExpression, call: cst.Call) -> bool:
        """`ax.imshow(image[0])` in `def show(ax, image)`: a parameter the function never rebinds,
        read whole or through indexing and reshaping, that every call of the function in the file
        gives a device value (`_arguments_given`). Those values are tensors, so `.detach().cpu()`
        suits each where it meets the host library."""
        given = self._arguments_given(_parameter_read(value), call)
        return bool(given) and all(self._host_facts(argument).is_device_value(argument, through_functions=True) for _, argument in given)

    def _callers_give_host_values(self, receiver: cst.BaseExpression, node: cst.CSTNode) -> bool:
        """`def imshow(img): npimg = img.numpy()` whose every call, all in this file, gives a value
        not on a device (`imshow(make_grid(images))` of a loader's CPU batch, before any move): a
        parameter may hold a device tensor only as a guess, and its callers answer it."""
        function = self.enclosing_scope(node)
        given = self._arguments_given(_parameter_read(receiver), node)
        if not given or not isinstance(function, cst.FunctionDef) or self.facts is None:
            return False
        owner = self.class_of_method(function)
        if not self.facts.used_only_here((owner or function).name.value):
            return False
        return not any(
            self._host_facts(argument).is_device_value(argument, loose=True, tensor_parameters=True, through_functions=True)
            for _, argument in given
        )

    def _arguments_given(self, name: str | None, node: cst.CSTNode) -> list[tuple[cst.Call, cst.BaseExpression]] | None:
        """What every call of the function around `node` in the file (one at least; for a method,
        every `self.show(...)` and `reporter.show(...)`) gives its parameter `name`, which the
        function rebinds only to values where it is (`img = img / 2 + 0.5`); None when the callers
        are not all known."""
        scope = self.enclosing_scope(node)
        if name is None or not isinstance(scope, cst.FunctionDef):
            return None
        facts = self._host_facts(node)
        # the bindings that may reach the read: those above it (`preds = np.asarray(preds)` reads
        # the parameter itself), and in a loop every one
        looped = bool(self.blocks_around(node, (cst.For, cst.While)))
        reaching = [binding for binding in facts.bindings.get(name, ()) if looped or binding.line < self.line_of(node)]
        if name not in facts.parameters or not all(_follows(binding.value, name) for binding in reaching):
            return None
        if (id(scope), name) not in self._given:
            owner = self.class_of_method(scope)
            if owner is None:
                self._given[(id(scope), name)] = self.call_index().arguments_for(scope, name)
            else:
                self._given[(id(scope), name)] = None if is_static_method(scope) else self.call_index().method_arguments_for(owner, scope, name)
        return self._given[(id(scope), name)]

    def _detached(self, value: cst.BaseExpression) -> bool:
        """A name bound, where it is read, to a value that detaches (`pred = model(x).detach()`):
        `.cpu()` alone brings it over."""
        if not isinstance(value, cst.Name):
            return False
        binding = self._host_facts(value)._binding_before(value.value, self.line_of(value))
        return binding is not None and binding.value is not None and bool(_method_chain(binding.value) & DETACHING)


def _reads_metadata(value: cst.BaseExpression) -> bool:
    """`out.shape`, `out.shape[1:]`, `out.dtype`: what describes a tensor, not its values."""
    value = subscript_root(value)
    return isinstance(value, cst.Attribute) and value.attr.value in METADATA_ATTRIBUTES


def _follows(value: cst.BaseExpression | None, name: str) -> bool:
    """`img / 2 + 0.5`, `-img`, `img.permute(1, 2, 0)` of `img`: the name's values, where they are
    (numbers aside); not `img.cpu()`, nor anything another value enters."""
    if isinstance(value, cst.BinaryOperation):
        sides = [side for side in (value.left, value.right) if not isinstance(side, (cst.Integer, cst.Float))]
        return bool(sides) and all(_follows(side, name) for side in sides)
    if isinstance(value, cst.UnaryOperation):
        return _follows(value.expression, name)
    return _parameter_read(value) == name if value is not None else False


def _parameter_read(value: cst.BaseExpression) -> str | None:
    """`image` of `image`, `image[0]`, `image[i, 0].squeeze(0)`: a name read whole, indexed or
    reshaped, where it is."""
    while True:
        if isinstance(value, cst.Subscript):
            value = value.value
        elif (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in RESHAPING_METHODS | {"detach", "clone"}):
            value = value.func.value
        else:
            return value.value if isinstance(value, cst.Name) else None


def _string(node: cst.BaseExpression) -> str | None:
    return node.evaluated_value if isinstance(node, cst.SimpleString) else None


def _compares_to(test: cst.BaseExpression, literals: frozenset[str]) -> bool:
    """`framework == "tf"` (also within `and`/`or`): an equality with one of those strings."""
    if isinstance(test, cst.BooleanOperation):
        return _compares_to(test.left, literals) or _compares_to(test.right, literals)
    if not isinstance(test, cst.Comparison):
        return False
    operands = [test.left, *(item.comparator for item in test.comparisons)]
    return any(isinstance(item.operator, cst.Equal) for item in test.comparisons) and any(
        isinstance(operand, cst.SimpleString) and operand.evaluated_value in literals for operand in operands
    )


def _missing_host_methods(value: cst.BaseExpression, detached: bool = False) -> list[str]:
    """`detach` (unless the chain already detaches: `loss.detach()`, `x.data`, or the value is
    known `detached`) and `cpu`."""
    return ([] if detached or _method_chain(value) & DETACHING else ["detach"]) + ["cpu"]


def _host_copy(value: cst.BaseExpression, detached: bool = False) -> cst.BaseExpression:
    """`value.detach().cpu()` (only the missing methods), parenthesised when `value` is an
    operation (`(acc * 100)`)."""
    return call_methods(parenthesized(value), *_missing_host_methods(value, detached))


class _HostCallsOnNames(cst.CSTVisitor):
    """Names handed whole to numpy/matplotlib/sklearn/... functions, and lists that may collect
    tensors (`history["loss"]`, `self.losses`, `self.history["loss"]`)."""

    def __init__(self, rule: TensorToNumpy) -> None:
        self.rule = rule
        self.uses: list[tuple[cst.BaseExpression, cst.Call]] = []
        self.comprehensions: list[tuple[cst.ListComp, cst.Call]] = []  # `np.mean([l.detach() for l in losses])`
        self.host_functions = rule.facts.host_functions if rule.facts is not None else {}

    def visit_Call(self, node: cst.Call) -> None:
        if self.rule.is_host_call(node):
            self.uses.extend((arg.value, node) for arg in node.args if isinstance(arg.value, cst.Name) or _collector(arg.value) is not None)
            self.comprehensions.extend((arg.value, node) for arg in node.args if isinstance(arg.value, cst.ListComp))
        elif isinstance(node.func, cst.Name) and node.func.value in self.host_functions:
            self.uses.extend((value, node) for value in _fed_arguments(node, self.host_functions[node.func.value]) if isinstance(value, cst.Name))


def _fed_arguments(call: cst.Call, host: HostParameters) -> list[cst.BaseExpression]:
    """`f1(all_labels, all_preds)`: the arguments that reach a parameter the function of the file
    hands to a host library (`host_sinks.parameters_given_to_host`); none past `*args`/`**kwargs`."""
    if any(arg.star for arg in call.args):
        return []
    positional = [arg.value for arg in call.args if arg.keyword is None]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    return [positional[place] if isinstance(place, int) else keywords[place]
            for place in host.arguments_fed(len(positional), tuple(keywords))]


# builtins that read a tensor's values, which are the same wherever it is: `float(losses[-1])`
HOST_VALUE_READERS = frozenset({"builtins.float", "builtins.int", "builtins.round", "builtins.print", "builtins.str"})


class _OtherReads(cst.CSTVisitor):
    """Whether a scope reads the list `name` otherwise than filling it (`name.append(...)`),
    handing it to the host (`handed`: those names' nodes), taking its `len`, binding it, or
    reading a value the same on the host (`float(name[-1])`, `name[i].item()`, `print(name)`)."""

    def __init__(self, name: str, handed: set[int], qualified: QualifiedNames, scope: cst.CSTNode) -> None:
        self.name, self.handed, self.qualified, self.scope = name, handed, qualified, scope
        self.skipped: set[int] = set()
        self.found = False
        self.read_until: tuple[int, Callable[[cst.CSTNode], int]] | None = None  # (line, line_of): later reads are of a rebinding

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        """A function of the scope with a parameter or a local of that name reads its own value
        (`def summarize(losses): np.array(losses)`, `def collect(...): y_pred = []`), not the list."""
        return node is self.scope or self.name not in parameter_names(node, stars=True) and self.name not in assigned_names(node)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        return False  # `preds = []`, `preds, labels = [], []`

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if _extends_by_list(node, self.name) or _extends_by_a_call(node, self.name):
            self.skipped.add(id(node.target))  # `probs += list(t)`, `history += train(...)` fill the list

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in LIST_FILLERS and isinstance(func.value, cst.Name):
            self.skipped.add(id(func.value))
        elif "builtins.len" in self.qualified(func) and len(node.args) == 1:
            self.skipped.add(id(node.args[0].value))
        elif self.qualified(func) & HOST_VALUE_READERS:
            for arg in node.args:
                self._skip_item_or_list(arg.value)
        elif isinstance(func, cst.Attribute) and func.attr.value in ("item", "tolist") and not node.args:
            self._skip_item_or_list(func.value, whole=False)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        """`sum(e.item() for e in name)`: each item read only as a value the same on the host."""
        for_in = node.for_in
        iterated, target = for_in.iter, for_in.target
        if isinstance(iterated, cst.Name) and iterated.value == self.name and isinstance(target, cst.Name) \
                and for_in.inner_for_in is None and not for_in.ifs and _reads_only_values(node.elt, target.value, self.qualified):
            self.skipped.add(id(iterated))

    visit_ListComp = visit_GeneratorExp

    def _skip_item_or_list(self, value: cst.BaseExpression, whole: bool = True) -> None:
        """`name` (with `whole`) or `name[i]`: a read that gives the same on the host."""
        if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and len(value.slice) == 1 \
                and isinstance(value.slice[0].slice, cst.Index):
            self.skipped.add(id(value.value))
        elif whole and isinstance(value, cst.Name):
            self.skipped.add(id(value))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name and id(node) not in self.handed and id(node) not in self.skipped:
            if self.read_until is None or self.read_until[1](node) <= self.read_until[0]:
                self.found = True


def _reads_only_values(expression: cst.BaseExpression, name: str, qualified: QualifiedNames) -> bool:
    """Every read of `name` in `expression` gives a value the same on the host: `name.item()`,
    `float(name)` (`HOST_VALUE_READERS`)."""
    reads: list[cst.Name] = []
    host: set[int] = set()

    class Reads(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                reads.append(node)

        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("item", "tolist") and not node.args:
                host.add(id(func.value))
            elif qualified(func) & HOST_VALUE_READERS and node.args:
                host.add(id(node.args[0].value))

    expression.visit(Reads())
    return bool(reads) and all(id(read) in host for read in reads)


@dataclass(frozen=True)
class _Collector:
    """A list that may collect tensors: an item of a local dict (`history["loss"]`,
    `history[phase]`), `self.root`, or an item of it (`self.history["loss"]`). `key` is None for
    an item named by anything else than a string (it may be any)."""

    root: str
    on_instance: bool
    keyed: bool = False
    key: str | None = None

    def is_root(self, node: cst.CSTNode) -> bool:
        if self.on_instance:
            return is_self_attribute(node) and node.attr.value == self.root
        return isinstance(node, cst.Name) and node.value == self.root

    def may_be(self, other: _Collector | None) -> bool:
        """`other` may be the same list (`history[phase]` may be `history["train"]`)."""
        return (
            other is not None and (other.root, other.on_instance, other.keyed) == (self.root, self.on_instance, self.keyed)
            and (other.key is None or self.key is None or other.key == self.key)
        )


def _collector(node: cst.BaseExpression) -> _Collector | None:
    """`history["loss"]`, `history[phase]`, `self.losses`, `self.history["loss"]` (a plain name is
    the older path's)."""
    keyed, key = False, None
    if isinstance(node, cst.Subscript):
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        index = node.slice[0].slice.value
        keyed, key = True, index.evaluated_value if isinstance(index, cst.SimpleString) else None
        if isinstance(index, cst.SimpleString) and not isinstance(key, str):
            return None
        node = node.value
    if is_self_attribute(node):
        return _Collector(node.attr.value, True, keyed, key)
    if isinstance(node, cst.Name) and keyed:
        return _Collector(node.value, False, keyed, key)
    return None


def _empty_collector(value: cst.BaseExpression | None, collector: _Collector) -> bool:
    """`[]` (an unkeyed collector), or a dict display of string keys whose every item is `[]`
    (among them the collector's key, when it is a string)."""
    if not collector.keyed:
        return isinstance(value, cst.List) and not value.elements
    if not isinstance(value, cst.Dict) or not value.elements:
        return False
    keys = []
    for element in value.elements:
        if not (isinstance(element, cst.DictElement) and isinstance(element.value, cst.List) and not element.value.elements):
            return False
        keys.append(_string(element.key))
    return None not in keys and (collector.key is None or collector.key in keys)


class _CollectorReads(cst.CSTVisitor):
    """Whether a scope (a function, or a whole class for `self.<root>`) reads the collector's root
    otherwise than filling an item of it (`root[...].append(...)`), handing it to the host
    (`handed`), taking its `len`, or binding it (`bindings`: the values bound to `self.<root>`)."""

    def __init__(self, collector: _Collector, handed: set[int], qualified: QualifiedNames) -> None:
        self.collector, self.handed, self.qualified = collector, handed, qualified
        self.skipped: set[int] = set()
        self.bindings: list[cst.BaseExpression | None] = []
        self.occurrences = 0
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.handed or id(node) in self.skipped:
            self.occurrences += self._roots_in(node)
            return False
        return super().on_visit(node)

    def _roots_in(self, node: cst.CSTNode) -> int:
        count = _AttributeReads(self.collector.root) if self.collector.on_instance else None
        if count is None:
            return 0
        node.visit(count)
        return count.count

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if self.collector.is_root(target.target):
                self.bindings.append(node.value)
                self.skipped.add(id(target.target))
            elif isinstance(target.target, cst.Tuple) and isinstance(node.value, cst.Tuple) and len(target.target.elements) == len(node.value.elements):
                for element, value in zip(target.target.elements, node.value.elements):  # `self.preds, self.labels = [], []`
                    if self.collector.is_root(element.value):
                        self.bindings.append(value.value)
                        self.skipped.add(id(element.value))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self.collector.is_root(node.target):
            self.bindings.append(node.value)
            self.skipped.add(id(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in LIST_FILLERS:
            receiver = func.value.value if isinstance(func.value, cst.Subscript) else func.value
            if self.collector.is_root(receiver):
                self.skipped.add(id(func.value))
        elif "builtins.len" in self.qualified(func) and len(node.args) == 1:
            self.skipped.add(id(node.args[0].value))

    def visit_Name(self, node: cst.Name) -> None:
        if not self.collector.on_instance and node.value == self.collector.root:
            self.found = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.collector.on_instance and self.collector.is_root(node):
            self.found = True


class _AttributeReads(cst.CSTVisitor):
    """How many attributes named `name` a tree reads (`self.losses`, `trainer.losses`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == self.name:
            self.count += 1


class _CollectorAppends(cst.CSTVisitor):
    """`root["key"].append(v)` / `self.root.append(v)` calls of one collector."""

    def __init__(self, collector: _Collector) -> None:
        self.collector = collector
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in LIST_FILLERS and self.collector.may_be(_collector(func.value)):
            self.calls.append(node)


class _Appends(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in LIST_FILLERS and isinstance(func.value, cst.Name) and func.value.value == self.name:
            self.calls.append(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if _extends_by_list(node, self.name):
            self.calls.append(node.value)  # `probs += list(t)`: as `probs.extend(t)`, its argument is what the list gets


def _extends_by_list(node: cst.AugAssign, name: str) -> bool:
    """`name += list(t)`: the list is extended with the items of `t`."""
    return isinstance(node.target, cst.Name) and node.target.value == name and isinstance(node.operator, cst.AddAssign) \
        and _is_list_call(node.value)


def _extends_by_a_call(node: cst.AugAssign, name: str) -> bool:
    """`name += train(...)`: the list is extended with what a function returns."""
    return isinstance(node.target, cst.Name) and node.target.value == name and isinstance(node.operator, cst.AddAssign) \
        and isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Name)


def _displays_device_values(value: cst.BaseExpression, facts: PlacementFacts) -> bool:
    """`[out[0, 0], out[0, 1]]`: a list or tuple display with an item surely on a device (numpy
    converts a list of such rows item by item)."""
    return isinstance(value, (cst.List, cst.Tuple)) and any(
        isinstance(element, cst.Element) and facts.is_device_value(element.value) for element in value.elements)


def _is_list_call(value: cst.BaseExpression | None) -> bool:
    """`list(t)`: one positional argument."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list" \
        and len(value.args) == 1 and value.args[0].keyword is None and not value.args[0].star


def _method_chain(expression: cst.BaseExpression) -> set[str]:
    """Method and attribute names along `a.b().c.d()`: {"b", "c", "d"}."""
    names = set()
    while True:
        if isinstance(expression, cst.Call):
            expression = expression.func
        elif isinstance(expression, cst.Attribute):
            names.add(expression.attr.value)
            expression = expression.value
        elif isinstance(expression, cst.Subscript):
            expression = expression.value
        else:
            return names


class _HostCopies(cst.CSTVisitor):
    """Some `<code>.cpu()` call in the visited expression."""

    def __init__(self, code: str) -> None:
        self.code, self.found = code, False

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "cpu" and cst.Module([]).code_for_node(node.func.value) == self.code:
            self.found = True


def _read_by_a_string_key(value: cst.BaseExpression) -> bool:
    """`metrics["nrmse"][0]`: some subscript along the chain is a string key."""
    while isinstance(value, (cst.Subscript, cst.Attribute)):
        if isinstance(value, cst.Subscript) and any(
                isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.SimpleString) for element in value.slice):
            return True
        value = value.value
    return False


def _without_items(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """`pipeline(...)` of `pipeline(...)[0].images`: the value items and attributes are read from."""
    while isinstance(value, (cst.Subscript, cst.Attribute)):
        value = value.value
    return value


def _tests_an_attribute_of(test: cst.BaseExpression, name: str) -> bool:
    """`hasattr(name, ...)` somewhere in an `if`'s test."""
    found = []

    class Tests(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "hasattr" and node.args \
                    and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == name:
                found.append(node)

    test.visit(Tests())
    return bool(found)
