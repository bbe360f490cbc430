"""Where values live inside one function (or a module's top level): which names were moved to a
device, which hold device tensors, which are built once and never handed to other code.

Names are resolved in source order: a use sees the latest assignment on an earlier line, so
`x = torch.randn(3)` then `x = x.to(device)` makes `x` a device value only after the move. What
devfix cannot see (loop targets, parameters, `with` targets) is never called a device value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field

import libcst as cst

from devfix.analysis.call_sites import argument_at, argument_for
from devfix.analysis.following_returns import Followed
from devfix.analysis.kinds import TENSOR_ATTRIBUTES, Kind
from devfix.analysis.module_classes import is_self_attribute
from devfix.analysis.module_instances import KEEPING_THE_INSTANCE
from devfix.analysis.returned_moves import ReturnedMove
from devfix.analysis.tensor_methods import TENSOR_METHODS
from devfix.analysis.tensors import is_factory_call
from devfix.analysis.torch_api import (
    CAST_KEYWORDS,
    CPU_LITERALS,
    CPU_TENSOR_TYPES,
    LEAVING_PLACEMENT_METHODS,
    LIST_FILLERS,
    LIST_JOINS,
    MOVED_AFTER,
    PLACEMENT_KEEPING_METHODS,
    TORCH_DTYPES,
    VARIABLE_WRAPPERS,
    is_torch_tensor_function,
)
from devfix.analysis.torch_names import QualifiedNames, is_cuda_device_expression, keyword

LineOf = Callable[[cst.CSTNode], int]


@dataclass(frozen=True)
class Move:
    """A `.to(...)`/`.cuda()` call: `device` is its device argument, None for `.cuda()`."""

    receiver: cst.BaseExpression
    device: cst.BaseExpression | None
    call: cst.Call


@dataclass(frozen=True)
class Binding:
    """One assignment of a name: its line and value (None when devfix cannot see the value)."""

    line: int
    value: cst.BaseExpression | None
    unpacked: int = 0  # `x, y = get_batch()`: how many names the call's result is unpacked into
    position: int = -1  # … and which of them this one is


@dataclass
class PlacementFacts:
    qualified: QualifiedNames
    line_of: LineOf
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    moved: dict[str, Move] = field(default_factory=dict)  # each name's first move
    moves: dict[str, list[Move]] = field(default_factory=dict)  # every move of each name
    escaped: dict[str, list[cst.Call]] = field(default_factory=dict)
    appended: dict[str, list[tuple[int, cst.BaseExpression]]] = field(default_factory=dict)  # `name.append(v)`: (line, v)
    # `results["logits"].append(v)`: ("results", "logits") → [(line, v)], a list kept under a string key
    item_appended: dict[tuple[str, str], list[tuple[int, cst.BaseExpression]]] = field(default_factory=dict)
    items_changed: set[str] = field(default_factory=set)  # `results["logits"] = v`, or an item handed to another call
    augmented: dict[tuple[str, int], cst.BaseExpression] = field(default_factory=dict)  # `name += v`: (name, line) → v
    elements: dict[tuple[str, int], cst.BaseExpression] = field(default_factory=dict)  # `for y in ys`: (y, line) → ys
    # `for tokens, score in beams`: (tokens, line) → (beams, 0), each a name the loop unpacks from a
    # row of what it iterates (a name, a list display or a list comprehension), with its position;
    # `for bias in biases`: (bias, line) → (biases, None), the whole row
    unpacked_elements: dict[tuple[str, int], tuple[cst.BaseExpression, int | None]] = field(default_factory=dict)
    dict_values: dict[tuple[str, int], cst.BaseExpression] = field(default_factory=dict)  # `for k, v in d.items()`: (v, line) → d
    # `[row.numpy() for row in samples]`: id of each `row` the comprehension reads → `samples` (its own scope)
    comprehension_elements: dict[int, cst.BaseExpression] = field(default_factory=dict)
    called: set[str] = field(default_factory=set)
    method_receivers: set[str] = field(default_factory=set)  # `model` of `model.generate(ids)`
    hosted: set[str] = field(default_factory=set)  # `model` of `model.cpu()`, `model.to("cpu")`: a Module goes to the host
    hosted_at: dict[str, list[int]] = field(default_factory=dict)  # … and the lines of those calls
    calls_of: dict[str, list[cst.Call]] = field(default_factory=dict)  # `f(...)`: f → its calls in the scope
    modules_on_device: set[str] = field(default_factory=set)
    device_globals: set[str] = field(default_factory=set)  # top-level names bound once to a device value, read here
    # in a function: top-level names bound once and never moved there, read here (`data` of nanoGPT's
    # `get_batch(data)` in `def train():`), each with the top level's facts, where its binding is judged
    global_bindings: dict[str, tuple[Binding, PlacementFacts]] = field(default_factory=dict)
    device_parameters: set[str] = field(default_factory=set)  # parameters every caller may give a device value (loose only)
    passthrough: set[str] = field(default_factory=set)
    parameters: set[str] = field(default_factory=set)
    own_methods: set[str] = field(default_factory=set)  # in a method: the names of its class's methods
    cuda_tensor_types: frozenset[str] = frozenset()  # `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor` at the top level
    object_modules: frozenset[str] = frozenset()  # in a method: `self.<attr>` Modules `__init__` built (`ScopeTracker.object_modules`)
    object_modules_on_device: frozenset[str] = frozenset()  # … and those it moved, or bound to a move (a tensor too)
    object_device_methods: Set[str] = frozenset()  # in a method: its class's methods that return device values (`ScopeTracker.methods_returning_device_values`)
    instance_device_methods: Mapping[str, Set[str]] = field(default_factory=dict)  # `trainer` of `trainer = Trainer()` → those methods of its class
    host_copy_methods: frozenset[str] = frozenset()  # methods of the file's classes that return host copies
    # class of the file → the attributes its instances keep as CPU tensors `.to()` does not move
    plain_tensor_attributes: Mapping[str, frozenset[str]] = field(default_factory=dict)
    file_places_devices: bool = False  # the file moves things to devices somewhere
    returns_device: Callable[[str], bool] | None = None  # is a top-level function of the file one whose every return is on a device
    returns_host: Callable[[str], bool] | None = None  # … one whose every return is a tensor made on the host
    returns_following: Callable[[str], Followed] | None = None  # … of the file or project: the parameters its returned tensors follow
    # … one whose every return is a tuple of that many items, the item at that position on a device
    returns_device_item: Callable[[str, int, int], bool] | None = None
    kind_of: Callable[[cst.CSTNode], Kind] | None = None  # the value analysis's kind of a name where it is read
    # `if isinstance(x, np.ndarray): x = torch.from_numpy(x)`: (name, line) of a binding in a block that
    # may not run (an `if`, `else`, `try`, `except` or loop body) → the line its block's last statement starts on
    conditional: dict[tuple[str, int], int] = field(default_factory=dict)
    # `if ...: <body> else: <orelse>`: (body's first line, body's last, orelse's first, orelse's last
    # statement's line); a binding of the body never reaches a read of the orelse (shap's torch and
    # TensorFlow branches both bind `outputs`)
    exclusive: list[tuple[int, int, int, int]] = field(default_factory=list)
    # `m` of `for m in members`, where the list `members` holds there was assigned moves only and is
    # never changed in place (`members = [Net().to(device) for _ in range(3)]`): (m, the loop's line) →
    # the move of an element; in a comprehension (`[m(x) for m in members]`), m → (the lines from
    # the comprehension's start to its `for`, the move)
    element_moves: dict[tuple[str, int], Move] = field(default_factory=dict)
    # loops and comprehensions over a name: (the name bound to each element, the iterated name, the
    # line its binding is read on, the lines a comprehension's reads span or None for a loop)
    iterations: list[tuple[str, str, int, tuple[int, int] | None]] = field(default_factory=list)
    changed_in_place: set[str] = field(default_factory=set)  # `xs[i] = v`, `del xs[i]`, `xs.insert(...)`, ...
    comprehension_moves: dict[str, list[tuple[int, int, Move]]] = field(default_factory=dict)


    def _proven_tensor(self, value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Name) and self.kind_of is not None and self.kind_of(value) is Kind.TENSOR

    def add_returned_moves(self, returned_move: Callable[[str], ReturnedMove | None], top_level: bool = False) -> None:
        """`model = build_model(device)` where the file's function gives back what it moved
        (`analysis.returned_moves`) is a move of `model`, to the caller's argument for the device
        parameter, to the file's top-level device name the function moved to (when the scope does
        not bind that name itself: `top_level`, the module's own scope, binds the global), or to
        CUDA: as `model = Net().to(device)` is. A callee the scope binds itself is some other callable."""
        local = self.bindings.keys() | self.parameters
        for name, bindings in self.bindings.items():
            for binding in bindings:
                move = self._returned(name, binding, returned_move, top_level, local)
                if move is not None:
                    self.moves[name] = sorted([*self.moves.get(name, ()), move], key=lambda found: self.line_of(found.call))
                    self.moved[name] = self.moves[name][0]

    def add_returned_element_moves(self, returned_listed: Callable[[str], ReturnedMove | None], top_level: bool = False) -> None:
        """`m` of `for m in ensemble` (a loop or a comprehension) where `ensemble = build_ensemble(3)`
        and every `return` of the file's function is a list of moves to one device
        (`analysis.returned_moves.returned_listed_moves`), the list never changed here: a move of
        `m`, as for `ensemble = [Net().to(device) for _ in range(3)]` (`element_moves`)."""
        local = self.bindings.keys() | self.parameters
        for name, iterated, line, span in self.iterations:
            binding = self._binding_before(iterated, line)
            if binding is None or iterated in self.changed_in_place or iterated in self.appended \
                    or any(bound == iterated for bound, _ in self.augmented) or len(self.bindings.get(iterated, ())) != 1:
                continue
            move = self._returned(iterated, binding, returned_listed, top_level, local)
            if move is None:
                continue
            if span is None:
                self.element_moves[(name, line)] = move
            else:
                self.comprehension_moves.setdefault(name, []).append((*span, move))
            self.moved.setdefault(name, move)

    def _returned(self, name: str, binding: Binding, summary_of: Callable[[str], ReturnedMove | None], top_level: bool,
                  local: set[str]) -> Move | None:
        """The move `binding` of `name` is when it calls a function of the file that gives back
        what it moved (`summary_of`), to the device the call names; `local`: the scope's own names."""
        call = binding.value
        if binding.unpacked or not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name) or call.func.value in local:
            return None
        summary = summary_of(call.func.value)
        device = argument_for(call, summary.parameter, list(summary.positional)) if summary is not None and summary.parameter else None
        if summary is None or (summary.parameter is not None and device is None):
            return None
        if summary.own_device:  # `model = train(model, loader)` moving it to a device of its own
            device = cst.parse_expression(f"next({name}.parameters()).device")
        if summary.global_name is not None:  # `model.to(device)` of the file's one top-level `device`
            if summary.global_name in local and not top_level:
                return None
            device = cst.Name(summary.global_name)
        if summary.attribute is not None:  # `build_model(args)` moving to `args.device`
            if not isinstance(device, (cst.Name, cst.Attribute)):
                return None
            device = cst.Attribute(device, attr=cst.Name(summary.attribute))
        return Move(call, device, call)

    @property
    def assignments(self) -> dict[str, list[cst.BaseExpression | None]]:
        return {name: [binding.value for binding in bindings] for name, bindings in self.bindings.items()}

    def is_device_value(
        self, expression: cst.BaseExpression, loose: bool = False, tensor_parameters: bool = False, before_line: int | None = None,
        through_functions: bool = False,
    ) -> bool:
        """True when `expression`, where it stands, certainly evaluates to something on a device.

        `loose` also counts what any function returns when fed device values: right for "may be
        on a device" questions (is `.cpu()` needed?), too weak for moving things to a GPU.
        `tensor_parameters` (with `loose`) also counts the function's own parameters, for a caller
        that knows the value is a tensor (the receiver of `.numpy()`). Names inside an assigned value
        are looked up before that assignment's line (`before_line`), so resolution always ends.
        `through_functions` also counts a call of a top-level function of the file whose every
        `return` gives a device value (`returns_device`): what `predict(model, x)` hands back."""
        again = lambda value, line=before_line: self.is_device_value(value, loose, tensor_parameters, line, through_functions)  # noqa: E731
        if as_move(expression, self.qualified) is not None:
            return True
        if isinstance(expression, cst.Name) and id(expression) in self.comprehension_elements:
            iterated = self.comprehension_elements[id(expression)]  # as a loop's element, below
            return again(iterated) and (loose or self._proven_tensor(iterated) or self._proven_tensor(expression))
        if isinstance(expression, cst.Name):
            line = before_line if before_line is not None else self.line_of(expression)
            binding = self._binding_before(expression.value, line)
            if binding is None and expression.value in self.device_globals:
                return True
            if binding is None and loose and tensor_parameters and self.file_places_devices and expression.value in self.parameters:
                return True  # a helper's tensor argument may come from a device
            if binding is None and loose and expression.value in self.device_parameters:
                return True  # `def accuracy(logits, y)` that every caller in the files beside it gives `model(x)`
            if loose and binding is not None and _is_empty_list(binding.value):
                # `probs = []` then `probs.append(model(x))`: the list holds device tensors
                return any(binding.line < at < line and again(value, at) for at, value in self.appended.get(expression.value, ()))
            if binding is not None and binding.value is None and (expression.value, binding.line) in self.dict_values:
                return again(self.dict_values[(expression.value, binding.line)], binding.line)  # a value of a device dict
            iterated = self.elements.get((expression.value, binding.line)) if binding is not None and binding.value is None else None
            if iterated is not None and loose:
                return again(iterated, binding.line)  # `for s in scores` of device values
            if iterated is not None and again(iterated, binding.line) and (self._proven_tensor(iterated) or self._proven_tensor(expression)):
                # strictly, only the rows of a tensor are surely tensors (`for img in samples`, or `img` of
                # `zip(axes, recon.view(-1, 4, 4))` that the value analysis proves one; a dict gives its keys)
                return True
            if binding is not None and (expression.value, binding.line) in self.augmented:
                # `total += loss`: on a device when `loss` is, or when `total` already was
                added = self.augmented[(expression.value, binding.line)]
                return again(added, binding.line) or again(expression, binding.line)
            if through_functions and binding is not None and binding.position >= 0 and self._returned_item_on_device(binding):
                return True  # `preds, labels = predict(model, loader)`, `predict` returning `torch.cat(preds), torch.cat(labels)`
            return binding is not None and binding.value is not None and again(binding.value, binding.line)
        if is_self_attribute(expression) and expression.attr.value in self.object_modules_on_device:
            return True  # `self.weights` of `self.weights = counts.to(device)`, the class's one store
        if isinstance(expression, cst.Attribute) and tensor_parameters and expression.attr.value not in TENSOR_ATTRIBUTES:
            # `dataloader._dataset[:]` handed to `.numpy()`: the tensor is not the parameter but
            # something it holds (recbole's `Interaction` has a `.numpy()` and no `.detach()`)
            return self.is_device_value(expression.value, loose, False, before_line, through_functions)
        if isinstance(expression, cst.Subscript) and isinstance(expression.value, cst.Name):
            line = before_line if before_line is not None else self.line_of(expression)
            binding = self._binding_before(expression.value.value, line)
            if binding is not None and not binding.unpacked and isinstance(binding.value, cst.DictComp):
                # `batch["labels"]` of `batch = {k: v.to(device) for k, v in batch.items()}`
                return again(binding.value.value, binding.line)
        if isinstance(expression, cst.Attribute) and self.plain_tensor_of_an_instance(expression, before_line):
            return False  # `model.class_weights` of `model = Net().to(device)`: no parameter, no buffer
        if isinstance(expression, (cst.Attribute, cst.Subscript)):
            return again(expression.value)
        if isinstance(expression, cst.BinaryOperation):
            if isinstance(expression.operator, cst.Modulo) and isinstance(expression.left, (cst.SimpleString, cst.ConcatenatedString)):
                return False  # `"pred %d" % pred` formats a string
            return again(expression.left) or again(expression.right)
        if isinstance(expression, cst.Comparison):  # `(logits.argmax(1) == y)` is where its operands are
            return again(expression.left) or any(again(item.comparator) for item in expression.comparisons)
        if isinstance(expression, cst.Call):
            callee = expression.func
            if _placed_by_factory(expression, self.qualified):
                return True
            if isinstance(callee, cst.Attribute) and callee.attr.value == "forward" and isinstance(callee.value, cst.Name) \
                    and callee.value.value != "self":
                callee = callee.value  # `model.forward(x)` is `model(x)` without its hooks (NetDissect-Lite)
            if isinstance(callee, cst.Name) and (callee.value in self.moved or callee.value in self.modules_on_device):
                return True  # output of a module that lives on a device
            if isinstance(callee, cst.Subscript) and isinstance(callee.value, cst.Name):
                layers = callee.value.value  # `model[0](x)`: a layer of a Sequential is where the Sequential is
                if layers in self.moved or layers in self.modules_on_device:
                    return True
                if loose or layers in self.passthrough:
                    return any(self._feeds_device(arg.value, before_line, again) for arg in expression.args)
            if isinstance(callee, cst.Name) and callee.value in self.cuda_tensor_types:
                return True  # `Tensor(n, 1).fill_(1.0)`: a CUDA tensor wherever the flag chose CUDA
            if (isinstance(callee, cst.Attribute) and callee.attr.value == "type" and len(expression.args) == 1
                    and isinstance(expression.args[0].value, cst.Name) and expression.args[0].value.value in self.cuda_tensor_types):
                return True  # `imgs.type(Tensor)`
            if (isinstance(callee, cst.Name) and self.returns_host is not None and callee.value not in self.bindings
                    and callee.value not in self.parameters and self.returns_host(callee.value)):
                return False  # `make_adjacency(n)` of the file makes its tensor on the host, whatever it is given
            if isinstance(callee, cst.Name) and self._follows_a_device_tensor(expression, callee.value, before_line, again):
                return True  # `accuracy(logits, y)` whose every return is computed from `logits` by tensor operations
            if isinstance(callee, cst.Name) and (loose or callee.value in self.passthrough):
                return any(self._feeds_device(arg.value, before_line, again) for arg in expression.args)  # model(x) follows x
            if (
                through_functions and isinstance(callee, cst.Name) and self.returns_device is not None
                and callee.value not in self.bindings and callee.value not in self.parameters and self.returns_device(callee.value)
            ):
                return True
            if self.qualified(callee) & MOVED_AFTER:
                return False  # `torch.from_numpy(array)`: made on the host, whatever it is given
            if self.qualified(callee) & VARIABLE_WRAPPERS and expression.args:
                return again(expression.args[0].value)  # `Variable(t)` is `t` today
            joined = expression.args[0].value if self.qualified(callee) & LIST_JOINS and expression.args else None
            if isinstance(joined, cst.Name) and not loose:  # `torch.cat(all_probs)` of a list the scope filled
                line = before_line if before_line is not None else self.line_of(joined)
                binding = self._binding_before(joined.value, line)
                if binding is not None and _is_empty_list(binding.value):
                    return self._only_device_values_in(joined.value, binding, line)
            if _string_item(joined) is not None:  # `torch.cat(results["logits"])` of a dict display's list
                return self._only_device_items_in(joined, before_line if before_line is not None else self.line_of(joined))
            if is_torch_tensor_function(self.qualified(callee)) and not is_factory_call(expression, self.qualified):
                return any(again(arg.value) for arg in expression.args)  # F.cross_entropy(logits, y) follows logits
            if is_self_attribute(callee) and callee.attr.value in self.object_modules_on_device:
                return True  # `self.model(x)` of a model `__init__` moved
            if is_self_attribute(callee) and callee.attr.value in self.object_modules:
                return any(self._feeds_device(arg.value, before_line, again) for arg in expression.args)  # `self.criterion(out, y)`
            if is_self_attribute(callee) and callee.attr.value in self.object_device_methods:
                return True  # `self.predict(images)` whose every return is on a device
            if isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name) \
                    and callee.attr.value in self.instance_device_methods.get(callee.value.value, ()):
                return True  # `trainer.step(batch)` of such a method, on an object of the class built here
            if isinstance(callee, cst.Attribute) and callee.attr.value in self.host_copy_methods:
                return False  # `clf.predict(x)` where every class of the file defining `predict` returns `.cpu()`
            if isinstance(callee, cst.Attribute) and callee.attr.value not in LEAVING_PLACEMENT_METHODS and not _to_the_host(expression, self.qualified):
                if loose and self._is_model_attribute(callee) and any(self._feeds_device(arg.value, before_line, again) for arg in expression.args):
                    return True  # `self.model(x.to(device))`: an object's callable follows its arguments too
                if callee.attr.value not in TENSOR_METHODS and not self._names_a_model(callee.value):
                    return False  # `diarization.itertracks(...)` of a pipeline's output: no tensor method, no tensor known
                return again(callee.value)
        return False

    def _follows_a_device_tensor(self, call: cst.Call, name: str, before_line: int | None, again: Callable[..., bool]) -> bool:
        """`name` is a function of the file or of the project whose every `return` is a tensor computed
        from some parameters (`analysis.following_returns`), and the call gives one of them a device
        value that is no Module (`accuracy(logits, y)` after `logits = model(x)`)."""
        if self.returns_following is None or name in self.bindings or name in self.parameters:
            return False
        followed = self.returns_following(name)
        if not followed or any(arg.star for arg in call.args):
            return False
        for position, parameter in followed:
            value = argument_at(call, position, parameter)
            if value is None or (isinstance(value, cst.Name) and (value.value in self.moved or value.value in self.modules_on_device)):
                continue
            if again(value):
                return True
        return False

    def _returned_item_on_device(self, binding: Binding) -> bool:
        """A name unpacked from a call of a top-level function of the file whose every `return`
        gives a tuple display of as many items, the name's one on a device."""
        call = binding.value
        return (
            isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and self.returns_device_item is not None
            and call.func.value not in self.bindings and call.func.value not in self.parameters
            and self.returns_device_item(call.func.value, binding.position, binding.unpacked)
        )

    def _feeds_device(self, value: cst.BaseExpression, before_line: int | None, again: Callable[..., bool]) -> bool:
        """An argument that gives a callable device values: one itself, or a dict, list or tuple
        display (or comprehension) holding one, written there or bound to the name passed
        (`model({"images": x.to(device)})`, `model(**{k: v.to(device) for k, v in batch.items()})`)."""
        if again(value):
            return True
        if isinstance(value, cst.Name):
            line = before_line if before_line is not None else self.line_of(value)
            binding = self._binding_before(value.value, line)
            if binding is None or binding.value is None:
                return False
            value, before_line = binding.value, binding.line
        if isinstance(value, (cst.Dict, cst.List, cst.Tuple)):
            parts = [element.value for element in value.elements if isinstance(element, (cst.DictElement, cst.Element))]
        elif isinstance(value, (cst.DictComp, cst.ListComp)):
            parts = [value.value if isinstance(value, cst.DictComp) else value.elt]
        else:
            return False
        return any(again(part, before_line) for part in parts)

    def _only_device_values_in(self, name: str, binding: Binding, line: int,
                               appends: Sequence[tuple[int, cst.BaseExpression]] | None = None) -> bool:
        """`all_probs = []` filled by `all_probs.append(probs)` with device values only, and handed
        to no call before `line` (which might put anything in it): `torch.cat(all_probs)` at `line`
        is on the device (the list itself is no device value). Every append of this binding counts,
        also those after `line` in a loop. `appends`: those of a list the name keeps under a key
        (`results["logits"].append(...)`), instead of the name's own."""
        filled = self.filled_before(name, binding, line, appends)
        return bool(filled) and all(self.is_device_value(value, before_line=at) for at, value in filled)

    def filled_before(self, name: str, binding: Binding, line: int,
                      appends: Sequence[tuple[int, cst.BaseExpression]] | None = None) -> list[tuple[int, cst.BaseExpression]]:
        """What the appends of the list `binding` made put in it, as (line, value), also those a loop
        runs after `line`; none when the list is handed to a call before `line` (which might put
        anything in it)."""
        appends = self.appended.get(name, ()) if appends is None else appends
        if any(binding.line < self.line_of(call) < line for call in self.escaped.get(name, ())):
            return []
        return [(at, value) for at, value in appends if self._binding_before(name, at) is binding]

    def _only_device_items_in(self, item: cst.Subscript, line: int) -> bool:
        """`results = {"logits": [], ...}` filled by `results["logits"].append(model(x))` with device
        values only, no item of it stored or handed to another call, and the dict handed to no call
        before `line`: `torch.cat(results["logits"])` at `line` is on the device."""
        name, key = _string_item(item)
        binding = self._binding_before(name, line)
        if binding is None or not isinstance(binding.value, cst.Dict) or name in self.items_changed:
            return False
        if not any(_string_key(element) == key and _is_empty_list(element.value) for element in binding.value.elements):
            return False
        return self._only_device_values_in(name, binding, line, self.item_appended.get((name, key), ()))

    def _names_a_model(self, receiver: cst.BaseExpression) -> bool:
        """`model` moved or known on a device, or an attribute of `self` (`self.net.encode(x)`): what
        its methods give back is where it is, as far as devfix follows them."""
        if isinstance(receiver, cst.Name):
            return receiver.value in self.moved or receiver.value in self.modules_on_device or receiver.value in self.passthrough
        return is_self_attribute(receiver)

    def _is_model_attribute(self, callee: cst.Attribute) -> bool:
        """`self.model`: a callable the object keeps (a Module, maybe), not a method of its class
        (`self.to_waveform(mel)` may return anything, a CPU tensor too)."""
        return is_self_attribute(callee) and callee.attr.value not in self.own_methods

    def moved_at(self, name: str, line: int) -> Move | None:
        """A move of `name` that acted on the value `name` holds at `line`: none when the name was
        rebound in between (`model = Net()` trained on the CPU, then `model = Net()` again and moved)."""
        for first, last, move in self.comprehension_moves.get(name, ()):
            if first <= line <= last:
                return move
        here = self._binding_before(name, line)
        if here is not None and (name, here.line) in self.element_moves:
            return self.element_moves[(name, here.line)]
        for move in self.moves.get(name, ()):
            move_line = self.line_of(move.call)
            if self._binding_before(name, move_line + 1) is here:  # `model = Net().to(device)` moves its own binding
                return move
        return None

    def add_helpers_moving_to_host(self, moved_parameters: Callable[[str], dict[int, str]]) -> None:
        """`plot_decision_boundary(model, X, y)` of a function that runs `model.to("cpu")`
        (`analysis.host_moving_helpers`): the model the name holds is on the host after the call."""
        for function, calls in self.calls_of.items():
            moved = moved_parameters(function)
            for call in calls if moved else ():
                for position, parameter in moved.items():
                    given = None if any(arg.star for arg in call.args) else argument_at(call, position, parameter)
                    if isinstance(given, cst.Name):
                        self.hosted_at.setdefault(given.value, []).append(self.line_of(call))

    def brought_back_between(self, name: str, first: int, last: int) -> bool:
        """`model.cpu()` (or `model_cpu = model.cpu()`: a Module moves in place) on a line after
        `first` and before `last`: the model the name holds is on the host again."""
        return any(first < line < last for line in self.hosted_at.get(name, ()))

    def reaching_past(self, name: str, binding: Binding, line: int) -> tuple[list[Binding], bool]:
        """The bindings before `binding` that `name` may still hold where it is read on `line`,
        nearest first: while a binding is in a block that may not run (`conditional`) and the read
        comes after that block, the one before it reaches too. The flag says the value before them
        all (a parameter's, or none) reaches as well."""
        reaching: list[Binding] = []
        while (block_end := self.conditional.get((name, binding.line))) is not None and line > block_end:
            earlier = self._binding_before(name, binding.line, branches=False)  # an `if` body's reaches past its `else` too
            if earlier is None:
                return reaching, True
            reaching.append(earlier)
            binding = earlier
        return reaching, False

    def plain_tensor_of_an_instance(self, attribute: cst.Attribute, before_line: int | None = None) -> bool:
        """`name.attr` where `name` holds, where read, an instance of a class of the file (built
        here, maybe moved: `Net().to(device)`) that keeps `attr` as a plain CPU tensor."""
        if not self.plain_tensor_attributes or not isinstance(attribute.value, cst.Name):
            return False
        binding = self._binding_before(attribute.value.value, before_line if before_line is not None else self.line_of(attribute))
        built = binding.value if binding is not None and not binding.unpacked else None
        while isinstance(built, cst.Call) and isinstance(built.func, cst.Attribute) and built.func.attr.value in KEEPING_THE_INSTANCE:
            built = built.func.value  # `Net().to(device)`, `.eval()`: the same instance
        return isinstance(built, cst.Call) and isinstance(built.func, cst.Name) \
            and attribute.attr.value in self.plain_tensor_attributes.get(built.func.value, ())

    def _binding_before(self, name: str, line: int, branches: bool = True) -> Binding | None:
        """The binding `name` holds on `line`: the latest before it, not in an `if` body whose
        `else` holds the line (`branches`)."""
        exclusive = branches and bool(self.exclusive)
        latest = None
        for binding in self.bindings.get(name, ()):  # (a hot path: no list, no key function)
            if binding.line < line and (latest is None or binding.line > latest.line) \
                    and not (exclusive and self._in_another_branch(binding.line, line)):
                latest = binding
        return latest

    def _in_another_branch(self, bound: int, read: int) -> bool:
        """A binding on line `bound` in the body of an `if` whose `else` (or `elif`) holds line `read`."""
        return any(first <= bound <= last and other <= read <= other_last for first, last, other, other_last in self.exclusive)


def copies_to_the_host(call: cst.Call, qualified: QualifiedNames) -> bool:
    """`x.cpu()`, `x.to("cpu")`, `x.type(torch.FloatTensor)`: a copy on the host."""
    return (isinstance(call.func, cst.Attribute) and call.func.attr.value == "cpu") or _to_the_host(call, qualified)


def _to_the_host(call: cst.Call, qualified: QualifiedNames) -> bool:
    """`x.to("cpu")`, `x.to(dtype=torch.uint8, device="cpu")`, `x.type(torch.FloatTensor)` (a CPU
    tensor type): a copy on the host."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "type" and len(call.args) == 1:
        return bool(qualified(call.args[0].value) & CPU_TENSOR_TYPES)
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "to"):
        return False
    device = _to_argument(call)
    return device is not None and _is_cpu_literal(device, qualified)


def _to_argument(call: cst.Call) -> cst.BaseExpression | None:
    """What `x.to(...)` is given where a device may stand: `device=`, else its first positional."""
    device = keyword(call, "device")
    positional = [arg for arg in call.args if arg.keyword is None]
    return device.value if device is not None else positional[0].value if positional else None


def _is_empty_list(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.List) and not value.elements


def _string_key(element: cst.BaseDictElement) -> str | None:
    """The key of `"logits": []` in a dict display, when it is a plain string."""
    key = getattr(element, "key", None)
    return key.evaluated_value if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str) else None


def _string_item(node: cst.BaseExpression | None) -> tuple[str, str] | None:
    """("results", "logits") for `results["logits"]`."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1):
        return None
    index = node.slice[0].slice
    if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) and isinstance(index.value.evaluated_value, str):
        return node.value.value, index.value.evaluated_value
    return None


def device_code(device: cst.BaseExpression | None, literals: bool = False) -> str | None:
    """A device expression worth repeating in a fix: a name or attribute (`device`,
    `args.device`), and string literals (`"mps"`) when `literals`."""
    kinds = (cst.Name, cst.Attribute, cst.SimpleString) if literals else (cst.Name, cst.Attribute)
    return cst.Module([]).code_for_node(device) if isinstance(device, kinds) else None


def is_cast(node: cst.CSTNode, qualified: QualifiedNames) -> bool:
    """`x.to(torch.float16)`, `x.to(dtype=...)`, `x.to(dtype)` for a name bound only to dtypes,
    `x.type(torch.float16)`: a copy that stays where `x` is (as `analysis.moves.is_cast` reads it
    with `ast`; `x.type(torch.cuda.FloatTensor)` is no cast)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "type")) or not node.args:
        return False
    return all(
        arg.keyword.value in CAST_KEYWORDS if arg.keyword is not None
        else not arg.star and _is_dtype(arg.value, qualified)
        for arg in node.args
    )


def as_move(node: cst.CSTNode, qualified: QualifiedNames) -> Move | None:
    """`x.cuda()` or `x.to(<device>)` (not `x.to(torch.float16)` nor `x.to("cpu")`), also followed
    by methods that keep the placement (`Net().to(device).eval()`, `y.to(device).long()`, a cast)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return None
    method = node.func.attr.value
    if method in PLACEMENT_KEEPING_METHODS or is_cast(node, qualified):
        return as_move(node.func.value, qualified)
    if method == "cuda":
        return Move(node.func.value, None, node)
    if method != "to":
        return None
    device = _to_argument(node)
    if device is None or _is_dtype(device, qualified) or _is_cpu_literal(device, qualified):
        return None
    if is_cuda_device_expression(device, qualified):
        return Move(node.func.value, None, node)
    return Move(node.func.value, device, node)


def collect(
    statements: Iterable[cst.CSTNode],
    qualified: QualifiedNames,
    line_of: LineOf,
    modules_on_device: Iterable[str] = (),
) -> PlacementFacts:
    """Facts of one scope; `modules_on_device` are callables known to run on a device."""
    facts = PlacementFacts(qualified, line_of, modules_on_device=set(modules_on_device))
    collector = _Collector(facts)
    for statement in statements:
        statement.visit(collector)
    collector.place_elements()
    return facts


class _Collector(cst.CSTVisitor):
    def __init__(self, facts: PlacementFacts) -> None:
        self.facts = facts
        self._maybe_skipped: dict[int, int] = {}  # id of a block that may not run → its last statement's line
        self._open: list[int] = []  # the last lines of the blocks that may not run around the visit

    def _may_skip(self, *blocks: cst.CSTNode | None) -> None:
        for block in blocks:
            body = getattr(block, "body", None)
            if isinstance(body, cst.IndentedBlock) and body.body:
                self._maybe_skipped[id(body)] = self.facts.line_of(body.body[-1])

    def visit_If(self, node: cst.If) -> None:
        self._may_skip(node, node.orelse if isinstance(node.orelse, cst.Else) else None)
        if node.orelse is not None and isinstance(node.body, cst.IndentedBlock) and node.body.body:
            other = self.facts.line_of(node.orelse)
            self.facts.exclusive.append((self.facts.line_of(node.body.body[0]), other - 1, other, self._last_line(node.orelse)))

    def _last_line(self, node: cst.CSTNode) -> int:
        """The line the last simple statement under `node` starts on (a read on a later line of that
        statement is not taken for the branch's: its bindings are then read as before)."""
        while True:
            if isinstance(node, cst.IndentedBlock) and node.body:
                node = node.body[-1]
            elif isinstance(node, cst.Try) and (node.finalbody or node.orelse or node.handlers):
                node = node.finalbody or node.orelse or node.handlers[-1]
            elif getattr(node, "orelse", None) is not None:
                node = node.orelse
            elif isinstance(getattr(node, "body", None), cst.BaseSuite):
                node = node.body
            else:
                return self.facts.line_of(node)

    def visit_Try(self, node: cst.Try) -> None:
        self._may_skip(node, *node.handlers, node.orelse)

    def visit_While(self, node: cst.While) -> None:
        self._may_skip(node)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if id(node) in self._maybe_skipped:
            self._open.append(self._maybe_skipped[id(node)])

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        if id(original_node) in self._maybe_skipped:
            self._open.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function is a scope of its own

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None, node)
        if isinstance(node.target, cst.Name):
            self.facts.augmented[(node.target.value, self.facts.line_of(node))] = node.value

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, None, node)
        self._may_skip(node)
        line = self.facts.line_of(node)
        for name, value in loop_elements(node):
            self.facts.elements[(name, line)] = value
        if isinstance(node.target, (cst.Tuple, cst.List)) and isinstance(node.iter, (cst.Name, cst.List, cst.ListComp)):
            for position, element in enumerate(node.target.elements):
                if isinstance(element.value, cst.Name):
                    self.facts.unpacked_elements[(element.value.value, line)] = (node.iter, position)
        elif isinstance(node.target, cst.Name) and isinstance(node.iter, (cst.Name, cst.List, cst.Tuple, cst.ListComp)):
            self.facts.unpacked_elements[(node.target.value, line)] = (node.iter, None)  # `for bias in [torch.zeros(n), ...]`
        values = _dict_values_bound(node)
        if values is not None:
            self.facts.dict_values[(values[0], line)] = values[1]
        if isinstance(node.target, cst.Name) and isinstance(node.iter, cst.Name):
            self.facts.iterations.append((node.target.value, node.iter.value, line, None))

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._comprehension(node)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._comprehension(node)

    def _comprehension(self, node: cst.ListComp | cst.GeneratorExp) -> None:
        """`[m(x) for m in members]`: `m` is read from the comprehension's start to its `for`. Each
        read of a name it binds to elements (`row` of `[row.numpy() for row in samples]`) is such an
        element, where the value it iterates is."""
        loop = node.for_in
        if isinstance(loop.target, cst.Name) and isinstance(loop.iter, cst.Name) and loop.inner_for_in is None:
            line = self.facts.line_of(node)
            self.facts.iterations.append((loop.target.value, loop.iter.value, line, (line, self.facts.line_of(loop))))
        if loop.inner_for_in is None:
            for name, iterated in loop_elements(loop):
                for part in (node.elt, *(condition.test for condition in loop.ifs)):
                    for read in _reads_of(part, name):
                        self.facts.comprehension_elements[id(read)] = iterated

    def place_elements(self) -> None:
        """`PlacementFacts.element_moves`, once the whole scope is seen (a list changed in place
        anywhere in it may hold other values)."""
        for name, iterated, line, span in self.facts.iterations:
            binding = self.facts._binding_before(iterated, line)
            if binding is None or iterated in self.facts.changed_in_place or iterated in self.facts.appended \
                    or any(bound == iterated for bound, _ in self.facts.augmented):
                continue
            move = _element_move(binding.value, self.facts.qualified)
            if move is None:
                continue
            if span is None:
                self.facts.element_moves[(name, line)] = move
            else:
                self.facts.comprehension_moves.setdefault(name, []).append((*span, move))
            self.facts.moved.setdefault(name, move)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, None, node)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.facts.called.add(node.func.value)
            self.facts.calls_of.setdefault(node.func.value, []).append(node)
        elif isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
            self.facts.method_receivers.add(node.func.value.value)
            if node.func.attr.value == "cpu" and not node.args or _to_the_host(node, self.facts.qualified):
                self.facts.hosted.add(node.func.value.value)
                self.facts.hosted_at.setdefault(node.func.value.value, []).append(self.facts.line_of(node))
        move = as_move(node, self.facts.qualified)
        if move is not None and isinstance(move.receiver, cst.Name):
            self.facts.moved.setdefault(move.receiver.value, move)
            self.facts.moves.setdefault(move.receiver.value, []).append(move)
        callee = node.func
        for arg in node.args:
            if isinstance(arg.value, cst.Name):
                self.facts.escaped.setdefault(arg.value.value, []).append(node)
            elif (item := _string_item(arg.value)) is not None and not self.facts.qualified(callee) & LIST_JOINS:
                self.facts.items_changed.add(item[0])  # `fill(results["logits"])` may put anything there
        if isinstance(callee, cst.Attribute) and callee.attr.value in LIST_CHANGERS and isinstance(callee.value, cst.Name):
            self.facts.changed_in_place.add(callee.value.value)
        if isinstance(callee, cst.Attribute) and callee.attr.value in LIST_FILLERS and isinstance(callee.value, cst.Name) and len(node.args) == 1:
            self.facts.appended.setdefault(callee.value.value, []).append((self.facts.line_of(node), node.args[0].value))
        if isinstance(callee, cst.Attribute) and (item := _string_item(callee.value)) is not None:
            if callee.attr.value in LIST_FILLERS and len(node.args) == 1:
                self.facts.item_appended.setdefault(item, []).append((self.facts.line_of(node), node.args[0].value))
            else:
                self.facts.items_changed.add(item[0])  # `results["logits"].insert(0, v)`, `.clear()`

    def visit_Del(self, node: cst.Del) -> None:
        for target in [node.target, *(element.value for element in getattr(node.target, "elements", ()))]:
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                self.facts.changed_in_place.add(target.value.value)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None, statement: cst.CSTNode, unpacked: int = 0,
              position: int = -1) -> None:
        line = self.facts.line_of(statement)
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.facts.changed_in_place.add(target.value.value)  # `members[0] = Net()`
            self.facts.items_changed.add(target.value.value)
        if isinstance(target, cst.Name):
            self.facts.bindings.setdefault(target.value, []).append(Binding(line, value, unpacked, position if unpacked else -1))
            if self._open:
                self.facts.conditional[(target.value, line)] = self._open[-1]
            move = as_move(value, self.facts.qualified) if value is not None else None
            if move is not None:
                self.facts.moved.setdefault(target.value, move)
                self.facts.moves.setdefault(target.value, []).append(move)
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            if values is not None and len(values) == len(target.elements):
                for element, element_value in zip(target.elements, values):
                    self._bind(element.value, element_value.value, statement)
            else:
                # `out, (h, c) = lstm(x)`: each part lives where the whole result lives
                unpacked = value if isinstance(value, cst.Call) else None
                starred = any(isinstance(element, cst.StarredElement) for element in target.elements)
                for position, element in enumerate(target.elements):
                    self._bind(element.value, unpacked, statement, 0 if starred or unpacked is None else len(target.elements), position)


LIST_CHANGERS = frozenset({"insert", "__setitem__"})  # beside LIST_FILLERS: a list holding other values after


def _element_move(value: cst.BaseExpression | None, qualified: QualifiedNames) -> Move | None:
    """The move every element of `value` is, all naming one device: `[Net().to(device) for _ in
    range(3)]`, `[g.to(device), d.to(device)]`; None for anything else."""
    if isinstance(value, cst.ListComp):
        elements = [value.elt]
    elif isinstance(value, (cst.List, cst.Tuple)) and value.elements:
        elements = [element.value for element in value.elements if not isinstance(element, cst.StarredElement)]
        if len(elements) != len(value.elements):
            return None
    else:
        return None
    moves = [as_move(element, qualified) for element in elements]
    if any(move is None for move in moves) or len({device_code(move.device) for move in moves}) != 1:
        return None
    return moves[0]


def _reads_of(node: cst.CSTNode, name: str) -> list[cst.Name]:
    """The `name` nodes under `node`, but those inside a comprehension or lambda of its own, which
    may bind the name again (`analysis.placement` visits an inner comprehension by itself)."""
    found: list[cst.Name] = []

    class Reads(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                found.append(node)

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_ListComp(self, node: cst.ListComp) -> bool:
            return False

        visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_ListComp

    node.visit(Reads())
    return found


def loop_elements(loop: cst.For | cst.CompFor) -> list[tuple[str, cst.BaseExpression]]:
    """The names a loop binds to elements of a value, each with that value (`ast_nodes.loop_elements`)."""
    iterable, target = loop.iter, loop.target
    if (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "enumerate"
            and isinstance(target, cst.Tuple) and len(target.elements) == 2 and iterable.args and iterable.args[0].keyword is None
            and not iterable.args[0].star):  # `for i, img in enumerate(samples)`: `img` is an element of `samples`
        iterable, target = iterable.args[0].value, target.elements[1].value
    if (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "zip"
            and isinstance(target, cst.Tuple) and len(target.elements) == len(iterable.args)
            and all(arg.keyword is None and not arg.star for arg in iterable.args)):
        pairs = [(element.value, arg.value) for element, arg in zip(target.elements, iterable.args)]
    else:
        pairs = [(target, iterable)]
    return [(name.value, value) for name, value in pairs if isinstance(name, cst.Name) and isinstance(value, ITERABLES)]


def _dict_values_bound(loop: cst.For) -> tuple[str, cst.BaseExpression] | None:
    """`for k, v in d.items()` or `for v in d.values()`: the name bound to each value, with `d`."""
    call = loop.iter
    if not (isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, ITERABLES)):
        return None
    target = loop.target
    if call.func.attr.value == "items" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        target = target.elements[1].value
    elif call.func.attr.value != "values":
        return None
    return (target.value, call.func.value) if isinstance(target, cst.Name) else None


ITERABLES = (cst.Name, cst.Attribute, cst.Subscript, cst.Call)  # `ys`, `self.ys`, `ys[0]`, `ys.view(-1)` (`ast_nodes.ITERABLES`)


def _placed_by_factory(call: cst.Call, qualified: QualifiedNames) -> bool:
    """`torch.randn(3, device=device)`: created on a device unless the device is the CPU literal or
    `None` (the default device: a tutorial's `torch.tensor(data, device=None)`)."""
    device = keyword(call, "device")
    if device is None or _is_cpu_literal(device.value, qualified) or _is_dtype(device.value, qualified) \
            or (isinstance(device.value, cst.Name) and device.value.value == "None"):
        return False
    return any(name.startswith("torch.") for name in qualified(call.func))


def _is_dtype(node: cst.BaseExpression, qualified: QualifiedNames) -> bool:
    """`torch.float16`, or the `.dtype` of a value (`edge_label.to(pred.dtype)` of PyG's LightGCN)."""
    if isinstance(node, cst.Attribute) and node.attr.value == "dtype":
        return True
    return any(name.startswith("torch.") and name.rsplit(".", 1)[1] in TORCH_DTYPES for name in qualified(node))


def _is_cpu_literal(node: cst.BaseExpression, qualified: QualifiedNames) -> bool:
    """`"cpu"`, or `torch.device("cpu")`."""
    if isinstance(node, cst.Call) and len(node.args) == 1 and node.args[0].keyword is None and "torch.device" in qualified(node.func):
        node = node.args[0].value
    return isinstance(node, cst.SimpleString) and node.evaluated_value in CPU_LITERALS
