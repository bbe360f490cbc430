"""DF013 runtime-placement: placements whose correctness depends on runtime facts; reported, never
rewritten.

    torch.jit.trace(model, example)          the trace records the example's device as a constant
    model = AutoModel.from_pretrained(..., device_map="auto"); model.to(device)
                                             a dispatched model must not be moved as a whole

Each finding says what to check. No fix: the right change depends on the checkpoint, the number
of GPUs or where the traced artifact will run.

Refuses: `torch.jit.script`, `device_map` models that are not moved afterwards. (Optimizer state
loaded before the model moved is DF022's.)
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.placement import as_move
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_names import keyword
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety

TRACE = frozenset({"torch.jit.trace", "torch.jit.trace_module"})


class RuntimePlacement(ScopeTracker, DevfixRule):
    CODE = "DF013"
    NAME = "runtime-placement"
    SAFETY = Safety.UNSAFE
    REPORT_ONLY = True
    DESCRIPTION = "Placement that needs a runtime check (jit.trace, device_map)"

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualified(node.func) & TRACE:
            self.report(node, "torch.jit.trace records the device of its example inputs as constants: trace on the "
                        "device the model will run on, or use torch.jit.script", fixable=False)
            return
        move = as_move(node, self.qualified)
        if move is not None and isinstance(move.receiver, cst.Name):
            self._check_dispatched_move(node, move.receiver.value)

    def _check_dispatched_move(self, node: cst.Call, name: str) -> None:
        for value in self.scope_facts(node).assignments.get(name, []):
            if isinstance(value, cst.Call) and keyword(value, "device_map") is not None:
                self.report(node, f"`{name}` was loaded with device_map= (dispatched across devices); moving it with "
                            "`.to()`/`.cuda()` breaks its hooks: keep device_map and send inputs to its first device",
                            fixable=False)
                return
