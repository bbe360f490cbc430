"""Which tensor parameter of a function does a tensor it makes and places on the GPU meet?

A helper of a library module (`utils.py`) that hard-codes the GPU:

    def pad_mask(seq, pad=0):
        mask = torch.ones(seq.size(0), seq.size(1)).cuda()
        return mask * (seq != pad).float()

runs on a GPU only when `seq` is there too: the product would fail with `seq` on the CPU. So
`seq.device` is the device `.cuda()` chose wherever the helper worked before, and the CPU on a
machine without a GPU: `.to(seq.device)` is the fix, with no device variable to add to a module
that has none. The new tensor (a factory's, or `torch.from_numpy`'s, moved) is followed through the
function's assignments, tensor methods, operators and torch functions (`parameter_meetings.Roots`)
to an operation, or an update in place (`lengths += (seq != pad).sum(1)`), that puts it with a
value computed from the parameter. The parameter must be proven a tensor where the function reads
it (`seq.size(0)`, annotations: `tensors.tensor_names`), and never rebound: `seq.device` is
written where the tensor is made, before any other statement runs.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.cst_bindings import assigned_names, parameter_names
from devfix.analysis.parameter_meetings import Roots, parameters_meet
from devfix.analysis.tensors import is_factory_call, tensor_names, without_tensor_methods
from devfix.analysis.torch_api import MOVED_AFTER
from devfix.analysis.torch_names import QualifiedNames

MADE_HERE = "<made here>"  # the name that stands for the placed tensor in the meeting analysis


def parameter_met_by(function: cst.FunctionDef, placed: cst.Call, qualified: QualifiedNames) -> str | None:
    """The tensor parameter of `function` that `placed` meets, when `placed` puts a tensor made in
    it on the GPU: `torch.ones(n).cuda()` and `torch.from_numpy(a).to("cuda")` (a move of a fresh
    tensor), or `torch.zeros(n, device="cuda")` (a factory itself)."""
    if not _places_a_new_tensor(placed, qualified):
        return None
    tensors = tensor_names(function, qualified)
    rebound = assigned_names(function)
    reader = _PlacedRoots(qualified, placed)
    return next((
        name for name in parameter_names(function)
        if name in tensors and name not in rebound and parameters_meet(function, MADE_HERE, name, qualified, reader)
    ), None)


def _places_a_new_tensor(placed: cst.Call, qualified: QualifiedNames) -> bool:
    if isinstance(placed.func, cst.Attribute) and placed.func.attr.value in ("cuda", "to"):
        made = without_tensor_methods(placed.func.value)
        return isinstance(made, cst.Call) and (is_factory_call(made, qualified) or bool(qualified(made.func) & MOVED_AFTER))
    return is_factory_call(placed, qualified)


class _PlacedRoots(Roots):
    """`Roots` where the placed tensor is a root of its own, and an update in place meets."""

    in_place_meets = True

    def __init__(self, qualified: QualifiedNames, placed: cst.Call) -> None:
        super().__init__(qualified)
        self.placed = placed

    def roots(self, expression: cst.BaseExpression) -> set[str]:
        if expression is self.placed:
            return {MADE_HERE}
        return super().roots(expression)
