"""Lengths for `pack_padded_sequence`: values that must stay on the CPU however the data moves.

`pack_padded_sequence(data, lengths)` raises "'lengths' argument should be a 1D CPU int64 tensor"
when the lengths are on a device. A rule that moves "what meets the model" must leave them out:
lengths packed right there in the loop, or given to `model(x, lengths)` whose `forward` only packs
with them (`analysis.forward_lengths`). DF006 (`codemods.df006_pack_padded_lengths`) fixes the other
side: lengths already moved, brought back with `.cpu()` at the call.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devfix.analysis.forward_lengths import PACKING_FUNCTIONS
from devfix.analysis.torch_names import keyword

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
