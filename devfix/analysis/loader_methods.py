"""Methods of a class that a DataLoader runs: `collate_fn=self._sample` and what they call.

    def loader(self, **kwargs):
        return DataLoader(range(n), collate_fn=self._sample, **kwargs)

    def _pos_sample(self, batch):
        ...
        rw.add_(self.offset.view(1, -1))

A collate function runs in the loader (in worker processes when `num_workers > 0`), on the host
tensors it builds from the batch of indices: PyG's `MetaPath2Vec` adds its `self.offset` table to
random walks sampled there. Such a table is a CPU tensor on purpose; registering it as a buffer
(DF014) would move it with the model and the sum would mix a CUDA tensor into a CPU one.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.module_classes import is_self_attribute
from devfix.analysis.self_calls import self_calls

LOADER_CALLBACKS = frozenset({"collate_fn", "worker_init_fn"})


def methods_run_by_loaders(methods: dict[str, cst.FunctionDef]) -> frozenset[str]:
    """The class's methods handed to a loader as `collate_fn=self.<m>`, with the methods they call
    through `self.<k>(...)` (`analysis.self_calls`), to a fixed point."""
    handed = _Handed()
    for method in methods.values():
        method.body.visit(handed)
    found = {name for name in handed.names if name in methods}
    callees = {caller.name.value: set() for caller in methods.values()}
    for name, callers in self_calls(methods).items():
        for caller, _ in callers:
            callees[caller.name.value].add(name)
    pending = list(found)
    while pending:
        for name in callees.get(pending.pop(), set()) - found:
            found.add(name)
            pending.append(name)
    return frozenset(found)


class _Handed(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in LOADER_CALLBACKS and is_self_attribute(node.value):
            self.names.add(node.value.attr.value)
