"""DF009 legacy-constructor: typed constructors and `nn.Parameter(...).cuda()`.

    Before:  mask = torch.cuda.ByteTensor(mask_list)      self.alpha = nn.Parameter(torch.ones(3)).cuda()
    After:   mask = torch.tensor(mask_list, dtype=torch.uint8, device=device)
             self.alpha = nn.Parameter(torch.ones(3).to(device))

`torch.cuda.FloatTensor(...)` only exists on a GPU build; `torch.FloatTensor(x, device=d)` raises
"legacy constructor expects device type: cpu". Both become `torch.tensor`/`torch.as_tensor` with an
explicit dtype (legacy constructors always convert), or `torch.empty` when the arguments are a
shape (`torch.cuda.FloatTensor(3, 4)`). `nn.Parameter(t).cuda()` returns a plain non-leaf tensor,
so the "parameter" is never registered nor trained: the move goes inside.

A cast with a CPU tensor type moves the tensor too: `x.type(torch.FloatTensor)` of a tensor on a
GPU is a CPU tensor ("Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor)").
Where the tensor cast is proven on a device and the cast's result is fed to a model moved in the
scope (directly, or through the name it is bound to), the cast names the dtype instead:
`x.type(torch.float32)`, the same tensor on the CPU. A cast whose result goes elsewhere (to numpy,
to a plot) may move to the CPU on purpose: left alone. A cast with a CUDA type exists only on a GPU
build: `x.type(torch.cuda.FloatTensor)` → `x.to(device, torch.float32)`.

Refuses (reports only): a single argument that may be a length or data (`torch.cuda.LongTensor(n)`
with `n` of unknown type), and aliases such as `Tensor = torch.cuda.FloatTensor` (DF001 gives them
the CPU type where CUDA is missing; one whose other branch is the CPU type is not reported). A parameter stored
in `self.<name>` that the class also stores elsewhere (`self.embed = torch.cat(...)` in `forward`)
is reported without a fix: registered, it would make that store raise "cannot assign ... as
parameter" (the code only runs where the move makes it a plain tensor).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.cst_metadata import ParentProvider
from devfix.analysis.device_scope import device_for
from devfix.analysis.module_classes import is_self_attribute, stores_of_self_attribute
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_api import LEGACY_DTYPES
from devfix.analysis.torch_names import keyword
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import moved_to
from devfix.findings import Safety

PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
DATA_LITERALS = (cst.List, cst.Tuple, cst.ListComp)


class LegacyConstructor(ScopeTracker, DevfixRule):
    CODE = "DF009"
    NAME = "legacy-constructor"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Legacy typed constructor or nn.Parameter(...).cuda(): device placement that breaks"

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        legacy = self._legacy_type(original_node.func)
        if legacy is not None:
            return self._fix_legacy(original_node, updated_node, *legacy)
        if isinstance(original_node.func, cst.Attribute) and original_node.func.attr.value == "type":
            return self._fix_type_cast(original_node, updated_node)
        if isinstance(original_node.func, cst.Attribute) and original_node.func.attr.value in ("cuda", "to"):
            receiver = original_node.func.value
            if isinstance(receiver, cst.Call) and self.qualified(receiver.func) & PARAMETER and receiver.args:
                return self._fix_parameter(original_node, updated_node)
        return updated_node

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        value = original_node.value
        candidates = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        types = [found for candidate in candidates if (found := self._legacy_type(candidate)) is not None]
        # (a CPU type in the other branch is the fallback: `torch.cuda.FloatTensor if cuda else torch.FloatTensor`)
        if any(on_cuda for _, on_cuda in types) and all(on_cuda for _, on_cuda in types):
            self.report(original_node.value, "alias of a legacy CUDA tensor type: build tensors with "
                        "`torch.tensor(..., dtype=..., device=...)` instead", fixable=False)
        return updated_node

    def _legacy_type(self, func: cst.BaseExpression) -> tuple[str, bool] | None:
        for name in self.qualified(func):
            parts = name.split(".")
            if parts[-1] in LEGACY_DTYPES and parts[:-1] in (["torch"], ["torch", "cuda"]):
                return parts[-1], parts[:-1] == ["torch", "cuda"]
        return None

    def _fix_legacy(self, original: cst.Call, updated: cst.Call, type_name: str, on_cuda: bool) -> cst.BaseExpression:
        device_arg = keyword(original, "device")
        if not on_cuda and device_arg is None:
            return updated  # a plain CPU constructor is old-fashioned, not a device bug
        torch_name = cst.Module([]).code_for_node(original.func).split(".")[0]
        legacy = cst.Module([]).code_for_node(original.func)
        message = f"`{legacy}(...)` " + ("only works on a GPU build" if on_cuda else "rejects `device=`: legacy constructors are CPU-only")
        positional = [arg for arg in updated.args if arg.keyword is None]
        factory = self._factory(original, positional)
        if factory is None:
            self.report(original, message + "; use torch.tensor(..., dtype=..., device=...) or torch.empty(shape, ...)", fixable=False)
            return updated
        if device_arg is not None:
            device_code = cst.Module([]).code_for_node(device_arg.value)
        else:
            choice = device_for(self, original)
            if choice is None:
                self.report(original, message, fixable=False)
                return updated
            device_code = choice.name
        if not self.report(original, message, fix_title=f"use `{torch_name}.{factory}` with dtype and device"):
            return updated
        if device_arg is None:
            self.use_device(choice)
        args = ", ".join(cst.Module([]).code_for_node(arg.value) for arg in positional)
        args = f"{args}, " if args else "0, "
        return cst.parse_expression(f"{torch_name}.{factory}({args}dtype={torch_name}.{LEGACY_DTYPES[type_name]}, device={device_code})")

    def _factory(self, call: cst.Call, positional: list[cst.Arg]) -> str | None:
        """`empty` for a shape, `tensor` for literal data, `as_tensor` for data in a variable."""
        if len(positional) != 1:
            return "empty"
        value = positional[0].value
        if isinstance(value, cst.Integer):
            return "empty"
        if isinstance(value, DATA_LITERALS):
            return "tensor"
        if isinstance(value, cst.Name):
            assigned = self.scope_facts(call).assignments.get(value.value, [])
            if assigned and all(isinstance(item, DATA_LITERALS) or _is_array_call(item, self.qualified) for item in assigned):
                return "as_tensor"
            if self._annotated_as_data(call, value.value):
                return "as_tensor"
        if isinstance(value, cst.Call) and _is_array_call(value, self.qualified):
            return "as_tensor"
        return None

    def _annotated_as_data(self, call: cst.Call, name: str) -> bool:
        """A parameter annotated as an array or a list of numbers holds data, not a size."""
        scope = self.enclosing_scope(call)
        if isinstance(scope, cst.Module):
            return False
        for param in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params):
            if param.name.value == name and param.annotation is not None:
                annotation = param.annotation.annotation
                names = self.qualified(annotation) | {cst.Module([]).code_for_node(annotation)}
                return any(n.startswith(("numpy.", "list", "List", "typing.List", "Sequence", "typing.Sequence")) for n in names)
        return False

    def _fix_parameter(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """`nn.Parameter(t).cuda()` → `nn.Parameter(t.to(device))`: the result stays a registered leaf."""
        method = original.func.attr.value
        if method == "to" and (len(original.args) != 1 or original.args[0].keyword is not None):
            return updated
        message = f"`nn.Parameter(...).{method}(...)` returns a plain tensor: the parameter is never registered or trained"
        if method == "cuda":
            if original.args:
                return updated
            choice = device_for(self, original)
            if choice is None:
                self.report(original, message, fixable=False)
                return updated
            device_code = choice.name
        else:
            choice = None
            device_code = cst.Module([]).code_for_node(original.args[0].value)
        if self._stored_again(original):
            self.report(original, message + f"; `self.{self._stored_attribute(original)}` is also assigned elsewhere "
                        "in the class, which a registered parameter refuses", fixable=False)
            return updated
        if not self.report(original, message, fix_title="move the data inside nn.Parameter(...)"):
            return updated
        if choice is not None:
            self.use_device(choice)
        parameter_call = updated.func.value
        first = parameter_call.args[0]
        moved = moved_to(first.value, device_code)
        return parameter_call.with_changes(args=[first.with_changes(value=moved), *parameter_call.args[1:]])

    def _fix_type_cast(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """`x.type(torch.FloatTensor)` of a device tensor fed to a moved model → `x.type(torch.float32)`."""
        if len(original.args) != 1 or original.args[0].keyword is not None:
            return updated
        legacy = self._legacy_type(original.args[0].value)
        if legacy is None:
            return updated
        if legacy[1]:
            return self._fix_cuda_type_cast(original, updated, legacy[0])
        facts = self.scope_facts(original)
        if not facts.is_device_value(original.func.value) or not self._fed_to_a_moved_model(original, facts):
            return updated
        cast = cst.Module([]).code_for_node(original.args[0].value)
        dtype = f"{cast.split('.')[0]}.{LEGACY_DTYPES[legacy[0]]}"
        if not self.report(original, f"`.type({cast})` also moves the tensor to the CPU, and a model on the device is fed it",
                           fix_title=f"cast with `{dtype}`, which keeps the device"):
            return updated
        return updated.with_changes(args=[updated.args[0].with_changes(value=cst.parse_expression(dtype))])

    def _fix_cuda_type_cast(self, original: cst.Call, updated: cst.Call, type_name: str) -> cst.BaseExpression:
        """`x.type(torch.cuda.FloatTensor)` → `x.to(device, torch.float32)`: the same tensor on a GPU,
        and no crash where there is none."""
        cast = cst.Module([]).code_for_node(original.args[0].value)
        message = f"`.type({cast})` only works on a GPU build"
        choice = device_for(self, original)
        if choice is None:
            self.report(original, message, fixable=False)
            return updated
        torch_name = cast.split(".")[0]
        if not self.report(original, message, fix_title=f"move it with `.to({choice.name}, {torch_name}.{LEGACY_DTYPES[type_name]})`"):
            return updated
        self.use_device(choice)
        return updated.with_changes(
            func=updated.func.with_changes(attr=cst.Name("to")),
            args=[cst.Arg(cst.parse_expression(choice.name), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                  cst.Arg(cst.parse_expression(f"{torch_name}.{LEGACY_DTYPES[type_name]}"))],
        )

    def _fed_to_a_moved_model(self, cast: cst.Call, facts) -> bool:
        """The cast is an argument of a call of a model the scope moved (`model(x.type(...))`) or of a
        call given such a model's output, or the value of `name = ...` whose next read is one
        (`x = x.type(...)`, then `model(x)`; `y = y.type(...)`, then `F.mse_loss(model(x), y)`)."""
        models = set(facts.moved) | facts.modules_on_device
        parent = self.get_metadata(ParentProvider, cast, None)
        if isinstance(parent, cst.Arg):
            call = self.get_metadata(ParentProvider, parent, None)
            return isinstance(call, cst.Call) and _meets_a_model(call, models, self._outputs_before(call, facts, models))
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name)):
            return False
        name, line = parent.targets[0].target.value, self.line_of(parent)
        finder = _NameReads(name)
        scope = self.enclosing_scope(cast)
        (scope.body if isinstance(scope, cst.FunctionDef) else scope).visit(finder)
        later = sorted(((self.line_of(read), read) for read in finder.reads if self.line_of(read) > line), key=lambda item: item[0])
        if not later:
            return False
        binding = facts._binding_before(name, later[0][0])
        call = finder.calls.get(id(later[0][1]))
        return binding is not None and binding.line == line and call is not None \
            and _meets_a_model(call, models, self._outputs_before(call, facts, models))

    def _outputs_before(self, call: cst.Call, facts, models: set[str]) -> set[str]:
        """The names among the call's arguments whose latest binding before it is a call of one of
        the `models` (`outputs = model(inputs)`, then `criterion(outputs, labels)`)."""
        line = self.line_of(call)
        found = set()
        for arg in call.args:
            if isinstance(arg.value, cst.Name):
                binding = facts._binding_before(arg.value.value, line)
                value = binding.value if binding is not None and binding.unpacked == 0 else None
                if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in models:
                    found.add(arg.value.value)
        return found

    def _stored_attribute(self, call: cst.Call) -> str | None:
        """`<name>` when `call` is the whole value of `self.<name> = ...`."""
        statement = self.get_metadata(ParentProvider, call, None)
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1 and is_self_attribute(statement.targets[0].target):
            return statement.targets[0].target.attr.value
        return None

    def _stored_again(self, call: cst.Call) -> bool:
        """The class stores `self.<name>` in another statement too (`self.embed = torch.cat(...)`)."""
        name = self._stored_attribute(call)
        scope = self.enclosing_scope(call)
        if name is None or not isinstance(scope, cst.FunctionDef):
            return False
        owner = self.class_of_method(scope)
        return owner is not None and stores_of_self_attribute(owner, name) > 1


def _meets_a_model(call: cst.BaseExpression | None, models: set[str], outputs: set[str]) -> bool:
    """`model(x)`, or a call given a model's output with it (`F.mse_loss(model(x), y)`, or
    `criterion(outputs, y)` where `outputs` is one of the names bound to a model's output)."""
    def is_model_call(value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in models

    if not isinstance(call, cst.Call):
        return False
    return is_model_call(call) or any(
        is_model_call(arg.value) or (isinstance(arg.value, cst.Name) and arg.value.value in outputs) for arg in call.args
    )


class _NameReads(cst.CSTVisitor):
    """The reads of a name in one scope, and for those passed as an argument, the call."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.reads: list[cst.Name] = []
        self.calls: dict[int, cst.Call] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        for arg in node.args:
            if isinstance(arg.value, cst.Name) and arg.value.value == self.name:
                self.calls[id(arg.value)] = node

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.reads.append(node)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        return False


def _is_array_call(node: cst.BaseExpression, qualified) -> bool:
    if isinstance(node, cst.Call):
        if any(name.startswith("numpy.") for name in qualified(node.func)):
            return True
        return isinstance(node.func, cst.Attribute) and node.func.attr.value in ("tolist", "astype", "numpy")
    return False
