"""DF006 pack-padded-lengths: `pack_padded_sequence` needs its lengths on the CPU.

    Before:  x, lengths = x.to(device), lengths.to(device)
             packed = pack_padded_sequence(x, lengths, batch_first=True)
    After:   packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True)

Moving "everything" to the GPU moves the lengths too, and PyTorch then raises "'lengths' argument
should be a 1D CPU int64 tensor". The fix goes the other way from most device fixes: the lengths
go to the CPU at the call, so other uses of `lengths` on the GPU (masks) keep working.

So are the lengths a method of a class of the file is given (`forward(self, ids, lengths)`) when
some call of the class's instances in the file passes lengths placed on a device and every call
passes a tensor (`.cpu()` is right for each): the class and its instances only constructed, called,
or handed to a function of the file that only calls them (`run_epoch(model, loader)`, whose
`model(x, lengths.to(device))` runs `forward`), so no other caller exists.

Refuses: lengths that are not known to be on a device (a list, a CPU tensor, an argument of unknown
origin), lengths the value analysis does not prove to be a tensor (the `decode_lengths` a model of
another file returns is a list from `.tolist()`: `.cpu()` would raise AttributeError) unless a move
gives them, at the call or at every caller (`lengths.to(device)`: a list has no `.to`), and lengths
already converted (`.cpu()`, `.tolist()`, `.to("cpu")`).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.call_sites import argument_for, instance_calls
from devfix.analysis.forward_lengths import HOST_CONVERSIONS, PACKING_FUNCTIONS
from devfix.analysis.kinds import Kind
from devfix.analysis.packed_lengths import lengths_argument
from devfix.analysis.placement import as_move
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.tensors import is_factory_call
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety


class PackPaddedLengths(ScopeTracker, DevfixRule):
    CODE = "DF006"
    NAME = "pack-padded-lengths"
    SAFETY = Safety.SAFE
    DESCRIPTION = "pack_padded_sequence lengths on a device: they must be a CPU tensor"

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not self.qualified(original_node.func) & PACKING_FUNCTIONS:
            return updated_node
        index, lengths = lengths_argument(original_node)
        if lengths is None or _already_on_host(lengths):
            return updated_node
        given = self._given_by_every_caller(original_node, lengths)
        if not (self.scope_facts(original_node).is_device_value(lengths)
                or (given and any(self.scope_facts(call).is_device_value(value) for call, value in given))):
            return updated_node
        if self.kind_of(lengths) is not Kind.TENSOR and not self._bound_by_a_move(original_node, lengths) \
                and not (given and all(self._is_tensor(call, value) for call, value in given)):
            return updated_node  # `decode_lengths` a model returns may be a list (`.tolist()`): no `.cpu()` there
        code = cst.Module([]).code_for_node(lengths)
        if not self.report(lengths, f"`{code}` is on a device, but pack_padded_sequence needs CPU lengths",
                           fix_title=f"pass `{code}.cpu()`"):
            return updated_node
        args = list(updated_node.args)
        on_host = cst.Call(func=cst.Attribute(value=args[index].value, attr=cst.Name("cpu")))
        args[index] = args[index].with_changes(value=on_host)
        return updated_node.with_changes(args=args)

    def _is_tensor(self, call: cst.Call, value: cst.BaseExpression) -> bool:
        """What a caller passes is a tensor: moved (`lengths.to(device)`), made by a torch factory
        (`torch.tensor([2])`), or a name the value analysis proves one."""
        return self._bound_by_a_move(call, value) or is_factory_call(value, self.qualified) or self.kind_of(value) is Kind.TENSOR

    def _bound_by_a_move(self, call: cst.Call, lengths: cst.BaseExpression) -> bool:
        """`lengths.to(device)` at the call, or the binding of `lengths` it reads: what `.to(device)`
        returns has `.cpu()` (a tensor; lists and arrays have no `.to`)."""
        if as_move(lengths, self.qualified) is not None:
            return True
        if not isinstance(lengths, cst.Name):
            return False
        binding = self.scope_facts(call)._binding_before(lengths.value, self.line_of(call))
        return binding is not None and binding.value is not None and as_move(binding.value, self.qualified) is not None

    def _given_by_every_caller(self, call: cst.Call, lengths: cst.BaseExpression) -> list[tuple[cst.Call, cst.BaseExpression]]:
        """When `lengths` is a parameter of a method of a class of the file, never rebound there:
        what each call of the class's instances passes for it (`model(ids.to(device), lengths.to(device))`
        runs `forward(self, ids, lengths)`); empty when some call's value is unknown or none is seen."""
        method = self.enclosing_scope(call)
        if not (isinstance(lengths, cst.Name) and isinstance(method, cst.FunctionDef)) or lengths.value in self.scope_facts(call).bindings:
            return []
        owner = self.class_of_method(method)
        positional = [param.name.value for param in (*method.params.posonly_params, *method.params.params)][1:]
        if owner is None or lengths.value not in positional:
            return []
        name = method.name.value
        mine = [instance_call for instance_call, called in instance_calls(self.module, owner) or () if called == (None if name == "forward" else name)]
        given = [(instance_call, argument_for(instance_call, lengths.value, positional)) for instance_call in mine]
        return given if all(value is not None for _, value in given) else []


def _already_on_host(expression: cst.BaseExpression) -> bool:
    if isinstance(expression, (cst.List, cst.Tuple, cst.ListComp)):
        return True
    if isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute):
        method = expression.func.attr.value
        if method in HOST_CONVERSIONS:
            return True
        if method == "to" and expression.args and isinstance(expression.args[0].value, cst.SimpleString):
            return expression.args[0].value.evaluated_value == "cpu"
    return False
