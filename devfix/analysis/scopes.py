"""A rule mixin that answers questions about the function (or module top level) a node is in."""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst

from devfix.analysis.call_sites import CallIndex, constructor_arguments_for
from devfix.analysis.cst_bindings import is_generator, is_static_method, return_values
from devfix.analysis.cst_metadata import ParentProvider, PositionProvider
from devfix.analysis.following_returns import Followed
from devfix.analysis.module_classes import is_module_class, is_self_attribute, stores_of_self_attribute, top_level_class
from devfix.analysis.placement import PlacementFacts, as_move, collect
from devfix.analysis.tensors import tensor_names
from devfix.analysis.torch_api import CUDA_TENSOR_TYPES, DEFAULT_DEVICE_FACTORIES, places_devices
from devfix.analysis.torch_names import DEVICE_CONSTRUCTOR, is_cuda_device_expression, qualified_names

ScopeNode = cst.Module | cst.FunctionDef
GLOBAL_STATEMENT = re.compile(r"(?:^|[;:])[ \t]*global[ \t]+([\w \t,]+)", re.MULTILINE)  # `global data, vocab`


class ScopeTracker:
    """Computes placement facts once per scope; needs ParentProvider and ScopeProvider."""

    def visit_Module(self, node: cst.Module) -> None:
        self._facts: dict[int, PlacementFacts] = {}
        self._modules: dict[int, dict[str, cst.Call]] = {}
        self._tensors: dict[int, set[str]] = {}
        self._file_places_devices: bool | None = None
        self._declared_global: frozenset[str] | None = None
        self._returns_device: dict[str, bool] = {}
        self._returns_host: dict[str, bool] = {}
        self._returns_device_items: dict[tuple[str, int, int], bool] = {}  # (function, position, items) → `returns_device_item`
        self._object_modules: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
        self._device_methods: dict[int, set[str]] = {}
        self._cuda_types: frozenset[str] | None = None
        self._call_index: CallIndex | None = None

    def call_index(self) -> CallIndex:
        """The module's calls, walked once, for every question of a rule about what a function's
        callers in the file pass (`call_sites.CallIndex`)."""
        if self._call_index is None:
            self._call_index = CallIndex(self.module)
        return self._call_index

    def only_defined_here(self, function: cst.FunctionDef) -> bool:
        """A top-level function the file never uses, only defines (other files may call it)."""
        return function in self.module.body and self.call_index().name_uses.get(function.name.value, 0) == 1

    def enclosing_scope(self, node: cst.CSTNode) -> ScopeNode:
        current = node
        while not isinstance(current, (cst.Module, cst.FunctionDef)):
            current = self.get_metadata(ParentProvider, current)
        return current

    def blocks_around(self, node: cst.CSTNode, kinds: tuple[type[cst.CSTNode], ...]) -> list[cst.CSTNode]:
        """The statements of those `kinds` (`cst.If`, `cst.For`, ...) that `node` runs under, up to
        its enclosing function or module."""
        found = []
        current = self.get_metadata(ParentProvider, node, None)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
            if isinstance(current, kinds):
                found.append(current)
            current = self.get_metadata(ParentProvider, current, None)
        return found

    def made_where_everything_is(self, call: cst.Call) -> bool:
        """A factory that needs no `device=`: it runs only without CUDA (`runs_without_cuda`), or
        the file sets a global default device that places it (`FileFacts.sets_a_default_device`)."""
        if self.facts is not None and self.facts.sets_a_default_device and self.qualified(call.func) & DEFAULT_DEVICE_FACTORIES:
            return True
        return self.runs_without_cuda(call)

    def runs_without_cuda(self, node: cst.CSTNode) -> bool:
        """`node` runs only where CUDA is not available: in the `else` (or an `elif`) of `if
        torch.cuda.is_available():`, in its function or module, in a file that names no other
        accelerator (`mps`, `xpu`) the no-CUDA path might pick. Everything there is on the CPU."""
        child, current = node, self.get_metadata(ParentProvider, node, None)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
            if isinstance(current, cst.If) and child is current.orelse and self.fails_only_without_cuda(current.test):
                return True
            child, current = current, self.get_metadata(ParentProvider, current, None)
        return False

    def class_of_method(self, function: cst.FunctionDef) -> cst.ClassDef | None:
        """The class whose body defines `function`; None for a function of the module or of
        another function."""
        block = self.get_metadata(ParentProvider, function, None)
        owner = self.get_metadata(ParentProvider, block, None) if isinstance(block, cst.IndentedBlock) else None
        return owner if isinstance(owner, cst.ClassDef) else None

    def scope_facts(self, node: cst.CSTNode) -> PlacementFacts:
        scope = self.enclosing_scope(node)
        if id(scope) not in self._facts:
            facts = collect(_statements(scope), self.qualified, self.line_of)
            self._facts[id(scope)] = facts
            facts.passthrough = self.scope_parameters(node) | set(self.scope_modules(node))
            facts.parameters = self.scope_parameters(node) - {"self", "cls"}
            facts.file_places_devices = self.file_places_devices()
            facts.host_copy_methods = self.facts.host_copy_methods if self.facts is not None else frozenset()
            facts.plain_tensor_attributes = self.facts.plain_tensor_attributes if self.facts is not None else {}
            if self.facts is not None:
                facts.add_returned_moves(self.facts.returned_move, top_level=isinstance(scope, cst.Module))
                facts.add_returned_element_moves(self.facts.returned_listed_moves, top_level=isinstance(scope, cst.Module))
                if self.facts.calls_moving_models_to_host:
                    facts.add_helpers_moving_to_host(self.facts.parameters_moved_to_host)
            facts.returns_device = self.returns_device_value
            facts.returns_host = self.returns_host_tensors
            facts.returns_following = self.returns_following
            facts.returns_device_item = self.returns_device_item
            facts.kind_of = self.kind_of  # a DevfixRule's (every ScopeTracker is one)
            facts.cuda_tensor_types = self.cuda_tensor_types() - (set(facts.bindings) if isinstance(scope, cst.FunctionDef) else set())
            if isinstance(scope, cst.FunctionDef):
                self._add_globals_on_device(facts)
                owner = self.class_of_method(scope)
                if owner is not None:
                    facts.own_methods = {statement.name.value for statement in owner.body.body if isinstance(statement, cst.FunctionDef)}
        return self._facts[id(scope)]

    def add_object_facts(self, facts: PlacementFacts, scope: ScopeNode) -> None:
        """In a method: the Modules the object's `__init__` moved or built give device values or
        follow their inputs (`object_modules`), and so do the class's methods whose every return
        is on a device (`methods_returning_device_values`)."""
        owner = self.class_of_method(scope) if isinstance(scope, cst.FunctionDef) else None
        if owner is not None:
            facts.object_modules, facts.object_modules_on_device = self.object_modules(owner)
            facts.object_device_methods = self.methods_returning_device_values(owner)
        facts.instance_device_methods = self._instance_device_methods(facts)

    def _instance_device_methods(self, facts: PlacementFacts) -> dict[str, frozenset[str]]:
        """Names the scope binds only to constructions of one top-level class of the file
        (`trainer = Trainer(model)`) → the class's methods whose every return is on a device."""
        found: dict[str, frozenset[str]] = {}
        for name, bindings in facts.bindings.items():
            built = {self._constructed_class(binding.value) if not binding.unpacked else None for binding in bindings}
            class_def = top_level_class(self.module, built.pop()) if len(built) == 1 and None not in built else None
            methods = self.methods_returning_device_values(class_def) if class_def is not None else set()
            if methods:
                found[name] = frozenset(methods)
        return found

    def _constructed_class(self, value: cst.BaseExpression | None) -> str | None:
        """`Trainer` of `Trainer(model)`, also of `Classifier(3, 2).fit(X, y)` where every `return` of
        the class's `fit` gives `self` back (sklearn's fluent `fit`)."""
        if not isinstance(value, cst.Call):
            return None
        if isinstance(value.func, cst.Name):
            return value.func.value
        if not (isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Call)
                and isinstance(value.func.value.func, cst.Name)):
            return None
        class_name = value.func.value.func.value
        class_def = top_level_class(self.module, class_name)
        method = next((statement for statement in class_def.body.body if isinstance(statement, cst.FunctionDef)
                       and statement.name.value == value.func.attr.value), None) if class_def is not None else None
        returned = return_values(method) if method is not None and not is_static_method(method) else []
        gives_self = bool(returned) and all(isinstance(item, cst.Name) and item.value == "self" for item in returned)
        return class_name if gives_self else None

    def batch_callables(self, node: cst.CSTNode, models: Iterable[str]) -> set[str]:
        """What a batch may be fed to here: the models, the Modules the scope builds, its parameters,
        and in a function, the Modules the top level builds once that it does not bind itself
        (`criterion = nn.MSELoss()` read by `validate()`)."""
        found = set(models) | set(self.scope_modules(node)) | self.scope_parameters(node)
        if isinstance(self.enclosing_scope(node), cst.FunctionDef):
            found |= set(self.scope_modules(self.module)) - set(self.scope_facts(node).bindings)
        return found

    def cuda_tensor_types(self) -> frozenset[str]:
        """Top-level names bound once to a legacy CUDA tensor type, or to a choice of one
        (`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`, PyTorch-GAN's idiom): what
        they build is on the GPU wherever the program chose it."""
        if self._cuda_types is None:
            top = self.scope_facts(self.module)
            self._cuda_types = frozenset(
                name for name, values in top.assignments.items()
                if len(values) == 1 and values[0] is not None and self._names_cuda_type(values[0])
            )
        return self._cuda_types

    def _names_cuda_type(self, value: cst.BaseExpression) -> bool:
        """A legacy CUDA tensor type, or a choice of one made by CUDA's availability itself (a
        user's flag, `args.cuda and ...`, may choose the CPU on a machine with a GPU)."""
        if isinstance(value, cst.IfExp):
            return self.tests_availability(value.test) and self._names_cuda_type(value.body)
        return bool(self.qualified(value) & CUDA_TENSOR_TYPES)

    def fails_only_without_cuda(self, test: cst.BaseExpression) -> bool:
        """`torch.cuda.is_available()` (`tests_availability`) in a file that names no other
        accelerator: where it fails, the program runs on the CPU alone."""
        return self.tests_availability(test) and not (self.facts is not None and self.facts.names_another_accelerator)

    def tests_availability(self, test: cst.BaseExpression, depth: int = 0) -> bool:
        """`torch.cuda.is_available()`, or a top-level name bound once to it (`cuda = True if
        torch.cuda.is_available() else False`)."""
        if isinstance(test, cst.Call):
            return "torch.cuda.is_available" in self.qualified(test.func) and not test.args
        if isinstance(test, cst.Name) and depth < 3:  # `cuda = cuda` ends here
            values = self.scope_facts(self.module).assignments.get(test.value, [])
            value = values[0] if len(values) == 1 else None
            if isinstance(value, cst.IfExp) and all(isinstance(side, cst.Name) and side.value in ("True", "False") for side in (value.body, value.orelse)):
                return value.body.value == "True" and self.tests_availability(value.test, depth + 1)
            return value is not None and self.tests_availability(value, depth + 1)
        return False

    def move_holds_where(self, move_call: cst.CSTNode, device: str | None, at: cst.CSTNode) -> bool:
        """Whether a move (`model.to(device)`, or `model.cuda()` with `device` None) puts the model
        on `device` (CUDA when it is there, for None) wherever `at` runs: the move is under no `if`
        that `at` is not under, or each such test is the device's own choice (`test_chooses_device`;
        for `.cuda()`, CUDA's availability). Under `if args.cuda:` with `--no-cuda` given, the model
        stays on the CPU on a GPU machine."""
        conditions = set(self.blocks_around(move_call, (cst.If,))) - set(self.blocks_around(at, (cst.If,)))
        if device is None:
            return all(self.tests_availability(condition.test) for condition in conditions)
        return all(self.test_chooses_device(condition.test, device, at) for condition in conditions)

    def test_chooses_device(self, test: cst.BaseExpression, device: str, at: cst.CSTNode) -> bool:
        """`if use_gpu:` around `model.to(device)` where `device = torch.device("cuda" if use_gpu
        else "cpu")` is the one device name bound (in the scope of `at` or the top level; or both
        tests ask for CUDA's availability): the device is the CPU exactly when the move is skipped."""
        scopes = {id(facts): facts for facts in (self.scope_facts(at), self.scope_facts(self.module))}
        bindings = [binding.value for facts in scopes.values() for binding in facts.bindings.get(device, ())]
        chosen = bindings[0] if len(bindings) == 1 else None
        if isinstance(chosen, cst.Call) and chosen.args and DEVICE_CONSTRUCTOR in self.qualified(chosen.func):
            chosen = chosen.args[0].value
        if not isinstance(chosen, cst.IfExp) or not is_cuda_device_expression(chosen.body, self.qualified):
            return False
        same = cst.Module([]).code_for_node(test) == cst.Module([]).code_for_node(chosen.test)
        return same or (self.tests_availability(test) and self.tests_availability(chosen.test))

    def object_modules(self, class_def: cst.ClassDef) -> tuple[frozenset[str], frozenset[str]]:
        """The attributes `__init__` binds to a Module it builds (`self.criterion = nn.MSELoss()`:
        what it returns follows its input) or to a move (`self.model = model.to(device)`, also of a
        tensor: `self.weights = counts.to(device)`), with no other store in the class; and those of them on a device: bound to a move, moved in place
        by a statement of `__init__` after the store (`self.model.to(self.device)`), or bound to a
        parameter every construction of the class gives a moved model (`_given_moved_models`)."""
        if id(class_def) not in self._object_modules:
            init = next((item for item in class_def.body.body if isinstance(item, cst.FunctionDef) and item.name.value == "__init__"), None)
            given = {param.name.value for param in init.params.params} if init is not None else set()
            built: set[str] = set()
            kept: dict[str, str] = {}  # `self.model = model`: attribute → the parameter; moved in place below, by every caller, or not a Module at all
            on_device: set[str] = set()
            for statement in init.body.body if init is not None else ():
                for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and is_self_attribute(small.targets[0].target):
                        name, value = small.targets[0].target.attr.value, small.value
                        if as_move(value, self.qualified) is not None:
                            on_device.add(name)
                        elif isinstance(value, cst.Call) and self.builds_module(value):
                            built.add(name)
                        elif isinstance(value, cst.Name) and value.value in given:
                            kept[name] = value.value
                    move = as_move(small.value, self.qualified) if isinstance(small, cst.Expr) else None
                    if move is not None and is_self_attribute(move.receiver) and move.receiver.attr.value in built | kept.keys():
                        on_device.add(move.receiver.attr.value)
            on_device |= {name for name, parameter in kept.items() if name not in on_device and self._given_moved_models(class_def, parameter)}
            once = {name for name in built | on_device if stores_of_self_attribute(class_def, name) == 1}
            self._object_modules[id(class_def)] = (frozenset((built | on_device) & once), frozenset(on_device & once))
        return self._object_modules[id(class_def)]

    def methods_returning_device_values(self, class_def: cst.ClassDef) -> set[str]:
        """The methods of the class (no static method, no generator) whose every `return` gives a
        value their own facts prove on a device (`return self.model(images).argmax(1)` of a model
        the object keeps moved: `object_modules`). One set per class, filled once the class is
        judged: facts that took it while it was being judged (a method's facts read to judge
        another) see the whole of it afterwards, and nothing while it is judged (not proven)."""
        if id(class_def) not in self._device_methods:
            self._device_methods[id(class_def)] = set()
            found = set()
            for item in class_def.body.body if isinstance(class_def.body, cst.IndentedBlock) else ():
                if not isinstance(item, cst.FunctionDef) or is_static_method(item) or is_generator(item):
                    continue
                values = return_values(item)
                if values and all(
                    value is not None and self.facts_of_returns(value).is_device_value(value, through_functions=True) for value in values
                ):
                    found.add(item.name.value)
            self._device_methods[id(class_def)] |= found
        return self._device_methods[id(class_def)]

    def _given_moved_models(self, class_def: cst.ClassDef, parameter: str) -> bool:
        """`Evaluator(model, loader)` where every construction of the top-level class in the file
        (one at least) gives `parameter` a name its scope moves (`model = Net().to(device)`,
        `model.to(device)`) or a move itself: what `__init__` keeps of it is on a device."""
        given = constructor_arguments_for(self.module, class_def, parameter)
        if not given:
            return False
        for _, value in given:
            if as_move(value, self.qualified) is not None:
                continue
            if not (isinstance(value, cst.Name) and value.value in self.scope_facts(value).moved):
                return False
        return True

    def _add_globals_on_device(self, facts: PlacementFacts) -> None:
        """What the top level binds once and places, read in a function that neither binds the
        name nor takes it as a parameter: models it moved (`encoder = Net().to(device)`: calling
        one runs on a device) and device values (`weights = torch.tensor(w, device=device)`)."""
        top = self.scope_facts(self.module)
        local = set(facts.bindings) | facts.parameters | facts.passthrough
        once = {name for name, bindings in top.bindings.items() if len(bindings) == 1 and name not in local}
        facts.modules_on_device |= {name for name in top.moved if name not in local and self._one_model_moved(top, name)}
        facts.device_globals |= {
            name for name in once
            if (value := top.bindings[name][0].value) is not None and top.is_device_value(value, before_line=top.bindings[name][0].line)
        }
        declared = self.declared_global()  # (a function declaring one `global` may rebind it anywhere)
        facts.global_bindings = {name: (top.bindings[name][0], top) for name in once if name not in top.moves and name not in declared}

    def _one_model_moved(self, top: PlacementFacts, name: str) -> bool:
        """The top level binds `name` to one model, or to one of several that branches choose
        (`if kind == "small": model = Net(8)` / `else: model = Net(16)`) all before the move."""
        others = self._other_values(top, name)
        move_line = self.line_of(top.moved[name].call)
        return len(others) <= 1 or all(binding.line < move_line for binding in others)

    def _other_values(self, top: PlacementFacts, name: str) -> list:
        """The top level's bindings of `name` but those that move the model it holds in place
        (`model = model.to(device)`, `.eval()` after it: the same Module, `torchvision`'s
        `model = models.resnet18(...)` then `model = model.to(device)` is one model)."""
        return [binding for binding in top.bindings.get(name, ())
                if not ((move := as_move(binding.value, self.qualified)) is not None
                        and isinstance(move.receiver, cst.Name) and move.receiver.value == name)]

    def returns_device_value(self, name: str) -> bool:
        """`def predict(model, images): ... return model(images.to(device)).softmax(1)`: the file
        defines `name` once at the top level (and binds it nowhere else there), it is no
        generator, and every `return` gives a value its own facts prove on a device, whatever
        the caller passes."""
        if name not in self._returns_device:
            self._returns_device[name] = False  # a recursive function ends here
            self._returns_device[name] = self._every_return_on_device(name)
        return self._returns_device[name]

    def returns_host_tensors(self, name: str) -> bool:
        """`def make_adjacency(n): ... return torch.from_numpy(a).float()`: the file defines `name`
        once at the top level and every `return` gives a tensor made on the host, whatever the
        caller passes (`analysis.host_helpers`)."""
        if name not in self._returns_host:
            summary = self.facts.local_helper(name) if self.facts is not None else None
            self._returns_host[name] = summary is not None and summary.returns_host_tensors
        return self._returns_host[name]

    def returns_following(self, name: str) -> Followed:
        """`def accuracy(logits, y): return (logits.argmax(1) == y).float().mean()`: the parameters
        its returned tensors follow (`FileFacts.followed`)."""
        return self.facts.followed(name) if self.facts is not None else ()

    def returns_device_item(self, name: str, position: int, items: int) -> bool:
        """`def predict(model, loader): ... return torch.cat(preds), torch.cat(labels)`: the file
        defines `name` once at the top level, no generator, and every `return` gives a tuple
        display of `items` values, the one at `position` proven on a device."""
        key = (name, position, items)
        if key not in self._returns_device_items:
            self._returns_device_items[key] = False  # a recursive function ends here
            function = self._top_level_function(name)
            values = return_values(function) if function is not None and not is_generator(function) else []
            self._returns_device_items[key] = bool(values) and all(
                isinstance(value, cst.Tuple) and len(value.elements) == items
                and not isinstance(value.elements[position], cst.StarredElement)
                and self.facts_of_returns(value).is_device_value(value.elements[position].value, through_functions=True)
                for value in values
            )
        return self._returns_device_items[key]

    def _top_level_function(self, name: str) -> cst.FunctionDef | None:
        """The top-level function `name`, when the file defines it once there and binds it nowhere else there."""
        defined = [statement for statement in self.module.body if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and statement.name.value == name]
        if len(defined) != 1 or not isinstance(defined[0], cst.FunctionDef) or name in self.scope_facts(self.module).bindings:
            return None
        return defined[0]

    def _every_return_on_device(self, name: str) -> bool:
        function = self._top_level_function(name)
        if function is None:
            return False
        values = return_values(function)
        return not is_generator(function) and bool(values) and all(
            value is not None and self.facts_of_returns(value).is_device_value(value, through_functions=True) for value in values
        )

    def facts_of_returns(self, node: cst.CSTNode) -> PlacementFacts:
        """The facts `returns_device_value` reads a return with: the scope's (a rule may narrow them)."""
        return self.scope_facts(node)

    def top_level_models_moved_before(self, node: cst.CSTNode, through_methods: bool = False) -> set[str]:
        """In a top-level function: the models the top level moved (`policy = Net().to(device)`)
        that it calls as globals (with `through_methods`, also those whose methods it calls:
        `model.generate(ids)`) and that are moved before every top-level call that runs it."""
        scope = self.enclosing_scope(node)
        if not isinstance(scope, cst.FunctionDef):
            return set()
        facts = self.scope_facts(node)
        called = facts.called | facts.method_receivers if through_methods else facts.called
        return {model for model in facts.modules_on_device & called if self.runs_after_the_move(scope, model)}

    def runs_after_the_move(self, function: cst.FunctionDef, model: str) -> bool:
        """Every top-level call that runs `function` (a top-level function) comes after the top
        level moves `model` (`analysis.entry_lines`); a callback (decorated, or handed on as a value)
        does when the top level runs only set-up code between the model's first binding and the move."""
        lines = self.facts.entry_lines.get(function.name.value) if self.facts is not None and function in self.module.body else None
        move = self.scope_facts(self.module).moved.get(model)
        if move is None:
            return False
        if lines:
            return min(lines) > self.line_of(move.call)
        if function not in self.module.body or (lines is not None and not function.decorators):
            return False  # run by nothing here: another file's call may come at any time
        # a callback (`@app.route(...)`, `gr.Interface(fn=predict)`): nothing runs it between the model's binding and its move
        return self.facts.runs_only_setup_before_the_move(model, self.line_of(move.call))

    def declared_global(self) -> frozenset[str]:
        """The names some `global` statement of the file declares, read once from its text."""
        if self._declared_global is None:
            text = self.facts.text if self.facts is not None else self.module.code
            self._declared_global = frozenset(
                name for names in GLOBAL_STATEMENT.findall(text) for name in re.findall(r"\w+", names)
            ) if "global" in text else frozenset()
        return self._declared_global

    def file_places_devices(self) -> bool:
        """Does the file move anything to a device anywhere? Once per pass, from the text the facts
        were computed from (the module's code: generating it again costs a walk of the tree)."""
        if self._file_places_devices is None:
            self._file_places_devices = places_devices(self.facts.text if self.facts is not None else self.module.code)
        return self._file_places_devices

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """`qualified_names`, and for a name the file binds only to a torch dtype, that dtype
        (`analysis.imports`): `x.to(dtype)` is a cast."""
        names = qualified_names(self, node)
        if isinstance(node, cst.Name) and self.facts is not None and node.value in self.facts.imports.dtypes:
            return names | {self.facts.imports.dtypes[node.value]}
        return names

    def line_of(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def scope_modules(self, node: cst.CSTNode) -> dict[str, cst.Call]:
        """Names assigned exactly once in this scope, from a call that builds an nn.Module, or of a
        function of the file that hands back one it built and left on the host (`get_model(4)`)."""
        scope = self.enclosing_scope(node)
        if id(scope) not in self._modules:
            facts = self.scope_facts(node)
            self._modules[id(scope)] = {
                name: values[0]
                for name, values in facts.assignments.items()
                if len(values) == 1 and isinstance(values[0], cst.Call) and self.makes_module(values[0], node)
            }
        return self._modules[id(scope)]

    def makes_module(self, call: cst.Call, at: cst.CSTNode) -> bool:
        """`call`, in the scope of `at`, builds an nn.Module, or calls a function of the file that
        hands back one it built and left on the host (`get_model(4)`; a local `get_model` is some
        other callable)."""
        if self.builds_module(call):
            return True
        func = call.func
        if not isinstance(func, cst.Name) or self.facts is None or func.value in self.scope_parameters(at):
            return False
        return func.value not in self.scope_facts(at).bindings and self.facts.returns_built_module(func.value)

    def scope_tensors(self, node: cst.CSTNode) -> set[str]:
        """Names in this scope that certainly hold tensors (see analysis.tensors)."""
        scope = self.enclosing_scope(node)
        if id(scope) not in self._tensors:
            self._tensors[id(scope)] = tensor_names(scope, self.qualified) - self.non_tensors_in(scope)
        return self._tensors[id(scope)]

    def non_tensors_in(self, scope: cst.CSTNode) -> set[str]:
        """Names the value analysis proved to hold something else than a tensor in `scope`: what
        the usage evidence of `tensor_names` suggests is overruled by what the values are."""
        if self.facts is None:
            return set()
        position = self.get_metadata(PositionProvider, scope)
        return self.facts.non_tensor_names(position.start.line, position.end.line)

    def scope_parameters(self, node: cst.CSTNode) -> set[str]:
        scope = self.enclosing_scope(node)
        if isinstance(scope, cst.Module):
            return set()
        params = scope.params
        return {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}

    def is_module_classdef(self, node: cst.ClassDef) -> bool:
        """Is this class an nn.Module, through its bases and across the files of the run?"""
        return is_module_class(node, self.context.filename or "<memory>", self.project, self.qualified)

    def builds_module(self, call: cst.Call) -> bool:
        """A call of an nn.Module class, or of torch.nn's own alternative constructors
        (`nn.Embedding.from_pretrained(vectors)`)."""
        filename = self.context.filename or "<memory>"
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained":
            return any(name.startswith("torch.nn.") for name in qualified_names(self, func.value)) and any(
                self.project.is_module_class(filename, name) is True for name in qualified_names(self, func.value))
        return any(self.project.is_module_class(filename, name) is True for name in qualified_names(self, func))


def _statements(scope: ScopeNode) -> list[cst.CSTNode]:
    if isinstance(scope, cst.Module):
        return list(scope.body)
    body = scope.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
