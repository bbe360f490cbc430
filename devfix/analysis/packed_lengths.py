"""Lengths for `pack_padded_sequence`: values that must stay on the CPU however the data moves.

`pack_padded_sequence(data, lengths)` raises "'lengths' argument should be a 1D CPU int64 tensor"
when the lengths are on a device. A rule that moves "what meets the model" must leave them out:
a DataLoader batch's `lengths` given to `model(x, lengths)`, whose `forward` only packs with it,
or packed right there in the loop. DF006 (`codemods.df006_pack_padded_lengths`) fixes the other
side: lengths already moved, brought back with `.cpu()` at the call.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devfix.analysis.cst_bindings import bound_names, parameter_names
from devfix.analysis.torch_names import keyword

PACKING_FUNCTIONS = frozenset({"torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pack_padded_sequence.__call__"})
HOST_CONVERSIONS = frozenset({"cpu", "tolist"})

QualifiedNames = Callable[[cst.CSTNode], set[str]]


def lengths_argument(call: cst.Call) -> tuple[int, cst.BaseExpression | None]:
    """Where a packing call takes its lengths: (index in `call.args`, value), or (-1, None)."""
    named = keyword(call, "lengths")
    if named is not None:
        return list(call.args).index(named), named.value
    positional = [index for index, arg in enumerate(call.args) if arg.keyword is None]
    return (positional[1], call.args[positional[1]].value) if len(positional) > 1 else (-1, None)


def packed_lengths(call: cst.Call, qualified: QualifiedNames) -> cst.BaseExpression | None:
    """The lengths argument of `call` when it is `pack_padded_sequence`; else None."""
    if not qualified(call.func) & PACKING_FUNCTIONS:
        return None
    return lengths_argument(call)[1]


def lengths_only_parameters(function: cst.FunctionDef, qualified: QualifiedNames) -> frozenset[str]:
    """Parameters of `function` that it never rebinds and reads only as the lengths of
    `pack_padded_sequence` or to bring them to the host (`.cpu()`, `.tolist()`): a caller need
    not move them, and for the packing must not. A parameter read any other way (`mask = ids < lengths`)
    may need the device and is not one of them."""
    reads = _Reads(set(parameter_names(function)), qualified)
    function.body.visit(reads)
    return frozenset(name for name in reads.packed if name not in reads.other)


class _Reads(cst.CSTVisitor):
    """How each parameter is read: as packed lengths, or otherwise (rebinding counts as otherwise)."""

    def __init__(self, names: set[str], qualified: QualifiedNames) -> None:
        self.names, self.qualified = names, qualified
        self.packed: set[str] = set()
        self.other: set[str] = set()
        self._accounted: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        lengths = packed_lengths(node, self.qualified)
        if isinstance(lengths, cst.Name) and lengths.value in self.names:
            self.packed.add(lengths.value)
            self._accounted.add(id(lengths))
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in HOST_CONVERSIONS and isinstance(func.value, cst.Name) \
                and func.value.value in self.names:
            self.packed.add(func.value.value)  # brought to the host here: it never needed the device
            self._accounted.add(id(func.value))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names and id(node) not in self._accounted:
            self.other.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)  # `x.lengths` is not the parameter `lengths`
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # nor is the keyword of `f(lengths=...)`
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.other |= bound_names(target.target) & self.names
